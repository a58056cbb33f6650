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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

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
// same whatever the tree's size, and so does the check that the tree is
// complete and made from the manifest the store holds (a marker beside the
// tree, checked by a stat of the manifest, which is not decoded). Without
// the privilege to mount the kernel's overlay, fuse-overlayfs mounts one
// where it works.
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
	// UserNS marks an overlay mounted in a user namespace, which this
	// process's mount namespace does not show: it lives while its
	// process (PID) and its holder (Holder, started at HolderStart)
	// do.
	UserNS      bool   `json:"userns,omitempty"`
	Holder      int    `json:"holder,omitempty"`
	HolderStart uint64 `json:"holder_start,omitempty"`
}

// treeDir holds commit's materialized tree (root/) and its completion
// marker (tree.json); both appear at once, by one rename.
func (s *Store) treeDir(commit string) string {
	return filepath.Join(s.dir, "trees", commit)
}

// treePath is commit's materialized tree: an overlay's lower layer.
func (s *Store) treePath(commit string) string {
	return filepath.Join(s.treeDir(commit), "root")
}

const treeMarkerName = "tree.json"

// treeMarker is written beside a materialized tree once the tree is
// complete. It names the manifest the tree was made from, so that a
// restore can trust the tree after a stat(2) of the manifest instead of
// decoding it (the one cost that grows with the tree), and carries the
// counts a restore reports.
type treeMarker struct {
	Commit   string     `json:"commit"`
	Manifest manifestID `json:"manifest"`
	Files    int        `json:"files"`
	Dirs     int        `json:"dirs"`
	Symlinks int        `json:"symlinks"`
	Bytes    int64      `json:"bytes"`
	// Owner is who owns the tree's entries (an overlay in a user
	// namespace needs them to be its user's); absent in markers written
	// before it was kept.
	Owner *treeOwner `json:"owner,omitempty"`
}

func (s *Store) mountRecordPath(dest string) string {
	h := sha256.Sum256([]byte(dest))
	return filepath.Join(s.dir, "mounts", hex.EncodeToString(h[:8])+".json")
}

// completeTree returns the marker of commit's materialized tree when the
// tree is there, complete, and made from the manifest the store holds now.
// Its cost does not depend on the tree's size: the marker is read and the
// manifest stat'ed, not decoded. Only a manifest file that is another
// inode than the marker names (a store copied elsewhere) is hashed, and
// the marker then learns its new identity.
func (s *Store) completeTree(commit string) (*treeMarker, bool) {
	mp := filepath.Join(s.treeDir(commit), treeMarkerName)
	b, err := os.ReadFile(mp)
	if err != nil {
		return nil, false
	}
	var mk treeMarker
	if json.Unmarshal(b, &mk) != nil || mk.Commit != commit || !isHash(mk.Manifest.SHA256) {
		return nil, false
	}
	if fi, err := os.Lstat(s.treePath(commit)); err != nil || !fi.IsDir() {
		return nil, false
	}
	var st unix.Stat_t
	if err := unix.Stat(s.manifestPath(commit), &st); err != nil {
		return nil, false
	}
	if mk.Manifest.sameFile(&st) {
		return &mk, true
	}
	h, _, err := hashObject(s.manifestPath(commit), make([]byte, 64<<10))
	if err != nil || h != mk.Manifest.SHA256 {
		return nil, false
	}
	mk.Manifest.setStat(&st)
	if b, err := json.Marshal(mk); err == nil {
		atomicfile.WriteUnsynced(mp, b, 0o444) // best effort: the hash decides anyway
	}
	return &mk, true
}

// Materialize makes the commit's read-only tree inside the store, once,
// and returns its path. Concurrent calls for one commit share one tree:
// one builds it under the commit's tree lock, the others wait and find it.
func (s *Store) Materialize(ctx context.Context, commit string) (string, error) {
	full, err := s.resolve(commit)
	if err != nil {
		return "", err
	}
	if _, ok := s.completeTree(full); ok {
		return s.treePath(full), nil
	}
	m, id, err := s.readManifestID(full)
	if err != nil {
		return "", err
	}
	if _, err := s.materialize(ctx, m, id); err != nil {
		return "", err
	}
	return s.treePath(full), nil
}

