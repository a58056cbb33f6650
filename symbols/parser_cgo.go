//go:build cgo

package symbols

import (
	"context"
	"fmt"
	"sort"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

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
