package codesearch

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/patchbench/patchbench/symbols"
)

// maxSymbolCandidates bounds the lines find_symbol's grep reads to choose
// the files it parses.
const maxSymbolCandidates = 5000

var symbolName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)

func init() {
	register(toolDef{Tool: Tool{
		Name: FindSymbol,
		Description: fmt.Sprintf("Find where functions, methods and classes are defined, from the syntax trees of the "+
			"repository's source files (Python, Go, JavaScript, TypeScript, Java, Rust, Kotlin). name is a plain name "+
			"(parse_expr), or qualified by its class or enclosing function (Parser.parse, Add.flatten). "+
			"Prints path:start-end kind qualified_name for each definition, at most %d; view_file then shows its lines.", MaxSymbols),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"symbol name, e.g. flatten or Add.flatten"},` +
			`"path_glob":{"type":"string","description":"limit the search to these files, e.g. *.py or src/core"}},` +
			`"required":["name"],"additionalProperties":false}`),
	}, run: findSymbol})
}

// maxSymbolName bounds a find_symbol name (the grep pattern made of it is
// bounded by MaxPatternBytes).
const maxSymbolName = 1000

func findSymbol(ctx context.Context, s *Snapshot, raw json.RawMessage) (string, error) {
	var a struct {
		Name     string `json:"name"`
		PathGlob string `json:"path_glob"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if len(a.Name) > maxSymbolName {
		return "", fmt.Errorf("%w: name is %d bytes, over the bound of %d", ErrBadArguments, len(a.Name), maxSymbolName)
	}
	if !symbolName.MatchString(a.Name) {
		return "", fmt.Errorf("%w: name %q is not an identifier, or identifiers joined by dots", ErrBadArguments, a.Name)
	}
	if a.PathGlob != "" {
		if err := checkGlob(a.PathGlob); err != nil {
			return "", err
		}
	}
	last := a.Name[strings.LastIndexByte(a.Name, '.')+1:]
	// Only files that hold the name as a word can define it.
	lines, _, err := s.src.grep(ctx, grepQuery{
		pattern: `(^|[^A-Za-z0-9_$])` + strings.ReplaceAll(last, "$", `\$`) + `($|[^A-Za-z0-9_$])`,
		glob:    a.PathGlob, max: maxSymbolCandidates,
	})
	if err != nil {
		return "", err
	}
	p := symbols.NewParser()
	defer p.Close()
	var out []string
	more := false
	for i, m := range lines {
		if i > 0 && lines[i-1].Path == m.Path || symbols.LanguageOf(m.Path) == "" {
			continue
		}
		data, err := s.src.readFile(ctx, m.Path)
		if err != nil {
			return "", err
		}
		res, err := p.Parse(ctx, m.Path, data)
		if err != nil {
			continue // a file its grammar cannot read holds nothing to show
		}
		for _, sym := range res.Symbols {
			if sym.Name != a.Name && !strings.HasSuffix(sym.Name, "."+a.Name) {
				continue
			}
			if len(out) == MaxSymbols {
				more = true
				break
			}
			out = append(out, fmt.Sprintf("%s:%d-%d %s %s", m.Path, sym.Start, sym.End, sym.Kind, sym.Name))
		}
	}
	if len(out) == 0 {
		return fmt.Sprintf("no definition of %s found", a.Name), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d definitions:\n%s\n", len(out), strings.Join(out, "\n"))
	if more {
		fmt.Fprintf(&b, "[cut at %d definitions: qualify the name or give a path_glob]\n", MaxSymbols)
	}
	return b.String(), nil
}