// materialize makes m's tree from the manifest file id (already read)
// unless a complete one is there, and returns its marker. A tree that is
// there but incomplete or made from another manifest (or by an older
// layout) is moved aside to trees/.old-<commit>-*, which GC removes once
// no mount of the commit is left, and a new one is made.
func (s *Store) materialize(ctx context.Context, m *Manifest, id manifestID) (*treeMarker, error) {
	if mk, ok := s.completeTree(m.Commit); ok && mk.Manifest.SHA256 == id.SHA256 {
		return mk, nil
	}
	// gc.lock shared, as a build holds it: GC removes what is in tmp.
	gl, err := s.acquire(ctx, "gc.lock", true)
	if err != nil {
		return nil, err
	}
	defer gl.release()
	l, err := s.acquire(ctx, "tree-"+m.Commit, false)
	if err != nil {
		return nil, err
	}
	defer l.release()
	if mk, ok := s.completeTree(m.Commit); ok && mk.Manifest.SHA256 == id.SHA256 {
		return mk, nil
	}
	fail := func(err error) (*treeMarker, error) {
		return nil, fmt.Errorf("envstore: materialize %s: %w", m.Commit, err)
	}
	dst := s.treeDir(m.Commit)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fail(err)
	}
	if _, err := os.Lstat(dst); err == nil {
		// A mount may still use it as its lower layer: it stays until
		// GC finds none of the commit.
		old := filepath.Join(filepath.Dir(dst), ".old-"+m.Commit+"-"+filepath.Base(s.tempName("")))
		if err := os.Rename(dst, old); err != nil {
			return fail(err)
		}
	}
	tmp := s.tempName("tree-")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fail(err)
	}
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		removeAll(tmp)
		return fail(err)
	}
	var res RestoreResult
	// Hard links: the tree is the store's objects under other names, and
	// files whose mode a link cannot give are copied into it.
	if err := s.makeTree(ctx, m, root, RestoreLink, RestoreOptions{}, &res); err != nil {
		removeAll(tmp)
		return fail(err)
	}
	owner, err := ownerOf(root)
	if err != nil {
		removeAll(tmp)
		return fail(err)
	}
	mk := &treeMarker{Commit: m.Commit, Manifest: id, Files: res.Files, Dirs: res.Dirs, Symlinks: res.Symlinks, Bytes: res.Bytes, Owner: owner}
	b, _ := json.Marshal(mk)
	if err := atomicfile.Write(filepath.Join(tmp, treeMarkerName), b, 0o444); err != nil {
		removeAll(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		removeAll(tmp)
		return fail(err)
	}
	return mk, nil
}

// overlaySafe reports whether p can be given in an overlay mount's options,
// which separate with commas and colons and escape with backslashes.
func overlaySafe(p string) bool {
	return !strings.ContainsAny(p, ",:\\\n")
}

// canOverlay reports whether this process can mount an overlay with layers
// on dir's file system, by mounting one there (on the first call only),
// and why or why not.
func (s *Store) canOverlay(dir string) (bool, string) {
	s.overlayOnce.Do(func() {
		p := probeOverlay(dir)
		s.overlayOK, s.overlayFuse, s.overlayWhy, s.overlayUserNS = p.ok, p.fuse && !p.kernel, p.why, p.userns
	})
	return s.overlayOK, s.overlayWhy
}

// canUserNS reports whether the probe canOverlay made (which must have
// run) mounted an overlay in a user namespace and wrote through it, and
// why not.
func (s *Store) canUserNS() (bool, string) {
	if !s.overlayUserNS {
		return false, "no overlay in a user namespace either"
	}
	return true, ""
}

// OverlayAvailable reports whether this process can mount an overlay with
// its layers on dir's file system, the kernel's or fuse-overlayfs (it
// mounts one there to find out), and why or why not.
func OverlayAvailable(dir string) (bool, string) {
	p := probeOverlay(dir)
	return p.ok, p.why
}

