package repo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestLstat: modes of files, directories and links at a revision, a link's
// target, and paths beyond a link or missing, which wrap fs.ErrNotExist.
func TestLstat(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", "d/e/x.sh": "x\n", "nl\nname": "n\n"})
	if err := os.Chmod(filepath.Join(dir, "d/e/x.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"link", "../outside"}, {"d/inlink", "e"}} {
		if err := os.Symlink(l[1], filepath.Join(dir, filepath.FromSlash(l[0]))); err != nil {
			t.Skipf("cannot make symbolic links: %v", err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "base")
	r := openT(t, dir)
	ctx := t.Context()
	for _, c := range []struct {
		path   string
		mode   uint32
		target string
	}{
		{"a.txt", 0o100644, ""},
		{"d", 0o040000, ""},
		{"d/e", 0o040000, ""},
		{"d/e/x.sh", 0o100755, ""},
		{"link", 0o120000, "../outside"},
		{"d/inlink", 0o120000, "e"},
		{"nl\nname", 0o100644, ""},
	} {
		mode, target, err := r.Lstat(ctx, "HEAD", c.path)
		if err != nil || mode != c.mode || target != c.target {
			t.Errorf("Lstat(%q) = %o, %q, %v; want %o, %q", c.path, mode, target, err, c.mode, c.target)
		}
	}
	for _, p := range []string{"link/victim.txt", "d/inlink/x.sh", "a.txt/b", "missing", "d/missing"} {
		if _, _, err := r.Lstat(ctx, "HEAD", p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lstat(%q): %v, want fs.ErrNotExist", p, err)
		}
	}
	if _, _, err := r.Lstat(ctx, "nosuchrev", "a.txt"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("Lstat at an unknown revision: %v, want ErrUnknownRevision", err)
	}
}
