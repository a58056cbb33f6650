package repair_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestAlreadyAppliedSaysLittle: hunks whose added lines say little (a
// one-letter line, a brace, a blank line, lines it also removes), applied
// twice. Their new side at their own place, with the blocks they remove
// (and the context next to them) nowhere in the file, is the change made:
// the second apply reports already applied and changes nothing, as GNU
// patch reports "previously applied". The shapes are those of the
// second applies TestApplyOnce found refused: a file of two lines (the
// new side is the whole file), a brace that loses its final newline at
// the end of a file (cobra@4c22a20fd45b), a comment turned into a blank
// line between full context (requests@4452934929b3), an import moved up
// (gson@b819307de8b6).
func TestAlreadyAppliedSaysLittle(t *testing.T) {
	tests := []struct {
		name, old, neu, text string
	}{
		{"two-line file, the new side is the whole file", "a\nb\n", "a\nc\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"},
		{"one-line file, -U0", "b\n", "c\n",
			"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-b\n+c\n"},
		{"first line of a file", "a\nx\ny\nz\nw\n", "b\nx\ny\nz\nw\n",
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+b\n x\n y\n z\n"},
		{"whole file, context at both ends", "a\nb\nd\n", "a\nc\nd\n",
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n"},
		{"brace losing its final newline at the end of the file",
			"func init() {\n\tx()\n}\n\nfunc gone() {\n\ty()\n}\n", "func init() {\n\tx()\n}",
			"--- a/f\n+++ b/f\n@@ -1,7 +1,3 @@\n func init() {\n \tx()\n-}\n-\n-func gone() {\n-\ty()\n-}\n+}\n\\ No newline at end of file\n"},
		{"comment turned into a blank line, full context",
			"def run(self):\n    handlers = []\n\n    if self.auth:\n\n        # create a password manager\n        authr = Manager()\n\n        authr.add(self.url)\n",
			"def run(self):\n    handlers = []\n\n    if self.auth:\n        \n        authr = Manager()\n\n        authr.add(self.url)\n",
			"--- a/f\n+++ b/f\n@@ -2,8 +2,7 @@ def run(self):\n     handlers = []\n \n     if self.auth:\n-\n-        # create a password manager\n+        \n         authr = Manager()\n \n         authr.add(self.url)\n"},
		{"import moved up",
			"package p;\n\nimport a.B;\nimport a.C;\n\nimport java.D;\n\nclass X {\n}\n",
			"package p;\n\nimport java.D;\n\nimport a.B;\nimport a.C;\n\nclass X {\n}\n",
			"--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n package p;\n \n+import java.D;\n+\n import a.B;\n import a.C;\n \n-import java.D;\n-\n class X {\n }\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := onceCase{text: tc.text}
			first, _, err := applyFS(c, patch.MapFS{"f": tc.old}, false)
			if err != nil || first["f"] != tc.neu {
				t.Fatalf("first apply: %v, made %q, want %q", err, first["f"], tc.neu)
			}
			res, err := repair.Repair(tc.text, repair.Options{FS: first})
			if err != nil || res.Status != repair.StatusAlreadyApplied || len(res.Results) != 0 && string(res.Results[0].Content) != tc.neu {
				t.Errorf("second apply: %v, status %q, want already applied", err, res.Status)
			}
			back, _, err := applyFS(c, first, true)
			if err != nil || back["f"] != tc.old {
				t.Errorf("reverse: %v, made %q", err, back["f"])
			}
		})
	}
}

// TestAlreadyAppliedSaysLittleRefused: the must-refuse cases beside
// TestAlreadyAppliedSaysLittle. A hunk whose added lines say little is
// never called applied where its own place holds something else, nor
// where the lines it removes, with the context next to them, are still
// in the file elsewhere (the change may be meant there: a real conflict).
func TestAlreadyAppliedSaysLittleRefused(t *testing.T) {
	tests := []struct {
		name, file, text, why string
	}{
		// The new side at the end, where the header says; the old side at
		// the top: the change may be meant there.
		{"old side elsewhere, the new side at the end", "a\nb\nq\na\nc\n",
			"--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n a\n-b\n+c\n", "line 1"},
		// The lines were shifted by two: the own place holds other lines.
		{"own place holds other lines", "z\nz\na\nc\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "not in the file"},
		// A second copy of the block, not yet changed, further down.
		{"old block in a second copy",
			"if x:\n    \n    y = 1\n\nif x:\n    # note\n    y = 1\n",
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n if x:\n-    # note\n+    \n     y = 1\n", "line 5"},
		// The new side is at its place but the file goes on, where the
		// hunk (added lines last) says it ends.
		{"the file goes on after a hunk that ends the file", "a\nc\nb\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := repair.Repair(tc.text, repair.Options{FS: patch.MapFS{"f": tc.file}})
			if !errors.Is(err, repair.ErrRefused) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("status %q, err %v, want a refusal naming %q", res.Status, err, tc.why)
			}
		})
	}
}