// kernelOverlayWhy is the reason an overlay restore gives when it mounts
// the kernel's overlay.
const kernelOverlayWhy = "this process can mount an overlay: the store's read-only tree below, writes in a fresh upper layer beside the destination"

// errMount is wrapped by restoreOverlay's error when the mount itself
// failed (and nothing was left).
var errMount = errors.New("mount overlay")

// hasSysAdmin reports whether this process has CAP_SYS_ADMIN in its
// effective set, which mounting the kernel's overlay takes.
func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// overlayProbe is what probeOverlay found.
type overlayProbe struct {
	ok     bool
	kernel bool // the kernel's overlayfs mounts in this mount namespace
	fuse   bool // fuse-overlayfs mounts (probed only without kernel)
	userns bool // the kernel's mounts in a user namespace (probed only without kernel)
	why    string
}

// probeOverlay finds out how this process can mount an overlay at a
// destination on dir's file system that other processes see: the kernel's
// overlayfs (root), else fuse-overlayfs. It also tries the kernel's in a
// new user namespace, to say so: such a mount is seen only by the
// processes in that namespace and ends with them, so a restore cannot
// leave one at a destination.
func probeOverlay(dir string) overlayProbe {
	if !overlaySafe(dir) {
		return overlayProbe{why: "the path holds a comma, colon or backslash, which overlay options cannot carry"}
	}
	tmp, err := os.MkdirTemp(dir, ".overlay-probe-")
	if err != nil {
		return overlayProbe{why: err.Error()}
	}
	defer removeAll(tmp)
	// layers makes a fresh lower (with a read-only file), upper, work
	// and mount point under tmp/name and returns the mount point and
	// options.
	layers := func(name string) (string, string, error) {
		d := filepath.Join(tmp, name)
		for _, sub := range []string{"", "l", "u", "w", "m"} {
			if err := os.Mkdir(filepath.Join(d, sub), 0o700); err != nil {
				return "", "", err
			}
		}
		if err := os.WriteFile(filepath.Join(d, "l", "f"), []byte("x\n"), 0o444); err != nil {
			return "", "", err
		}
		return filepath.Join(d, "m"), fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", filepath.Join(d, "l"), filepath.Join(d, "u"), filepath.Join(d, "w")), nil
	}
	m, opts, err := layers("kernel")
	if err != nil {
		return overlayProbe{why: err.Error()}
	}
	if err := mountOverlay(m, opts); err == nil {
		if err := unix.Unmount(m, 0); err != nil {
			unix.Unmount(m, unix.MNT_DETACH)
		}
		return overlayProbe{ok: true, kernel: true, why: kernelOverlayWhy}
	} else {
		kernelWhy := fmt.Sprintf("mounting an overlay failed (mount: %v)", err)
		var p overlayProbe
		fm, fopts, err := layers("fuse")
		if err == nil {
			err = fuseMount(fm, fopts)
		}
		fuseWhy := ""
		if err == nil {
			fuseUnmount(fm)
			p.ok, p.fuse = true, true
			fuseWhy = "fuse-overlayfs mounts one: the store's read-only tree below, writes in a fresh upper layer beside the destination"
		} else {
			fuseWhy = err.Error()
		}
		nsWhy := "an overlay in a user namespace would be seen only inside it"
		if um, uopts, err := layers("userns"); err == nil {
			if err := userNSOverlay(um, uopts); err != nil {
				nsWhy = fmt.Sprintf("nor in a user namespace (%v)", err)
			} else {
				p.userns = true
				nsWhy = "in a user namespace one mounts here, but only the processes in that namespace see it and it ends with them, so it cannot be left at a destination"
			}
		}
		if p.ok {
			p.why = kernelWhy + "; " + fuseWhy + " (" + nsWhy + ")"
		} else {
			p.why = kernelWhy + "; " + nsWhy + "; " + fuseWhy
		}
		return p
	}
}

