package repair_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestStripReported: a path read with a strip other than the one its names
// ask for (a/ and b/ say -p1; git apply and GNU patch -p1 both refuse a/src/f.txt
// when only f.txt exists) is an assumption, listed in the file's repairs,
// never taken silently.
func TestStripReported(t *testing.T) {
	const hunk = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
	const body = "one\ntwo\nthree\n"
	cases := []struct {
		name     string
		files    map[string]string
		patch    string
		wantPath string
		want     []string
	}{
		{"a/ b/ names the file with -p1", map[string]string{"f.txt": body},
			"--- a/f.txt\n+++ b/f.txt\n" + hunk, "f.txt", nil},
		{"a/src/f.txt read as f.txt (-p2)", map[string]string{"f.txt": body},
			"--- a/src/f.txt\n+++ b/src/f.txt\n" + hunk, "f.txt", []string{"path-strip"}},
		{"a/f.txt read as written (-p0)", map[string]string{"a/f.txt": body},
			"--- a/f.txt\n+++ b/f.txt\n" + hunk, "a/f.txt", []string{"path-strip"}},
		{"no prefix, as written", map[string]string{"f.txt": body},
			"--- f.txt\n+++ f.txt\n" + hunk, "f.txt", []string{"no-ab-prefix"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := repair.Repair(tc.patch, repair.Options{FS: patch.MapFS(tc.files)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Files) != 1 {
				t.Fatalf("%d files, want 1", len(res.Files))
			}
			f := res.Files[0]
			if f.Path != tc.wantPath {
				t.Errorf("path %q, want %q", f.Path, tc.wantPath)
			}
			if d := cmp.Diff(tc.want, f.Repairs); d != "" {
				t.Errorf("repairs (-want +got):\n%s", d)
			}
		})
	}
}
