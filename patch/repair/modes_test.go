package repair

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// TestModesKept: the tolerant path keeps the modes git's headers give, as
// strict apply does: a new executable file, a mode change alone, a mode
// change with hunks, and their reverse; the results carry them and the
// canonical patch (what swe writes to predictions.repaired.jsonl) prints
// them. A mode kept as it was gives no mode in the result.
func TestModesKept(t *testing.T) {
	fsys := patch.MapFS{"a.sh": "one\n"}
	tests := []struct {
		name      string
		text      string
		reverse   bool
		old, mode uint32
		canonical []string // lines the canonical patch holds
	}{
		{"new executable", "diff --git a/run.sh b/run.sh\nnew file mode 100755\n--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1 @@\n+echo\n",
			false, 0, 0o100755, []string{"new file mode 100755"}},
		{"mode only", "diff --git a/a.sh b/a.sh\nold mode 100644\nnew mode 100755\n",
			false, 0o100644, 0o100755, []string{"old mode 100644", "new mode 100755"}},
		{"mode only reversed", "diff --git a/a.sh b/a.sh\nold mode 100755\nnew mode 100644\n",
			true, 0o100644, 0o100755, []string{"old mode 100644", "new mode 100755"}},
		{"mode and hunk, counts wrong", "diff --git a/a.sh b/a.sh\nold mode 100644\nnew mode 100755\n--- a/a.sh\n+++ b/a.sh\n@@ -1,5 +1,5 @@\n-one\n+ONE\n",
			false, 0o100644, 0o100755, []string{"old mode 100644", "new mode 100755", "+ONE"}},
		{"index mode unchanged", "diff --git a/a.sh b/a.sh\nindex 1111111..2222222 100755\n--- a/a.sh\n+++ b/a.sh\n@@ -1 +1 @@\n-one\n+ONE\n",
			false, 0, 0, []string{"+ONE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Repair(tt.text, Options{FS: fsys, Reverse: tt.reverse})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) != 1 || res.Results[0].OldMode != tt.old || res.Results[0].Mode != tt.mode {
				t.Fatalf("results %+v, want modes %o -> %o", res.Results, tt.old, tt.mode)
			}
			out, err := patch.Print(res.Canonical(), patch.UDiff)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tt.canonical {
				if !strings.Contains(out, "\n"+l+"\n") {
					t.Errorf("canonical patch lacks %q:\n%s", l, out)
				}
			}
			if tt.mode == 0 && strings.Contains(out, "mode") {
				t.Errorf("canonical patch names a mode the edit keeps:\n%s", out)
			}
		})
	}
}

// TestV4ANoName: a V4A section without a path is a malformed patch, also
// when the directory holds one file that a guess would pick.
func TestV4ANoName(t *testing.T) {
	fsys := patch.MapFS{"only.txt": "x\n"}
	for _, text := range []string{
		"*** Begin Patch\n*** Delete File: \n*** End Patch\n",
		"*** Begin Patch\n*** Update File:\n@@\n-x\n+y\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: only.txt\n*** Move to: \n@@\n-x\n+y\n*** End Patch\n",
	} {
		res, err := Repair(text, Options{FS: fsys, Files: func() ([]string, error) { return []string{"only.txt"}, nil }})
		if !errors.Is(err, ErrNoEdit) || !strings.Contains(err.Error(), "names no file") || res.Results != nil {
			t.Errorf("%q: %v (results %v), want a malformed-patch error", text, err, res.Results)
		}
	}
}