// mountOverlay mounts the kernel's overlay at m. It is volatile (no sync
// of the upper layer's file system, at unmount either, which otherwise
// flushes the whole disk and takes the most of a restore and release on a
// busy machine): the upper layer is thrown away at release, and a crash
// unmounts it anyway. A kernel without the option (before 5.10) mounts
// without it.
func mountOverlay(m, opts string) error {
	err := unix.Mount("overlay", m, "overlay", 0, opts+",volatile")
	if err == unix.EINVAL {
		err = unix.Mount("overlay", m, "overlay", 0, opts)
	}
	return err
}

// fuseMount mounts an overlay at m with fuse-overlayfs, which needs no
// privilege where the user may mount FUSE file systems (it goes through
// the set-user-id fusermount3). The daemon outlives this process; it ends
// when the mount is unmounted.
func fuseMount(m, opts string) error {
	path, err := exec.LookPath("fuse-overlayfs")
	if err != nil {
		return errors.New("fuse-overlayfs is not installed (Debian package fuse-overlayfs)")
	}
	out, err := exec.Command(path, "-o", opts, m).CombinedOutput()
	if err != nil {
		return fmt.Errorf("fuse-overlayfs fails here: %s", outputLines(out, err))
	}
	return nil
}

// outputLines joins a command's output lines with "; ", or gives err when
// it printed nothing.
func outputLines(out []byte, err error) string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return err.Error()
	}
	return strings.Join(lines, "; ")
}

// fuseUnmount unmounts the FUSE mount at m: by fusermount3 (or fusermount)
// -u, which a user may run on a mount of theirs, else lazily, else by
// umount(2) (root).
func fuseUnmount(m string) error {
	var msgs []string
	for _, args := range [][]string{{"-u"}, {"-uz"}} {
		for _, tool := range []string{"fusermount3", "fusermount"} {
			path, err := exec.LookPath(tool)
			if err != nil {
				continue
			}
			out, err := exec.Command(path, append(args, m)...).CombinedOutput()
			if err == nil {
				return nil
			}
			msgs = append(msgs, strings.TrimSpace(string(out)))
			break
		}
	}
	if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount %s: %s: %w", m, strings.Join(msgs, "; "), err)
	}
	return nil
}

// userNSOverlay mounts an overlay with opts at m in a new user and mount
// namespace, as root of that namespace (this user mapped to it), and
// writes through it to a read-only lower file (a copy-up): whether the
// kernel lets an unprivileged user have overlays at all. The mount ends
// with the namespace.
func userNSOverlay(m, opts string) error {
	cmd := exec.Command("/bin/sh", "-c", `mount -t overlay overlay -o "$1,userxattr" "$2" && echo y >> "$2/f"`, "sh", opts, m)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return errors.New(outputLines(out, err))
	}
	return nil
}

// restoreOverlay mounts commit's tree at abs (an empty directory or none)
// with a fresh upper layer beside it. When the tree is materialized and
// complete, its cost does not depend on the tree's size: the manifest is
// not decoded (unless opts.Verify, which re-hashes the whole tree).
func (s *Store) restoreOverlay(ctx context.Context, commit, abs string, opts RestoreOptions, res *RestoreResult) error {
	mk, err := s.readyTree(ctx, commit, opts)
	if err != nil {
		return err
	}
	err = s.mountRecorded(ctx, commit, abs, opts, func(_ *mountRecord, mopts string) error {
		if s.overlayFuse {
			return fuseMount(abs, mopts)
		}
		return mountOverlay(abs, mopts)
	})
	if err != nil {
		return err
	}
	res.Files, res.Dirs, res.Symlinks, res.Bytes = mk.Files, mk.Dirs, mk.Symlinks, mk.Bytes
	return nil
}

