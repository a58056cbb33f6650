package envstore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/patchbench/patchbench/internal/atomicfile"
)

// Overlay restores: each stored commit is materialized once, inside the
// store, as a read-only tree of hard links to its objects (DIR/trees/<commit>).
// A restore mounts the kernel's overlay file system at the destination with
// that tree as the lower layer and a fresh upper and work directory beside
// the destination (.<name>.overlay/), so every write (root's included: an
// append, a truncate, a chmod, a rename, a delete) lands in the upper layer
// and the store's files are never opened for writing. Mounting costs the
// same whatever the tree's size.
//
// Each mount is recorded twice: in the layer directory beside the
// destination (record.json, which Release reads) and in the store
// (DIR/mounts/<key>.json, which GC reads to clean up after a killed run and
// to keep the trees that live mounts use).

// overlayDirName is the directory beside dest that holds its upper and work
// directories and its record.
func overlayDirName(dest string) string {
	return filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".overlay")
}

// mountRecord is what is kept of one overlay restore.
type mountRecord struct {
	Store  string `json:"store"`
	Commit string `json:"commit"`
	Dest   string `json:"dest"`
	Layers string `json:"layers"`
	// PID and Start (the process's start time in clock ticks since boot)
	// name the process a temporary restore belongs to; zero for a restore
	// that lives until `env release`.
	PID   int    `json:"pid,omitempty"`
	Start uint64 `json:"start,omitempty"`
}

func (s *Store) treePath(commit string) string {
	return filepath.Join(s.dir, "trees", commit)
}

func (s *Store) mountRecordPath(dest string) string {
	h := sha256.Sum256([]byte(dest))
	return filepath.Join(s.dir, "mounts", hex.EncodeToString(h[:8])+".json")
}

// Materialize makes the commit's read-only tree inside the store, once,
// and returns its path. Concurrent calls for one commit share one tree:
// each builds in the store's tmp and the first rename wins.
func (s *Store) Materialize(ctx context.Context, commit string) (string, error) {
	m, err := s.Manifest(commit)
	if err != nil {
		return "", err
	}
	return s.materialize(ctx, m)
}

// materialize is Materialize for a manifest already read (a restore has
// it: decoding it again would double the one cost that grows with the tree).
func (s *Store) materialize(ctx context.Context, m *Manifest) (string, error) {
	dst := s.treePath(m.Commit)
	if _, err := os.Lstat(dst); err == nil {
		return dst, nil
	}
	// gc.lock shared, as a build holds it: GC removes what is in tmp.
	gl, err := s.acquire(ctx, "gc.lock", true)
	if err != nil {
		return "", err
	}
	defer gl.release()
	l, err := s.acquire(ctx, "tree-"+m.Commit, false)
	if err != nil {
		return "", err
	}
	defer l.release()
	if _, err := os.Lstat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("envstore: materialize %s: %w", m.Commit, err)
	}
	tmp := s.tempName("tree-")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("envstore: materialize %s: %w", m.Commit, err)
	}
	var res RestoreResult
	// Hard links: the tree is the store's objects under other names, and
	// files whose mode a link cannot give are copied into it.
	if err := s.makeTree(ctx, m, tmp, RestoreLink, RestoreOptions{}, &res); err != nil {
		removeAll(tmp)
		return "", fmt.Errorf("envstore: materialize %s: %w", m.Commit, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		removeAll(tmp)
		if _, serr := os.Lstat(dst); serr == nil {
			return dst, nil
		}
		return "", fmt.Errorf("envstore: materialize %s: %w", m.Commit, err)
	}
	return dst, nil
}

// overlaySafe reports whether p can be given in an overlay mount's options,
// which separate with commas and colons and escape with backslashes.
func overlaySafe(p string) bool {
	return !strings.ContainsAny(p, ",:\\\n")
}

// canOverlay reports whether this process can mount an overlay with layers
// on dir's file system, by mounting one there (on the first call only).
func (s *Store) canOverlay(dir string) (bool, string) {
	s.overlayOnce.Do(func() {
		s.overlayOK, s.overlayWhy = probeOverlay(dir)
	})
	return s.overlayOK, s.overlayWhy
}

