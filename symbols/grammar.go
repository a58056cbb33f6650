//go:build cgo

package symbols

import (
	"unsafe"

	kotlin "github.com/tree-sitter-grammars/tree-sitter-kotlin/bindings/go"
	golang "github.com/tree-sitter/tree-sitter-go/bindings/go"
	java "github.com/tree-sitter/tree-sitter-java/bindings/go"
	javascript "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
	rust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	typescript "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// grammar returns the compiled grammar of lang. The grammars are static C
// tables, so this allocates nothing; it is called once per language per
// Parser.
func grammar(lang Language) unsafe.Pointer {
	switch lang {
	case Python:
		return python.Language()
	case Go:
		return golang.Language()
	case JavaScript:
		return javascript.Language()
	case TypeScript:
		return typescript.LanguageTypescript()
	case TSX:
		return typescript.LanguageTSX()
	case Java:
		return java.Language()
	case Rust:
		return rust.Language()
	case Kotlin:
		return kotlin.Language()
	}
	panic("symbols: no grammar for " + string(lang))
}
