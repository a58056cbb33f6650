package swe_test

import (
	"context"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/internal/confinetest"
	"github.com/patchbench/patchbench/repo"
)

// TestPatchStageConfinement: the patch stage reads the base files from git,
// where links are mode 120000 entries; it refuses the confinement cases as
// apply does, with the same reason, rather than pass an edit that the test
// stage would write through a link. A plain edit beside them applies. The
// cases about a file on disk (a named pipe) find no such file in git.
func TestPatchStageConfinement(t *testing.T) {
	tr := confinetest.New(t)
	tr.Commit(t)
	ctx := context.Background()
	r, err := repo.Open(ctx, tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	patchOf := func(text string) swe.PatchOutcome {
		return swe.Patch(swe.Prediction{ModelPatch: &text}, swe.NewBaseFS(ctx, r, "HEAD"))
	}
	for _, c := range confinetest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			out := patchOf(tr.Patch(c))
			want := tr.Want(c, false)
			if c.Disk {
				want = "the file does not exist" // git trees hold no named pipes
			}
			if out.Status != swe.StatusApplyFailed || !strings.Contains(out.Reason, want) {
				t.Errorf("status %s, reason %q; want %s with %q", out.Status, out.Reason, swe.StatusApplyFailed, want)
			}
		})
	}
	out := patchOf("--- a/sub/f.txt\n+++ b/sub/f.txt\n@@ -1 +1 @@\n-inner\n+changed\n")
	if out.Status != swe.StatusApplied {
		t.Errorf("plain edit: status %s (%s), want %s", out.Status, out.Reason, swe.StatusApplied)
	}
	tr.Unchanged(t)
}

// TestPatchStageKeepsModes: the canonical patch the patch stage keeps
// (predictions.repaired.jsonl) carries the modes of the prediction: a new
// executable file and a mode change, as git apply would make them.
func TestPatchStageKeepsModes(t *testing.T) {
	tr := confinetest.New(t)
	tr.Commit(t)
	ctx := context.Background()
	r, err := repo.Open(ctx, tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	text := "diff --git a/run.sh b/run.sh\nnew file mode 100755\n--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1 @@\n+echo hi\n" +
		"diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n"
	out := swe.Patch(swe.Prediction{ModelPatch: &text}, swe.NewBaseFS(ctx, r, "HEAD"))
	if out.Status != swe.StatusApplied {
		t.Fatalf("status %s (%s), want %s", out.Status, out.Reason, swe.StatusApplied)
	}
	for _, l := range []string{"new file mode 100755", "old mode 100644", "new mode 100755"} {
		if !strings.Contains(out.Repaired, "\n"+l+"\n") {
			t.Errorf("repaired patch lacks %q:\n%s", l, out.Repaired)
		}
	}
}
