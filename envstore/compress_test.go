package envstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// packedRepo makes a one-commit repository whose files cover the forms an
// object takes: compressible text (stored compressed), an executable
// script (compressed, .x.z), random bytes, a tiny and an empty file (loose),
// a symlink; and returns it, its commit and the checkout as a tree.
func packedRepo(t *testing.T) (string, string, map[string]treeEntry) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	text := strings.Repeat("def f(x):\n    return x * 2  # the same line again\n", 400)
	writeFile(t, dir, "big.txt", text, 0o644)
	writeFile(t, dir, "sub/deep.txt", strings.Repeat("deep ", 2000), 0o644)
	writeFile(t, dir, "run.sh", "#!/bin/sh\n"+strings.Repeat("echo run\n", 600), 0o755)
	noise := make([]byte, 8192)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	writeFile(t, dir, "noise.bin", string(noise), 0o644)
	writeFile(t, dir, "small.txt", "hi\n", 0o644)
	writeFile(t, dir, "empty", "", 0o644)
	if err := os.Symlink("big.txt", filepath.Join(dir, "latest")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	want := readTree(t, dir)
	for p := range want {
		if p == ".git" || strings.HasPrefix(p, ".git/") {
			delete(want, p)
		}
	}
	return dir, git(t, dir, "rev-parse", "HEAD"), want
}

// packedStore builds packedRepo's commit (setup: none) into a new store.
func packedStore(t *testing.T) (*Store, string, map[string]treeEntry) {
	t.Helper()
	dir, commit, want := packedRepo(t)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	res, err := s.Build(context.Background(), openRepo(t, dir), []string{commit}, BuildOptions{Setup: "true", Runner: runner()})
	if err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build: %v %+v", err, res)
	}
	return s, commit, want
}

// objectForms says, for each of the test tree's files, how its object is
// stored: "z" compressed, "loose", with its link count ("loose2").
func objectForms(t *testing.T, s *Store, commit string) map[string]string {
	t.Helper()
	m, err := s.Manifest(commit)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range m.Entries {
		if e.Type != TypeFile {
			continue
		}
		var st syscall.Stat_t
		form := ""
		if err := syscall.Lstat(s.objectPath(e.Hash, e.exec()), &st); err == nil {
			form = "loose"
			if st.Nlink > 1 {
				form = "loose+"
			}
		}
		if _, err := os.Lstat(s.compressedPath(e.Hash, e.exec())); err == nil {
			form += "z"
		}
		out[e.Path] = form
	}
	return out
}

// packedForms is how a build stores packedRepo's files: compressed where
// that saves an eighth.
var packedForms = map[string]string{
	"big.txt": "z", "sub/deep.txt": "z", "run.sh": "z",
	"noise.bin": "loose", "small.txt": "loose", "empty": "loose",
}

func checkForms(t *testing.T, s *Store, commit string, want map[string]string) {
	t.Helper()
	got := objectForms(t, s, commit)
	for p, w := range want {
		if got[p] != w {
			t.Errorf("object of %s: %q, want %q", p, got[p], w)
		}
	}
}

