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
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// RestoreMethod says how restored files are made.
type RestoreMethod int

const (
	// RestoreAuto uses reflinks where the file system has them; else hard
	// links where this process cannot write a read-only file (or
	// RestoreOptions.ReadOnlyUse is set); else copies. No write through
	// the tree can then reach the store (see the package documentation).
	RestoreAuto RestoreMethod = iota
	// RestoreLink uses hard links. Restore refuses it (ErrUnsafeLinks)
	// where this process could write through them (root, or a process
	// with CAP_DAC_OVERRIDE), unless RestoreOptions.ReadOnlyUse is set.
	RestoreLink
	// RestoreCopy copies every file, hashing the bytes as it copies them:
	// the tree shares nothing with the store, and files keep their exact
	// modes.
	RestoreCopy
	// RestoreReflink uses reflinks (copy-on-write clones), and fails
	// where the file system has none.
	RestoreReflink
	// RestoreOverlay mounts an overlay file system at the destination:
	// the commit's read-only tree in the store (made once, by
	// Materialize) below, a fresh upper directory beside the destination
	// above, so every write lands in the upper layer. It needs the
	// privilege to mount (root); Release undoes it.
	RestoreOverlay
)

// String names the method as Restore reports it ("auto", "hardlink",
// "copy", "reflink").
func (m RestoreMethod) String() string {
	switch m {
	case RestoreLink:
		return "hardlink"
	case RestoreCopy:
		return "copy"
	case RestoreReflink:
		return "reflink"
	case RestoreOverlay:
		return "overlay"
	}
	return "auto"
}

// RestoreOptions says how to restore.
type RestoreOptions struct {
	Method RestoreMethod
	// ReadOnlyUse promises that nothing will write into a restored file in
	// place: the caller only replaces files (writes a new file and renames
	// it) and gives the tree to other programs read-only (a read-only bind
	// mount). Hard links are then safe even for a process that can write
	// read-only files, and RestoreAuto and RestoreLink use them.
	ReadOnlyUse bool
	// Verify re-hashes every object before using it. Without it, reflinks
	// and hard links check each object's type, size and mode only; copies
	// always hash the bytes they copy.
	Verify bool
	// Workers is how many files are made at once; zero means 8 (making a
	// file is a system call or two, mostly waiting on the file system).
	Workers int
	// Overlay has RestoreAuto mount an overlay where this process can
	// (see RestoreOverlay), and make files as without it elsewhere. An
	// overlay restore must be undone by Release.
	Overlay bool
	// Temporary marks an overlay restore as this process's: once the
	// process has ended, ReleaseStale (run by GC and by each run that
	// restores) releases it, as a killed run cannot.
	Temporary bool
	// Namespace lets a Temporary overlay restore, where this process
	// cannot mount an overlay others see (an ordinary user), mount one in
	// a user namespace of its own, which only the processes in it see
	// (MethodUserNSOverlay): the caller reaches the tree through
	// RestoreResult.Path, runs programs in it through
	// RestoreResult.Enter (the sandbox's Command.Namespace), and undoes
	// it with RestoreResult.Release. Where the tree belongs to another
	// user or the kernel refuses, the restore makes files and says why.
	Namespace bool
}

// RestoreResult counts what a restore made.
type RestoreResult struct {
	Commit string `json:"commit"`
	Dir    string `json:"dir"`
	// Method is how the tree's files were made ("reflink", "hardlink" or
	// "copy"), and MethodReason why: what the probes of the file system
	// and of this process's privileges found, or the option that asked
	// for it. A file whose mode a hard link cannot give, or that another
	// user's object protects from linking, is copied whatever the method:
	// Linked, Reflinked and Copied count each.
	Method       string `json:"method"`
	MethodReason string `json:"method_reason"`
	Files        int    `json:"files"`
	Dirs         int    `json:"dirs"`
	Symlinks     int    `json:"symlinks"`
	Bytes        int64  `json:"bytes"`
	Linked       int    `json:"linked"`
	Reflinked    int    `json:"reflinked"`
	Copied       int    `json:"copied"`
	// NamespacePID is the process holding the user namespace an overlay
	// is mounted in (MethodUserNSOverlay), zero otherwise.
	NamespacePID int `json:"namespace_pid,omitempty"`
	// Path is where this process reaches the tree: Dir, or the tree
	// through the namespace's holder (/proc/PID/root/Dir), to be used
	// only by descriptors (patch.Root): a program that reads its working
	// directory's path there finds the empty mount point instead.
	Path string `json:"-"`

	holder *nsHolder
}

