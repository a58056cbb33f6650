package patch

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrUnsafePath is wrapped by the errors of paths a patch may not read or
// write: absolute, leaving the directory with "..", inside .git, through a
// symbolic link, or a symbolic link themselves.
var ErrUnsafePath = errors.New("unsafe path")

// CheckPath refuses a patch path that is empty, absolute, leaves the
// directory with "..", or lies inside .git. It looks at the name only; see
// [CheckLinks] for symbolic links.
func CheckPath(name string) error {
	clean := path.Clean(name)
	if name == "" || strings.HasPrefix(name, "/") || filepath.IsAbs(filepath.FromSlash(name)) ||
		strings.ContainsRune(name, 0) || !fs.ValidPath(clean) || clean == "." {
		return fmt.Errorf("%w %q: patch paths must be relative and stay inside the directory", ErrUnsafePath, name)
	}
	if clean == ".git" || strings.HasPrefix(clean, ".git/") {
		return fmt.Errorf("%w %q: patches may not touch .git", ErrUnsafePath, name)
	}
	return nil
}

// CheckLinks refuses name when it, or a directory on the way to it, is a
// symbolic link. lstat describes a path relative to the directory without
// following its last component (mode, and the link's target for links); a
// missing component ends the walk, as a file may be created there.
//
// Every link is refused, not only those leading out: git apply refuses paths
// "beyond a symbolic link" wherever the link points, and patchbench does not
// edit links themselves (a model's edit of a link's text would retarget it).
func CheckLinks(name string, lstat func(string) (fs.FileMode, string, error)) error {
	clean := path.Clean(name)
	for i := 0; i <= len(clean); i++ {
		if i < len(clean) && clean[i] != '/' {
			continue
		}
		prefix := clean[:i]
		mode, target, err := lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
			return nil
		}
		if err != nil {
			return err
		}
		if mode&fs.ModeSymlink == 0 {
			if i < len(clean) && !mode.IsDir() {
				return nil // a file in the way: reading or writing fails on its own
			}
			continue
		}
		if i < len(clean) {
			return fmt.Errorf("%w %q: beyond a symbolic link (%s -> %s)", ErrUnsafePath, name, prefix, target)
		}
		return fmt.Errorf("%w %q: a symbolic link (-> %s); symbolic links are not edited", ErrUnsafePath, name, target)
	}
	return nil
}

// errNotDir stands for ENOTDIR, which os.Root reports when a component of a
// path is a file.
var errNotDir = errors.New("not a directory")

// Root confines the reads and writes of a patch to one directory: every
// path is checked with [CheckPath] and [CheckLinks], and every access goes
// through an [os.Root], so that nothing outside the directory is read or
// written even if the tree changes between the check and the access. It is
// the [FileSystem] that apply, reverse, convert and repair read, and
// [Root.WriteResults] writes through it. Close it when done.
type Root struct {
	root *os.Root
	dir  string
}

// OpenRoot opens the directory dir.
func OpenRoot(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{root: r, dir: dir}, nil
}

// Close releases the directory.
func (r *Root) Close() error { return r.root.Close() }

// Dir returns the directory the root was opened on.
func (r *Root) Dir() string { return r.dir }

// FS returns the directory as an fs.FS, for listing files.
func (r *Root) FS() fs.FS { return r.root.FS() }

// check applies the confinement rules to a patch path and returns the name
// to give os.Root.
func (r *Root) check(name string) (string, error) {
	if err := CheckPath(name); err != nil {
		return "", err
	}
	if err := CheckLinks(name, r.lstat); err != nil {
		return "", err
	}
	return filepath.FromSlash(path.Clean(name)), nil
}

func (r *Root) lstat(name string) (fs.FileMode, string, error) {
	if name == "" {
		return fs.ModeDir, "", nil
	}
	fi, err := r.root.Lstat(filepath.FromSlash(name))
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return 0, "", errNotDir
		}
		return 0, "", err
	}
	var target string
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ = r.root.Readlink(filepath.FromSlash(name))
	}
	return fi.Mode(), target, nil
}

// ReadFile reads name, a slash-separated path relative to the directory.
func (r *Root) ReadFile(name string) ([]byte, error) {
	p, err := r.check(name)
	if err != nil {
		return nil, err
	}
	return r.root.ReadFile(p)
}

// DirFS reads files under a directory for [Apply] through a [Root] opened
// for each read. Paths must be relative and stay inside the directory.
// Programs that also write should open one Root and use it for both.
type DirFS string

