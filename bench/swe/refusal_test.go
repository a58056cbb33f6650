package swe_test

import (
	"testing"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestRefusalClass: the patch stage records the engine's kind of refusal,
// and the error analysis classes by it, not by the words of the reason (a
// line the reason quotes may hold any word); a row without a kind (the
// official chain's reasons) is classed by its words.
func TestRefusalClass(t *testing.T) {
	base := mapFiles{
		"a.py":      "def f():\n    return 1\n\n\ndef g():\n    return 1\n",
		"b.py":      "x = 1\ny = 2\nz = 3\n",
		"binary.py": "x = 1\ny = 2\nz = 3\n",
	}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name, patch string
		kind        repair.Kind
		class       string
	}{
		{"ambiguous", "--- a/a.py\n+++ b/a.py\n@@\n-    return 1\n+    return 2\n", repair.KindAmbiguous, "apply_failed: ambiguous"},
		// The reason names binary.py: its words are not the refusal
		// (read by its words, the class was "binary").
		{"context, a file named binary", "--- a/binary.py\n+++ b/binary.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 9\n+y = 3\n z = 3\n", repair.KindContextNotFound, "apply_failed: context not found"},
		{"file not found", "--- a/gone.py\n+++ b/gone.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", repair.KindFileNotFound, "apply_failed: file not found"},
		{"changes nothing", "--- a/b.py\n+++ b/b.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 2\n z = 3\n", swe.KindChangesNothing, "apply_failed: changes nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			po := swe.Patch(swe.Prediction{InstanceID: "i", ModelPatch: str(c.patch)}, base)
			if po.Status != swe.StatusApplyFailed || po.Kind != c.kind {
				t.Fatalf("status %q, kind %q (%s); want apply_failed, %q", po.Status, po.Kind, po.Reason, c.kind)
			}
			if got := swe.ReasonClass(po.Status, po.Kind, po.Reason); got != c.class {
				t.Errorf("class %q, want %q", got, c.class)
			}
		})
	}
	if got := swe.ReasonClass(swe.StatusApplyFailed, "", "the official apply chain failed: error: x.py: does not exist in index"); got != "apply_failed: file not found" {
		t.Errorf("a chain's reason: class %q", got)
	}
	if got := swe.ReasonClass(swe.StatusUnresolved, repair.KindAmbiguous, "x"); got != swe.StatusUnresolved {
		t.Errorf("not a patch failure: class %q", got)
	}
}
