package repair_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestApplyKinds: each refusal of Apply carries its kind, on the error,
// the report, and the file and hunk that were refused; nothing is written;
// the JSON report has no kind (it is the documented apply --json).
func TestApplyKinds(t *testing.T) {
	files := map[string]string{
		"a.py":   "def f():\n    return 1\n\n\ndef g():\n    return 1\n",
		"b.py":   "x = 1\ny = 2\nz = 3\n",
		"new.py": "already here\n",
	}
	for _, c := range []struct {
		name   string
		opts   repair.ApplyOptions
		text   string
		kind   repair.Kind
		input  bool
		onFile bool // the kind is on the first file's report
		onHunk bool // and on its first hunk's
	}{
		{name: "no edit", text: "just prose, no edit\n", kind: repair.KindNoEdit, input: true},
		{name: "ambiguous", text: "--- a/a.py\n+++ b/a.py\n@@\n-    return 1\n+    return 2\n", kind: repair.KindAmbiguous, onFile: true, onHunk: true},
		{name: "context not found", text: "--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n-q = 2\n+q = 3\n z = 3\n", kind: repair.KindContextNotFound, onFile: true, onHunk: true},
		{name: "file not found", text: "--- a/gone.py\n+++ b/gone.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", kind: repair.KindFileNotFound, onFile: true},
		{name: "file exists", text: "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+other content\n", kind: repair.KindFileExists, onFile: true},
		{name: "bad deletion", text: "--- a/b.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x = 1\n-y = 2\n", kind: repair.KindBadDeletion, onFile: true},
		{name: "unsafe path", text: "--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", kind: repair.KindUnsafePath, onFile: true},
		{name: "bad strip", opts: repair.ApplyOptions{Strip: 3, FixedStrip: true}, text: "--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 3\n", kind: repair.KindBadStrip, input: true},
		{name: "strict: does not parse", opts: repair.ApplyOptions{Strict: true, Format: patch.UDiff}, text: "--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n", kind: repair.KindBadInput, input: true},
		{name: "strict: context", opts: repair.ApplyOptions{Strict: true, Strip: 1}, text: "--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 9\n+y = 3\n z = 3\n", kind: repair.KindContextNotFound, onFile: true, onHunk: true},
		{name: "strict: file exists", opts: repair.ApplyOptions{Strict: true, Strip: 1}, text: "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n", kind: repair.KindFileExists},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			root, err := patch.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			c.opts.Name = "p.diff"
			rep, err := repair.Apply(root, c.text, c.opts)
			if err == nil {
				t.Fatalf("applied: %+v", rep)
			}
			if got := repair.KindOf(err); got != c.kind || rep.Kind != c.kind {
				t.Errorf("kind of %q: %q, report %q; want %q", err, got, rep.Kind, c.kind)
			}
			if c.kind.Input() != c.input {
				t.Errorf("%q: input error %v, want %v", c.kind, c.kind.Input(), c.input)
			}
			if rep.Status != repair.StatusRefused || rep.Error != err.Error() || rep.Results != nil {
				t.Errorf("report: status %q, error %q, %d results", rep.Status, rep.Error, len(rep.Results))
			}
			if c.onFile {
				if len(rep.Files) == 0 || rep.Files[0].Kind != c.kind {
					t.Errorf("file reports %+v: want the first of kind %q", rep.Files, c.kind)
				} else if c.onHunk && (len(rep.Files[0].Hunks) == 0 || rep.Files[0].Hunks[0].Kind != c.kind) {
					t.Errorf("hunk reports %+v: want the first of kind %q", rep.Files[0].Hunks, c.kind)
				}
			}
			for name, content := range files {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != content {
					t.Errorf("%s changed: %q", name, b)
				}
			}
			if b, _ := json.Marshal(rep); strings.Contains(string(b), `"kind"`) {
				t.Errorf("the JSON report has a kind: %s", b)
			}
		})
	}
}

// TestApplyWritesAndChecks: Apply writes what it reports, the second apply
// changes nothing (already applied), and Check writes nothing; the report
// is the same JSON either way but for "check".
func TestApplyWritesAndChecks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.py"), []byte("x = 1\ny = 2\nz = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := patch.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	text := "--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 3\n"
	check, err := repair.Apply(root, text, repair.ApplyOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.py")); string(b) != "x = 1\ny = 2\nz = 3\n" {
		t.Fatalf("check wrote: %q", b)
	}
	guarded := false
	rep, err := repair.Apply(root, text, repair.ApplyOptions{Guard: func() (func(), error) { guarded = true; return func() {}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.py")); string(b) != "x = 1\ny = 3\nz = 3\n" || !guarded {
		t.Fatalf("after apply (guard called: %v): %q", guarded, b)
	}
	check.Check = false
	if diff := cmp.Diff(check, rep, cmp.AllowUnexported(repair.Report{}), cmp.Comparer(func(a, b *repair.Result) bool { return true })); diff != "" {
		t.Errorf("check and apply reports differ (-check +apply):\n%s", diff)
	}
	again, err := repair.Apply(root, text, repair.ApplyOptions{})
	if err != nil || again.Status != repair.StatusAlreadyApplied || len(again.Results) != 0 {
		t.Errorf("second apply: %v, status %q, %d results", err, again.Status, len(again.Results))
	}
	if c := rep.Canonical(); c == nil || len(c.Files) != 1 {
		t.Errorf("canonical patch: %+v", c)
	}
}
