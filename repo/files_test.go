package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFiles checks Files against git's own ls-tree (Tree's regular files)
// on two commits that share directories: nested and identical subtrees, an
// executable, a symbolic link, a submodule and a name with a newline; and
// that listing both and reading every blob starts one cat-file for the
// streams and no ls-tree.
func TestFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeFiles(t, dir, map[string]string{
		"a/b/c.py": "c\n", "a/x.py": "x\n", "d/c.py": "c\n", "top.go": "package top\n",
		"run.sh": "#!/bin/sh\n", "new\nline.py": "n\n", "z/deep/er/f.txt": "f\n",
	})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("top.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",sub")
	git(t, dir, "commit", "-q", "-m", "first")
	c1 := git(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"a/b/c.py": "c2\n", "z/deep/er/g.py": "g\n", "-a/x.py": ""})
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "second")
	c2 := git(t, dir, "rev-parse", "HEAD")

	r := openT(t, dir)
	for _, c := range []string{c1, c2} {
		tree, err := r.Tree(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		var want []TreeEntry
		for _, e := range tree {
			if e.Regular() {
				e.Size = -1
				want = append(want, e)
			}
		}
		got, err := r.Files(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Files(%s) differs from ls-tree's regular files (-want +got):\n%s", c, diff)
		}
	}
	if _, err := r.Files(ctx, strings.Repeat("e", 40)); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("Files(unknown) = %v, want ErrUnknownRevision", err)
	}

	log := fakeGit(t)
	r2 := openT(t, dir)
	var ids []string
	for _, c := range []string{c1, c2, c1} {
		files, err := r2.Files(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			ids = append(ids, f.ID)
		}
	}
	n := 0
	if err := r2.Blobs(ctx, ids, func(int, string, bool) error { n++; return nil }); err != nil || n != len(ids) {
		t.Fatalf("Blobs: %d of %d, %v", n, len(ids), err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var batches, lsTrees int
	for _, l := range strings.Split(string(b), "\n") {
		batches += strings.Count(l, "cat-file --batch") - strings.Count(l, "cat-file --batch-check")
		lsTrees += strings.Count(l, "ls-tree")
	}
	if batches != 1 || lsTrees != 0 {
		t.Errorf("three listings and their blobs started %d cat-file --batch and %d ls-tree, want 1 and 0:\n%s", batches, lsTrees, b)
	}
}

// TestBlobsStopped checks that a read fn stops leaves the stream usable:
// the next read gets every blob, in order.
func TestBlobsStopped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		// Large enough that the stopped read leaves responses unread.
		files[n+".txt"] = strings.Repeat(n, 1<<17)
	}
	writeFiles(t, dir, files)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	r := openT(t, dir)
	tree, err := r.Files(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range tree {
		ids = append(ids, e.ID)
	}
	stop := errors.New("stop")
	if err := r.Blobs(ctx, ids, func(i int, _ string, _ bool) error {
		if i == 1 {
			return stop
		}
		return nil
	}); err != stop {
		t.Fatalf("stopped Blobs = %v, want fn's error", err)
	}
	var got []string
	if err := r.Blobs(ctx, ids, func(_ int, s string, _ bool) error { got = append(got, s[:1]); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c", "d"}; !cmp.Equal(got, want) {
		t.Errorf("Blobs after a stop = %v, want %v", got, want)
	}
}
