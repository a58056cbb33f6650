package diffxyz

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// TestOneRowDoesNotStopTheRun: a row whose edit search-replace cannot
// express has its search-replace cases recorded as not applicable (no
// scores, counted in the report), and rows that cannot be used at all are
// left out by id; every other case runs and scores.
func TestOneRowDoesNotStopTheRun(t *testing.T) {
	rows := synthRows(3)
	// A line "=======" inside the changed hunk reads as a block divider.
	marker := &Row{ID: "marker", Path: "m.txt", Lang: "go",
		OldCode: "a\nb\n=======\nc\nd\n", NewCode: "a\nb\n=======\nC\nd\n"}
	dup := &Row{ID: "row001", Path: "x.go", Lang: "go", OldCode: "x\n", NewCode: "y\n"}
	same := &Row{ID: "same", Path: "s.go", Lang: "go", OldCode: "s\n", NewCode: "s\n"}
	rows = append(rows, marker, dup, same)
	out := t.TempDir()
	sum, err := Run(t.Context(), Options{
		Rows: rows, ModelOptions: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
		Out: out, Runner: runner.Options{Workers: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.BadRows) != 2 || sum.BadRows[0].ID != "row001" || sum.BadRows[0].Index != 4 || sum.BadRows[1].ID != "same" {
		t.Fatalf("bad rows %v, want row001 (index 4) and same", sum.BadRows)
	}
	if !strings.Contains(sum.BadRows[1].Error(), `"same"`) || !strings.Contains(sum.BadRows[1].Error(), "equal") {
		t.Errorf("bad row message %q names neither the id nor the cause", sum.BadRows[1].Error())
	}
	got, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 * 3 * len(PaperFormats); len(got) != want || sum.FailedRows != 0 {
		t.Fatalf("%d rows (%d failed), want %d (0)", len(got), sum.FailedRows, want)
	}
	na := 0
	for _, r := range got {
		if r["not_applicable"] != nil {
			na++
			if r["id"] != "marker" || r["format"] != string(patch.SearchReplace) || r["em"] != nil || r["response"] != nil {
				t.Errorf("not-applicable row %v: want marker/search-replace without scores or response", r)
			}
			if why, _ := r["not_applicable"].(string); !strings.Contains(why, "block marker") && !strings.Contains(why, "=======") {
				t.Errorf("not-applicable reason %q does not say why", why)
			}
			continue
		}
		if r["em"] != 1.0 {
			t.Errorf("%s: em %v, want 1", r["key"], r["em"])
		}
	}
	if na != 3 {
		t.Errorf("%d not-applicable rows, want 3 (one per task)", na)
	}
	if sum.Report.NotApplicable["search-replace"] != 3 || len(sum.Report.NotApplicable) != 1 {
		t.Errorf("report counts not applicable %v, want search-replace: 3", sum.Report.NotApplicable)
	}
	// search-replace's means are over the 3 other rows; its n counts all 4.
	for _, g := range sum.Report.Reports[0].Groups {
		if g.Values[1] != "search-replace" {
			continue
		}
		if g.N != 4 || g.Stats["em"].N != 3 || g.Stats["em"].Value != 1 {
			t.Errorf("%v: n %d, em over %d rows = %v; want n 4, em over 3 = 1", g.Values, g.N, g.Stats["em"].N, g.Stats["em"].Value)
		}
	}
}
