package codesearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/repo"
)

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gittest.Run(t, dir, "", args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(out)
}

// fixture makes a repository with a few Python files, a long file, a
// binary file, a link leading out and one staying inside, and a secret
// file beside the repository that no tool may read.
func fixture(t *testing.T) (dir, commit string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "repo")
	gittest.WriteFiles(t, base, map[string]string{"secret.txt": "TOP SECRET needle\n"})
	var long strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&long, "line %d needle\n", i)
	}
	gittest.WriteFiles(t, dir, map[string]string{
		"README.md":                "A project.\n",
		"pkg/core/add.py":          "class Add:\n    def flatten(self):\n        return needle(self)\n",
		"pkg/core/mul.py":          "def needle(x):\n    return x * 2\n",
		"pkg/core/tests/test_a.py": "from pkg.core.add import Add\n\ndef test_add():\n    assert Add().flatten()\n",
		"pkg/util.py":              "NEEDLE = 1\n",
		"long.txt":                 long.String(),
		"blob.bin":                 "needle\x00\x01\x02",
	})
	git(t, dir, "init", "-q")
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pkg/util.py", filepath.Join(dir, "in.py")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "one")
	commit = git(t, dir, "rev-parse", "HEAD")
	// A later commit changes a file: the commit snapshot must not see it.
	gittest.WriteFiles(t, dir, map[string]string{"pkg/util.py": "NEEDLE = 2\n"})
	git(t, dir, "commit", "-q", "-am", "two")
	gittest.WriteFiles(t, dir, map[string]string{"pkg/util.py": "NEEDLE = 1\n"}) // the working tree as at commit one
	return dir, commit
}

// snapshots opens the fixture's first commit and its working tree.
func snapshots(t *testing.T) map[string]*Snapshot {
	gittest.Need(t)
	dir, commit := fixture(t)
	ctx := context.Background()
	r, err := repo.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	gs, err := OpenCommit(ctx, r, commit)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gs.Close(); ds.Close() })
	return map[string]*Snapshot{"commit": gs, "dir": ds}
}

func call(t *testing.T, s *Snapshot, tool, args string) (string, error) {
	t.Helper()
	return s.Call(context.Background(), tool, json.RawMessage(args))
}

