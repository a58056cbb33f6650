package envstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// RestoreMethod says how restored files are made.
type RestoreMethod int

const (
	// RestoreAuto uses reflinks where the file system has them and hard
	// links where it does not.
	RestoreAuto RestoreMethod = iota
	// RestoreLink uses hard links.
	RestoreLink
	// RestoreCopy copies every file: slower, but the tree shares nothing
	// with the store, and files keep their exact modes.
	RestoreCopy
)

// RestoreOptions says how to restore.
type RestoreOptions struct {
	Method RestoreMethod
	// Verify re-hashes every object before using it. Without it, restore
	// checks each object's size and mode only.
	Verify bool
	// Workers is how many files are made at once; zero means 8 (making a
	// file is a system call or two, mostly waiting on the file system).
	Workers int
}

// RestoreResult counts what a restore made.
type RestoreResult struct {
	Commit    string `json:"commit"`
	Dir       string `json:"dir"`
	Files     int    `json:"files"`
	Dirs      int    `json:"dirs"`
	Symlinks  int    `json:"symlinks"`
	Bytes     int64  `json:"bytes"`
	Linked    int    `json:"linked"`
	Reflinked int    `json:"reflinked"`
	Copied    int    `json:"copied"`
}

// ErrCorrupt is wrapped by errors about an object that is missing, has the
// wrong size, mode or content.
var ErrCorrupt = errors.New("corrupt object")

// Restore rebuilds the environment of commit (a full id or a unique prefix)
// at dest, which must not exist or be an empty directory. The tree is made in
// a temporary directory beside dest and renamed to it at the end, so a
// restore that fails (a missing or damaged object, ctx ended) leaves nothing.
func (s *Store) Restore(ctx context.Context, commit, dest string, opts RestoreOptions) (RestoreResult, error) {
	res := RestoreResult{Commit: commit}
	m, err := s.Manifest(commit)
	if err != nil {
		return res, err
	}
	res.Commit = m.Commit
	abs, err := filepath.Abs(dest)
	if err != nil {
		return res, fmt.Errorf("envstore: restore %s: %w", m.Commit, err)
	}
	res.Dir = abs
	fail := func(err error) (RestoreResult, error) {
		return res, fmt.Errorf("envstore: restore %s to %s: %w", m.Commit, abs, err)
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		return fail(errors.New("destination is not empty"))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".restore-")
	if err != nil {
		return fail(err)
	}
	done := false
	defer func() {
		if !done {
			removeAll(tmp)
		}
	}()

	// Directories first, writable, so files can be made in them; their
	// modes are set at the end, deepest first.
	var dirs []*Entry
	var files []*Entry
	for i := range m.Entries {
		e := &m.Entries[i]
		switch e.Type {
		case TypeDir:
			res.Dirs++
			dirs = append(dirs, e)
			if e.Path != "." {
				if err := os.Mkdir(filepath.Join(tmp, filepath.FromSlash(e.Path)), 0o700); err != nil {
					return fail(err)
				}
			}
		case TypeSymlink:
			res.Symlinks++
			if err := os.Symlink(e.Target, filepath.Join(tmp, filepath.FromSlash(e.Path))); err != nil {
				return fail(err)
			}
		case TypeFile:
			res.Files++
			res.Bytes += e.Size
			files = append(files, e)
		}
	}

	method := opts.Method
	if method == RestoreAuto {
		method = s.probeReflink(tmp)
	}
	var linked, reflinked, copied atomic.Int64
	work := make(chan *Entry)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	workers := opts.Workers
	if workers <= 0 {
		workers = 8
	}
	for range workers {
		wg.Go(func() {
			var buf []byte
			if opts.Verify {
				buf = make([]byte, 256<<10)
			}
			for e := range work {
				how, err := s.restoreFile(e, filepath.Join(tmp, filepath.FromSlash(e.Path)), method, opts.Verify, buf)
				if err != nil {
					select {
					case errc <- fmt.Errorf("%s: %w", e.Path, err):
					default:
					}
					continue
				}
				switch how {
				case RestoreLink:
					linked.Add(1)
				case RestoreCopy:
					copied.Add(1)
				default:
					reflinked.Add(1)
				}
			}
		})
	}
	for _, e := range files {
		if ctx.Err() != nil || len(errc) > 0 {
			break
		}
		work <- e
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return fail(err)
	default:
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	res.Linked, res.Reflinked, res.Copied = int(linked.Load()), int(reflinked.Load()), int(copied.Load())
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(filepath.Join(tmp, filepath.FromSlash(dirs[i].Path)), fileMode(dirs[i].Mode)); err != nil {
			return fail(err)
		}
	}
	// rename(2) replaces an empty directory.
	if err := os.Rename(tmp, abs); err != nil {
		return fail(err)
	}
	done = true
	return res, nil
}

