package codesearch

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// TestPythonDefsMatchSymbols holds the index's line scanner to the
// tree-sitter symbols on every Python file of click.
func TestPythonDefsMatchSymbols(t *testing.T) {
	gittest.Need(t)
	bundle := filepath.Join(testdata.SharedDir(), "repos", "click.bundle")
	dir := filepath.Join(t.TempDir(), "click.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", bundle, dir).CombinedOutput(); err != nil {
		t.Skipf("click bundle: %v: %s", err, out)
	}
	ctx := context.Background()
	rp, err := repo.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	files, err := rp.ListFiles(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	p := symbols.NewParser()
	defer p.Close()
	n, syms := 0, 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".py") {
			continue
		}
		src, err := rp.ReadFile(ctx, "HEAD", f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Parse(ctx, f, src)
		if err != nil {
			t.Fatal(err)
		}
		format := func(ss []symbols.Symbol) []string {
			var out []string
			for _, s := range ss {
				out = append(out, fmt.Sprintf("%s %s %d-%d", s.Name, s.Kind, s.Start, s.End))
			}
			return out
		}
		if diff := cmp.Diff(format(res.Symbols), format(pythonDefs(string(src)))); diff != "" {
			t.Errorf("%s (-tree-sitter +scanner):\n%s", f, diff)
		}
		n++
		syms += len(res.Symbols)
	}
	if n < 50 || syms < 1000 {
		t.Fatalf("only %d files, %d symbols", n, syms)
	}
	t.Logf("%d files, %d symbols agree", n, syms)
}

func TestPythonDefsStringsAndBrackets(t *testing.T) {
	src := `class A:
    def f(self):
        x = """
not code
def g():
"""
        y = call(
1, 2)
        return x

    # trailing comment

def h(): pass
`
	got := fmt.Sprint(pythonDefs(src))
	want := "[{A class 1 9} {A.f method 2 9} {h function 13 13}]"
	if got != want {
		t.Errorf("pythonDefs = %s, want %s", got, want)
	}
}