func TestTools(t *testing.T) {
	for kind, s := range snapshots(t) {
		t.Run(kind, func(t *testing.T) {
			tests := []struct {
				tool, args string
				want       []string // substrings of the answer, in order
				wantErr    error    // or an error wrapping this
			}{
				{ViewFile, `{"path":"pkg/core/add.py"}`, []string{"pkg/core/add.py, lines 1-3 of 3:\n1\tclass Add:\n2\t    def flatten(self):\n3\t        return needle(self)\n"}, nil},
				{ViewFile, `{"path":"./pkg/core/add.py","start_line":2,"end_line":2}`, []string{"lines 2-2 of 3:\n2\t    def flatten(self):\n"}, nil},
				{ViewFile, `{"path":"pkg/core/add.py","start_line":3,"end_line":99}`, []string{"lines 3-3 of 3:\n3\t"}, nil},
				{ViewFile, `{"path":"long.txt","start_line":100}`, []string{"long.txt, lines 100-499 of 1000:\n100\tline 100 needle\n", "499\tline 499 needle\n[cut at line 499: call view_file with start_line 500 to read on]"}, nil},
				{ViewFile, `{"path":"blob.bin"}`, []string{"binary file of 9 bytes"}, nil},
				{ViewFile, `{"path":"pkg/util.py"}`, []string{"1\tNEEDLE = 1\n"}, nil},
				{ViewFile, `{"path":"pkg/core/add.py","start_line":9}`, nil, ErrBadArguments},
				{ViewFile, `{"path":"pkg/core/add.py","start_line":3,"end_line":2}`, nil, ErrBadArguments},
				{ViewFile, `{"path":"pkg"}`, nil, ErrBadArguments},
				{ViewFile, `{}`, nil, ErrBadArguments},
				{ViewFile, `{"path":"a","colour":"red"}`, nil, ErrBadArguments},
				{ViewFile, `{"path":3}`, nil, ErrBadArguments},
				{ViewFile, `not json`, nil, ErrBadArguments},
				{ViewFile, `{"path":"nope.py"}`, []string{"no such file"}, nil},
				{ViewFile, `{"path":"../secret.txt"}`, nil, ErrOutside},
				{ViewFile, `{"path":"pkg/../../secret.txt"}`, nil, ErrOutside},
				{ViewFile, `{"path":"/etc/passwd"}`, nil, ErrOutside},
				{ViewFile, `{"path":".git/config"}`, nil, ErrOutside},
				{ViewFile, `{"path":"out.txt"}`, nil, ErrOutside},
				{ViewFile, `{"path":"up/secret.txt"}`, nil, ErrOutside},
				{ViewFile, `{"path":"in.py"}`, nil, ErrOutside}, // links are not followed, wherever they lead
				{ViewDirectory, `{}`, []string{"the repository root, depth 1: 7 entries\nREADME.md\nblob.bin\nin.py\nlong.txt\nout.txt\npkg/ (4 files)\nup\n"}, nil},
				{ViewDirectory, `{"path":"pkg/","depth":2}`, []string{"pkg/, depth 2: 5 entries\npkg/core/ (3 files)\npkg/core/add.py\npkg/core/mul.py\npkg/core/tests/ (1 files)\npkg/util.py\n"}, nil},
				{ViewDirectory, `{"path":"pkg/core/add.py"}`, nil, ErrBadArguments},
				{ViewDirectory, `{"path":"pkg","depth":99}`, nil, ErrBadArguments},
				{ViewDirectory, `{"path":".."}`, nil, ErrOutside},
				{ViewDirectory, `{"path":"up"}`, nil, ErrOutside},
				{ViewDirectory, `{"path":".git"}`, nil, ErrOutside},
				{ViewDirectory, `{"path":"nope"}`, []string{"no such file or directory"}, nil},
				{GrepSearch, `{"pattern":"needle","path_glob":"*.py"}`, []string{"2 matches:\npkg/core/add.py:3:         return needle(self)\npkg/core/mul.py:1: def needle(x):\n"}, nil},
				{GrepSearch, `{"pattern":"^needle","path_glob":"pkg/**/*.py","case_insensitive":true}`, []string{"1 matches:\npkg/util.py:1: NEEDLE = 1\n"}, nil},
				{GrepSearch, `{"pattern":"def (test_)?[a-z]+\\(","path_glob":"pkg/core"}`, []string{"3 matches:\npkg/core/add.py:2:     def flatten(self):\npkg/core/mul.py:1: def needle(x):\npkg/core/tests/test_a.py:3: def test_add():\n"}, nil},
				{GrepSearch, `{"pattern":"needle","path_glob":"pkg/*.py"}`, []string{"no match"}, nil},
				{GrepSearch, `{"pattern":"line [0-9]+ needle"}`, []string{"50 matches (more not shown):\nlong.txt:1: line 1 needle\n", "long.txt:50: line 50 needle\n[cut at 50 matches"}, nil},
				{GrepSearch, `{"pattern":"TOP SECRET"}`, []string{"no match"}, nil},
				{GrepSearch, `{"pattern":"needle(","path_glob":"*.py"}`, nil, ErrBadArguments},
				{GrepSearch, `{"pattern":""}`, nil, ErrBadArguments},
				{GrepSearch, `{"pattern":"x","path_glob":"../*"}`, nil, ErrOutside},
				{GrepSearch, `{"pattern":"x","path_glob":"/etc/*"}`, nil, ErrOutside},
				{GrepSearch, `{"pattern":"x","path_glob":".git/*"}`, nil, ErrOutside},
				{FindSymbol, `{"name":"flatten"}`, []string{"1 definitions:\npkg/core/add.py:2-3 method Add.flatten\n"}, nil},
				{FindSymbol, `{"name":"Add.flatten","path_glob":"pkg/core"}`, []string{"pkg/core/add.py:2-3 method Add.flatten\n"}, nil},
				{FindSymbol, `{"name":"Add"}`, []string{"1 definitions:\npkg/core/add.py:1-3 class Add\n"}, nil},
				{FindSymbol, `{"name":"needle"}`, []string{"1 definitions:\npkg/core/mul.py:1-2 function needle\n"}, nil},
				{FindSymbol, `{"name":"Mul.flatten"}`, []string{"no definition of Mul.flatten"}, nil},
				{FindSymbol, `{"name":"flatten(self)"}`, nil, ErrBadArguments},
				{FindSymbol, `{"name":"x","path_glob":"../x"}`, nil, ErrOutside},
				{"rm_rf", `{}`, nil, ErrUnknownTool},
			}
			for _, tt := range tests {
				got, err := call(t, s, tt.tool, tt.args)
				if tt.wantErr != nil || (err != nil && len(tt.want) > 0 && strings.Contains(err.Error(), tt.want[0])) {
					if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
						t.Errorf("%s %s: got %q, %v; want an error wrapping %v", tt.tool, tt.args, got, err, tt.wantErr)
					}
					if err != nil && strings.Contains(err.Error(), "SECRET") {
						t.Errorf("%s %s: the error shows the secret: %v", tt.tool, tt.args, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s %s: %v", tt.tool, tt.args, err)
					continue
				}
				rest := got
				for _, w := range tt.want {
					i := strings.Index(rest, w)
					if i < 0 {
						t.Errorf("%s %s: answer lacks %q (in order):\n%s", tt.tool, tt.args, w, got)
						break
					}
					rest = rest[i+len(w):]
				}
			}
		})
	}
}

func TestToolSchemas(t *testing.T) {
	s := snapshots(t)["commit"]
	all, err := s.Tools()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 3 {
		t.Fatalf("Tools() = %d tools", len(all))
	}
	for _, tool := range all {
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: schema %s: %v", tool.Name, tool.Parameters, err)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name, r)
			}
		}
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q too short to act on", tool.Name, tool.Description)
		}
	}
	if _, err := s.Tools(GrepSearch, "nope"); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Tools(nope): %v", err)
	}
}

func TestMatchGlob(t *testing.T) {
	for _, tt := range []struct {
		glob, name string
		want       bool
	}{
		{"*.py", "a/b/c.py", true},
		{"*.py", "c.py", true},
		{"*.py", "c.pyc", false},
		{"test_*.py", "a/test_x.py", true},
		{"a/*.py", "a/x.py", true},
		{"a/*.py", "a/b/x.py", false},
		{"a/**/*.py", "a/x.py", true},
		{"a/**/*.py", "a/b/c/x.py", true},
		{"**/tests/*", "x/tests/y", true},
		{"a/b", "a/b/c.py", true},
		{"a/b", "a/bc.py", false},
		{"a/b.py", "a/b.py", true},
	} {
		if got := matchGlob(tt.glob, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tt.glob, tt.name, got, tt.want)
		}
	}
}