// restoreFile makes the file e at dst from its object and says how.
func (s *Store) restoreFile(e *Entry, dst string, method RestoreMethod, verify bool, buf []byte) (RestoreMethod, error) {
	exec := e.exec()
	obj := s.objectPath(e.Hash, exec)
	var st syscall.Stat_t
	if err := syscall.Lstat(obj, &st); err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrCorrupt, e.Hash, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0, fmt.Errorf("%w %s: not a regular file", ErrCorrupt, obj)
	}
	if st.Size != e.Size {
		return 0, fmt.Errorf("%w %s: %d bytes, the manifest says %d", ErrCorrupt, obj, st.Size, e.Size)
	}
	if mode := fs.FileMode(st.Mode & 0o7777); mode != objectMode(exec) {
		return 0, fmt.Errorf("%w %s: mode %04o, not read-only %04o: a write may have reached it", ErrCorrupt, obj, mode, objectMode(exec))
	}
	if verify {
		h, err := hashFile(obj, e.Size, buf)
		if err != nil {
			return 0, fmt.Errorf("%w %s: %w", ErrCorrupt, obj, err)
		}
		if h != e.Hash {
			return 0, fmt.Errorf("%w %s: content hashes to %s", ErrCorrupt, obj, h)
		}
	}
	if method == RestoreLink && e.linkable() {
		return RestoreLink, os.Link(obj, dst)
	}
	if method == RestoreLink {
		method = RestoreCopy // a mode a shared inode cannot give
	}
	return method, copyObject(obj, dst, fileMode(e.Mode), method != RestoreCopy)
}

// copyObject makes dst a copy of obj with mode, by a reflink (FICLONE) if
// reflink is set, else by copying (copy_file_range, through os.File).
func copyObject(obj, dst string, mode fs.FileMode, reflink bool) error {
	src, err := os.Open(obj)
	if err != nil {
		return err
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if reflink {
		err = ficlone(out, src)
	} else {
		_, err = io.Copy(out, src)
	}
	if err == nil {
		err = out.Chmod(mode) // after writing: the mode may lack the owner's write bit
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// ficlone is ioctl(FICLONE): dst shares src's blocks, copy-on-write.
func ficlone(dst, src *os.File) error {
	return unix.IoctlFileClone(int(dst.Fd()), int(src.Fd()))
}

// probeReflink returns RestoreAuto (meaning reflinks) if a reflink from the
// store to dir works, and RestoreLink otherwise.
func (s *Store) probeReflink(dir string) RestoreMethod {
	probe := s.tempName("reflink-")
	if err := os.WriteFile(probe, []byte("x"), 0o600); err != nil {
		return RestoreLink
	}
	defer os.Remove(probe)
	dst := filepath.Join(dir, ".reflink-probe")
	defer os.Remove(dst)
	if copyObject(probe, dst, 0o600, true) != nil {
		return RestoreLink
	}
	return RestoreAuto
}

// hashObject re-hashes an object file.
func hashObject(p string, buf []byte) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