// ErrCorrupt is wrapped by errors about an object that is missing, has the
// wrong size, mode or content.
var ErrCorrupt = errors.New("corrupt object")

// ErrDestination is wrapped by Restore's error when the destination exists
// and is not an empty directory.
var ErrDestination = errors.New("destination exists and is not an empty directory")

// ErrInStore is wrapped (with ErrDestination) by Restore's error when the
// destination is inside the store: the tree would be taken for the store's
// own files (verify reports them, gc may remove them) and hard links there
// would put objects where the store keeps its layout.
var ErrInStore = errors.New("destination is inside the environment store")

type inStoreError struct{ store string }

func (e *inStoreError) Error() string {
	return fmt.Sprintf("%v %s; restore elsewhere", ErrInStore, e.store)
}
func (e *inStoreError) Unwrap() []error { return []error{ErrInStore, ErrDestination} }

// holds reports whether path (absolute, existing or not) is in the store's
// directory or is it, symbolic links in its existing part resolved.
func (s *Store) holds(path string) (bool, error) {
	store, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return false, err
	}
	// The deepest existing ancestor, resolved, and the rest as given.
	rest := ""
	dir := path
	for {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(store, filepath.Join(real, rest))
	if err != nil {
		return false, nil
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, "../"), nil
}

// ErrMethod is wrapped by Restore's error when the method asked for cannot
// be had here: reflinks where the file system has none, hard links across
// file systems (or ErrUnsafeLinks).
var ErrMethod = errors.New("restore method not available")

// ErrUnsafeLinks is wrapped (with ErrMethod) by Restore's error when hard
// links are asked for (RestoreLink) by a process that could write through
// them into the store.
var ErrUnsafeLinks = errors.New("hard links would let this process's writes reach the store: it can write read-only files (root or CAP_DAC_OVERRIDE)")

