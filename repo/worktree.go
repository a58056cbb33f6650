package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchbench/patchbench/internal/flock"
)

// Worktree is a detached working tree made by [Repo.AddWorktree] for the test
// stage. Remove it when done.
type Worktree struct {
	// Dir is the absolute path of the working tree.
	Dir string
	// Commit is the full object name of the commit checked out.
	Commit string

	repo  *Repo
	admin string // the worktree's administrative directory, .git/worktrees/NAME
}

// AddWorktree checks out revision rev, detached, into a new working tree at
// dir. dir must not exist or must be empty. It works on bare repositories and
// mirrors. Hooks are not run, and core.autocrlf is off so files match what
// [Repo.ReadFile] returns; Git LFS files are left as pointers.
//
// "git worktree add --detach --no-checkout" registers the worktree, one at a
// time per repository across processes (see [Repo.lockWorktrees]); the
// checkout ("git reset --hard" in the new tree) then runs concurrently with
// other worktrees'.
func (r *Repo) AddWorktree(ctx context.Context, rev, dir string) (*Worktree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("repo: add worktree %s at %s in %s: %w", rev, dir, r.name, err)
	}
	fail := func(err error) (*Worktree, error) {
		return nil, fmt.Errorf("repo: add worktree %s at %s in %s: %w", rev, abs, r.name, err)
	}
	commit, err := r.resolve(ctx, rev, "commit")
	if err != nil {
		return fail(err)
	}
	unlock, err := r.lockWorktrees(ctx)
	if err != nil {
		return fail(err)
	}
	_, err = r.output(ctx, "-c", "core.hooksPath="+os.DevNull,
		"worktree", "add", "--detach", "--no-checkout", "--quiet", abs, commit)
	unlock()
	if err != nil {
		return fail(err)
	}
	w := &Worktree{Dir: abs, Commit: commit, repo: r}
	// The .git file names the administrative directory; Remove deletes it
	// rather than running "git worktree prune".
	if b, err := os.ReadFile(filepath.Join(abs, ".git")); err == nil {
		if d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			w.admin = d
		}
	}
	_, err = gitOutputEnv(ctx, r.git, abs, []string{"GIT_LFS_SKIP_SMUDGE=1"},
		"-c", "core.hooksPath="+os.DevNull, "-c", "core.autocrlf=false",
		"reset", "--hard", "--quiet", commit)
	if err != nil {
		// Leave nothing behind, even if ctx has ended.
		rmErr := w.Remove(context.WithoutCancel(ctx))
		return fail(errors.Join(err, rmErr))
	}
	return w, nil
}

// Remove deletes the working tree's directory, then its administrative
// directory. Files the test stage made read-only are removed too. Removing a
// worktree whose directory is already gone is not an error. (Deleting the
// directory directly rather than with "git worktree remove" lets removals
// run in parallel, and removes trees git refuses to: locked, with
// submodules, half checked out.)
//
// Only this worktree's own administrative directory is deleted. "git
// worktree prune" is not run: it scans every entry and deletes one that a
// concurrent "git worktree add" in another process has created but not yet
// locked, which broke that add ("failed to read .../commondir").
func (w *Worktree) Remove(ctx context.Context) error {
	r := w.repo
	if err := removeAll(w.Dir); err != nil {
		return fmt.Errorf("repo: remove worktree %s in %s: %w", w.Dir, r.name, err)
	}
	unlock, err := r.lockWorktrees(ctx)
	if err != nil {
		return fmt.Errorf("repo: remove worktree %s in %s: %w", w.Dir, r.name, err)
	}
	defer unlock()
	wtRoot := filepath.Join(r.gitDir, "worktrees") + string(filepath.Separator)
	if w.admin != "" && strings.HasPrefix(filepath.Clean(w.admin), wtRoot) {
		err = removeAll(w.admin)
	} else {
		// Not a layout we know: let git find what is stale.
		_, err = r.output(ctx, "worktree", "prune")
	}
	if err != nil {
		return fmt.Errorf("repo: remove worktree %s in %s: %w", w.Dir, r.name, err)
	}
	return nil
}

// lockWorktrees serializes changes to the worktree list, within the process
// (wtMu) and across processes (a flock in the git directory): git reads every
// worktree's files when it adds one, and fails on one that a concurrent add
// has half written.
func (r *Repo) lockWorktrees(ctx context.Context) (unlock func(), err error) {
	r.wtMu.Lock()
	l, err := flock.Acquire(ctx, filepath.Join(r.gitDir, "patchbench-worktrees.lock"), false)
	if err != nil {
		r.wtMu.Unlock()
		return nil, err
	}
	return func() { l.Release(); r.wtMu.Unlock() }, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// removeAll is os.RemoveAll that first makes read-only directories under p
// writable, as test suites (and Go's module cache) leave them.
func removeAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
