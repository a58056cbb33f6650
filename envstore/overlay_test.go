package envstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// needOverlay skips unless this process can mount an overlay (root, with
// the kernel's overlayfs).
func needOverlay(t *testing.T) {
	t.Helper()
	if ok, why := OverlayAvailable(t.TempDir()); !ok {
		t.Skipf("cannot mount an overlay here: %s", why)
	}
}

// storeHash reads every file of the store but its tmp and locks (objects,
// manifests, trees, with modes), to compare before and after.
func storeHash(t *testing.T, s *Store) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	for _, sub := range []string{"objects", "manifests", "trees"} {
		for p, e := range readTree(t, filepath.Join(s.Dir(), sub)) {
			out[sub+"/"+p] = e
		}
	}
	return out
}

// TestOverlayRootWrites: every way root can write through an overlay
// restore (append, truncate, chmod, rename, delete, a new file, a write
// into a read-only file) changes the tree and never the store, nor a
// second restore of the same commit; Release leaves nothing mounted or on
// disk; GC keeps the tree of a stored commit.
func TestOverlayRootWrites(t *testing.T) {
	needOverlay(t)
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 3)
	c := commits[2]
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	res, err := s.Restore(ctx, c, a, RestoreOptions{Overlay: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(a) })
	if res.Method != "overlay" || !strings.Contains(res.MethodReason, "overlay") {
		t.Fatalf("method %q (%s), want overlay", res.Method, res.MethodReason)
	}
	if _, err := s.Restore(ctx, c, b, RestoreOptions{Overlay: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(b) })
	want := readTree(t, b)
	before := storeHash(t, s)

	readme := filepath.Join(a, "README")
	f, err := os.OpenFile(readme, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("root cannot append through the overlay: %v", err)
	}
	f.WriteString("appended\n")
	f.Close()
	if err := os.Truncate(filepath.Join(a, "pkg", "core.py"), 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(a, "scripts", "run.sh"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(a, "scripts", "run.sh"), filepath.Join(a, "moved.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(a, "pkg", "__pycache__")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "new.txt"), []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(readme); !strings.HasSuffix(string(got), "appended\n") {
		t.Fatalf("the append is not seen through the overlay: %q", got)
	}

	storeUnchanged(t, before, storeHash(t, s))
	compareTrees(t, want, readTree(t, b), false)
	mustVerify(t, s)

	layers := overlayDirName(a)
	if err := Release(a); err != nil {
		t.Fatal(err)
	}
	if m, _ := isOverlayMount(a); m {
		t.Error("still mounted after Release")
	}
	for _, p := range []string{a, layers, s.mountRecordPath(a)} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Release: %v", p, err)
		}
	}
	if err := Release(a); !errors.Is(err, ErrNotRestored) {
		t.Errorf("second Release: %v, want ErrNotRestored", err)
	}
	g, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Trees != 0 {
		t.Errorf("gc removed %d trees of stored commits", g.Trees)
	}
	// The tree is made once: a third restore reuses it (same inode).
	tree := s.treePath(c)
	fi1, _ := os.Stat(tree)
	c2 := filepath.Join(base, "c")
	if _, err := s.Restore(ctx, c, c2, RestoreOptions{Method: RestoreOverlay}); err != nil {
		t.Fatal(err)
	}
	defer Release(c2)
	fi2, _ := os.Stat(tree)
	if !os.SameFile(fi1, fi2) {
		t.Error("the materialized tree was made again")
	}
}

// TestOverlayOverNonEmpty: an overlay restore refuses a destination that
// holds something, as every restore does, and leaves it as it was.
func TestOverlayOverNonEmpty(t *testing.T) {
	needOverlay(t)
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 2)
	dest := t.TempDir()
	writeFile(t, dest, "keep", "x", 0o644)
	if _, err := s.Restore(context.Background(), commits[1], dest, RestoreOptions{Overlay: true}); !errors.Is(err, ErrDestination) {
		t.Fatalf("restore over a file: %v, want ErrDestination", err)
	}
	if m, _ := isOverlayMount(dest); m {
		t.Fatal("mounted over a non-empty directory")
	}
	if _, err := os.Lstat(overlayDirName(dest)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("layers made for a refused restore: %v", err)
	}
}

