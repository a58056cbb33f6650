// Package envstore keeps per-commit environments of a repository, the tree a
// setup command (dependency install, build, byte-compile) leaves at a
// commit, in a content-addressed store, and restores one in well under a
// second.
//
// # Layout
//
//	DIR/format                   "patchbench-envstore 3" (2: every object loose; 1: and every manifest in full)
//	DIR/objects/ab/<sha256>      file contents, read-only (0444), each unique content once
//	DIR/objects/ab/<sha256>.x    the same for executable files (0555)
//	DIR/objects/ab/<sha256>.z    an object compressed at rest (gzip, 0444; .x.z executable): see compress.go
//	DIR/manifests/<commit>.json.gz   one per stored commit: path, type, mode, size, hash; symlink targets
//	                             (in full, or what differs from a full one: see manifestFile)
//	DIR/failed/<commit>.json     a setup that failed: exit code and log (no manifest, no objects kept for it)
//	DIR/gitmap                   what git told us: blob id -> SHA-256 of the checked-out content
//	DIR/tmp/                     build trees and temporary files; only gc removes what a killed build left
//	DIR/locks/                   one lock file per commit being built, and gc.lock
//	DIR/trees/<commit>/root/     a commit's tree for overlay restores: hard links to its objects, made once
//	DIR/trees/<commit>/tree.json its completion marker: the manifest it was made from (hash, stat), its counts, its owner
//	DIR/mounts/<key>.json        one per overlay restore mounted: destination, layers, owning process (and the
//	                             holder of a user namespace's overlay: see userns.go)
//
// An object is linked into the store from the build tree (no copy), made
// read-only and then renamed into place with link(2), which fails rather than
// replaces when another process stored the same content first. A manifest is
// written last, to a temporary file that is synced (with the file system, so
// its objects are on disk too) and renamed: a commit is stored exactly when
// its manifest exists, and a build killed at any point leaves at most
// unreferenced objects and temporary files, which verify ignores and gc
// removes.
//
// # Hashing and git
//
// Most files of a built tree are the commit's tracked files, unchanged by the
// setup. Before the setup runs, Build records each tracked file's inode, size,
// modification and change times; a file whose four values are the same
// afterwards still holds the blob git checked out, and if the store already
// knows that blob's SHA-256 (DIR/gitmap, filled as files are hashed) the file
// is neither read nor hashed. The change time cannot be set from user space,
// so a setup cannot fake an unchanged file; Build waits until the clock has
// moved past the checkout's change times before it starts the setup, so a
// write in the same clock tick is not missed (git's "racy" problem). A blob is
// only mapped when the checked-out size equals the blob's size, since
// .gitattributes filters (eol, ident) make the checked-out bytes differ from
// the blob. BuildResult reports the files and bytes this saved from reading.
//
// # Restore: no write through a restored tree reaches the store
//
// Restore rebuilds a tree from its manifest, in parallel, into a temporary
// directory beside the destination that is renamed into place at the end,
// so a failed restore leaves nothing. How it makes each file is chosen so
// that nothing written through the tree can change the store, for root too.
// Before a restore it probes, on a read-only file in the store's tmp
// directory, whether a reflink and a hard link to the destination work and
// whether this process can open a read-only file for writing (root, or
// CAP_DAC_OVERRIDE: asking the file system is exact where a capability check
// is not). Then (RestoreAuto):
//
//   - reflinks (FICLONE) where the file system has them: each file is its
//     own inode sharing the object's blocks, copy-on-write;
//   - else hard links, where this process cannot write a read-only file, or
//     where the caller promises read-only use (RestoreOptions.ReadOnlyUse:
//     it only replaces files, and mounts the tree read-only for others);
//   - else copies.
//
// A hard-linked file IS the store's object. A program that replaces a file
// (writes a temporary file and renames it, as git, editors, Python's
// byte-compiler and patchbench do) only changes the tree's directory entry.
// One that opens the file for writing in place is refused, since objects
// are 0444 (0555) and the process cannot override that; only a program that
// chmods the file first (its owner may) gets through, which verify reports
// (an object whose mode is not read-only) and Restore refuses to use.
// RestoreLink asked for by a process that could write through the links is
// refused (ErrUnsafeLinks). The result names the method and the reason.
//
// Hard-linked files have the object's mode: the manifest's mode without the
// write bits (0644 -> 0444, 0755 -> 0555). Files with other modes (0600,
// setuid, ...) are copied so they keep their exact mode, and so is an
// object the kernel will not let this user link (fs.protected_hardlinks,
// another user's store). Modification times are not part of an
// environment: a hard-linked file has its object's time, a copy the time
// it was made.
//
// What is checked: every restore checks each object's type, size and mode
// (a truncated or chmodded object fails it). A copy reads the bytes anyway,
// so it hashes them and a changed object fails the restore. Reflinks and
// hard links do not read the bytes (that would make a 10,000-file restore
// cost what a copy does); RestoreOptions.Verify re-hashes every object
// first, and Verify finds any object whose bytes changed.
//
// # Deterministic setups
//
// A setup runs with SOURCE_DATE_EPOCH set to the commit's committer time
// (unless BuildOptions.Env sets it), and every file and directory of the
// checkout has that time as its access and modification time. Tools that
// honour it write the same bytes for the same sources at every commit
// (Python's byte-compiler then writes hash-checked .pyc files), so a build
// output that did not change is stored once, not once per commit. The time
// is recorded in the manifest (Manifest.SourceDateEpoch). It also runs with
// PYTHONHASHSEED=0 unless BuildOptions.Env sets it: Python before 3.11
// writes a frozenset constant's strings in hash order, and hashes are
// otherwise seeded at random per process, so one module's byte-code would
// differ from build to build (Manifest.PythonHashSeed).
//
// # Concurrency
//
// Builds and restores may run in parallel, in one process or several, on the
// same store. Two builds of the same commit serialize on the commit's lock
// file; the second finds the manifest and skips the commit. An overlay
// restore of a materialized tree takes no lock: the tree's objects are
// linked by it, so GC neither removes nor compresses them.
//
// GC removes the objects no manifest names and compresses the loose ones
// nothing else links. The rule that makes it safe against a concurrent
// build: every build holds a shared flock on DIR/locks/gc.lock from before
// its first object is stored until after its manifest is renamed into place
// (or its objects are abandoned), and gc holds it exclusively while it
// lists manifests, removes and compresses objects. So gc never sees an
// object that a build has stored but not yet named, and it clears DIR/tmp
// while no build can be using it. Materialize and restores that make files
// hold it shared too, while they make objects loose and link or read them
// (a process that cannot open the lock file, another user's store, reads
// objects in whichever form it finds them).
package envstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/internal/flock"
)

