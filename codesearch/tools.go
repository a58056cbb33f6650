package codesearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// toolDef is a tool: its description for the model and its code.
type toolDef struct {
	Tool
	lsp bool // needs a language server
	run func(ctx context.Context, s *Snapshot, args json.RawMessage) (string, error)
}

// tools are every tool of the package, by name.
var tools = map[string]toolDef{}

// toolOrder is the order [Snapshot.Tools] lists them in.
var toolOrder = []string{ViewFile, ViewDirectory, GrepSearch, FindSymbol, Definition, References}

func register(t toolDef) { tools[t.Name] = t }

func init() {
	register(toolDef{Tool: Tool{
		Name: ViewFile,
		Description: fmt.Sprintf("Show lines of a file of the repository, numbered. Give the path from the repository root "+
			"(as view_directory and grep_search print it) and optionally start_line and end_line (1-based, inclusive). "+
			"At most %d lines are shown per call; the answer says when it was cut and where to go on.", MaxViewLines),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"file path relative to the repository root, e.g. src/pkg/mod.py"},` +
			`"start_line":{"type":"integer","minimum":1,"description":"first line to show (default 1)"},` +
			`"end_line":{"type":"integer","minimum":1,"description":"last line to show (default: start_line + ` + fmt.Sprint(MaxViewLines-1) + `)"}},` +
			`"required":["path"],"additionalProperties":false}`),
	}, run: viewFile})
	register(toolDef{Tool: Tool{
		Name: ViewDirectory,
		Description: fmt.Sprintf("List the files and subdirectories of a directory of the repository, down to a depth "+
			"(default 1: the directory's own entries; at most %d). Directories end with / and show how many files they hold. "+
			"Leave path empty for the repository root. At most %d entries are shown.", MaxDirDepth, MaxDirEntries),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"directory path relative to the repository root; empty for the root"},` +
			`"depth":{"type":"integer","minimum":1,"maximum":` + fmt.Sprint(MaxDirDepth) + `,"description":"how many levels to list (default 1)"}},` +
			`"additionalProperties":false}`),
	}, run: viewDirectory})
	register(toolDef{Tool: Tool{
		Name: GrepSearch,
		Description: fmt.Sprintf("Search the repository's text files for lines matching a regular expression "+
			"(extended syntax: a|b, (x)+, [a-z], \\w, \\b; escape ( and . to match them literally). "+
			"Prints path:line: text for each matching line, at most %d; narrow the pattern or path_glob when the answer is cut. "+
			"path_glob limits the files: *.py matches a file name in any directory, src/**/test_*.py a whole path "+
			"(* stays in one directory, ** crosses any), a plain path such as src/core a file or a directory.", MaxGrepMatches),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"regular expression, e.g. def\\s+parse_expr\\b"},` +
			`"path_glob":{"type":"string","description":"limit the search to these files, e.g. *.py or sympy/core"},` +
			`"case_insensitive":{"type":"boolean","description":"match without regard to case (default false)"}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}, run: grepSearch})
}

// Tools describes the tools of the snapshot named in names, in that order;
// with no names, every tool it has (the language server's only while one
// runs). An unknown name is an error.
func (s *Snapshot) Tools(names ...string) ([]Tool, error) {
	if len(names) == 0 {
		for _, n := range toolOrder {
			if t, ok := tools[n]; ok && (!t.lsp || s.lspSession() != nil) {
				names = append(names, n)
			}
		}
	}
	out := make([]Tool, 0, len(names))
	for _, n := range names {
		t, ok := tools[n]
		if !ok {
			return nil, fmt.Errorf("codesearch: %w %q", ErrUnknownTool, n)
		}
		out = append(out, t.Tool)
	}
	return out, nil
}

