package repair_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// degrade2 drops or alters a context line, then applies degrade's damage:
// the edits carry less certainty, and must still never land in the wrong
// place.
func degrade2(r *rand.Rand, text string, f patch.Format) (string, []string) {
	var did []string
	lines := strings.Split(text, "\n")
	var ctx []int
	for i, l := range lines {
		if i > 0 && i+1 < len(lines) && strings.HasPrefix(l, " ") && strings.HasPrefix(lines[i-1], " ") && strings.HasPrefix(lines[i+1], " ") {
			ctx = append(ctx, i)
		}
	}
	// Search-replace has no context lines: changing its lines changes the
	// edit itself.
	if f != patch.SearchReplace && len(ctx) > 0 {
		switch k := ctx[r.Intn(len(ctx))]; r.Intn(3) {
		case 0:
			lines = append(lines[:k], lines[k+1:]...)
			did = append(did, "drop-ctx")
		case 1:
			if len(strings.TrimSpace(lines[k])) > 10 {
				lines[k] += " // note"
				did = append(did, "paraphrase")
			}
		}
	}
	out, more := degrade(r, strings.Join(lines, "\n"), f)
	return out, append(did, more...)
}

// TestRobustnessHarder is TestRobustness with context lines dropped or
// altered as well.
func TestRobustnessHarder(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	r := rand.New(rand.NewSource(99))
	tried, recovered, wrong, crossApplied := 0, 0, 0, 0
	for i, row := range rows {
		for _, f := range []patch.Format{patch.UDiff, patch.UDiffH, patch.SearchReplace, patch.V4A} {
			opts := patch.DefaultMakeOptions()
			opts.Unique = !f.HasPositions()
			fp := patch.Make(row.Path, row.Path, row.OldCode, row.NewCode, opts)
			text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f)
			if err != nil {
				continue
			}
			bad, did := degrade2(r, text, f)
			tried++
			res, err := repair.Repair(bad, repair.Options{FS: patch.MapFS{row.Path: row.OldCode}})
			switch {
			case err != nil:
				t.Logf("%s %s %v: %v", row.ID, f, did, err)
			case string(res.Results[0].Content) == row.NewCode:
				recovered++
			default:
				if strings.Join(strings.Fields(string(res.Results[0].Content)), " ") != strings.Join(strings.Fields(row.NewCode), " ") {
					wrong++
					t.Errorf("%s %s %v: misapplied", row.ID, f, did)
				} else {
					recovered++ // whitespace of added lines only
				}
			}
			other := rows[(i+131)%len(rows)]
			if other.Path != row.Path {
				if _, err := repair.Repair(bad, repair.Options{Target: "x", FS: patch.MapFS{"x": other.OldCode}}); err == nil {
					crossApplied++
					t.Errorf("%s %s %v: applied to %s", row.ID, f, did, other.ID)
				}
			}
		}
	}
	t.Logf("%d damaged patches: %d recovered, %d misapplied, %d applied to another file", tried, recovered, wrong, crossApplied)
	// Refusing an edit whose context no longer pins it down is right; the
	// floor only guards against refusing everything.
	if recovered*10 < tried*8 {
		t.Errorf("recovered %d of %d, below 80%%", recovered, tried)
	}

}
