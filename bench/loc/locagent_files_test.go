package loc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLocAgentFileGold: LocAgent's file-level ground truth is the files of
// the edited functions (its evaluation takes each edit_functions entry's
// path), so a file the fix changes outside every function (a doc page, a
// module-level constant) is not one of them, and a case whose fix touches
// no function has no file-level metric, as LocAgent leaves it out. The
// relace-mcp family still counts every changed file.
func TestLocAgentFileGold(t *testing.T) {
	gt := GroundTruth{Files: map[string]FileTruth{
		"pkg/a.py":      {Ranges: []Range{{10, 12}}, Functions: []string{"C.m"}},
		"docs/notes.md": {Ranges: []Range{{3, 3}}},
		"pkg/const.py":  {Ranges: []Range{{1, 1}}},
	}}
	found := Found{Files: []string{"pkg/a.py", "pkg/b.py"}, Functions: []string{"pkg/a.py:C.m"}}
	m := Score(gt, found)
	got := map[string]float64{}
	for _, k := range []string{"file_acc@1", "file_recall@1", "file_precision@1", "file_recall@5", "file_recall"} {
		got[k] = m[k]
	}
	want := map[string]float64{
		// Only pkg/a.py is LocAgent's gold, found first.
		"file_acc@1": 1, "file_recall@1": 1, "file_precision@1": 1, "file_recall@5": 1,
		// relace-mcp's file recall: 1 of the 3 changed files.
		"file_recall": 1.0 / 3,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	noFunc := GroundTruth{Files: map[string]FileTruth{"docs/notes.md": {Ranges: []Range{{3, 3}}}}}
	m = Score(noFunc, Found{Files: []string{"docs/notes.md"}})
	for k := range m {
		if len(k) > 5 && k[:5] == "file_" && k != "file_recall" && k != "file_precision" {
			t.Errorf("a fix outside every function has %s = %v; LocAgent leaves the case out", k, m[k])
		}
	}
}

// TestLocAgentFileMaxK: LocAgent evaluates files at k = 1, 3, 5, so its
// max_k there is 5 and Recall@k counts at most 5 gold files; modules and
// functions at 5 and 10 (max_k 10).
func TestLocAgentFileMaxK(t *testing.T) {
	gt := GroundTruth{Files: map[string]FileTruth{}}
	var files []string
	for _, p := range []string{"a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "g.py"} {
		gt.Files[p] = FileTruth{Ranges: []Range{{1, 1}}, Functions: []string{"f"}}
		files = append(files, p)
	}
	m := Score(gt, Found{Files: files[:5]})
	got := map[string]float64{"file_recall@5": m["file_recall@5"], "file_recall@3": m["file_recall@3"], "file_acc@5": m["file_acc@5"]}
	want := map[string]float64{"file_recall@5": 1, "file_recall@3": 3.0 / 5, "file_acc@5": 1}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