// readyTree returns the marker of commit's complete tree, made first if
// it is not (or re-hashed against the manifest, with opts.Verify). When
// the tree is complete its cost does not depend on the tree's size.
func (s *Store) readyTree(ctx context.Context, commit string, opts RestoreOptions) (*treeMarker, error) {
	mk, ok := s.completeTree(commit)
	if ok && !opts.Verify {
		return mk, nil
	}
	m, id, err := s.readManifestID(commit)
	if err != nil {
		return nil, err
	}
	if mk, err = s.materialize(ctx, m, id); err != nil {
		return nil, err
	}
	if opts.Verify {
		if err := s.verifyTree(m); err != nil {
			return nil, err
		}
	}
	return mk, nil
}

// mountRecorded makes fresh upper and work directories beside abs,
// records the mount (in the store and beside abs) and calls mount with
// the record and the overlay's options, commit's tree below; mount may
// add to the record, which is then written again. On failure it leaves
// nothing; a failure of mount itself wraps errMount.
func (s *Store) mountRecorded(ctx context.Context, commit, abs string, opts RestoreOptions, mount func(rec *mountRecord, mopts string) error) error {
	tree := s.treePath(commit)
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
	rec := mountRecord{Store: s.dir, Commit: commit, Dest: abs, Layers: layers}
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
	if err := os.MkdirAll(filepath.Join(s.dir, "mounts"), 0o755); err != nil {
		return fail(err)
	}
	// The store's record first: a run killed after the mount leaves a
	// record that GC finds. Not synced: a mount does not outlive a crash
	// of the machine, and a record without its mount is forgotten.
	write := func() error {
		b, _ := json.Marshal(rec)
		if err := atomicfile.WriteUnsynced(s.mountRecordPath(abs), b, 0o644); err != nil {
			return err
		}
		return atomicfile.WriteUnsynced(filepath.Join(layers, "record.json"), b, 0o644)
	}
	if err := write(); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fail(err)
	}
	mopts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", tree, filepath.Join(layers, "upper"), filepath.Join(layers, "work"))
	before := rec
	if err := mount(&rec, mopts); err != nil {
		return fail(fmt.Errorf("%w at %s: %w", errMount, abs, err))
	}
	if rec != before {
		if err := write(); err != nil {
			release(rec)
			return err
		}
	}
	return nil
}

// verifyTree re-hashes the files of m's materialized tree (hard links to
// the objects, or copies) against the manifest.
func (s *Store) verifyTree(m *Manifest) error {
	tree := s.treePath(m.Commit)
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
	if rec.Holder != 0 && processStart(rec.Holder) == rec.HolderStart {
		// The namespace, and the mount in it, end with the holder.
		syscall.Kill(rec.Holder, syscall.SIGKILL)
		waitGone(rec.Holder, rec.HolderStart)
	}
	fstype, err := overlayMountType(rec.Dest)
	if err != nil {
		return err
	}
	switch fstype {
	case fuseOverlayType:
		if err := fuseUnmount(rec.Dest); err != nil {
			return err
		}
	case "overlay":
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

// fuseOverlayType is fuse-overlayfs's file system type in mountinfo.
const fuseOverlayType = "fuse.fuse-overlayfs"

// isOverlayMount reports whether dir is the mount point of an overlay
// file system (the kernel's or fuse-overlayfs) in this process's mount
// namespace.
func isOverlayMount(dir string) (bool, error) {
	t, err := overlayMountType(dir)
	return t != "", err
}

// overlayMountType returns the type of the overlay mounted at dir
// ("overlay" or fuseOverlayType), or "" when there is none.
func overlayMountType(dir string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
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
		if t := fields[sep+1]; unescapeMount(fields[4]) == dir && (t == "overlay" || t == fuseOverlayType) {
			return t, nil
		}
	}
	return "", sc.Err()
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

// waitGone waits a little for process pid, started at start, to end.
func waitGone(pid int, start uint64) {
	for i := 0; i < 200 && processStart(pid) == start; i++ {
		time.Sleep(5 * time.Millisecond)
	}
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
		if r.UserNS {
			// Not seen here: it lives while its process and its
			// holder do (a holder not yet recorded is being started
			// under mounts.lock, which this holds).
			mounted = r.Holder != 0 && processStart(r.Holder) == r.HolderStart
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