// Restore rebuilds the environment of commit (a full id or a unique prefix)
// at dest, which must not exist or be an empty directory (else the error
// wraps ErrDestination). The tree is made in a temporary directory beside
// dest and renamed to it at the end, so a restore that fails (a missing or
// damaged object, ctx ended) leaves nothing.
//
// An overlay restore (RestoreOverlay, or RestoreOptions.Overlay where this
// process can mount one) of a commit whose tree is materialized costs the
// same whatever the tree's size: the manifest is not decoded.
func (s *Store) Restore(ctx context.Context, commit, dest string, opts RestoreOptions) (RestoreResult, error) {
	res := RestoreResult{Commit: commit}
	full, err := s.resolve(commit)
	if err != nil {
		return res, err
	}
	res.Commit = full
	// A manifest that does not read fails a restore before anything is
	// made; an overlay restore reads it only to make the tree.
	var m *Manifest
	if opts.Method != RestoreOverlay && !(opts.Method == RestoreAuto && opts.Overlay) {
		if m, err = s.readManifest(full); err != nil {
			return res, err
		}
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return res, fmt.Errorf("envstore: restore %s: %w", full, err)
	}
	res.Dir = abs
	fail := func(err error) (RestoreResult, error) {
		return res, fmt.Errorf("envstore: restore %s to %s: %w", full, abs, err)
	}
	if inside, err := s.holds(abs); err != nil {
		return fail(err)
	} else if inside {
		return fail(&inStoreError{s.dir})
	}
	if fi, err := os.Lstat(abs); err == nil {
		if !fi.IsDir() {
			return fail(ErrDestination)
		}
		if ents, err := os.ReadDir(abs); err != nil {
			return fail(err)
		} else if len(ents) > 0 {
			return fail(ErrDestination)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fail(err)
	}
	if s.mountFirst(opts) {
		// The mount is the probe: a process that may mount (root) does
		// not mount and unmount a trial overlay first, which costs more
		// than the restore (an unmount waits for the file system).
		err := s.restoreOverlay(ctx, full, abs, opts, &res)
		if err == nil {
			s.overlayOnce.Do(func() { s.overlayOK, s.overlayWhy = true, kernelOverlayWhy })
			res.Method, res.MethodReason, res.Path = RestoreOverlay.String(), kernelOverlayWhy, abs
			if opts.Method == RestoreOverlay {
				res.MethodReason = "an overlay asked for"
			}
			return res, nil
		}
		if !errors.Is(err, errMount) {
			return fail(err)
		}
		s.kernelMountFailed.Store(true)
	}
	overlay, overlayWhy, err := s.chooseOverlay(opts, filepath.Dir(abs))
	if err != nil {
		return fail(err)
	} else if overlay {
		res.Method, res.MethodReason = RestoreOverlay.String(), overlayWhy
		if err := s.restoreOverlay(ctx, full, abs, opts, &res); err != nil {
			return fail(err)
		}
		res.Path = abs
		return res, nil
	}
	if opts.Namespace && opts.Temporary && opts.Overlay && opts.Method == RestoreAuto {
		if ok, why := s.canUserNS(); !ok {
			overlayWhy += "; " + why
		} else if why, err := s.restoreUserNS(ctx, full, abs, opts, &res); err != nil {
			return fail(err)
		} else if why == "" {
			res.Method = MethodUserNSOverlay
			res.MethodReason = overlayWhy + "; an overlay in a user namespace of this process's, which the test's processes enter"
			return res, nil
		} else {
			overlayWhy += "; " + why
		}
	}
	if m == nil {
		if m, err = s.readManifest(full); err != nil {
			return res, err
		}
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

	method, reason, err := chooseMethod(opts, s.probe(tmp))
	if err != nil {
		return fail(err)
	}
	res.Method, res.MethodReason = method.String(), reason
	if overlayWhy != "" {
		res.MethodReason = overlayWhy + "; " + reason
	}
	// gc.lock shared, as a build holds it: GC does not compress or
	// remove an object while this restore reads or links it. A process
	// that cannot open the lock (another user's store) goes without: it
	// cannot make objects loose either, and findObject looks again for
	// an object whose form changes under it.
	if gl, err := s.acquire(ctx, "gc.lock", true); err == nil {
		defer gl.release()
	} else if ctx.Err() != nil {
		return fail(err)
	}
	if err := s.makeTree(ctx, m, tmp, method, opts, &res); err != nil {
		return fail(err)
	}
	// rename(2) replaces an empty directory (os.Rename refuses to).
	if err := syscall.Rename(tmp, abs); err != nil {
		return fail(&os.LinkError{Op: "rename", Old: tmp, New: abs, Err: err})
	}
	res.Path = abs
	done = true
	return res, nil
}

// makeTree makes m's tree in the empty directory tmp, each file by method
// (or by a copy where method cannot give it), counting what it made in res.
func (s *Store) makeTree(ctx context.Context, m *Manifest, tmp string, method RestoreMethod, opts RestoreOptions, res *RestoreResult) error {
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
					return err
				}
			}
		case TypeSymlink:
			res.Symlinks++
			if err := os.Symlink(e.Target, filepath.Join(tmp, filepath.FromSlash(e.Path))); err != nil {
				return err
			}
		case TypeFile:
			res.Files++
			res.Bytes += e.Size
			files = append(files, e)
		}
	}

	// Links and reflinks need loose objects; a process that cannot
	// write the store copies the compressed ones instead.
	if method == RestoreLink || method == RestoreReflink {
		var need []*Entry
		for _, e := range files {
			if method == RestoreReflink || e.linkable() {
				need = append(need, e)
			}
		}
		if err := s.expandObjects(ctx, need); err != nil && !errors.Is(err, errStoreReadOnly) {
			return err
		}
	}
	var made [RestoreReflink + 1]atomic.Int64
	workers := opts.Workers
	if workers <= 0 {
		workers = 8
	}
	err := forEach(ctx, workers, files, func(e *Entry, buf []byte) error {
		how, err := s.restoreFile(e, filepath.Join(tmp, filepath.FromSlash(e.Path)), method, opts.Verify, buf)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Path, err)
		}
		made[how].Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	res.Linked, res.Reflinked, res.Copied = int(made[RestoreLink].Load()), int(made[RestoreReflink].Load()), int(made[RestoreCopy].Load())
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(filepath.Join(tmp, filepath.FromSlash(dirs[i].Path)), fileMode(dirs[i].Mode)); err != nil {
			return err
		}
	}
	return nil
}