// OverlayAvailable reports whether this process can mount an overlay with
// its layers on dir's file system (it mounts one there to find out), and
// if not, why.
func OverlayAvailable(dir string) (bool, string) { return probeOverlay(dir) }

func probeOverlay(dir string) (bool, string) {
	if !overlaySafe(dir) {
		return false, "the path holds a comma, colon or backslash, which overlay options cannot carry"
	}
	tmp, err := os.MkdirTemp(dir, ".overlay-probe-")
	if err != nil {
		return false, err.Error()
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"l", "u", "w", "m"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o700); err != nil {
			return false, err.Error()
		}
	}
	m := filepath.Join(tmp, "m")
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", filepath.Join(tmp, "l"), filepath.Join(tmp, "u"), filepath.Join(tmp, "w"))
	if err := unix.Mount("overlay", m, "overlay", 0, opts); err != nil {
		return false, fmt.Sprintf("mounting an overlay failed (%v)", err)
	}
	if err := unix.Unmount(m, 0); err != nil {
		unix.Unmount(m, unix.MNT_DETACH)
	}
	return true, ""
}

// restoreOverlay mounts the commit's tree at abs (an empty directory or
// none) with a fresh upper layer beside it.
func (s *Store) restoreOverlay(ctx context.Context, m *Manifest, abs string, opts RestoreOptions, res *RestoreResult) error {
	tree, err := s.materialize(ctx, m)
	if err != nil {
		return err
	}
	if opts.Verify {
		// The tree's files are the objects (hard links): re-hash them.
		buf := make([]byte, 256<<10)
		for i := range m.Entries {
			e := &m.Entries[i]
			if e.Type != TypeFile {
				continue
			}
			p := filepath.Join(tree, filepath.FromSlash(e.Path))
			h, n, err := hashObject(p, buf)
			if err != nil {
				return fmt.Errorf("%w %s: %w", ErrCorrupt, p, err)
			}
			if err := checkContent(p, e, h, n); err != nil {
				return err
			}
		}
	}
	// mounts.lock shared from the record to the mount: ReleaseStale holds
	// it exclusively, so it never takes a restore being made for a stale one.
	ml, err := s.acquire(ctx, "mounts.lock", true)
	if err != nil {
		return err
	}
	defer ml.release()
	layers := overlayDirName(abs)
	if !overlaySafe(tree) || !overlaySafe(layers) || !overlaySafe(abs) {
		return fmt.Errorf("%w: overlay: a path holds a comma, colon or backslash", ErrMethod)
	}
	// A layer directory left by a restore whose mount is gone is stale.
	if _, err := os.Lstat(layers); err == nil {
		if mounted, _ := isOverlayMount(abs); mounted {
			return ErrDestination
		}
		if err := removeAll(layers); err != nil {
			return err
		}
	}
	if err := os.Mkdir(layers, 0o700); err != nil {
		return err
	}
	rec := mountRecord{Store: s.dir, Commit: m.Commit, Dest: abs, Layers: layers}
	if opts.Temporary {
		rec.PID = os.Getpid()
		rec.Start = processStart(rec.PID)
	}
	fail := func(err error) error {
		os.Remove(s.mountRecordPath(abs))
		removeAll(layers)
		return err
	}
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(layers, d), 0o755); err != nil {
			return fail(err)
		}
	}
	b, _ := json.Marshal(rec)
	if err := os.MkdirAll(filepath.Join(s.dir, "mounts"), 0o755); err != nil {
		return fail(err)
	}
	// The store's record first: a run killed after the mount leaves a
	// record that GC finds.
	if err := atomicfile.Write(s.mountRecordPath(abs), b, 0o644); err != nil {
		return fail(err)
	}
	if err := atomicfile.Write(filepath.Join(layers, "record.json"), b, 0o644); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fail(err)
	}
	mopts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", tree, filepath.Join(layers, "upper"), filepath.Join(layers, "work"))
	if err := unix.Mount("overlay", abs, "overlay", 0, mopts); err != nil {
		return fail(fmt.Errorf("mount overlay at %s: %w", abs, err))
	}
	for _, e := range m.Entries {
		switch e.Type {
		case TypeDir:
			res.Dirs++
		case TypeSymlink:
			res.Symlinks++
		case TypeFile:
			res.Files++
			res.Bytes += e.Size
		}
	}
	return nil
}

