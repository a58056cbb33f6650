package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// checkTree compares the files of a working tree with want.
func checkTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if string(got) != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
}

func TestWorktreeOnBareMirror(t *testing.T) {
	f := newFixture(t, t.TempDir())
	mirror := filepath.Join(t.TempDir(), "mirror")
	git(t, "", "clone", "-q", "--mirror", f.dir, mirror)
	r := openT(t, mirror)
	ctx := t.Context()

	dir := filepath.Join(t.TempDir(), "wt")
	w, err := r.AddWorktree(ctx, f.c1[:8], dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Commit != f.c1 || w.Dir != dir {
		t.Errorf("worktree = %+v, want commit %s in %s", w, f.c1, dir)
	}
	checkTree(t, dir, f.at1)
	if head := git(t, dir, "rev-parse", "HEAD"); head != f.c1 {
		t.Errorf("HEAD = %s, want %s", head, f.c1)
	}
	if status := git(t, dir, "status", "--porcelain"); status != "" {
		t.Errorf("fresh worktree is not clean:\n%s", status)
	}
	// The test stage writes in it, even read-only directories.
	writeFiles(t, dir, map[string]string{"a.txt": "changed\n", "untracked/x": "x"})
	if err := os.Chmod(filepath.Join(dir, "untracked"), 0o500); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("worktree directory still there after Remove: %v", err)
	}
	if list := git(t, mirror, "worktree", "list", "--porcelain"); strings.Contains(list, dir) {
		t.Errorf("git still lists the removed worktree:\n%s", list)
	}
	// Removing twice is harmless.
	if err := w.Remove(ctx); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestWorktreeOnNonBare(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	dir := filepath.Join(t.TempDir(), "wt")
	w, err := r.AddWorktree(t.Context(), "v1", dir)
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, dir, f.at1)
	// The main working tree is untouched.
	checkTree(t, f.dir, f.at2)
	if err := w.Remove(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("worktree directory still there after Remove: %v", err)
	}
}

func TestWorktreeAlreadyDeleted(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	dir := filepath.Join(t.TempDir(), "wt")
	w, err := r.AddWorktree(t.Context(), f.c2, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(t.Context()); err != nil {
		t.Fatal(err)
	}
	if list := git(t, f.dir, "worktree", "list", "--porcelain"); strings.Contains(list, dir) {
		t.Errorf("git still lists the removed worktree:\n%s", list)
	}
}

func TestWorktreeErrors(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	dir := filepath.Join(t.TempDir(), "wt")
	if _, err := r.AddWorktree(t.Context(), "no-such-branch", dir); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("AddWorktree(unknown revision) = %v, want ErrUnknownRevision", err)
	}
	// A non-empty directory is refused.
	writeFiles(t, dir, map[string]string{"x": "x"})
	if _, err := r.AddWorktree(t.Context(), "main", dir); err == nil {
		t.Error("AddWorktree into a non-empty directory succeeded")
	} else if !strings.HasPrefix(err.Error(), "repo: add worktree main at "+dir) {
		t.Errorf("error %q does not say what and where", err)
	}
}

func TestConcurrentWorktrees(t *testing.T) {
	f := newFixture(t, t.TempDir())
	mirror := filepath.Join(t.TempDir(), "mirror")
	git(t, "", "clone", "-q", "--mirror", f.dir, mirror)
	r := openT(t, mirror)
	base := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rev, want := f.c1, f.at1
			if i%2 == 1 {
				rev, want = f.c2, f.at2
			}
			// Same base name in different parents: git must keep them apart.
			dir := filepath.Join(base, fmt.Sprint(i), "wt")
			w, err := r.AddWorktree(t.Context(), rev, dir)
			if err != nil {
				t.Error(err)
				return
			}
			checkTree(t, dir, want)
			if err := w.Remove(t.Context()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if list := git(t, mirror, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left behind:\n%s", list)
	}
}

// worktreeChurn is a child process of TestWorktreesAcrossProcesses: it adds
// and removes worktrees of the repository at dir, and reports the first
// failure.
func worktreeChurn(dir string) int {
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer r.Close()
	base, err := os.MkdirTemp("", "churn")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(base)
	for i := 0; i < 15; i++ {
		w, err := r.AddWorktree(ctx, "HEAD", filepath.Join(base, fmt.Sprint(i), "tree"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := os.Stat(filepath.Join(w.Dir, "a.txt")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := w.Remove(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// Builds of the environment store run as separate processes on one
// repository. An add in one process must not be broken by a removal in
// another: "git worktree prune" deleted the entry of an add that had created
// its directory but not yet locked it, and the add failed reading commondir.
func TestWorktreesAcrossProcesses(t *testing.T) {
	f := newFixture(t, t.TempDir())
	const procs = 6
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "REPO_TEST_WORKTREE_CHURN="+f.dir)
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Errorf("process %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	if list := git(t, f.dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left registered:\n%s", list)
	}
	if ents, _ := os.ReadDir(filepath.Join(f.dir, ".git", "worktrees")); len(ents) != 0 {
		t.Errorf("%d administrative directories left in .git/worktrees", len(ents))
	}
}
