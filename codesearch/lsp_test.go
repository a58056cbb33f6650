package codesearch

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/repo"
)

// TestLSPTools runs definition and references against the real language
// servers, on a commit (checked out into a worktree for the server) of a
// repository made here.
func TestLSPTools(t *testing.T) {
	tests := []struct {
		server string
		files  map[string]string
		// a call on the use in the caller, and what its answer holds
		defArgs, refArgs string
		wantDef          string
		wantRefs         []string
	}{{
		server: "gopls",
		files: map[string]string{
			"go.mod":    "module example.com/m\n\ngo 1.22\n",
			"util/u.go": "package util\n\n// Helper doubles x.\nfunc Helper(x int) int {\n\treturn 2 * x\n}\n",
			"main.go":   "package main\n\nimport \"example.com/m/util\"\n\nfunc main() {\n\tprintln(util.Helper(1), util.Helper(2))\n}\n",
		},
		defArgs:  `{"path":"main.go","line":6,"symbol":"Helper","occurrence":2}`,
		refArgs:  `{"path":"util/u.go","line":4,"symbol":"Helper"}`,
		wantDef:  "1 definitions of Helper:\nutil/u.go:4: func Helper(x int) int {\n",
		wantRefs: []string{"main.go:6: println(util.Helper(1), util.Helper(2))", "util/u.go:4: func Helper(x int) int {"},
	}, {
		server: "pyright-langserver",
		files: map[string]string{
			"pkg/__init__.py": "",
			"pkg/util.py":     "def helper(x):\n    return 2 * x\n",
			"main.py":         "from pkg.util import helper\n\nprint(helper(1) + helper(2))\n",
		},
		defArgs:  `{"path":"main.py","line":3,"symbol":"helper","occurrence":2}`,
		refArgs:  `{"path":"pkg/util.py","line":1,"symbol":"helper"}`,
		wantDef:  "pkg/util.py:1: def helper(x):\n",
		wantRefs: []string{"main.py:1: from pkg.util import helper", "main.py:3: print(helper(1) + helper(2))", "pkg/util.py:1: def helper(x):"},
	}}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			if _, err := exec.LookPath(tt.server); err != nil {
				t.Skipf("%s is not on PATH (install: go install golang.org/x/tools/gopls@v0.23.0; npm install -g pyright)", tt.server)
			}
			gittest.Need(t)
			dir := filepath.Join(t.TempDir(), "repo")
			gittest.WriteFiles(t, dir, tt.files)
			git(t, dir, "init", "-q")
			git(t, dir, "add", ".")
			git(t, dir, "commit", "-q", "-m", "one")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r, err := repo.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := OpenCommit(ctx, r, "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Call(ctx, Definition, []byte(tt.defArgs)); !errors.Is(err, ErrUnknownTool) {
				t.Errorf("definition before StartLSP: %v, want ErrUnknownTool", err)
			}
			ok, err := s.StartLSP(ctx, true)
			if err != nil || !ok {
				t.Fatalf("StartLSP: %v, %v", ok, err)
			}
			tools, _ := s.Tools()
			if n := len(tools); n != len(ToolNames()) {
				t.Errorf("with a server, Tools() lists %d tools, want %d", n, len(ToolNames()))
			}
			def, err := s.Call(ctx, Definition, []byte(tt.defArgs))
			if err != nil || !strings.Contains(def, tt.wantDef) {
				t.Errorf("definition: %q, %v; want it to hold %q", def, err, tt.wantDef)
			}
			refs, err := s.Call(ctx, References, []byte(tt.refArgs))
			if err != nil {
				t.Fatalf("references: %v", err)
			}
			for _, w := range tt.wantRefs {
				if !strings.Contains(refs, w) {
					t.Errorf("references: %q lacks %q", refs, w)
				}
			}
			for _, bad := range []string{`{"path":"../x.go","line":1,"symbol":"x"}`, `{"path":"main.go","line":1,"symbol":"NoSuchName"}`, `{"path":"main.go"}`} {
				if _, err := s.Call(ctx, Definition, []byte(bad)); err == nil {
					t.Errorf("definition %s: no error", bad)
				}
			}
			if err := s.StopLSP(ctx); err != nil {
				t.Errorf("StopLSP: %v", err)
			}
			if out := git(t, dir, "worktree", "list"); strings.Count(out, "\n") != 0 {
				t.Errorf("worktrees left after StopLSP:\n%s", out)
			}
		})
	}
}

func TestWordAt(t *testing.T) {
	for _, tt := range []struct {
		line, word string
		n, want    int
		ok         bool
	}{
		{"a(helper_x, helper)", "helper", 1, 12, true},
		{"helper(helper)", "helper", 2, 7, true},
		{"xhelper", "helper", 1, 0, false},
	} {
		got, ok := wordAt(tt.line, tt.word, tt.n)
		if got != tt.want || ok != tt.ok {
			t.Errorf("wordAt(%q, %q, %d) = %d, %v; want %d, %v", tt.line, tt.word, tt.n, got, ok, tt.want, tt.ok)
		}
	}
}