// TestCompressedRoundTrip restores, by every method this machine has,
// from a store whose objects are compressed: the same tree, byte for
// byte, with its modes. A method that links objects makes them loose;
// GC compresses none that a tree links and compresses them again once
// nothing does. The store verifies at every step.
func TestCompressedRoundTrip(t *testing.T) {
	ctx := context.Background()
	overlay := func(t *testing.T) { needOverlay(t) }
	reflink := func(t *testing.T) {
		if os.Getenv("PATCHBENCH_REFLINK_DIR") == "" {
			t.Skip("PATCHBENCH_REFLINK_DIR names no directory with reflinks")
		}
	}
	for _, tc := range []struct {
		name   string
		opts   RestoreOptions
		need   func(*testing.T)
		linked bool   // files show their object's mode
		after  string // the form of big.txt's object after the restore
	}{
		{"copy", RestoreOptions{Method: RestoreCopy}, nil, false, "z"},
		{"hardlink", RestoreOptions{Method: RestoreLink, ReadOnlyUse: true}, nil, true, "loose+"},
		{"reflink", RestoreOptions{Method: RestoreReflink}, reflink, false, "loose"},
		{"overlay", RestoreOptions{Method: RestoreOverlay}, overlay, true, "loose+"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.need != nil {
				tc.need(t)
			}
			s, commit, want := packedStore(t)
			base := t.TempDir()
			if tc.name == "reflink" {
				var err error
				if base, err = os.MkdirTemp(os.Getenv("PATCHBENCH_REFLINK_DIR"), "packed-"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { removeAll(base) })
				s, err = Open(filepath.Join(base, "store"))
				if err != nil {
					t.Fatal(err)
				}
				dir, c, w := packedRepo(t)
				if res, err := s.Build(ctx, openRepo(t, dir), []string{c}, BuildOptions{Setup: "true", Runner: runner()}); err != nil || res[0].Status != StatusBuilt {
					t.Fatalf("build: %v %+v", err, res)
				}
				commit, want = c, w
			}
			checkForms(t, s, commit, packedForms)
			mustVerify(t, s)
			dest := filepath.Join(base, "r")
			res, err := s.Restore(ctx, commit, dest, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "overlay" {
				t.Cleanup(func() { Release(dest) })
			}
			compareTrees(t, want, readTree(t, dest), tc.linked)
			if res.Files != 6 {
				t.Errorf("restored %d files, want 6", res.Files)
			}
			forms := map[string]string{}
			for p, f := range packedForms {
				forms[p] = f
				if f == "z" || tc.after == "loose+" {
					forms[p] = tc.after
				}
			}
			checkForms(t, s, commit, forms)
			mustVerify(t, s)

			// GC leaves what a tree links loose.
			g, err := s.GC(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.after == "loose+" && g.Compressed != 0 {
				t.Errorf("gc compressed %d objects a tree links", g.Compressed)
			}
			// A reflinked tree shares blocks, not the inode: compressed.
			afterGC := map[string]string{"z": "z", "loose": "z", "loose+": "loose+"}[tc.after]
			checkForms(t, s, commit, map[string]string{"big.txt": afterGC})
			compareTrees(t, want, readTree(t, dest), tc.linked)
			mustVerify(t, s)
			if tc.name == "hardlink" {
				// Once the tree is gone, nothing links them.
				removeAll(dest)
				if g, err := s.GC(ctx); err != nil || g.Compressed != 3 {
					t.Errorf("gc after the tree went: %+v, %v; want 3 compressed", g, err)
				}
				checkForms(t, s, commit, packedForms)
				mustVerify(t, s)
			}
		})
	}
}

// TestCorruptCompressedObject: a compressed object that does not
// decompress to its content is refused by every restore and by
// Materialize, with an error naming it and the commit, and the store is
// left as it was; verify names it.
func TestCorruptCompressedObject(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"flipped", func(b []byte) []byte { b[len(b)/2] ^= 0x55; return b }},
		{"trailing", func(b []byte) []byte { return append(b, "junk"...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, commit, _ := packedStore(t)
			m, err := s.Manifest(commit)
			if err != nil {
				t.Fatal(err)
			}
			var z string
			for _, e := range m.Entries {
				if e.Path == "big.txt" {
					z = s.compressedPath(e.Hash, e.exec())
				}
			}
			b, err := os.ReadFile(z)
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(z, 0o644)
			if err := os.WriteFile(z, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(z, 0o444)
			os.MkdirAll(filepath.Join(s.Dir(), "trees"), 0o755)
			before := storeHash(t, s)
			for _, opts := range []RestoreOptions{{Method: RestoreCopy}, {Method: RestoreLink, ReadOnlyUse: true}} {
				dest := filepath.Join(t.TempDir(), "r")
				_, err := s.Restore(ctx, commit, dest, opts)
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), z) || !strings.Contains(err.Error(), commit) {
					t.Errorf("restore %s: %v; want a corrupt-object error naming %s and the commit", opts.Method, err, z)
				}
				if _, err := os.Lstat(dest); err == nil {
					t.Errorf("restore %s left %s", opts.Method, dest)
				}
			}
			if _, err := s.Materialize(ctx, commit); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), z) || !strings.Contains(err.Error(), commit) {
				t.Errorf("materialize: %v; want a corrupt-object error naming %s and the commit", err, z)
			}
			storeUnchanged(t, before, storeHash(t, s))
			if ents, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp")); len(ents) != 0 {
				t.Errorf("%d files left in tmp: %v", len(ents), ents)
			}
			rep, err := s.Verify(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) == 0 || !strings.Contains(strings.Join(rep.Problems, "\n"), z) {
				t.Errorf("verify: %q, want %s named", rep.Problems, z)
			}
		})
	}
}

