//go:build cgo

package symbols

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/internal/testdata"
)

// checkout clones a bundle of ../shared/data/repos into a temporary
// directory and returns the files with the given extension.
func checkout(t *testing.T, bundle, ext string) (dir string, files []string) {
	t.Helper()
	gittest.Need(t)
	src := filepath.Join(testdata.SharedDir(), "repos", bundle)
	if _, err := os.Stat(src); err != nil {
		t.Skipf("%s not found: the shared corpus is not beside this checkout", src)
	}
	dir = filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("git", "clone", "-q", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone %s: %v: %s", bundle, err, out)
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ext) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("%s: only %d %s files", bundle, len(files), ext)
	}
	return dir, files
}

func lines(t *testing.T, p *Parser, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Parse(context.Background(), path, src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range res.Symbols {
		out = append(out, fmt.Sprintf("%s\t%s %s %d %d", path, s.Name, s.Kind, s.Start, s.End))
	}
	return out
}

// TestClickMatchesPythonAST parses every Python file of the click
// repository and compares the symbols with those of Python's own ast module.
func TestClickMatchesPythonAST(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	_, files := checkout(t, "click.bundle", ".py")
	cmd := exec.Command(py, "testdata/pyast.py")
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyast.py: %v", err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	p := NewParser()
	defer p.Close()
	var got []string
	for _, f := range files {
		got = append(got, lines(t, p, f)...)
	}
	agree(t, "click", "python ast", len(files), 500, want, got)
}

// TestCobraMatchesGoAST parses every Go file of the cobra repository and
// compares the symbols with those go/ast finds.
func TestCobraMatchesGoAST(t *testing.T) {
	_, files := checkout(t, "cobra.bundle", ".go")
	p := NewParser()
	defer p.Close()
	var want, got []string
	for _, f := range files {
		got = append(got, lines(t, p, f)...)
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		add := func(name string, kind Kind, n ast.Node) {
			want = append(want, fmt.Sprintf("%s\t%s %s %d %d", f, name, kind,
				fset.Position(n.Pos()).Line, fset.Position(n.End()).Line))
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(d.Name.Name, Function, d)
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if g, ok := typ.(*ast.IndexExpr); ok {
					typ = g.X
				}
				if g, ok := typ.(*ast.IndexListExpr); ok {
					typ = g.X
				}
				add(typ.(*ast.Ident).Name+"."+d.Name.Name, Method, d)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						add(ts.Name.Name, Class, ts)
					}
				}
			}
		}
	}
	agree(t, "cobra", "go/ast", len(files), 300, want, got)
}

// agree compares the symbol lines of package symbols (got) with an
// oracle's (want), which must have found at least atLeast.
func agree(t *testing.T, repo, oracle string, files, atLeast int, want, got []string) {
	t.Helper()
	sort.Strings(want)
	sort.Strings(got)
	if len(want) < atLeast {
		t.Fatalf("%s found only %d symbols in %s", oracle, len(want), repo)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: tree-sitter vs %s (-%s +tree-sitter):\n%s", repo, oracle, oracle, diff)
	}
	t.Logf("%s: %d files, %d symbols agree with %s", repo, files, len(got), oracle)
}

// TestDevCorpusLanguages parses the real files of diffxyz-dev (Go, Java,
// JavaScript, Python, Rust, Kotlin from public repositories) and checks what
// holds for any correct symbol list: most files parse cleanly and have
// symbols, every range lies inside the file, and a symbol's own name is
// written on one of its first lines.
func TestDevCorpusLanguages(t *testing.T) {
	rows := testdata.LoadShared[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	p := NewParser()
	defer p.Close()
	type tally struct{ files, clean, withSyms, syms int }
	per := map[Language]*tally{}
	for _, r := range rows {
		lang := LanguageOf(r.Path)
		if lang == "" {
			t.Errorf("%s: no language for a %s file", r.Path, r.Lang)
			continue
		}
		res, err := p.Parse(context.Background(), r.Path, []byte(r.OldCode))
		if err != nil {
			t.Fatal(err)
		}
		tl := per[lang]
		if tl == nil {
			tl = &tally{}
			per[lang] = tl
		}
		if strings.HasSuffix(r.Path, ".kts") {
			// Gradle scripts are statements, no definitions.
			continue
		}
		tl.files++
		if !res.HasError {
			tl.clean++
		}
		if len(res.Symbols) > 0 {
			tl.withSyms++
		}
		tl.syms += len(res.Symbols)
		src := strings.Split(r.OldCode, "\n")
		for _, s := range res.Symbols {
			if s.Start < 1 || s.End < s.Start || s.End > res.Lines {
				t.Errorf("%s %s: range %d-%d outside 1-%d", r.ID, s.Name, s.Start, s.End, res.Lines)
				continue
			}
			base := s.Name[strings.LastIndex(s.Name, ".")+1:]
			head := strings.Join(src[s.Start-1:min(s.End, s.Start+12)], "\n")
			if base != "constructor" && base != "Companion" && !strings.Contains(head, base) {
				t.Errorf("%s %s: name not on lines %d-%d", r.ID, s.Name, s.Start, min(s.End, s.Start+12))
			}
		}
	}
	for _, lang := range []Language{Go, Java, JavaScript, Python, Rust, Kotlin} {
		tl := per[lang]
		if tl == nil {
			t.Errorf("%s: no files in the corpus", lang)
			continue
		}
		t.Logf("%-10s %3d files, %3d clean, %3d with symbols, %4d symbols", lang, tl.files, tl.clean, tl.withSyms, tl.syms)
		// Rust's floor is lower: ripgrep's 2015-edition files use try!, a
		// keyword in the current grammar, and keep their symbols anyway.
		if tl.clean*10 < tl.files*6 || tl.withSyms*10 < tl.files*7 {
			t.Errorf("%s: %d of %d files clean, %d with symbols: the grammar does not fit", lang, tl.clean, tl.files, tl.withSyms)
		}
	}
}
