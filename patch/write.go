package patch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DirFS reads files under a directory for [Apply]. Paths must be relative
// and stay inside the directory.
type DirFS string

// ReadFile reads name relative to the directory.
func (d DirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// path maps a patch path to a file path, refusing paths that escape.
func (d DirFS) path(name string) (string, error) {
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(name)))
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") || !fs.ValidPath(clean) || clean == "." {
		return "", fmt.Errorf("unsafe path %q: patch paths must be relative and stay inside %s", name, string(d))
	}
	if clean == ".git" || strings.HasPrefix(clean, ".git/") {
		return "", fmt.Errorf("unsafe path %q: patches may not touch .git", name)
	}
	return filepath.Join(string(d), filepath.FromSlash(clean)), nil
}

// MapFS is an in-memory FileSystem: path to content.
type MapFS map[string]string

// ReadFile returns the content of name or an fs.ErrNotExist error.
func (m MapFS) ReadFile(name string) ([]byte, error) {
	c, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return []byte(c), nil
}

// Final folds results into the final state of each touched path: its new
// content, or nil where the file is removed.
func Final(results []FileResult) (paths []string, content map[string][]byte, mode map[string]uint32) {
	content = map[string][]byte{}
	mode = map[string]uint32{}
	touch := func(p string) {
		if _, ok := content[p]; !ok {
			paths = append(paths, p)
		}
	}
	for _, r := range results {
		if r.OldPath != "" && (r.Op == Rename || r.Op == Delete) {
			touch(r.OldPath)
			content[r.OldPath] = nil
		}
		if r.Path != "" && r.Op != Delete {
			touch(r.Path)
			content[r.Path] = r.Content
			if r.Mode != 0 {
				mode[r.Path] = r.Mode
			}
		}
	}
	return paths, content, mode
}

// WriteResults writes the results of [Apply] under dir, all or nothing: new
// contents go to temporary files first, then every target is swapped in by
// rename; if any step fails, everything done so far is undone.
func WriteResults(dir string, results []FileResult) (err error) {
	d := DirFS(dir)
	paths, content, mode := Final(results)
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
				os.Remove(s.tmp)
			}
		}
		for i := len(madeDirs) - 1; i >= 0; i-- {
			os.Remove(madeDirs[i])
		}
	}()
	// Phase 1: write every new content to a temporary file beside its target.
	for _, p := range paths {
		target, perr := d.path(p)
		if perr != nil {
			return fmt.Errorf("write: %w", perr)
		}
		s := step{target: target}
		if c := content[p]; c != nil {
			made, merr := mkdirAll(filepath.Dir(target))
			madeDirs = append(madeDirs, made...)
			if merr != nil {
				return fmt.Errorf("write %s: %w", p, merr)
			}
			perm := fs.FileMode(0o644)
			if st, serr := os.Stat(target); serr == nil {
				perm = st.Mode().Perm()
			}
			if m, ok := mode[p]; ok {
				perm = 0o644
				if m&0o111 != 0 {
					perm = 0o755
				}
			}
			if s.tmp, err = writeTemp(filepath.Dir(target), filepath.Base(target), c, perm); err != nil {
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
				os.Remove(s.target)
			}
			if s.backup != "" {
				os.Rename(s.backup, s.target)
			}
		}
	}
	for i := range steps {
		s := &steps[i]
		if _, serr := os.Lstat(s.target); serr == nil {
			s.backup = s.target + ".patchbench-orig"
			if err = os.Rename(s.target, s.backup); err != nil {
				s.backup = ""
				undo()
				return fmt.Errorf("write %s: %w", s.target, err)
			}
		}
		if s.tmp != "" {
			if err = os.Rename(s.tmp, s.target); err != nil {
				done = append(done, step{backup: s.backup, target: s.target})
				undo()
				return fmt.Errorf("write %s: %w", s.target, err)
			}
		}
		done = append(done, *s)
		s.tmp = "" // moved into place
	}
	for _, s := range steps {
		if s.backup != "" {
			os.Remove(s.backup)
		}
	}
	// Remove directories a deletion or rename left empty, as git apply does.
	for _, p := range paths {
		if content[p] == nil {
			removeEmptyParents(dir, filepath.Dir(filepath.Join(dir, filepath.FromSlash(p))))
		}
	}
	return nil
}

func writeTemp(dir, base string, data []byte, perm fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, "."+base+".patchbench-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, perm)
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// mkdirAll is os.MkdirAll that reports the directories it created.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

func removeEmptyParents(root, dir string) {
	root = filepath.Clean(root)
	for dir = filepath.Clean(dir); dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return
		}
	}
}