// TestOverlayKilledRun: a temporary overlay restore whose process was
// killed (SIGKILL, so it released nothing) is released by the next
// ReleaseStale and by GC; one whose process lives, and one made to live
// until `env release`, are kept.
func TestOverlayKilledRun(t *testing.T) {
	needOverlay(t)
	if os.Getenv("ENVSTORE_OVERLAY_CHILD") != "" {
		return
	}
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 2)
	c := commits[1]
	base := t.TempDir()
	// A child process restores as a run does (Temporary) and is killed.
	killed := filepath.Join(base, "killed")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOverlayChild$")
	cmd.Env = append(os.Environ(), "ENVSTORE_OVERLAY_CHILD=1", "ENVSTORE_STORE="+s.Dir(), "ENVSTORE_COMMIT="+c, "ENVSTORE_DEST="+killed)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := stdout.Read(buf)
	if !strings.Contains(string(buf[:n]), "mounted") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if m, _ := isOverlayMount(killed); !m {
		t.Fatal("the killed run's mount is not there to clean")
	}
	t.Cleanup(func() { Release(killed) })

	live := filepath.Join(base, "live")
	if _, err := s.Restore(ctx, c, live, RestoreOptions{Overlay: true, Temporary: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(live) })
	kept := filepath.Join(base, "kept")
	if _, err := s.Restore(ctx, c, kept, RestoreOptions{Overlay: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(kept) })

	g, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = g
	if m, _ := isOverlayMount(killed); m {
		t.Error("gc left the killed run's overlay mounted")
	}
	if _, err := os.Lstat(overlayDirName(killed)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gc left the killed run's layers: %v", err)
	}
	for _, d := range []string{live, kept} {
		if m, _ := isOverlayMount(d); !m {
			t.Errorf("gc released %s, which is in use", filepath.Base(d))
		}
	}
	if n, err := s.ReleaseStale(ctx); err != nil || n != 0 {
		t.Errorf("second ReleaseStale: %d %v, want 0", n, err)
	}
}

