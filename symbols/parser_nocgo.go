//go:build !cgo

package symbols

import (
	"context"
	"fmt"
)

// Parser has no grammars in a build without cgo: Parse refuses every file.
type Parser struct{}

// NewParser returns a Parser.
func NewParser() *Parser { return &Parser{} }

// Close does nothing.
func (p *Parser) Close() {}

// Parse refuses name: an unsupported language wraps [ErrUnsupported] as in
// a build with cgo, any other file [ErrNoGrammars].
func (p *Parser) Parse(ctx context.Context, name string, src []byte) (Result, error) {
	if LanguageOf(name) == "" {
		return Result{}, fmt.Errorf("symbols: %s: %w", name, ErrUnsupported)
	}
	return Result{}, fmt.Errorf("symbols: %s: %w", name, ErrNoGrammars)
}
