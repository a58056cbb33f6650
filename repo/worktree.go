package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Worktree is a detached working tree made by [Repo.AddWorktree] for the test
// stage. Remove it when done.
type Worktree struct {
	// Dir is the absolute path of the working tree.
	Dir string
	// Commit is the full object name of the commit checked out.
	Commit string

	repo *Repo
}

// AddWorktree checks out revision rev, detached, into a new working tree at
// dir with "git worktree add --detach". dir must not exist or must be empty.
// It works on bare repositories and mirrors. Hooks are not run, and
// core.autocrlf is off so files match what [Repo.ReadFile] returns; Git LFS
// files are left as pointers.
func (r *Repo) AddWorktree(ctx context.Context, rev, dir string) (*Worktree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("repo: add worktree %s at %s in %s: %w", rev, dir, r.name, err)
	}
	commit, err := r.resolve(ctx, rev, "commit")
	if err != nil {
		return nil, fmt.Errorf("repo: add worktree %s at %s in %s: %w", rev, abs, r.name, err)
	}
	_, err = r.outputEnv(ctx, []string{"GIT_LFS_SKIP_SMUDGE=1"},
		"-c", "core.hooksPath="+os.DevNull, "-c", "core.autocrlf=false",
		"worktree", "add", "--detach", "--quiet", abs, commit)
	if err != nil {
		return nil, fmt.Errorf("repo: add worktree %s at %s in %s: %w", rev, abs, r.name, err)
	}
	return &Worktree{Dir: abs, Commit: commit, repo: r}, nil
}

// Remove deletes the working tree and its administrative files ("git
// worktree remove --force", then "git worktree prune"). Files the test stage
// made read-only are removed too. Removing a worktree whose directory is
// already gone is not an error.
func (w *Worktree) Remove(ctx context.Context) error {
	r := w.repo
	_, rmErr := r.output(ctx, "worktree", "remove", "--force", w.Dir)
	if rmErr != nil || exists(w.Dir) {
		// git refuses some trees (locked, unreadable, already deleted):
		// delete the directory and let prune forget it.
		if err := removeAll(w.Dir); err != nil {
			return fmt.Errorf("repo: remove worktree %s in %s: %w", w.Dir, r.name, errors.Join(rmErr, err))
		}
	}
	if _, err := r.output(ctx, "worktree", "prune"); err != nil {
		return fmt.Errorf("repo: remove worktree %s in %s: %w", w.Dir, r.name, err)
	}
	return nil
}

// outputEnv is output with extra environment variables.
func (r *Repo) outputEnv(ctx context.Context, env []string, args ...string) ([]byte, error) {
	cmd := append([]string{"--git-dir=" + r.gitDir}, args...)
	return gitOutputEnv(ctx, r.git, "", env, cmd...)
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