// TestOverlayChild is the child process of TestOverlayKilledRun.
func TestOverlayChild(t *testing.T) {
	if os.Getenv("ENVSTORE_OVERLAY_CHILD") == "" {
		t.Skip("run by TestOverlayKilledRun")
	}
	s, err := OpenExisting(os.Getenv("ENVSTORE_STORE"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(context.Background(), os.Getenv("ENVSTORE_COMMIT"), os.Getenv("ENVSTORE_DEST"), RestoreOptions{Overlay: true, Temporary: true}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("mounted\n")
	select {}
}

// TestOverlayBrokenTree: a materialized tree whose file is no longer its
// object is reported by verify and removed by gc, and the next restore
// makes it again from the objects.
func TestOverlayBrokenTree(t *testing.T) {
	needOverlay(t)
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 2)
	c := commits[1]
	tree, err := s.Materialize(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
	// Replace one file of the tree by other bytes (not through an overlay:
	// by hand, in the store).
	p := filepath.Join(tree, "README")
	os.Chmod(filepath.Dir(p), 0o755)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("other\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "README") {
		t.Fatalf("verify did not report the broken tree: %q", rep.Problems)
	}
	g, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Trees != 1 {
		t.Errorf("gc removed %d trees, want the broken one", g.Trees)
	}
	dest := filepath.Join(t.TempDir(), "r")
	if _, err := s.Restore(ctx, c, dest, RestoreOptions{Overlay: true}); err != nil {
		t.Fatal(err)
	}
	defer Release(dest)
	if got, _ := os.ReadFile(filepath.Join(dest, "README")); string(got) == "other\n" {
		t.Error("a broken tree was served")
	}
	mustVerify(t, s)
}

// TestMountinfoEscapes: mount points with spaces are read back.
func TestMountinfoEscapes(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/x\134y`: `/x\y`, `/end\04`: `/end\04`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOverlayRestoreDecodesNoManifest: once a commit's tree is
// materialized, an overlay restore of it decodes no manifest (its cost does
// not grow with the tree), reports the tree's counts from the completion
// marker, and serves the tree; --verify still reads the manifest and
// re-hashes the tree.
func TestOverlayRestoreDecodesNoManifest(t *testing.T) {
	needOverlay(t)
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 2)
	c := commits[1]
	base := t.TempDir()
	first, err := s.Restore(ctx, c, filepath.Join(base, "a"), RestoreOptions{Overlay: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(filepath.Join(base, "a")) })
	if n := s.manifestReads.Load(); n == 0 {
		t.Fatal("the first restore made the tree without reading the manifest")
	}
	m, err := s.Manifest(c)
	if err != nil {
		t.Fatal(err)
	}
	files, bytes := m.totals()
	for _, tc := range []struct {
		name      string
		opts      RestoreOptions
		wantReads bool
	}{
		{"default", RestoreOptions{Overlay: true}, false},
		{"overlay asked for", RestoreOptions{Method: RestoreOverlay}, false},
		{"temporary", RestoreOptions{Overlay: true, Temporary: true}, false},
		{"verify", RestoreOptions{Overlay: true, Verify: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.manifestReads.Store(0)
			dest := filepath.Join(base, strings.ReplaceAll(tc.name, " ", "-"))
			res, err := s.Restore(ctx, c, dest, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer Release(dest)
			if got := s.manifestReads.Load(); (got > 0) != tc.wantReads {
				t.Errorf("%d manifests decoded, want reads %v", got, tc.wantReads)
			}
			if res.Method != "overlay" || res.Files != files || res.Bytes != bytes || res.Dirs != first.Dirs || res.Symlinks != first.Symlinks {
				t.Errorf("result %+v, want overlay, %d files, %d bytes, as the first %+v", res, files, bytes, first)
			}
			compareTrees(t, readTree(t, filepath.Join(base, "a")), readTree(t, dest), false)
		})
	}
}

// TestOverlayStaleTree: a materialized tree is served only while its
// completion marker names the manifest the store holds. A store copied
// elsewhere (every inode new) is matched by the manifest's hash, without
// decoding it, and the marker learns the new file; a tree made from
// another manifest, one without a marker (an interrupted or older layout)
// or with a marker for another commit is moved aside and made again, and
// GC removes the old one once no mount of the commit is left.
func TestOverlayStaleTree(t *testing.T) {
	needOverlay(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// spoil changes the store after the tree is made; it returns the
		// store to restore from.
		spoil func(t *testing.T, s *Store, c string) *Store
		// remade: the tree is made again (the manifest decoded).
		remade bool
	}{
		{"copied store", func(t *testing.T, s *Store, c string) *Store {
			dst := filepath.Join(t.TempDir(), "copy")
			if out, err := exec.Command("cp", "-a", s.Dir(), dst).CombinedOutput(); err != nil {
				t.Fatalf("cp -a: %v %s", err, out)
			}
			return openStore(t, dst)
		}, false},
		{"manifest rewritten", func(t *testing.T, s *Store, c string) *Store {
			m, err := s.Manifest(c)
			if err != nil {
				t.Fatal(err)
			}
			m.Log += "rewritten\n"
			if err := s.writeManifest(m); err != nil {
				t.Fatal(err)
			}
			return s
		}, true},
		{"no marker", func(t *testing.T, s *Store, c string) *Store {
			os.Chmod(s.treeDir(c), 0o755)
			if err := os.Remove(filepath.Join(s.treeDir(c), treeMarkerName)); err != nil {
				t.Fatal(err)
			}
			return s
		}, true},
		{"older layout", func(t *testing.T, s *Store, c string) *Store {
			// The tree itself at trees/<commit>, as before markers.
			tmp := filepath.Join(s.Dir(), "trees", ".x")
			if err := os.Rename(s.treePath(c), tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(s.treeDir(c)); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, s.treeDir(c)); err != nil {
				t.Fatal(err)
			}
			return s
		}, true},
		{"marker of another commit", func(t *testing.T, s *Store, c string) *Store {
			p := filepath.Join(s.treeDir(c), treeMarkerName)
			b, _ := os.ReadFile(p)
			os.Remove(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), c, strings.Repeat("0", len(c)), 1)), 0o444)
			return s
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 2)
			c := commits[1]
			base := t.TempDir()
			held := filepath.Join(base, "held")
			if _, err := s.Restore(ctx, c, held, RestoreOptions{Overlay: true}); err != nil {
				t.Fatal(err)
			}
			want := readTree(t, held)
			s2 := tc.spoil(t, s, c)
			s2.manifestReads.Store(0)
			dest := filepath.Join(base, "r")
			if _, err := s2.Restore(ctx, c, dest, RestoreOptions{Overlay: true}); err != nil {
				t.Fatal(err)
			}
			if got := s2.manifestReads.Load(); (got > 0) != tc.remade {
				t.Errorf("%d manifests decoded, want the tree made again: %v", got, tc.remade)
			}
			compareTrees(t, want, readTree(t, dest), false)
			// The held mount still sees its tree (moved aside, not removed).
			compareTrees(t, want, readTree(t, held), false)
			mustVerify(t, s2)
			// A second restore trusts the tree as it is now.
			s2.manifestReads.Store(0)
			again := filepath.Join(base, "again")
			if _, err := s2.Restore(ctx, c, again, RestoreOptions{Overlay: true}); err != nil {
				t.Fatal(err)
			}
			if n := s2.manifestReads.Load(); n != 0 {
				t.Errorf("the next restore decoded %d manifests", n)
			}
			for _, d := range []string{held, dest, again} {
				if err := Release(d); err != nil {
					t.Fatal(err)
				}
			}
			g, err := s2.GC(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(filepath.Join(s2.Dir(), "trees"))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if len(names) != 1 || names[0] != c {
				t.Errorf("trees after gc: %q (gc removed %d), want only %s", names, g.Trees, c)
			}
		})
	}
}

// TestOverlayFuse: where fuse-overlayfs mounts (it is what a process
// without the privilege to mount the kernel's overlayfs uses), a restore
// through it takes writes in the upper layer and never in the store,
// Release unmounts it, and a temporary one whose process has ended is
// released by ReleaseStale (the daemon outlives a killed run).
func TestOverlayFuse(t *testing.T) {
	if _, err := exec.LookPath("fuse-overlayfs"); err != nil {
		t.Skip("fuse-overlayfs is not installed")
	}
	probe := t.TempDir()
	m := filepath.Join(probe, "m")
	for _, d := range []string{"l", "u", "w", "m"} {
		os.Mkdir(filepath.Join(probe, d), 0o755)
	}
	if err := fuseMount(m, "lowerdir="+filepath.Join(probe, "l")+",upperdir="+filepath.Join(probe, "u")+",workdir="+filepath.Join(probe, "w")); err != nil {
		t.Skipf("fuse-overlayfs does not mount here: %v", err)
	}
	fuseUnmount(m)
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 2)
	c := commits[1]
	// As a process that cannot mount the kernel's overlayfs would.
	s.overlayOnce.Do(func() { s.overlayOK, s.overlayFuse, s.overlayWhy = true, true, "fuse-overlayfs (test)" })
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		res, err := s.Restore(ctx, c, d, RestoreOptions{Overlay: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Release(d) })
		if typ, _ := overlayMountType(d); res.Method != "overlay" || typ != fuseOverlayType {
			t.Fatalf("method %q, mount type %q; want overlay by %s", res.Method, typ, fuseOverlayType)
		}
	}
	want := readTree(t, b)
	before := storeHash(t, s)
	f, err := os.OpenFile(filepath.Join(a, "README"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("appended\n")
	f.Close()
	if err := os.Truncate(filepath.Join(a, "pkg", "core.py"), 1); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(a, "pkg", "__pycache__")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(a, "README")); !strings.HasSuffix(string(got), "appended\n") {
		t.Fatalf("the append is not seen through the overlay: %q", got)
	}
	after := storeHash(t, s)
	for p, e := range before {
		if after[p] != e {
			t.Errorf("store file %s changed through the overlay", p)
		}
	}
	compareTrees(t, want, readTree(t, b), false)
	if err := Release(a); err != nil {
		t.Fatal(err)
	}
	if mounted, _ := isOverlayMount(a); mounted {
		t.Error("still mounted after Release")
	}
	// A temporary restore whose process ended: its record names a process
	// that exited.
	tmp := filepath.Join(base, "tmp")
	if _, err := s.Restore(ctx, c, tmp, RestoreOptions{Overlay: true, Temporary: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(tmp) })
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	rec := mountRecord{Store: s.Dir(), Commit: c, Dest: tmp, Layers: overlayDirName(tmp), PID: dead.Process.Pid, Start: 1}
	writeFile(t, filepath.Dir(s.mountRecordPath(tmp)), filepath.Base(s.mountRecordPath(tmp)), jsonLine(rec), 0o644)
	if n, err := s.ReleaseStale(ctx); err != nil || n != 1 {
		t.Fatalf("ReleaseStale: %d %v, want 1", n, err)
	}
	if mounted, _ := isOverlayMount(tmp); mounted {
		t.Error("ReleaseStale left the ended run's fuse-overlayfs mounted")
	}
}

// TestOverlayConcurrentRestores: restores of one commit started together,
// by separate Store values (as separate processes would, each with its own
// locks), before its tree is made, make the tree once: each mounts the one
// tree and sees the commit's files, and nothing is moved aside.
func TestOverlayConcurrentRestores(t *testing.T) {
	needOverlay(t)
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 3)
	c := commits[2]
	base := t.TempDir()
	copied := filepath.Join(base, "copy")
	if _, err := s.Restore(ctx, c, copied, RestoreOptions{Method: RestoreCopy}); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, copied)
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		go func() {
			si, err := OpenExisting(s.Dir())
			if err == nil {
				_, err = si.Restore(ctx, c, filepath.Join(base, fmt.Sprint(i)), RestoreOptions{Overlay: true, Temporary: true})
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := range n {
		dest := filepath.Join(base, fmt.Sprint(i))
		t.Cleanup(func() { Release(dest) })
		compareTrees(t, want, readTree(t, dest), true)
	}
	ents, err := os.ReadDir(filepath.Join(s.Dir(), "trees"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != c {
		t.Errorf("trees/ holds %q after %d restores at once, want the one tree %s", names, n, c)
	}
	// Every mount's lower layer is that tree.
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(mi), "lowerdir="+s.treePath(c)+","); got != n {
		t.Errorf("%d mounts have the tree as their lower layer, want %d", got, n)
	}
}
