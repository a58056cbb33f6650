package codesearch

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/repo"
)

func TestPyImports(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []pyImport
	}{
		{"import os\n", []pyImport{{module: "os", line: 1}}},
		{"import a.b as c, d\n", []pyImport{{module: "a.b", alias: "c", line: 1}, {module: "d", line: 1}}},
		{"x = 1\nfrom .core import (\n    f,\n    g as h,  # why\n)\n", []pyImport{{module: ".core", name: "f", line: 2}, {module: ".core", name: "g", alias: "h", line: 2}}},
		{"from .. import x\n", []pyImport{{module: "..", name: "x", line: 1}}},
		{"    from a.b import *\n", []pyImport{{module: "a.b", name: "*", line: 1}}},
		{"from a import b, \\\n    c\n", []pyImport{{module: "a", name: "b", line: 1}, {module: "a", name: "c", line: 1}}},
		{">>> import dask.array as da\n", []pyImport{{module: "dask.array", alias: "da", line: 1}}},
		{"In [1]: from networkx import path_graph\n", []pyImport{{module: "networkx", name: "path_graph", line: 1}}},
		// Prose and broken statements are not imports.
		{"important: from here import it\nimport\nfrom x import\nimports are slow\n", nil},
	} {
		got := pyImports(tc.src)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(pyImport{})); diff != "" {
			t.Errorf("pyImports(%q) (-want +got):\n%s", tc.src, diff)
		}
	}
}

// importRepo is a small repository whose API re-exports its classes from
// where they are defined (as keras, networkx and dask do), with a Go and
// a JavaScript import.
func importRepo(t *testing.T) *Index {
	t.Helper()
	gittest.Need(t)
	dir := filepath.Join(t.TempDir(), "repo")
	files := map[string]string{
		"pkg/__init__.py":      "from pkg.api import *\n",
		"pkg/api/__init__.py":  "from pkg.impl.dense import Dense\nfrom .ops import matmul as mm\n",
		"pkg/api/ops.py":       "def matmul(a, b):\n    return a\n",
		"pkg/impl/dense.py":    "class Dense:\n    def call(self, x):\n        return x\n",
		"pkg/impl/other.py":    "class Dense:\n    pass\n",
		"pkg/util.py":          "import pkg.impl.dense\nimport numpy as np\n",
		"cmd/main.go":          "package main\n\nimport (\n\t\"fmt\"\n\tx \"example.com/proj/lib\"\n)\n\nfunc main() { fmt.Println(x.F()) }\n",
		"lib/lib.go":           "package lib\n\nfunc F() int { return 1 }\n",
		"lib/lib_test.go":      "package lib\n",
		"web/app.js":           "import { f } from './util';\nconst g = require(\"../web/other\");\n",
		"web/util.js":          "export function f() {}\n",
		"web/other.js":         "module.exports = {};\n",
		"tests/test_dense.py":  "from pkg.impl.dense import Dense\n",
		"pkg/impl/__init__.py": "",
	}
	gittest.CommitFiles(t, dir, files)
	r, err := repo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ix, err := BuildIndex(context.Background(), r, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	// The imports survive the index file.
	path := filepath.Join(t.TempDir(), "ix")
	if err := writeIndex(path, ix); err != nil {
		t.Fatal(err)
	}
	back, err := readIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ix.Imports, back.Imports); diff != "" || len(ix.Imports) == 0 {
		t.Fatalf("imports after the index file (-built +read):\n%s", diff)
	}
	return back
}

func TestImportGraph(t *testing.T) {
	ix := importRepo(t)
	g := ix.tables().importGraph(ix)
	for file, want := range map[string][]string{
		"pkg/__init__.py":     {"pkg/api/__init__.py"},
		"pkg/api/__init__.py": {"pkg/impl/dense.py", "pkg/api/ops.py"},
		"pkg/util.py":         {"pkg/impl/dense.py"}, // numpy is not the repository's
		"cmd/main.go":         {"lib/lib.go"},        // fmt is not; the test file is not the package's API
		"web/app.js":          {"web/util.js", "web/other.js"},
	} {
		if diff := cmp.Diff(want, g.out[file]); diff != "" {
			t.Errorf("%s imports (-want +got):\n%s", file, diff)
		}
	}
	if got := g.in["pkg/impl/dense.py"]; !slices.Contains(got, "tests/test_dense.py") || !slices.Contains(got, "pkg/util.py") {
		t.Errorf("pkg/impl/dense.py imported by %q", got)
	}
}

// TestCalled: what the query's code uses through a module is followed to
// the file defining it, through aliases, * imports and re-exports under
// another name; a name the module does not reach resolves to nothing.
func TestCalled(t *testing.T) {
	ix := importRepo(t)
	for _, tc := range []struct {
		query string
		files []string
		fn    string
	}{
		{"Dense breaks\n```python\nimport pkg as p\nlayer = p.Dense()\n```", []string{"pkg/impl/dense.py"}, ""},
		{"call fails\nCalling pkg.api.Dense.call(x) fails", []string{"pkg/impl/dense.py"}, "pkg/impl/dense.py:Dense.call"},
		{"mm is wrong\n```\nfrom pkg.api import mm\n```", []string{"pkg/api/ops.py"}, ""},
		{"nothing\n```\nfrom pkg.api import Sparse\nimport numpy as np\nnp.zeros(3)\n```", nil, ""},
	} {
		is := parseIssue(tc.query, true)
		files, funcs := ix.tables().called(ix, &is, map[string]Chunk{})
		if diff := cmp.Diff(tc.files, files.order(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q: files (-want +got):\n%s", tc.query, diff)
		}
		if tc.fn != "" && !slices.Contains(funcs.order(), tc.fn) {
			t.Errorf("%q: functions %q lack %s", tc.query, funcs.order(), tc.fn)
		}
	}
	// The imports signal ranks the neighbours of the named file that
	// BM25 scores, a seed's many links weighing less each.
	is := parseIssue("Dense broken in pkg/impl/dense.py", true)
	got := ix.tables().neighbours(ix, &is, ranked{"pkg/util.py": 1, "pkg/api/__init__.py": 2, "pkg/api/ops.py": 3, "lib/lib.go": 4}).order()
	if want := []string{"pkg/api/__init__.py", "pkg/util.py"}; !cmp.Equal(got, want) {
		t.Errorf("neighbours = %q, want %q", got, want)
	}
}

func FuzzPyImports(f *testing.F) {
	f.Add("from .a import (b,\n c as d)\nimport x.y as z\n")
	f.Add("from a import b \\\n, c\n>>> import q\n")
	f.Fuzz(func(t *testing.T, src string) {
		lines := strings.Count(src, "\n") + 1
		for _, im := range pyImports(src) {
			if im.line < 1 || im.line > lines {
				t.Fatalf("line %d of %d: %+v", im.line, lines, im)
			}
			if im.name != "" && im.name != "*" && !pyIdentRe.MatchString(im.name) || im.alias != "" && !pyIdentRe.MatchString(im.alias) {
				t.Fatalf("name or alias not an identifier: %+v", im)
			}
			if rest := strings.TrimLeft(im.module, "."); rest != "" && !pyModuleRe.MatchString(rest) || im.module == "" {
				t.Fatalf("module %q", im.module)
			}
		}
	})
}
