package loc

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/patchbench/patchbench/symbols"
)

// TestTruthOddFiles: gold functions in a file with a syntax error, in a
// file that is not UTF-8, and a method of a nested class are named as an
// answer names them (Loc-Bench's "file:Class.method"), by the ground truth
// and by an answer given as line ranges; the exact answer scores 1.
func TestTruthOddFiles(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, path, src string
		line            int
		want            string
	}{
		{"nested class", "a.py", "class Outer:\n    class Inner:\n        def m(self):\n            return 1\n", 4, "Outer.Inner.m"},
		{"syntax error before", "b.py", "def f(:\n    return 1\n\ndef g():\n    return 2\n", 5, "g"},
		// An unclosed parenthesis swallows what follows: tree-sitter keeps
		// n's lines in m, on both sides (Python's ast reads no function).
		{"syntax error inside", "c.py", "class C:\n    def m(self):\n        return (1,\n\n    def n(self):\n        return 2\n", 6, "C.m"},
		{"latin-1 comment", "d.py", "# caf\xe9\nclass C:\n    def m(self):\n        return '\xe9'\n", 4, "C.m"},
		{"nested function", "e.py", "def outer():\n    def inner():\n        return 1\n    return inner\n", 3, "outer.inner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := symbols.NewParser()
			defer p.Close()
			ft, err := fileTruth(ctx, tc.path, []byte(tc.src), []int{tc.line}, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ft.Functions, []string{tc.want}) {
				t.Errorf("ground truth functions %q, want [%q]", ft.Functions, tc.want)
			}
			gt := GroundTruth{Files: map[string]FileTruth{tc.path: ft}}
			// The answer as the model names it, and as report_back's
			// ranges name it (functionsOf reads the file as the truth does).
			answer := tc.path + ":" + tc.want
			f, err := parseReport(fmt.Sprintf(`{"files":{%q:[[%d,%d]]},"functions":[%q]}`, tc.path, tc.line, tc.line, answer))
			if err != nil {
				t.Fatal(err)
			}
			m := Score(gt, Complete(f))
			for _, k := range []string{"file_acc@1", "function_acc@1", "module_acc@1"} {
				if m[k] != 1 {
					t.Errorf("%s = %v for the exact answer %s; want 1 (metrics %v)", k, m[k], answer, m)
				}
			}
			res, err := p.Parse(ctx, tc.path, []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if sym, ok := symbols.Innermost(res.Symbols, tc.line); !ok || sym.Name != tc.want {
				t.Errorf("functionsOf would name %q (%v), want %q", sym.Name, ok, tc.want)
			}
		})
	}
}
