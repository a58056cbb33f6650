package codesearch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
)

// source is what the tools read: a commit of a git repository or a
// directory. Paths are slash-separated, relative to the root, already
// checked by the caller with [patch.CheckPath].
type source interface {
	// lstat describes name without following its last component, as
	// patch.CheckLinks wants it.
	lstat(ctx context.Context, name string) (fs.FileMode, string, error)
	readFile(ctx context.Context, name string) ([]byte, error)
	// listFiles returns every file's path (links included, directories
	// not), sorted.
	listFiles(ctx context.Context) ([]string, error)
	grep(ctx context.Context, q grepQuery) ([]repo.GrepMatch, bool, error)
	close() error
}

// gitSource reads one commit through package repo: cat-file and ls-tree,
// nothing checked out.
type gitSource struct {
	r      *repo.Repo
	commit string
	owned  bool // close r with the snapshot

	once  sync.Once
	files []string
	err   error
}

func (g *gitSource) lstat(ctx context.Context, name string) (fs.FileMode, string, error) {
	return g.r.LstatMode(ctx, g.commit, name)
}

func (g *gitSource) readFile(ctx context.Context, name string) ([]byte, error) {
	return g.r.ReadFile(ctx, g.commit, name)
}

func (g *gitSource) listFiles(ctx context.Context) ([]string, error) {
	g.once.Do(func() {
		g.files, g.err = g.r.ListFiles(ctx, g.commit)
		slices.Sort(g.files)
	})
	return g.files, g.err
}

func (g *gitSource) grep(ctx context.Context, q grepQuery) ([]repo.GrepMatch, bool, error) {
	var specs []string
	if q.glob != "" {
		specs = []string{gitGlob(q.glob)}
	}
	return g.r.Grep(ctx, g.commit, repo.GrepOptions{Pattern: q.pattern, IgnoreCase: q.ignoreCase, Pathspecs: specs, Max: q.max})
}

func (g *gitSource) close() error {
	if g.owned {
		return g.r.Close()
	}
	return nil
}

// dirSource reads a directory through a patch.Root, so that no read leaves
// it, even through a symbolic link made after the check.
type dirSource struct {
	root *patch.Root

	once  sync.Once
	files []string
	err   error
}

func (d *dirSource) lstat(ctx context.Context, name string) (fs.FileMode, string, error) {
	fsys := d.root.FS()
	fi, err := fs.Lstat(fsys, name)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return 0, "", fs.ErrNotExist // a file on the way: nothing there
		}
		return 0, "", err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := fs.ReadLink(fsys, name)
		return fi.Mode(), target, nil
	}
	return fi.Mode(), "", nil
}

func (d *dirSource) readFile(ctx context.Context, name string) ([]byte, error) {
	return d.root.ReadFileLimit(name, MaxFileBytes)
}

func (d *dirSource) listFiles(ctx context.Context) ([]string, error) {
	d.once.Do(func() {
		d.err = d.walk(ctx, func(p string, _ fs.DirEntry) { d.files = append(d.files, p) })
		slices.Sort(d.files)
	})
	return d.files, d.err
}

// walk calls fn on every file under the root but .git, in lexical order.
func (d *dirSource) walk(ctx context.Context, fn func(string, fs.DirEntry)) error {
	return fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if patch.IsDotGit(e.Name()) {
				return fs.SkipDir
			}
			return ctx.Err()
		}
		if !patch.IsDotGit(e.Name()) {
			fn(p, e)
		}
		return nil
	})
}

func (d *dirSource) grep(ctx context.Context, q grepQuery) ([]repo.GrepMatch, bool, error) {
	files, err := d.listFiles(ctx)
	if err != nil {
		return nil, false, err
	}
	return grepFiles(ctx, q, files, func(name string) ([]byte, error) {
		if m, _, err := d.lstat(ctx, name); err != nil || !m.IsRegular() {
			return nil, errSkip // links are not followed
		}
		return d.readFile(ctx, name)
	})
}

func (d *dirSource) close() error { return d.root.Close() }

// isDir reports whether dir is a directory of files (a prefix of one of
// them); "" is the root.
func isDir(files []string, dir string) bool {
	if dir == "" {
		return true
	}
	prefix := dir + "/"
	i, _ := slices.BinarySearch(files, prefix)
	return i < len(files) && strings.HasPrefix(files[i], prefix)
}

// under returns the files below dir ("" for all), sorted.
func under(files []string, dir string) []string {
	if dir == "" {
		return files
	}
	prefix := dir + "/"
	i, _ := slices.BinarySearch(files, prefix)
	j := i
	for j < len(files) && strings.HasPrefix(files[j], prefix) {
		j++
	}
	return files[i:j]
}

// checkName applies the confinement rules to a path a model gave: relative,
// inside the tree, not in .git, and no symbolic link on the way or at the
// end. "", "." and "/" name the root.
func checkName(ctx context.Context, src source, name string) (string, error) {
	name = strings.TrimPrefix(name, "./")
	if name == "" || name == "." {
		return "", nil
	}
	if err := patch.CheckPath(name); err != nil {
		return "", fmt.Errorf("%w: %w", ErrOutside, patch.ForReading(err))
	}
	clean := path.Clean(name)
	err := patch.CheckLinks(clean, func(p string) (fs.FileMode, string, error) { return src.lstat(ctx, p) })
	if err != nil {
		if errors.Is(err, patch.ErrUnsafePath) {
			return "", fmt.Errorf("%w: %w", ErrOutside, patch.ForReading(err))
		}
		return "", err
	}
	return clean, nil
}

// stamp is what tells a changed file from an unchanged one without reading
// it: size and modification time.
type stamp struct {
	size  int64
	mtime int64
}

// stamps walks the directory afresh (listFiles keeps its first listing) and
// returns every regular file's stamp.
func (d *dirSource) stamps(ctx context.Context) (map[string]stamp, error) {
	out := map[string]stamp{}
	err := d.walk(ctx, func(p string, e fs.DirEntry) {
		if !e.Type().IsRegular() {
			return
		}
		if fi, err := e.Info(); err == nil { // else removed during the walk
			out[p] = stamp{fi.Size(), fi.ModTime().UnixNano()}
		}
	})
	return out, err
}
