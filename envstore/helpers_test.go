package envstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/sandbox"
)

// Setup commands of the test histories: no network, build outputs inside the
// tree, and outputs that do not depend on where the tree is (-trimpath;
// compileall of "." with hash-checked .pyc files).
const (
	goSetup     = "GOCACHE=$PWD/.cache/go-build GOFLAGS='-mod=mod -trimpath' GOPROXY=off GOTOOLCHAIN=local GONOSUMDB=* GOSUMDB=off go build ./..."
	pySetupArgs = " -m compileall -q --invalidation-mode checked-hash ."
)

// pySetup is the Python setup with an interpreter the sandbox shows
// (Debian's under /usr; the sandbox does not show a home directory's pyenv),
// else the interpreter's real path: a pyenv shim would add seconds to each
// run.
var pySetup = sync.OnceValue(func() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3" + pySetupArgs
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "python3" + pySetupArgs
	}
	return strings.TrimSpace(string(out)) + pySetupArgs
})

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, dir, name, content string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// makeHistory makes a git repository of the given kind ("go" or "python")
// with n commits and returns its directory and commit ids, oldest first.
// Every commit changes one source file; some add a package, an executable
// script, a symlink, an empty file, a duplicate of another file.
func makeHistory(t testing.TB, kind string, n int) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), kind)
	os.MkdirAll(dir, 0o755)
	git(t, dir, "init", "-q", "-b", "main")
	var commits []string
	for i := range n {
		switch kind {
		case "go":
			if i == 0 {
				writeFile(t, dir, "go.mod", "module example.com/m\n\ngo 1.22\n", 0o644)
			}
			writeFile(t, dir, "a/a.go", fmt.Sprintf("// Package a is commit %d.\npackage a\n\n// N is the commit.\nconst N = %d\n\nfunc F(x int) int { return x * N }\n", i, i), 0o644)
			if i%5 == 1 {
				writeFile(t, dir, fmt.Sprintf("p%d/p.go", i), fmt.Sprintf("package p%d\n\nimport \"example.com/m/a\"\n\nfunc G() int { return a.F(%d) }\n", i, i), 0o644)
			}
		case "python":
			if i == 0 {
				writeFile(t, dir, "pkg/__init__.py", "", 0o644)
				writeFile(t, dir, "pyproject.toml", "[project]\nname = \"pkg\"\nversion = \"0.1\"\n", 0o644)
			}
			writeFile(t, dir, "pkg/core.py", fmt.Sprintf("\"\"\"Commit %d.\"\"\"\n\nN = %d\n\n\ndef f(x):\n    return x * N\n", i, i), 0o644)
			if i%5 == 1 {
				writeFile(t, dir, fmt.Sprintf("pkg/m%d.py", i), fmt.Sprintf("from . import core\n\n\ndef g():\n    return core.f(%d)\n", i), 0o644)
			}
		}
		switch i {
		case 0:
			writeFile(t, dir, "README", "readme\n", 0o644)
			writeFile(t, dir, "COPY", "readme\n", 0o644) // same content as README: one object
			writeFile(t, dir, "empty", "", 0o644)
			// Most of a real tree does not change from commit to commit.
			for j := range 150 {
				writeFile(t, dir, fmt.Sprintf("data/f%03d.txt", j), strings.Repeat(fmt.Sprintf("line %d of file %d\n", j*7, j), 60+j), 0o644)
			}
		case 2:
			writeFile(t, dir, "scripts/run.sh", "#!/bin/sh\necho run\n", 0o755)
			writeFile(t, dir, "scripts/notexec", "#!/bin/sh\necho run\n", 0o644) // same content, not executable
		case 3:
			if err := os.Symlink("README", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../nowhere", filepath.Join(dir, "dangling")); err != nil {
				t.Fatal(err)
			}
		case 10:
			writeFile(t, dir, "scripts/run.sh", "#!/bin/sh\necho run 10\n", 0o755)
		}
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		commits = append(commits, git(t, dir, "rev-parse", "HEAD"))
	}
	return dir, commits
}

// runner is the sandbox the tests build in: bubblewrap where it works.
var runner = sync.OnceValue(func() sandbox.Runner { return sandbox.Detect(context.Background()) })

func openRepo(t testing.TB, dir string) *repo.Repo {
	t.Helper()
	r, err := repo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// treeEntry is what a tree comparison looks at.
type treeEntry struct {
	typ     string
	mode    fs.FileMode
	content string // file content or symlink target
}

func readTree(t testing.TB, dir string) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := treeEntry{mode: info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		switch {
		case info.IsDir():
			e.typ = "dir"
		case info.Mode()&fs.ModeSymlink != 0:
			e.typ = "symlink"
			e.content, err = os.Readlink(p)
		case info.Mode().IsRegular():
			e.typ = "file"
			var b []byte
			b, err = os.ReadFile(p)
			e.content = string(b)
		default:
			e.typ = "other"
		}
		out[filepath.ToSlash(rel)] = e
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compareTrees fails t unless got has exactly want's paths, types, file
// contents and symlink targets, and modes: exactly, or, for hard-linked
// files (linked), the mode less its write bits.
func compareTrees(t testing.TB, want, got map[string]treeEntry, linked bool) {
	t.Helper()
	n := 0
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s: missing from the restored tree", p)
		} else {
			mode := w.mode
			if linked && w.typ == "file" && (mode == 0o644 || mode == 0o755) {
				mode &^= 0o222
			}
			if g.typ != w.typ || g.content != w.content || g.mode != mode {
				t.Errorf("%s: restored %s %04o (%d bytes), want %s %04o (%d bytes)", p, g.typ, g.mode, len(g.content), w.typ, mode, len(w.content))
			}
		}
		if n++; t.Failed() && n > 20 {
			t.FailNow()
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: restored but not in the built tree", p)
		}
	}
}

func mustVerify(t testing.TB, s *Store) *VerifyReport {
	t.Helper()
	rep, err := s.Verify(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verify: %q", rep.Problems)
	}
	return rep
}

// copyTree copies a tree as it is (cp -a), to keep what a setup left.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
}

func jsonLine(v any) string {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(v)
	return b.String()
}

func sandboxCommand(dir, script string) sandbox.Command {
	return sandbox.Command{Dir: dir, Args: []string{"/bin/sh", "-c", script}}
}

func openRepoErr(dir string) (*repo.Repo, error) { return repo.Open(context.Background(), dir) }

// builtStore makes a Python history of n commits and a store at dir with
// the environment of the last one built (compileall), and returns the store
// and the commits.
func builtStore(t testing.TB, dir string, n int) (*Store, []string) {
	t.Helper()
	repoDir, commits := makeHistory(t, "python", n)
	r := openRepo(t, repoDir)
	s := openStore(t, dir)
	res, err := s.Build(context.Background(), r, commits[n-1:], BuildOptions{Setup: pySetup(), Runner: runner()})
	if err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build: %v %+v", err, res)
	}
	return s, commits
}

// storeUnchanged fails t for each store file (storeHash) that after does
// not have as before had it, and when after has more.
func storeUnchanged(t *testing.T, before, after map[string]treeEntry) {
	t.Helper()
	for p, e := range before {
		if after[p] != e {
			t.Errorf("store file %s changed through the restore", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("the store has %d files after, %d before", len(after), len(before))
	}
}
