package repair_test

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// udiffHunks splits a unified diff into its file header and its hunks, each
// a list of lines starting with the @@ line.
func udiffHunks(u string) (string, [][]string) {
	var head []string
	var hs [][]string
	for _, l := range strings.Split(strings.TrimSuffix(u, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			hs = append(hs, []string{l})
		case len(hs) == 0:
			head = append(head, l)
		default:
			hs[len(hs)-1] = append(hs[len(hs)-1], l)
		}
	}
	return strings.Join(head, "\n") + "\n", hs
}

// joinHunks is the inverse of udiffHunks, with hunk k replaced by h.
func joinHunks(head string, hs [][]string, k int, h []string) string {
	var b strings.Builder
	b.WriteString(head)
	for i, x := range hs {
		if i == k {
			x = h
		}
		b.WriteString(strings.Join(x, "\n"))
		b.WriteByte('\n')
	}
	return b.String()
}

func onlyDeletes(h []string) bool {
	del := false
	for _, l := range h[1:] {
		if strings.HasPrefix(l, "+") {
			return false
		}
		del = del || strings.HasPrefix(l, "-")
	}
	return del
}

// TestStaleHunkRefusedRealCommits: in git's diff of every dev commit, one
// removed line of one hunk is made stale (its text is in no version of the
// file). Every such patch must be refused: before the rule that an already
// applied hunk needs evidence beyond its context, 382 of them were reported
// already applied (a deletion-only hunk whose context is still in the file,
// a hunk whose new side matched the old file but for whitespace or its final
// newline) while the other hunks were applied.
func TestStaleHunkRefusedRealCommits(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	tried := map[string]int{}
	for _, r := range rows {
		head, hs := udiffHunks(r.UDiff)
		for k, h := range hs {
			for i := 1; i < len(h); i++ {
				if !strings.HasPrefix(h[i], "-") || strings.TrimSpace(h[i][1:]) == "" {
					continue
				}
				v := append([]string(nil), h...)
				v[i] += " stale"
				family := "with added lines"
				if onlyDeletes(h) {
					family = "deletion-only"
				}
				if k == len(hs)-1 {
					family += ", last hunk"
				}
				tried[family]++
				res, err := repair.Repair(joinHunks(head, hs, k, v), repair.Options{Target: r.Path, FS: patch.MapFS{r.Path: r.OldCode}})
				if err == nil {
					t.Errorf("%s hunk %d line %d (%s): %s, want a refusal; hunks %+v", r.ID, k+1, i, family, res.Status, res.Files[0].Hunks)
				}
			}
		}
	}
	t.Logf("stale patches, all refused unless reported: %v", tried)
}

// TestDeletionContextLostRealCommits: a deletion-only hunk of a dev commit
// with one context line dropped is applied as meant or refused; it is
// never reported already applied while its removed lines are in the file.
func TestDeletionContextLostRealCommits(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	tried, applied := 0, 0
	for _, r := range rows {
		head, hs := udiffHunks(r.UDiff)
		for k, h := range hs {
			if !onlyDeletes(h) {
				continue
			}
			for i := 1; i < len(h); i++ {
				if !strings.HasPrefix(h[i], " ") {
					continue
				}
				for _, hdr := range []string{h[0], "@@ @@"} {
					v := append(append([]string{hdr}, h[1:i]...), h[i+1:]...)
					tried++
					res, err := repair.Repair(joinHunks(head, hs, k, v), repair.Options{Target: r.Path, FS: patch.MapFS{r.Path: r.OldCode}})
					if err != nil {
						continue
					}
					if res.Files[0].Hunks[k].Status == repair.StatusAlreadyApplied || len(res.Results) == 0 || string(res.Results[0].Content) != r.NewCode {
						t.Errorf("%s hunk %d without context line %d: %s, hunk %+v", r.ID, k+1, i, res.Status, res.Files[0].Hunks[k])
						continue
					}
					applied++
				}
			}
		}
	}
	t.Logf("%d deletion-only hunks with a context line lost: %d applied as meant, the rest refused", tried, applied)
}

// The shapes of issue 29. A deletion-only hunk at the end of a file whose
// context lost the line before its removed block: its context is in the
// file and its removed lines right after it. It was reported already
// applied; it must be applied as meant or refused, never skipped.
func TestDeletionContextLostNotAlreadyApplied(t *testing.T) {
	file := "import sys\n\n\ndef main():\n    run(sys.argv)\n    cleanup()\n\n\ndef legacy():\n    return main()\n"
	edit := "--- a/cli.py\n+++ b/cli.py\n@@ -4,7 +4,3 @@\n def main():\n     run(sys.argv)\n-\n-\n-def legacy():\n-    return main()\n"
	got, hunks, err := repairOne(t, "cli.py", file, edit)
	if err == nil && got != "import sys\n\n\ndef main():\n    run(sys.argv)\n    cleanup()\n" {
		t.Fatalf("applied as %q, hunks %+v", got, hunks)
	}
	if len(hunks) > 0 && hunks[0].Status == repair.StatusAlreadyApplied {
		t.Fatalf("hunk reported already applied: %+v", hunks[0])
	}
}

// A stale hunk at the end of a file: the line it removes is in no version
// of the file, and its new side (context only) is there. The first hunk
// fits; the patch must be refused as a whole, nothing applied.
func TestStaleEndOfFileHunkRefused(t *testing.T) {
	file := "import os\nimport sys\n\n\ndef main():\n    run(sys.argv)\n    cleanup()\n\n\ndef helper():\n    return os.getcwd()\n"
	edit := "--- a/cli.py\n+++ b/cli.py\n@@ -1,3 +1,2 @@\n-import os\n import sys\n \n@@ -9,3 +8,2 @@\n def helper():\n     return os.getcwd()\n-    # end of helpers\n"
	refuses(t, "cli.py", file, edit, "not in the file")
}