// ToolNames returns the names of every tool of the package, language
// server tools included.
func ToolNames() []string {
	var out []string
	for _, n := range toolOrder {
		if _, ok := tools[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// clip shortens a line for display.
func clip(line string) string {
	line = strings.TrimSuffix(line, "\r")
	if len(line) <= MaxLineLength {
		return line
	}
	cut := MaxLineLength
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + fmt.Sprintf(" [... %d more bytes]", len(line)-cut)
}

// fileKind lstats a checked path and refuses what view_file cannot show.
func fileKind(ctx context.Context, s *Snapshot, clean, shown string) (fs.FileMode, error) {
	if clean == "" {
		return fs.ModeDir, nil
	}
	mode, _, err := s.src.lstat(ctx, clean)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: no such file or directory in the repository", shown)
	}
	return mode, err
}

func viewFile(ctx context.Context, s *Snapshot, raw json.RawMessage) (string, error) {
	var a struct {
		Path      *string `json:"path"`
		StartLine int     `json:"start_line"`
		EndLine   int     `json:"end_line"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	switch {
	case a.Path == nil || *a.Path == "":
		return "", fmt.Errorf("%w: path is required", ErrBadArguments)
	case a.StartLine < 0 || a.EndLine < 0:
		return "", fmt.Errorf("%w: line numbers start at 1", ErrBadArguments)
	case a.EndLine > 0 && a.StartLine > a.EndLine:
		return "", fmt.Errorf("%w: start_line %d is after end_line %d", ErrBadArguments, a.StartLine, a.EndLine)
	}
	clean, err := checkName(ctx, s.src, *a.Path)
	if err != nil {
		return "", err
	}
	mode, err := fileKind(ctx, s, clean, *a.Path)
	if err != nil {
		return "", err
	}
	if !mode.IsRegular() {
		if mode.IsDir() {
			return "", fmt.Errorf("%w: %s is a directory: use view_directory", ErrBadArguments, *a.Path)
		}
		return "", fmt.Errorf("%w: %s is not a regular file", ErrBadArguments, *a.Path)
	}
	data, err := s.src.readFile(ctx, clean)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return fmt.Sprintf("%s: binary file of %d bytes, not shown", clean, len(data)), nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	if n == 0 {
		return clean + ": empty file", nil
	}
	start := max(a.StartLine, 1)
	if start > n {
		return "", fmt.Errorf("%w: start_line %d is past the end of %s (%d lines)", ErrBadArguments, start, clean, n)
	}
	end := n
	if a.EndLine > 0 {
		end = min(a.EndLine, n)
	}
	var body strings.Builder
	last := start - 1
	for i := start; i <= end; i++ {
		if i-start >= MaxViewLines || body.Len() >= MaxViewBytes {
			break
		}
		fmt.Fprintf(&body, "%d\t%s\n", i, clip(strings.TrimSuffix(lines[i-1], "\n")))
		last = i
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, lines %d-%d of %d:\n", clean, start, last, n)
	b.WriteString(body.String())
	if last < end {
		fmt.Fprintf(&b, "[cut at line %d: call view_file with start_line %d to read on]\n", last, last+1)
	}
	return b.String(), nil
}

func viewDirectory(ctx context.Context, s *Snapshot, raw json.RawMessage) (string, error) {
	var a struct {
		Path  string `json:"path"`
		Depth int    `json:"depth"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if a.Depth < 0 || a.Depth > MaxDirDepth {
		return "", fmt.Errorf("%w: depth must be between 1 and %d", ErrBadArguments, MaxDirDepth)
	}
	depth := max(a.Depth, 1)
	if a.Path == "/" {
		a.Path = ""
	}
	clean, err := checkName(ctx, s.src, strings.TrimSuffix(a.Path, "/"))
	if err != nil {
		return "", err
	}
	files, err := s.src.listFiles(ctx)
	if err != nil {
		return "", err
	}
	if !isDir(files, clean) {
		mode, err := fileKind(ctx, s, clean, a.Path)
		if err != nil {
			return "", err
		}
		if !mode.IsDir() {
			return "", fmt.Errorf("%w: %s is a file: use view_file", ErrBadArguments, a.Path)
		}
	}
	prefix := ""
	if clean != "" {
		prefix = clean + "/"
	}
	type entry struct {
		name  string
		files int // for a directory
	}
	var entries []entry
	index := map[string]int{}
	for _, f := range under(files, clean) {
		segs := strings.Split(f[len(prefix):], "/")
		for k := 1; k <= min(depth, len(segs)); k++ {
			name := prefix + strings.Join(segs[:k], "/")
			isDir := k < len(segs)
			if isDir {
				name += "/"
			}
			i, ok := index[name]
			if !ok {
				i = len(entries)
				index[name] = i
				entries = append(entries, entry{name: name})
			}
			if isDir {
				entries[i].files++
			}
		}
	}
	var b strings.Builder
	shown := "the repository root"
	if clean != "" {
		shown = prefix
	}
	fmt.Fprintf(&b, "%s, depth %d: %d entries\n", shown, depth, len(entries))
	for i, e := range entries {
		if i == MaxDirEntries {
			fmt.Fprintf(&b, "[cut at %d of %d entries: view a subdirectory, or a smaller depth]\n", MaxDirEntries, len(entries))
			break
		}
		if e.files > 0 {
			fmt.Fprintf(&b, "%s (%d files)\n", e.name, e.files)
		} else {
			fmt.Fprintf(&b, "%s\n", e.name)
		}
	}
	return b.String(), nil
}

func grepSearch(ctx context.Context, s *Snapshot, raw json.RawMessage) (string, error) {
	var a struct {
		Pattern         *string `json:"pattern"`
		PathGlob        string  `json:"path_glob"`
		CaseInsensitive bool    `json:"case_insensitive"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if a.Pattern == nil || *a.Pattern == "" {
		return "", fmt.Errorf("%w: pattern is required", ErrBadArguments)
	}
	if a.PathGlob != "" {
		if err := checkGlob(a.PathGlob); err != nil {
			return "", err
		}
	}
	var tooLarge []string
	matches, more, err := s.src.grep(ctx, grepQuery{pattern: *a.Pattern, glob: a.PathGlob, ignoreCase: a.CaseInsensitive, max: MaxGrepMatches, tooLarge: &tooLarge})
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		// git's complaint about the pattern, without the repository's
		// location on this machine.
		msg := err.Error()
		if i := strings.LastIndex(msg, "fatal: "); i >= 0 {
			return "", fmt.Errorf("%w: pattern %q: %s", ErrBadArguments, *a.Pattern, msg[i+len("fatal: "):])
		}
		return "", err
	}
	// Files over MaxFileBytes are not searched: say which (the first few).
	note := ""
	if n := len(tooLarge); n > 0 {
		note = fmt.Sprintf("[%d files over %d bytes not searched: %s", n, MaxFileBytes, strings.Join(tooLarge[:min(n, 5)], ", "))
		if n > 5 {
			note += ", ..."
		}
		note += "]\n"
	}
	if len(matches) == 0 {
		if note != "" {
			note = "\n" + strings.TrimSuffix(note, "\n")
		}
		return fmt.Sprintf("no match for %q", *a.Pattern) + note, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d matches", len(matches))
	if more {
		b.WriteString(" (more not shown)")
	}
	b.WriteString(":\n")
	for _, m := range matches {
		fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, clip(m.Text))
	}
	if more {
		fmt.Fprintf(&b, "[cut at %d matches: narrow the pattern or path_glob]\n", MaxGrepMatches)
	}
	b.WriteString(note)
	return b.String(), nil
}
