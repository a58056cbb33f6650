// Package envstore keeps per-commit environments of a repository, the tree a
// setup command (dependency install, build, byte-compile) leaves at a
// commit, in a content-addressed store, and restores one in well under a
// second.
//
// # Layout
//
//	DIR/format                   "patchbench-envstore 1"
//	DIR/objects/ab/<sha256>      file contents, read-only (0444), each unique content once
//	DIR/objects/ab/<sha256>.x    the same for executable files (0555)
//	DIR/manifests/<commit>.json.gz   one per stored commit: path, type, mode, size, hash; symlink targets
//	DIR/failed/<commit>.json     a setup that failed: exit code and log (no manifest, no objects kept for it)
//	DIR/gitmap                   what git told us: blob id -> SHA-256 of the checked-out content
//	DIR/tmp/                     build trees and temporary files; only gc removes what a killed build left
//	DIR/locks/                   one lock file per commit being built, and gc.lock
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
// # Restore, and why objects are read-only
//
// Restore rebuilds a tree from its manifest by reflinks where the file system
// has them (each file then is its own inode, copy-on-write), else by hard
// links, or by copies (RestoreCopy). Restores run in parallel, into a
// temporary directory beside the destination that is renamed into place at
// the end, so a failed restore leaves nothing.
//
// A hard-linked file IS the store's object: the same inode. A program that
// replaces a file (writes a temporary file and renames it over the old
// name, as git, editors, Python's byte-compiler and patchbench do) only
// changes the restored tree's directory entry, and the store and every other
// restored tree keep the old content. A program that opened the file for
// writing in place would change the object itself, and with it every tree
// restored from it; objects are therefore 0444 (0555), so such an open fails
// with EACCES. That holds for ordinary users and for the sandbox (bubblewrap
// drops every capability, root's included), but not for root outside a
// sandbox, which ignores permissions, nor for a program that chmods the file
// first (it owns it). Verify reports any object whose mode is not read-only,
// and Restore refuses to link one. Use RestoreCopy (or a file system with
// reflinks) where the tree's users cannot be trusted to replace files.
//
// Hard-linked files have the object's mode: the manifest's mode without the
// write bits (0644 -> 0444, 0755 -> 0555). Files with other modes (0600,
// setuid, ...) are copied so they keep their exact mode. Modification times
// are not part of an environment: a hard-linked file has its object's time.
// Byte-code that is validated by source timestamps (Python's default .pyc)
// is therefore recompiled after a restore; compile with
// "python3 -m compileall --invalidation-mode checked-hash" to keep it valid.
//
// # Concurrency
//
// Builds and restores may run in parallel, in one process or several, on the
// same store. Two builds of the same commit serialize on the commit's lock
// file; the second finds the manifest and skips the commit. Restores take no
// lock: objects named by a manifest are never removed.
//
// GC removes the objects no manifest names. The rule that makes it safe
// against a concurrent build: every build holds a shared flock on
// DIR/locks/gc.lock from before its first object is stored until after its
// manifest is renamed into place (or its objects are abandoned), and gc holds
// it exclusively while it lists manifests and removes objects. So gc never
// sees an object that a build has stored but not yet named, and it clears
// DIR/tmp while no build can be using it.
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

	"golang.org/x/sys/unix"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/internal/flock"
)

const formatLine = "patchbench-envstore 1\n"

// Store is an environment store in a directory. Its methods are safe for
// concurrent use, and several processes may use one store.
type Store struct {
	dir string

	mu     sync.Mutex
	gitmap map[string]string // blob id -> sha256, nil until loaded
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
	case string(b) != formatLine:
		return fail(fmt.Errorf("unknown store format %q", strings.TrimSpace(string(b))))
	}
	return &Store{dir: abs}, nil
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

// parseObjectName splits an object file name into its hash and variant.
func parseObjectName(name string) (hash string, exec, ok bool) {
	if h, found := strings.CutSuffix(name, ".x"); found {
		name, exec = h, true
	}
	return name, exec, isHash(name)
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
