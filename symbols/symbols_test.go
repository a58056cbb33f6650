package symbols

import (
	"context"
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