// formatLine is the format of the stores Open makes: 3, whose objects may
// be compressed at rest (compress.go) and whose manifests may be stored
// against a base (see manifestFile). Stores of format 2 (every object
// loose) are read and written as they are until GC compresses their
// objects, which makes them format 3 first; stores of format 1 (every
// manifest in full, every object loose) stay so. A program that knows
// only an older format refuses a newer store rather than take a
// compressed object for a missing one, or a manifest stored against a
// base for the whole tree.
const (
	formatLine   = "patchbench-envstore 3\n"
	formatLineV2 = "patchbench-envstore 2\n"
	formatLineV1 = "patchbench-envstore 1\n"
)

// Store is an environment store in a directory. Its methods are safe for
// concurrent use, and several processes may use one store.
type Store struct {
	dir string

	mu     sync.Mutex
	gitmap map[string]string // blob id -> sha256, nil until loaded
	// deltas: the store's format lets manifests be stored against a base
	// (format 2); base is the one this process uses, once looked for.
	deltas bool
	// compress: the store's format lets objects be compressed at rest
	// (format 3); GC sets it when it upgrades a store of format 2.
	compress   atomic.Bool
	base       *deltaBase
	baseLooked bool

	// Whether this process can mount an overlay, probed once.
	overlayOnce sync.Once
	overlayOK   bool
	overlayWhy  string
	// overlayFuse: mount with fuse-overlayfs (no privilege to mount the
	// kernel's overlayfs).
	overlayFuse bool
	// overlayUserNS: the kernel's overlay mounts in a user namespace
	// (probed only where it does not mount here).
	overlayUserNS bool
	// kernelMountFailed: a restore that tried the kernel's overlay first
	// (see mountFirst) could not mount it.
	kernelMountFailed atomic.Bool

	// manifestReads counts manifests decoded, for the tests that check
	// an overlay restore of a materialized tree decodes none.
	manifestReads atomic.Int64
}

// Open opens the store in dir, making it if dir does not exist or is empty.
func Open(dir string) (*Store, error) { return open(dir, true) }

// OpenExisting opens the store in dir and makes nothing: if dir holds no
// store, the error wraps fs.ErrNotExist. Commands that only read a store
// (restore, verify, ls) use it, so that a mistyped path is an error rather
// than a new empty store.
func OpenExisting(dir string) (*Store, error) { return open(dir, false) }

