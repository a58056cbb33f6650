// Package symbols lists the functions, methods and classes of a source file
// from its tree-sitter syntax tree: qualified names (Class.method,
// outer.inner), kinds, and 1-based inclusive line ranges.
//
// Supported languages: Python, Go, JavaScript, TypeScript (and TSX), Java,
// Rust and Kotlin, chosen by file extension ([LanguageOf]). A grammar is
// loaded the first time a [Parser] meets a file of its language; nothing is
// set up at package initialisation.
//
// Names follow LocAgent's convention for the part after "path:": a method is
// qualified by its class (Printable.__str__), a nested function by the
// function around it (outer.inner). Go methods are qualified by their
// receiver type, Rust methods by the type (or trait) of their impl block.
//
// A file with syntax errors still yields the symbols tree-sitter could
// recover; [Result.HasError] says so.
package symbols

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Kind is what a symbol is.
type Kind string

const (
	// Class is a class-like container: a class, interface, enum, record,
	// trait, object, or a Go type or Rust struct/enum/trait.
	Class Kind = "class"
	// Method is a function declared directly in a class-like container.
	Method Kind = "method"
	// Function is any other named function, top-level or nested.
	Function Kind = "function"
)

// Symbol is one definition in a file.
type Symbol struct {
	// Name is the qualified name: Class.method, outer.inner, Type.Method.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Start and End are the first and last line of the definition, 1-based
	// and inclusive. Decorators and doc comments outside the node are not
	// part of it.
	Start int `json:"start"`
	End   int `json:"end"`
}

// Result is the outcome of parsing one file.
type Result struct {
	Language Language
	// Symbols are in source order (by start line, outer before inner).
	Symbols []Symbol
	// Lines is the number of lines in the file.
	Lines int
	// HasError reports that the syntax tree holds error nodes: the file
	// did not parse cleanly and some definitions may be missing.
	HasError bool
}

// ErrUnsupported is wrapped by errors for a file whose language has no
// grammar here.
var ErrUnsupported = errors.New("unsupported language")

// Parser parses files of any supported language. It keeps one tree-sitter
// parser per language it has met, so reuse one Parser for many files. A
// Parser is not safe for concurrent use; Close it to free the C memory.
type Parser struct {
	parsers map[Language]*sitter.Parser
}

// NewParser returns a Parser with no grammar loaded yet.
func NewParser() *Parser {
	return &Parser{parsers: map[Language]*sitter.Parser{}}
}

// Close frees the parsers.
func (p *Parser) Close() {
	for _, tp := range p.parsers {
		tp.Close()
	}
	p.parsers = nil
}

// Parse lists the symbols of the file at name (only its extension is used)
// with contents src. A file of an unsupported language is an error wrapping
// [ErrUnsupported].
func (p *Parser) Parse(ctx context.Context, name string, src []byte) (Result, error) {
	lang := LanguageOf(name)
	if lang == "" {
		return Result{}, fmt.Errorf("symbols: %s: %w", name, ErrUnsupported)
	}
	tp, err := p.parser(lang)
	if err != nil {
		return Result{}, fmt.Errorf("symbols: %s: %w", name, err)
	}
	// ParseCtx is not used: its watcher goroutine can set the cancellation
	// flag of a parser that has since been closed (a crash seen when an MCP
	// request's context ended just after its parse). The progress callback
	// asks the context on the parsing goroutine itself.
	n := len(src)
	tree := tp.ParseWithOptions(func(i int, _ sitter.Point) []byte {
		if i < n {
			return src[i:]
		}
		return nil
	}, nil, &sitter.ParseOptions{ProgressCallback: func(sitter.ParseState) bool {
		return ctx.Err() != nil
	}})
	if tree == nil {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("symbols: %s: %w", name, err)
		}
		return Result{}, fmt.Errorf("symbols: %s: parser returned no tree", name)
	}
	defer tree.Close()
	root := tree.RootNode()
	w := walker{spec: specs[lang], src: src, cur: tree.Walk()}
	defer w.cur.Close()
	w.walk(nil)
	sort.SliceStable(w.out, func(i, j int) bool {
		if w.out[i].Start != w.out[j].Start {
			return w.out[i].Start < w.out[j].Start
		}
		return w.out[i].End > w.out[j].End
	})
	return Result{Language: lang, Symbols: w.out, Lines: countLines(src), HasError: root.HasError()}, nil
}

// Parse parses one file with a fresh [Parser].
func Parse(ctx context.Context, name string, src []byte) (Result, error) {
	p := NewParser()
	defer p.Close()
	return p.Parse(ctx, name, src)
}

func (p *Parser) parser(lang Language) (*sitter.Parser, error) {
	if tp := p.parsers[lang]; tp != nil {
		return tp, nil
	}
	tp := sitter.NewParser()
	if err := tp.SetLanguage(sitter.NewLanguage(grammar(lang))); err != nil {
		tp.Close()
		return nil, fmt.Errorf("load %s grammar: %w", lang, err)
	}
	if p.parsers == nil {
		p.parsers = map[Language]*sitter.Parser{}
	}
	p.parsers[lang] = tp
	return tp, nil
}

// countLines counts lines as editors do: a final line without a newline
// counts, an empty file has none.
func countLines(src []byte) int {
	n := strings.Count(string(src), "\n")
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// Innermost returns the smallest function or method whose range holds line,
// or false when the line lies outside every function. Classes are not
// considered: a line in a class body but outside its methods has no
// enclosing function.
func Innermost(syms []Symbol, line int) (Symbol, bool) {
	var best Symbol
	found := false
	for _, s := range syms {
		if s.Kind == Class || line < s.Start || line > s.End {
			continue
		}
		if !found || s.End-s.Start < best.End-best.Start {
			best, found = s, true
		}
	}
	return best, found
}

// Language names a supported grammar.
type Language string

const (
	Python     Language = "python"
	Go         Language = "go"
	JavaScript Language = "javascript"
	TypeScript Language = "typescript"
	TSX        Language = "tsx"
	Java       Language = "java"
	Rust       Language = "rust"
	Kotlin     Language = "kotlin"
)

// LanguageOf returns the language of a file by its extension, or "" when
// none is supported.
func LanguageOf(name string) Language {
	switch strings.ToLower(path.Ext(name)) {
	case ".py", ".pyi":
		return Python
	case ".go":
		return Go
	case ".js", ".jsx", ".mjs", ".cjs":
		return JavaScript
	case ".ts", ".mts", ".cts":
		return TypeScript
	case ".tsx":
		return TSX
	case ".java":
		return Java
	case ".rs":
		return Rust
	case ".kt", ".kts":
		return Kotlin
	}
	return ""
}