// mountFirst says whether a restore asked for an overlay tries the
// kernel's at once, before any probe: when this process has CAP_SYS_ADMIN
// (root), with which the mount works where the kernel has overlayfs, and
// no mount has failed here yet. A mount that fails all the same is cleaned
// up, and the probes decide.
func (s *Store) mountFirst(opts RestoreOptions) bool {
	if opts.Method != RestoreOverlay && !(opts.Method == RestoreAuto && opts.Overlay) {
		return false
	}
	return !s.kernelMountFailed.Load() && hasSysAdmin()
}

// chooseOverlay says whether a restore mounts an overlay: when asked to,
// or by default where this process can mount one on dir's file system.
func (s *Store) chooseOverlay(opts RestoreOptions, dir string) (bool, string, error) {
	switch {
	case opts.Method == RestoreOverlay:
		if ok, why := s.canOverlay(dir); !ok {
			return false, "", fmt.Errorf("%w: an overlay was asked for, but %s", ErrMethod, why)
		}
		return true, "an overlay asked for", nil
	case opts.Method != RestoreAuto || !opts.Overlay:
		return false, "", nil
	}
	ok, why := s.canOverlay(dir)
	if ok {
		return true, why, nil
	}
	return false, "no overlay: " + why, nil
}

// probes is what Restore finds out before it chooses a method.
type probes struct {
	// err is set when the probes could not be made (the store's tmp is
	// not writable); the others are then false.
	err error
	// reflink: a reflink from the store to the destination works.
	reflink bool
	// link: a hard link from the store to the destination works.
	link bool
	// writesReadOnly: this process could open a read-only file of the
	// store for writing (root, or CAP_DAC_OVERRIDE).
	writesReadOnly bool
}

// probe makes a read-only file in the store's tmp directory and tries on it
// what chooseMethod needs to know: whether this process can open it for
// writing, and whether it can be reflinked and hard-linked into dir. Asking
// the file system is exact where a capability check is not (a file system
// may refuse root, or ignore modes).
func (s *Store) probe(dir string) probes {
	name := s.tempName("probe-")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return probes{err: err}
	}
	defer os.Remove(name)
	_, err = f.WriteString("x")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return probes{err: err}
	}
	var p probes
	if w, err := os.OpenFile(name, os.O_WRONLY, 0); err == nil {
		w.Close()
		p.writesReadOnly = true
	}
	r := filepath.Join(dir, ".probe-reflink")
	p.reflink = reflinkObject(name, r, 0o444) == nil
	os.Remove(r)
	l := filepath.Join(dir, ".probe-link")
	p.link = os.Link(name, l) == nil
	os.Remove(l)
	return p
}

// chooseMethod turns the asked method and what the probes found into the
// method a restore uses and the reason it gives, or an error when the asked
// method cannot be had (or had safely).
func chooseMethod(opts RestoreOptions, p probes) (RestoreMethod, string, error) {
	switch opts.Method {
	case RestoreCopy:
		return RestoreCopy, "copies asked for", nil
	case RestoreReflink:
		if !p.reflink {
			return 0, "", fmt.Errorf("%w: reflinks asked for, but the file system has none from the store to the destination", ErrMethod)
		}
		return RestoreReflink, "reflinks asked for", nil
	case RestoreLink:
		switch {
		case p.err != nil:
			return 0, "", fmt.Errorf("%w: hard links asked for, but the store cannot be probed: %w", ErrMethod, p.err)
		case p.writesReadOnly && !opts.ReadOnlyUse:
			return 0, "", fmt.Errorf("%w: %w", ErrMethod, ErrUnsafeLinks)
		case !p.link:
			return 0, "", fmt.Errorf("%w: hard links asked for, but they fail from the store to the destination (another file system?)", ErrMethod)
		}
		return RestoreLink, "hard links asked for", nil
	}
	switch {
	case p.err != nil:
		return RestoreCopy, fmt.Sprintf("the store cannot be probed for reflinks and hard links (%v)", p.err), nil
	case p.reflink:
		return RestoreReflink, "the file system has reflinks", nil
	case p.writesReadOnly && !opts.ReadOnlyUse:
		return RestoreCopy, "no reflinks here, and this process can write read-only files (root or CAP_DAC_OVERRIDE): a hard link would let its writes reach the store", nil
	case !p.link:
		return RestoreCopy, "no reflinks here, and hard links from the store fail (another file system?)", nil
	case p.writesReadOnly:
		return RestoreLink, "no reflinks here; hard links, as the tree is used read-only", nil
	}
	return RestoreLink, "no reflinks here; hard links, as this process cannot write read-only files", nil
}

