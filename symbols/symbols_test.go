//go:build cgo

package symbols

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

func TestSnippets(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/snippets.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	p := NewParser()
	defer p.Close()
	n := 0
	for name, src := range files {
		if strings.HasSuffix(name, ".want") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			res, err := p.Parse(context.Background(), name, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if res.HasError {
				t.Errorf("%s: syntax errors reported for valid code", name)
			}
			var got []string
			for _, s := range res.Symbols {
				got = append(got, fmt.Sprintf("%s %s %d %d", s.Name, s.Kind, s.Start, s.End))
			}
			want := strings.Split(strings.TrimSpace(files[name+".want"]), "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s symbols (-want +got):\n%s", name, diff)
			}
		})
	}
	if n != 7 {
		t.Fatalf("snippets: %d source files, want 7 (one per language)", n)
	}
}

func TestUnsupported(t *testing.T) {
	_, err := Parse(context.Background(), "README.md", []byte("# x\n"))
	if err == nil || !strings.Contains(err.Error(), "README.md") {
		t.Fatalf("Parse(README.md) error = %v, want ErrUnsupported naming the file", err)
	}
}

func TestBrokenFileKeepsSymbols(t *testing.T) {
	src := "def ok():\n    return 1\n\ndef broken(:\n    pass\n"
	res, err := Parse(context.Background(), "x.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasError {
		t.Error("HasError = false for a file with a syntax error")
	}
	if len(res.Symbols) == 0 || res.Symbols[0].Name != "ok" || res.Symbols[0].End != 2 {
		t.Errorf("symbols = %+v, want ok at 1-2 first", res.Symbols)
	}
	if res.Lines != 5 {
		t.Errorf("Lines = %d, want 5", res.Lines)
	}
}

func TestInnermost(t *testing.T) {
	syms := []Symbol{
		{Name: "C", Kind: Class, Start: 1, End: 20},
		{Name: "C.m", Kind: Method, Start: 2, End: 10},
		{Name: "C.m.f", Kind: Function, Start: 4, End: 6},
	}
	for _, tc := range []struct {
		line int
		want string
	}{{5, "C.m.f"}, {3, "C.m"}, {15, ""}, {30, ""}} {
		s, ok := Innermost(syms, tc.line)
		if got := map[bool]string{true: s.Name}[ok]; got != tc.want {
			t.Errorf("Innermost(line %d) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestLanguageOf(t *testing.T) {
	for name, want := range map[string]Language{
		"a/b.py": Python, "x.go": Go, "x.jsx": JavaScript, "x.ts": TypeScript, "x.tsx": TSX,
		"X.java": Java, "lib.rs": Rust, "b.kts": Kotlin, "Makefile": "", "x.c": "",
	} {
		if got := LanguageOf(name); got != want {
			t.Errorf("LanguageOf(%q) = %q, want %q", name, got, want)
		}
	}
}

// A context that ends as its parse returns, with the parser closed at once,
// is what an MCP request does. With the watcher goroutine of ParseCtx this
// crashed the process (the flag of a freed parser was set).
func TestContextEndsWithParse(t *testing.T) {
	src := []byte("def f(x):\n    return x\n")
	for i := 0; i < 3000; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		p := NewParser()
		res, err := p.Parse(ctx, "a.py", src)
		cancel()
		p.Close()
		if err != nil || len(res.Symbols) != 1 {
			t.Fatalf("parse %d: %v, %d symbols", i, err, len(res.Symbols))
		}
	}
}

func TestCancelledContextStopsParse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "def f%d(x):\n    return x\n", i)
	}
	_, err := Parse(ctx, "big.py", []byte(b.String()))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
