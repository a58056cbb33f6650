package envstore

import (
	"context"
	"errors"
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
	if ok, why := probeOverlay(t.TempDir()); !ok {
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

	after := storeHash(t, s)
	for p, e := range before {
		if after[p] != e {
			t.Errorf("store file %s changed through the overlay", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("the store has %d files after the writes, %d before", len(after), len(before))
	}
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