// restoreFile makes the file e at dst from its object and says how: by
// method, or by a copy where method cannot give the file (a mode a shared
// inode cannot have, an object the kernel will not let this user link).
// Every object's type, size and mode are checked; its bytes are hashed when
// verify is set or when they are copied.
func (s *Store) restoreFile(e *Entry, dst string, method RestoreMethod, verify bool, buf []byte) (RestoreMethod, error) {
	exec := e.exec()
	obj, compressed, err := s.findObject(e)
	if err != nil {
		return 0, err
	}
	if compressed {
		// Only where it could not be made loose (expandObjects): the
		// store is not this process's to write.
		return RestoreCopy, copyCompressed(obj, dst, e, buf)
	}
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
	if verify && method != RestoreCopy {
		h, n, err := hashObject(obj, buf)
		if err != nil {
			return 0, fmt.Errorf("%w %s: %w", ErrCorrupt, obj, err)
		}
		if err := checkContent(obj, e, h, n); err != nil {
			return 0, err
		}
	}
	switch {
	case method == RestoreLink && e.linkable():
		err := os.Link(obj, dst)
		if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EXDEV) {
			return RestoreLink, err
		}
		// fs.protected_hardlinks refuses a link to another user's file
		// this user cannot write: copy it.
	case method == RestoreReflink:
		if err := reflinkObject(obj, dst, e.Mode); err == nil {
			return RestoreReflink, nil
		}
		os.Remove(dst)
	}
	return RestoreCopy, copyObject(obj, dst, e, buf)
}

// findObject returns the file of e's object: loose, or else compressed
// (which must be a read-only regular file). An object a concurrent restore
// is making loose is looked for again: it may be neither for a moment.
func (s *Store) findObject(e *Entry) (string, bool, error) {
	loose, z := s.objectPath(e.Hash, e.exec()), s.compressedPath(e.Hash, e.exec())
	var err error
	for range 3 {
		if _, err = os.Lstat(loose); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return loose, false, nil // restoreFile checks it
		}
		var st syscall.Stat_t
		if zerr := syscall.Lstat(z, &st); zerr == nil {
			if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				return "", false, fmt.Errorf("%w %s: not a regular file", ErrCorrupt, z)
			}
			if mode := st.Mode & 0o7777; mode != 0o444 {
				return "", false, fmt.Errorf("%w %s: mode %04o, not read-only 0444: a write may have reached it", ErrCorrupt, z, mode)
			}
			return z, true, nil
		}
	}
	return "", false, fmt.Errorf("%w %s: %w", ErrCorrupt, e.Hash, err)
}