// TestConcurrentMaterializeGC: hard-link restores (which make objects
// loose), materializations and GC (which compresses them again) at once
// on one store: every tree is whole, and the store verifies after.
func TestConcurrentMaterializeGC(t *testing.T) {
	ctx := context.Background()
	s, commit, want := packedStore(t)
	base := t.TempDir()
	var wg sync.WaitGroup
	errc := make(chan error, 100)
	for w := range 2 {
		wg.Go(func() {
			for i := range 4 {
				dest := filepath.Join(base, fmt.Sprintf("r%d-%d", w, i))
				if _, err := s.Restore(ctx, commit, dest, RestoreOptions{Method: RestoreLink, ReadOnlyUse: true}); err != nil {
					errc <- err
					return
				}
				compareTrees(t, want, readTree(t, dest), true)
				removeAll(dest)
			}
		})
	}
	wg.Go(func() {
		for i := range 3 {
			tree, err := s.Materialize(ctx, commit)
			if err != nil {
				errc <- err
				return
			}
			compareTrees(t, want, readTree(t, tree), true)
			// Made again from scratch next time; GC removes the old one.
			os.Rename(s.treeDir(commit), filepath.Join(s.Dir(), "trees", fmt.Sprintf(".old-%s-x%d", commit, i)))
		}
	})
	wg.Go(func() {
		for range 4 {
			if _, err := s.GC(ctx); err != nil {
				errc <- err
				return
			}
		}
	})
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if _, err := s.GC(ctx); err != nil {
		t.Fatal(err)
	}
	checkForms(t, s, commit, packedForms)
	mustVerify(t, s)
}

// TestOldStoreFormats: a store of format 2 (every object loose) is built,
// restored and verified as it is, and GC makes it format 3 and compresses
// it; a store of format 1 stays loose. Stats count the bytes on disk and,
// beside them, the bytes with every object whole.
func TestOldStoreFormats(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		format, after string
		forms         map[string]string
	}{
		{formatLineV2, formatLine, packedForms},
		{formatLineV1, formatLineV1, map[string]string{"big.txt": "loose", "run.sh": "loose"}},
	} {
		t.Run(strings.TrimSpace(tc.format), func(t *testing.T) {
			dir, commit, want := packedRepo(t)
			s := openStore(t, filepath.Join(t.TempDir(), "store"))
			if err := os.WriteFile(filepath.Join(s.Dir(), "format"), []byte(tc.format), 0o644); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, s.Dir())
			if res, err := s.Build(ctx, openRepo(t, dir), []string{commit}, BuildOptions{Setup: "true", Runner: runner()}); err != nil || res[0].Status != StatusBuilt {
				t.Fatalf("build: %v %+v", err, res)
			}
			checkForms(t, s, commit, map[string]string{"big.txt": "loose", "run.sh": "loose", "noise.bin": "loose"})
			loose, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if loose.Compressed != 0 || loose.UncompressedBytes != loose.StoredBytes {
				t.Errorf("all loose: %+v", loose)
			}
			if _, err := s.GC(ctx); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(s.Dir(), "format")); string(b) != tc.after {
				t.Errorf("format after gc %q, want %q", b, tc.after)
			}
			checkForms(t, s, commit, tc.forms)
			st, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if tc.after == formatLine && (st.Compressed != 3 || st.StoredBytes >= loose.StoredBytes || st.UncompressedBytes != loose.StoredBytes || st.Ratio() <= st.DedupRatio()) {
				t.Errorf("stats compressed %+v; loose %+v", st, loose)
			}
			dest := filepath.Join(t.TempDir(), "r")
			if _, err := s.Restore(ctx, commit, dest, RestoreOptions{Method: RestoreCopy}); err != nil {
				t.Fatal(err)
			}
			compareTrees(t, want, readTree(t, dest), false)
			mustVerify(t, s)
		})
	}
}

// TestStatsBothForms: a restore killed between linking an object loose and
// removing its compressed file leaves both forms; Stats counts that object
// once (objects, compressed, every object whole), as it does once GC has
// removed the compressed copy, while stored bytes count what is on disk.
func TestStatsBothForms(t *testing.T) {
	s, commit, _ := packedStore(t)
	before, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Manifest(commit)
	if err != nil {
		t.Fatal(err)
	}
	var z string
	for i := range m.Entries {
		if e := &m.Entries[i]; e.Path == "big.txt" {
			z = s.compressedPath(e.Hash, e.exec())
			buf := make([]byte, 1<<16)
			tmp, err := s.expandTemp(e, buf)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, s.objectPath(e.Hash, e.exec())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := os.Lstat(z); err != nil {
		t.Fatal(err)
	}
	got, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got.Objects != before.Objects || got.Compressed != before.Compressed-1 {
		t.Errorf("both forms: %d objects, %d compressed; want %d, %d", got.Objects, got.Compressed, before.Objects, before.Compressed-1)
	}
	if whole := got.UncompressedBytes - (got.StoredBytes - got.ObjectBytes); whole != before.UncompressedBytes-(before.StoredBytes-before.ObjectBytes) {
		t.Errorf("both forms: every object whole %d bytes, want %d", whole, before.UncompressedBytes-(before.StoredBytes-before.ObjectBytes))
	}
	if _, err := s.GC(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if after.Objects != got.Objects || after.StoredBytes >= got.StoredBytes || after.Compressed != before.Compressed {
		t.Errorf("after gc: %d objects, stored %d (was %d)", after.Objects, after.StoredBytes, got.StoredBytes)
	}
}