func open(dir string, create bool) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("envstore: open %s: %w", dir, err)
	}
	fail := func(err error) (*Store, error) { return nil, fmt.Errorf("envstore: open %s: %w", abs, err) }
	if create {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fail(err)
		}
	}
	format := filepath.Join(abs, "format")
	b, err := os.ReadFile(format)
	if create && errors.Is(err, fs.ErrNotExist) {
		// Two builds starting on one new store: the first makes it while
		// holding a lock on the directory itself (a lock file would make
		// it not empty), the others then find its format file.
		unlock, lerr := lockDirectory(abs)
		if lerr != nil {
			return fail(lerr)
		}
		defer unlock()
		b, err = os.ReadFile(format)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && !create:
		return fail(fmt.Errorf("no environment store here (env build makes one): %w", fs.ErrNotExist))
	case errors.Is(err, fs.ErrNotExist):
		ents, err := os.ReadDir(abs)
		if err != nil {
			return fail(err)
		}
		if len(ents) > 0 {
			return fail(errors.New("not an environment store (no format file) and not empty"))
		}
		for _, d := range []string{"objects", "manifests", "failed", "tmp", "locks"} {
			if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
				return fail(err)
			}
		}
		if err := atomicfile.Write(format, []byte(formatLine), 0o644); err != nil {
			return fail(err)
		}
	case err != nil:
		return fail(err)
	case string(b) == formatLineV1:
		return &Store{dir: abs}, nil
	case string(b) == formatLineV2:
		return &Store{dir: abs, deltas: true}, nil
	case string(b) != formatLine:
		return fail(fmt.Errorf("unknown store format %q", strings.TrimSpace(string(b))))
	}
	s := &Store{dir: abs, deltas: true}
	s.compress.Store(true)
	return s, nil
}

// upgradeFormat makes a store of format 2 one of format 3, whose objects
// may be compressed; the caller holds gc.lock exclusively. A store of
// format 1 stays so.
func (s *Store) upgradeFormat() error {
	if s.compress.Load() || !s.deltas {
		return nil
	}
	format := filepath.Join(s.dir, "format")
	b, err := os.ReadFile(format)
	if err != nil {
		return err
	}
	if string(b) == formatLineV2 {
		if err := atomicfile.Write(format, []byte(formatLine), 0o644); err != nil {
			return err
		}
	} else if string(b) != formatLine {
		return fmt.Errorf("unknown store format %q", strings.TrimSpace(string(b)))
	}
	s.compress.Store(true)
	return nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// objectPath is where content hash lives, as an executable file or not.
func (s *Store) objectPath(hash string, exec bool) string {
	p := filepath.Join(s.dir, "objects", hash[:2], hash)
	if exec {
		p += ".x"
	}
	return p
}

func (s *Store) manifestPath(commit string) string {
	return filepath.Join(s.dir, "manifests", commit+".json.gz")
}

func (s *Store) failurePath(commit string) string {
	return filepath.Join(s.dir, "failed", commit+".json")
}

// objectMode is the mode of an object: read-only, executable or not.
func objectMode(exec bool) fs.FileMode {
	if exec {
		return 0o555
	}
	return 0o444
}

// isHash reports whether s is a lower-case hex SHA-256.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parseObjectName splits an object file name into its hash, variant and
// form (compressed or loose).
func parseObjectName(name string) (hash string, exec, compressed, ok bool) {
	name, compressed = strings.CutSuffix(name, compressedSuffix)
	if h, found := strings.CutSuffix(name, ".x"); found {
		name, exec = h, true
	}
	return name, exec, compressed, isHash(name)
}

// tempName returns a fresh name in the store's tmp directory.
func (s *Store) tempName(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return filepath.Join(s.dir, "tmp", prefix+hex.EncodeToString(b[:]))
}

// syncFS flushes the whole file system that holds dir (syncfs(2)): one call
// that puts every object linked in by a build on disk before its manifest.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}

// lock is a flock(2) on a file in DIR/locks.
type lock struct{ l *flock.Lock }

// acquire takes the lock named name, shared or exclusive, waiting until it
// is free or ctx ends.
func (s *Store) acquire(ctx context.Context, name string, shared bool) (*lock, error) {
	l, err := flock.Acquire(ctx, filepath.Join(s.dir, "locks", name), shared)
	if err != nil {
		return nil, fmt.Errorf("envstore: %w", err)
	}
	return &lock{l}, nil
}

func (l *lock) release() { l.l.Release() }

// removeAll is os.RemoveAll that first makes directories writable, as a
// setup (Go's module cache) may leave them read-only.
func removeAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o755)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// forEach calls f on each item, workers at a time, each worker with its own
// 256 kB buffer, and returns the first error f returned (the items not yet
// started are then skipped) or ctx's.
func forEach[T any](ctx context.Context, workers int, items []T, f func(item T, buf []byte) error) error {
	work := make(chan T)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			for it := range work {
				if err := f(it, buf); err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			}
		})
	}
	for _, it := range items {
		if ctx.Err() != nil || len(errc) > 0 {
			break
		}
		work <- it
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return ctx.Err()
}

// lockDirectory takes an exclusive flock(2) on the directory dir, waiting
// for it, and returns its release.
func lockDirectory(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