// makeFrom opens obj, creates dst (which must not exist) and runs fill on
// the two descriptors, then gives dst mode (a manifest mode; after writing,
// as it may lack the owner's write bit). Raw descriptors, not os.File: a
// restore makes thousands of small files, and os.File's poller registration
// and Fd's switch back to blocking mode cost more system calls than the
// copy itself.
func makeFrom(obj, dst string, mode uint32, fill func(out, src int) error) error {
	src, err := openRead(obj)
	if err != nil {
		return err
	}
	defer unix.Close(src)
	out, err := retry(func() (int, error) {
		return unix.Open(dst, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return &os.PathError{Op: "open", Path: dst, Err: err}
	}
	err = fill(out, src)
	if err == nil {
		if err = unix.Fchmod(out, mode&0o7777); err != nil {
			err = &os.PathError{Op: "chmod", Path: dst, Err: err}
		}
	}
	if cerr := unix.Close(out); err == nil && cerr != nil {
		err = &os.PathError{Op: "close", Path: dst, Err: cerr}
	}
	return err
}

// openRead opens p for reading.
func openRead(p string) (int, error) {
	fd, err := retry(func() (int, error) { return unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return fd, nil
}

// retry calls f again while it fails with EINTR.
func retry(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// fd reads and writes a raw file descriptor.
type fd int

func (f fd) Read(b []byte) (int, error) {
	n, err := retry(func() (int, error) { return unix.Read(int(f), b) })
	switch {
	case err != nil:
		return 0, err
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f fd) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		n, err := retry(func() (int, error) { return unix.Write(int(f), b[written:]) })
		if err != nil {
			return written, err
		}
		written += n
	}
	return written, nil
}

// reflinkObject makes dst a reflink of obj (ioctl FICLONE): its own inode,
// sharing obj's blocks until either is written.
func reflinkObject(obj, dst string, mode uint32) error {
	return makeFrom(obj, dst, mode, func(out, src int) error {
		return unix.IoctlFileClone(out, src)
	})
}

// copyObject makes dst a copy of obj, the content of e, hashing the bytes
// on the way: a copy reads them anyway, so a damaged object (right size,
// other bytes) fails the restore instead of being copied.
func copyObject(obj, dst string, e *Entry, buf []byte) error {
	return makeFrom(obj, dst, e.Mode, func(out, src int) error {
		h, n, err := sparseHashCopy(out, src, buf)
		if err != nil {
			return err
		}
		return checkContent(obj, e, h, n)
	})
}

// sparseHashCopy copies src to out as hashCopy does, but writes only the
// data of a file with holes (fewer blocks than its size needs): the data
// regions SEEK_DATA and SEEK_HOLE find are copied to the same offsets, the
// holes are hashed as the zeros they read as and left unwritten, and out is
// given src's size at the end. So a 4 GB sparse file a setup leaves is a
// few blocks in every restored tree, as with cp -a. A file system that
// cannot find holes (EINVAL) gets a plain copy.
func sparseHashCopy(out, src int, buf []byte) (string, int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return "", 0, err
	}
	if st.Blocks*512 >= st.Size {
		return hashCopy(fd(out), fd(src), buf)
	}
	h := sha256.New()
	w := io.MultiWriter(h, fd(out))
	var n int64
	for n < st.Size {
		data, err := unix.Seek(src, n, unix.SEEK_DATA)
		switch {
		case err == unix.ENXIO: // no data past n: the rest is a hole
			data = st.Size
		case err == unix.EINVAL && n == 0:
			return hashCopy(fd(out), fd(src), buf)
		case err != nil:
			return "", n, err
		}
		if err := hashZeros(h, data-n, buf); err != nil {
			return "", n, err
		}
		n = data
		if n >= st.Size {
			break
		}
		hole, err := unix.Seek(src, data, unix.SEEK_HOLE)
		if err != nil {
			return "", n, err
		}
		if _, err := unix.Seek(out, data, io.SeekStart); err != nil {
			return "", n, err
		}
		// SEEK_HOLE moved src's offset to the hole: back to the data.
		if _, err := unix.Seek(src, data, io.SeekStart); err != nil {
			return "", n, err
		}
		m, err := io.CopyBuffer(w, io.LimitReader(fd(src), hole-data), buf)
		n += m
		if err != nil {
			return "", n, err
		}
		if m < hole-data { // the file shrank: checkContent names the count
			break
		}
	}
	if err := unix.Ftruncate(out, n); err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// hashZeros writes n zero bytes to h through buf.
func hashZeros(h io.Writer, n int64, buf []byte) error {
	clear(buf)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := h.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// checkContent says whether n bytes hashing to hash are e's content.
func checkContent(obj string, e *Entry, hash string, n int64) error {
	if n != e.Size {
		return fmt.Errorf("%w %s: %d bytes read, the manifest says %d", ErrCorrupt, obj, n, e.Size)
	}
	if hash != e.Hash {
		return fmt.Errorf("%w %s: content hashes to %s", ErrCorrupt, obj, hash)
	}
	return nil
}

// hashObject re-hashes an object file.
func hashObject(p string, buf []byte) (string, int64, error) { return readObject(nil, p, false, buf) }

// readObject reads the file at p, decompressing it if compressed, writes
// the content to w if w is not nil, and returns its SHA-256 and size.
func readObject(w io.Writer, p string, compressed bool, buf []byte) (string, int64, error) {
	src, err := openRead(p)
	if err != nil {
		return "", 0, err
	}
	defer unix.Close(src)
	if compressed {
		return hashDecompress(w, fd(src), buf)
	}
	return hashCopy(w, fd(src), buf)
}

// hashCopy reads r to its end through buf, writing its bytes to w if w is
// not nil, and returns their SHA-256 and count.
func hashCopy(w io.Writer, r io.Reader, buf []byte) (string, int64, error) {
	h := sha256.New()
	var dst io.Writer = h
	if w != nil {
		dst = io.MultiWriter(h, w)
	}
	n, err := io.CopyBuffer(dst, r, buf)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