// ReadFile reads name relative to the directory.
func (d DirFS) ReadFile(name string) ([]byte, error) {
	r, err := OpenRoot(string(d))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(name)
}

// WriteResults writes the results of [Apply] under dir through a [Root]:
// see [Root.WriteResults].
func WriteResults(dir string, results []FileResult) error {
	r, err := OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer r.Close()
	return r.WriteResults(results)
}

// WriteResults writes the results of [Apply], all or nothing: every path is
// checked first, new contents go to temporary files beside their targets,
// then every target is swapped in by rename; if any step fails, everything
// done so far is undone. Nothing is written through a symbolic link.
func (r *Root) WriteResults(results []FileResult) (err error) {
	paths, content, mode := Final(results)
	names := make(map[string]string, len(paths))
	for _, p := range paths {
		n, cerr := r.check(p)
		if cerr != nil {
			return fmt.Errorf("write: %w", cerr)
		}
		if m := mode[p]; m&0o170000 == 0o120000 && content[p] != nil {
			return fmt.Errorf("write: %w %q: the patch makes it a symbolic link; symbolic links are not written", ErrUnsafePath, p)
		}
		if fi, serr := r.root.Lstat(n); serr == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("write %s: not a regular file (%s)", p, fi.Mode().Type())
		}
		names[p] = n
	}
	type step struct {
		target, tmp, backup string
	}
	var steps []step
	var madeDirs []string
	defer func() {
		if err == nil {
			return
		}
		for _, s := range steps {
			if s.tmp != "" {
				r.root.Remove(s.tmp)
			}
		}
		for i := len(madeDirs) - 1; i >= 0; i-- {
			r.root.Remove(madeDirs[i])
		}
	}()
	// Phase 1: write every new content to a temporary file beside its target.
	for _, p := range paths {
		target := names[p]
		s := step{target: target}
		if c := content[p]; c != nil {
			made, merr := r.mkdirAll(filepath.Dir(target))
			madeDirs = append(madeDirs, made...)
			if merr != nil {
				return fmt.Errorf("write %s: %w", p, merr)
			}
			perm := fs.FileMode(0o644)
			if st, serr := r.root.Lstat(target); serr == nil {
				perm = st.Mode().Perm()
			}
			if m, ok := mode[p]; ok {
				perm = 0o644
				if m&0o111 != 0 {
					perm = 0o755
				}
			}
			if s.tmp, err = r.writeTemp(target, c, perm); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
		}
		steps = append(steps, s)
	}
	// Phase 2: move originals aside, then move the new files in. Undo in
	// reverse on failure.
	var done []step
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			s := done[i]
			if s.tmp != "" {
				r.root.Remove(s.target)
			}
			if s.backup != "" {
				r.root.Rename(s.backup, s.target)
			}
		}
	}
	for i := range steps {
		s := &steps[i]
		if _, serr := r.root.Lstat(s.target); serr == nil {
			s.backup = s.target + ".patchbench-orig"
			if err = r.root.Rename(s.target, s.backup); err != nil {
				s.backup = ""
				undo()
				return fmt.Errorf("write %s: %w", filepath.ToSlash(s.target), err)
			}
		}
		if s.tmp != "" {
			if err = r.root.Rename(s.tmp, s.target); err != nil {
				done = append(done, step{backup: s.backup, target: s.target})
				undo()
				return fmt.Errorf("write %s: %w", filepath.ToSlash(s.target), err)
			}
		}
		done = append(done, *s)
		s.tmp = "" // moved into place
	}
	for _, s := range steps {
		if s.backup != "" {
			r.root.Remove(s.backup)
		}
	}
	// Remove directories a deletion or rename left empty, as git apply does.
	for _, p := range paths {
		if content[p] == nil {
			for d := filepath.Dir(names[p]); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
				if r.root.Remove(d) != nil {
					break
				}
			}
		}
	}
	return nil
}

// writeTemp writes data to a new file beside target and returns its name.
func (r *Root) writeTemp(target string, data []byte, perm fs.FileMode) (string, error) {
	dir, base := filepath.Split(target)
	var f *os.File
	var name string
	var err error
	for range 100 {
		name = fmt.Sprintf("%s.%s.patchbench-%d", dir, base, rand.Uint32())
		f, err = r.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(perm) // on the descriptor: not subject to the umask, not through a path
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.root.Remove(name)
		return "", err
	}
	return name, nil
}

// mkdirAll makes dir and its missing parents inside the root and reports
// the directories it created.
func (r *Root) mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := r.root.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := r.root.Mkdir(missing[i], 0o755); err != nil {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}
