package repair_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// degrade2 applies the damage of degrade plus a dropped context line or an
// altered one: the edits then carry less certainty, and must still never
// land in the wrong place. degrade2 applies model-like damage to a patch text, chosen by r.
func degrade2(r *rand.Rand, text string, f patch.Format) (string, []string) {
	var did []string
	lines := strings.Split(text, "\n")
	pick := func(name string, p float64) bool {
		if r.Float64() < p {
			did = append(did, name)
			return true
		}
		return false
	}
	noSpace := pick("no-space", 0.4)
	trail := pick("trailing-ws", 0.3)
	bare := f == patch.UDiff && pick("bare-headers", 0.3)
	tabs := pick("tabs", 0.2)
	for i, l := range lines {
		switch {
		case bare && strings.HasPrefix(l, "@@"):
			lines[i] = "@@ @@"
		case noSpace && strings.HasPrefix(l, " ") && (f == patch.UDiff || f == patch.UDiffH || f == patch.V4A):
			lines[i] = l[1:]
		}
		if trail && !strings.HasPrefix(lines[i], "+") {
			lines[i] = strings.TrimRight(lines[i], " \t")
		}
		if tabs && !strings.HasPrefix(lines[i], "+") {
			lines[i] = strings.ReplaceAll(lines[i], "\t", "    ")
		}
	}
	if f != patch.SearchReplace && pick("drop-ctx", 0.3) {
		var ctx []int
		for i, l := range lines {
			if i > 0 && i+1 < len(lines) && strings.HasPrefix(l, " ") && strings.HasPrefix(lines[i-1], " ") && strings.HasPrefix(lines[i+1], " ") {
				ctx = append(ctx, i)
			}
		}
		if len(ctx) > 0 {
			k := ctx[r.Intn(len(ctx))]
			lines = append(lines[:k], lines[k+1:]...)
		}
	}
	if f != patch.SearchReplace && pick("paraphrase", 0.2) {
		for i, l := range lines {
			if strings.HasPrefix(l, " ") && len(strings.TrimSpace(l)) > 10 && r.Intn(3) == 0 {
				lines[i] = l + " // note"
				break
			}
		}
	}
	out := strings.Join(lines, "\n")
	if pick("fenced", 0.5) {
		out = "Here is the change you asked for:\n\n```diff\n" + out + "```\n\nIt keeps the behaviour otherwise."
	}
	return out, did
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
	if recovered*10 < tried*9 {
		t.Errorf("recovered %d of %d, below 90%%", recovered, tried)
	}

}
