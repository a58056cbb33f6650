package repair

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// TestCanonicalFoldsSections checks that an edit with several sections for
// one file gives a canonical patch with one section per file, from the
// original content to the final one (git apply reads every section against
// the original file), and none for a file left as it was.
func TestCanonicalFoldsSections(t *testing.T) {
	fsys := patch.MapFS{
		"f.txt": "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
		"g.txt": "one\ntwo\nthree\n",
	}
	text := "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n" +
		"--- a/g.txt\n+++ b/g.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" +
		"--- a/f.txt\n+++ b/f.txt\n@@ -8,3 +8,3 @@\n h\n-i\n+I\n j\n" +
		"--- a/g.txt\n+++ b/g.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+two\n three\n"
	res, err := Repair(text, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Canonical()
	if len(p.Files) != 1 || p.Files[0].Path() != "f.txt" {
		var paths []string
		for _, fp := range p.Files {
			paths = append(paths, fp.Path())
		}
		t.Fatalf("canonical patch has sections %v, want one for f.txt", paths)
	}
	out, err := patch.Print(p, patch.UDiff)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := patch.ApplyFile(fsys["f.txt"], p.Files[0], patch.ApplyOptions{})
	if err != nil || got != "A\nb\nc\nd\ne\nf\ng\nh\nI\nj\n" {
		t.Errorf("canonical patch gives %q, %v:\n%s", got, err, out)
	}
	if strings.Count(out, "+++ b/f.txt") != 1 {
		t.Errorf("canonical patch:\n%s", out)
	}
}
