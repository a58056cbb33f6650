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
//
// The grammars are C: built with CGO_ENABLED=0, the package has no parser
// and [Parser.Parse] refuses every file with an error wrapping
// [ErrNoGrammars], so that a binary for offline runs that need no syntax
// tree builds in a fraction of the time.
package symbols

import (
	"context"
	"errors"
	"path"
	"strings"
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

// ErrNoGrammars is wrapped by every error of a build without cgo, which
// has no tree-sitter grammars.
var ErrNoGrammars = errors.New("built without cgo: no tree-sitter grammars (build with CGO_ENABLED=1)")

// Parse parses one file with a fresh [Parser].
func Parse(ctx context.Context, name string, src []byte) (Result, error) {
	p := NewParser()
	defer p.Close()
	return p.Parse(ctx, name, src)
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