// ErrNotRestored is wrapped by Release's error when dir is not an overlay
// restore.
var ErrNotRestored = errors.New("not an overlay restore of an environment store")

// Release undoes an overlay restore at dir: it unmounts it, removes its
// upper layer (everything written there) and the empty mount point, and
// forgets the mount in its store. A directory restored by copies, links or
// reflinks is not released (the error wraps ErrNotRestored): remove it as
// any directory.
func Release(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	layers := overlayDirName(abs)
	b, err := os.ReadFile(filepath.Join(layers, "record.json"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("envstore: release %s: %w", abs, ErrNotRestored)
		}
		return fmt.Errorf("envstore: release %s: %w", abs, err)
	}
	var rec mountRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Dest != abs || rec.Layers != layers {
		return fmt.Errorf("envstore: release %s: %s does not describe it", abs, filepath.Join(layers, "record.json"))
	}
	if err := release(rec); err != nil {
		return fmt.Errorf("envstore: release %s: %w", abs, err)
	}
	return nil
}

// release unmounts rec's destination if it is mounted, then removes its
// layers, its mount point when empty, and the store's record.
func release(rec mountRecord) error {
	mounted, err := isOverlayMount(rec.Dest)
	if err != nil {
		return err
	}
	if mounted {
		if err := unix.Unmount(rec.Dest, 0); err != nil {
			// Busy (a process still has a file open there): detach it,
			// so it goes when the last user does.
			if err := unix.Unmount(rec.Dest, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount: %w", err)
			}
		}
	}
	if err := removeAll(rec.Layers); err != nil {
		return err
	}
	os.Remove(rec.Dest) // only if empty
	h := sha256.Sum256([]byte(rec.Dest))
	if err := os.Remove(filepath.Join(rec.Store, "mounts", hex.EncodeToString(h[:8])+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// isOverlayMount reports whether dir is the mount point of an overlay
// file system in this process's mount namespace.
func isOverlayMount(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) {
			continue
		}
		if unescapeMount(fields[4]) == dir && fields[sep+1] == "overlay" {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// processStart returns the start time of process pid (field 22 of
// /proc/pid/stat), or 0 when it cannot be read: with the pid it names a
// process even after the pid is reused.
func processStart(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// alive reports whether the process a temporary restore belongs to still
// runs.
func (r mountRecord) alive() bool {
	if r.PID == 0 {
		return true
	}
	if err := syscall.Kill(r.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return processStart(r.PID) == r.Start
}

// mountRecords reads the store's records of overlay restores.
func (s *Store) mountRecords() ([]mountRecord, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "mounts"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []mountRecord
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, "mounts", e.Name()))
		if err != nil {
			return nil, err
		}
		var r mountRecord
		// A record names only what a restore made: the layers beside
		// its destination, never another directory to remove.
		if err := json.Unmarshal(b, &r); err != nil || !filepath.IsAbs(r.Dest) || r.Layers != overlayDirName(r.Dest) {
			return nil, fmt.Errorf("mount record %s does not read", e.Name())
		}
		r.Store = s.dir
		out = append(out, r)
	}
	return out, nil
}

// ReleaseStale releases the overlay restores whose process has ended (a
// killed run's) and forgets those whose mount is gone; it returns how many.
// Restores that live until `env release` (RestoreOptions.Temporary unset)
// are kept while mounted.
func (s *Store) ReleaseStale(ctx context.Context) (int, error) {
	l, err := s.acquire(ctx, "mounts.lock", false)
	if err != nil {
		return 0, err
	}
	defer l.release()
	recs, err := s.mountRecords()
	if err != nil {
		return 0, fmt.Errorf("envstore: %w", err)
	}
	n := 0
	for _, r := range recs {
		mounted, err := isOverlayMount(r.Dest)
		if err != nil {
			return n, fmt.Errorf("envstore: %w", err)
		}
		if mounted && r.alive() {
			continue
		}
		if err := release(r); err != nil {
			return n, fmt.Errorf("envstore: release %s: %w", r.Dest, err)
		}
		n++
	}
	return n, nil
}
