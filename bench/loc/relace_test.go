package loc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// TestRelaceSchemaRead: a hand-written row of relace-mcp's schema is read
// as relace-mcp reads it: lines = target_ranges (else range), one function
// target per entry with its range as span, bad entries and target ranges
// left out.
func TestRelaceSchemaRead(t *testing.T) {
	line := `{"id": "r1", "query": "q", "repo": "o/r", "base_commit": "abc", "category": null,
	 "hard_gt": [
	  {"path": "a.py", "function": "div", "class": "Calc", "range": [8, 12], "target_ranges": [[9, 9], [11, 12]], "signature": "def div(self, a, b):"},
	  {"path": "a.py", "function": "helper", "class": null, "range": [20, 25], "target_ranges": [[0, 3], [5, 4], [1.5, 2]]},
	  {"path": "b.py", "function": "f", "range": [1, 3]},
	  {"path": "", "function": "g", "range": [1, 2]},
	  {"path": "c.py", "function": "h", "range": [1]}],
	 "soft_context": [{"path": "d.py", "function": "k", "range": [1, 9]}]}`
	cases, err := DecodeCases(strings.NewReader(strings.ReplaceAll(line, "\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	want := GroundTruth{Files: map[string]FileTruth{
		"a.py": {Ranges: []Range{{9, 9}, {11, 12}, {20, 25}}, Context: []Range{{8, 12}, {8, 12}, {20, 25}},
			Functions: []string{"Calc.div", "helper"},
			Defs: []FunctionDef{{Name: "Calc.div", Class: "Calc", Range: Range{8, 12}, Signature: "def div(self, a, b):"},
				{Name: "helper", Range: Range{20, 25}}}},
		"b.py": {Ranges: []Range{{1, 3}}, Context: []Range{{1, 3}}, Functions: []string{"f"},
			Defs: []FunctionDef{{Name: "f", Range: Range{1, 3}}}},
	}}
	if len(cases) != 1 {
		t.Fatalf("%d cases, want 1", len(cases))
	}
	if d := cmp.Diff(want, cases[0].GroundTruth); d != "" {
		t.Errorf("ground truth (-want +got):\n%s", d)
	}
	fns := FunctionTargets(cases[0].GroundTruth)
	if len(fns) != 3 || fns[1].Span.Start != 20 || len(fns[1].Lines) != 1 {
		t.Errorf("function targets = %+v, want 3 (Calc.div, helper 20-25, f)", fns)
	}
	// An answer on div's def line, outside its changed lines: relace's hit,
	// not ours.
	m := Score(cases[0].GroundTruth, Found{Ranges: map[string][]Range{"a.py": {{8, 8}}}})
	// file recall 1/2; matched precision 0/1; hit: div of 3 functions.
	// quality 0.4·0.5 + 0.4·0 + 0.2/3
	for k, v := range map[string]float64{"file_recall": 0.5, "line_precision_matched": 0, "function_hit_rate": 1.0 / 3,
		"function_target_hit_rate": 0, "quality_score": 0.2 + 0.2/3} {
		if !near(m[k], v) {
			t.Errorf("%s = %.6f, want %.6f", k, m[k], v)
		}
	}
}

// TestRelaceSchemaSameScores: cases built here, written in relace-mcp's
// schema and read back, score the same on every metric for the same
// answers (the cases whose changed lines all lie in functions; the schema
// holds functions only, so a case with lines outside them loses those).
func TestRelaceSchemaSameScores(t *testing.T) {
	reposDir, _ := makeRepo(t)
	ctx := context.Background()
	store := repo.NewStore(reposDir)
	defer store.Close()
	rp, err := store.Get(ctx, "acme/calc")
	if err != nil {
		t.Fatal(err)
	}
	cases, _, _, err := BuildFromHistory(ctx, rp, "acme/calc", "main", HistoryFilter{})
	if err != nil || len(cases) != 2 {
		t.Fatalf("history build: %d cases, %v", len(cases), err)
	}
	path := filepath.Join(t.TempDir(), "relace.jsonl")
	n, problems, err := WriteRelaceCases(path, cases)
	if err != nil || n != 2 || len(problems) != 0 {
		t.Fatalf("WriteRelaceCases: %d written, %v, %v", n, problems, err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `{"path":"calc.py","function":"div","class":"Calc","range":[8,9],"target_ranges":[[8,8]],"signature":"def div(self, a, b):"}`) {
		t.Errorf("relace file lacks Calc.div's entry:\n%s", data)
	}
	back, err := ReadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	answers := []Found{
		{Ranges: map[string][]Range{"calc.py": {{8, 8}}}},
		{Ranges: map[string][]Range{"calc.py": {{9, 9}}, "clamp.go": {{3, 3}, {9, 11}}}},
		{Ranges: map[string][]Range{"clamp.go": {{1, 20}}, "x.py": {{1, 1}}}},
		{Files: []string{"calc.py"}},
	}
	relaceNames := []string{"file_recall", "file_precision", "line_coverage", "line_precision_matched",
		"function_hit_rate", "function_target_hit_rate", "quality_score", "quality_score_v2"}
	for i, c := range cases {
		if c.ID != back[i].ID {
			t.Fatalf("case %d: id %s read back as %s", i, c.ID, back[i].ID)
		}
		hasOutside := false
		for _, ft := range c.GroundTruth.Files {
			for _, cr := range ft.Context {
				if !strings.Contains(fmtDefs(ft.Defs), fmtRange(cr)) {
					hasOutside = true
				}
			}
		}
		for j, a := range answers {
			ours, theirs := Score(c.GroundTruth, a), Score(back[i].GroundTruth, a)
			for _, k := range relaceNames {
				if hasOutside {
					continue // compared below
				}
				if ours[k] != theirs[k] {
					t.Errorf("case %s answer %d: %s = %v from our case, %v from relace's schema", c.ID, j, k, ours[k], theirs[k])
				}
			}
			if hasOutside && ours["function_hit_rate"] != theirs["function_hit_rate"] {
				t.Errorf("case %s answer %d: function_hit_rate %v vs %v", c.ID, j, ours["function_hit_rate"], theirs["function_hit_rate"])
			}
		}
	}
}

func fmtDefs(ds []FunctionDef) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(fmtRange(d.Range))
	}
	return b.String()
}

func fmtRange(r Range) string { js, _ := json.Marshal(r); return string(js) }

// TestUnscoredEmptyTruth: a case with an empty or null ground truth is not
// scored (it used to get file recall 1 and quality 0.5, counted in the
// means): its row says why, the report leaves it out of every mean and
// names it.
func TestUnscoredEmptyTruth(t *testing.T) {
	reposDir, base := makeRepo(t)
	lines := `{"id":"ok","repo":"acme/calc","base_commit":"` + base + `","query":"div","ground_truth":{"files":{"calc.py":{"ranges":[[9,9]],"functions":["Calc.div"],"context":[[8,9]]}}}}
{"id":"null","repo":"acme/calc","base_commit":"` + base + `","query":"x","ground_truth":null}
{"id":"empty","repo":"acme/calc","base_commit":"` + base + `","query":"x","ground_truth":{"files":{}}}
{"id":"relace-empty","repo":"acme/calc","base_commit":"` + base + `","query":"x","hard_gt":[]}`
	cases, err := DecodeCases(strings.NewReader(lines))
	if err != nil || len(cases) != 4 {
		t.Fatalf("%d cases, %v", len(cases), err)
	}
	out := t.TempDir()
	sum, err := Run(context.Background(), RunOptions{Cases: cases, Repos: reposDir, CloneFrom: filepath.Join(reposDir, "nowhere"),
		Out: out, Mode: ModeIndexed, Model: "reference", Runner: runner.Options{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	rep := sum.Report
	if rep.TotalCases != 1 || rep.AvgFileRecall != 1 || rep.AvgQualityScore != 1 || rep.Rows != 1 {
		t.Errorf("report: total_cases %d, rows %d, avg_file_recall %v, avg_quality_score %v; want 1, 1, 1, 1 (the scored case alone)",
			rep.TotalCases, rep.Rows, rep.AvgFileRecall, rep.AvgQualityScore)
	}
	if st := rep.Reports[0].Total.Stats["quality_score"]; st.N != 1 || st.Value != 1 {
		t.Errorf("quality_score mean %v over %d, want 1 over 1", st.Value, st.N)
	}
	var ids []string
	for _, u := range rep.Unscored {
		ids = append(ids, u.ID)
		if !strings.Contains(u.Err, "no ground truth") {
			t.Errorf("unscored %s: reason %q", u.ID, u.Err)
		}
	}
	if d := cmp.Diff([]string{"empty", "null", "relace-empty"}, ids); d != "" {
		t.Errorf("unscored ids (-want +got):\n%s", d)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "- `null`: no ground truth") {
		t.Errorf("report.md does not name the unscored cases:\n%s", md)
	}
}

// TestRelaceMatchPaths: the relace-mcp metrics match returned and
// ground-truth paths as relace-mcp's match_paths does: both sides through
// its normalize_path (white space trimmed, one "./" dropped, then one
// "a/" or "b/" as a diff header writes them, "." and empty parts dropped),
// then exactly. ".." is not resolved, a prefix is dropped once, and only
// as a whole first part; ranges that are not [start >= 1, end >= start]
// are dropped, the file kept.
func TestRelaceMatchPaths(t *testing.T) {
	gt := GroundTruth{Files: map[string]FileTruth{
		"src/calc.py": {Ranges: []Range{{8, 8}}, Functions: []string{"Calculator.divide"},
			Defs: []FunctionDef{{Name: "Calculator.divide", Range: Range{8, 9}}}},
	}}
	for _, tc := range []struct {
		name    string
		found   map[string][]Range
		recall  float64
		lpm     float64
		fnHit   float64
		nFilesP float64 // file_precision
	}{
		{"exact", map[string][]Range{"src/calc.py": {{8, 8}}}, 1, 1, 1, 1},
		{"dot slash", map[string][]Range{"./src/calc.py": {{8, 8}}}, 1, 1, 1, 1},
		{"spaces", map[string][]Range{" src/calc.py ": {{8, 8}}}, 1, 1, 1, 1},
		{"diff header a/", map[string][]Range{"a/src/calc.py": {{8, 8}}}, 1, 1, 1, 1},
		{"diff header b/ after ./", map[string][]Range{"./b/src/calc.py": {{8, 8}}}, 1, 1, 1, 1},
		{"dot and empty parts", map[string][]Range{"src/./calc.py/": {{8, 8}}}, 1, 1, 1, 1},
		{"testbed", map[string][]Range{"/testbed/src/calc.py": {{8, 8}}}, 1, 1, 1, 1},
		// Refused: not the whole first part, twice, "..", elsewhere.
		{"ab/ is not a/", map[string][]Range{"ab/src/calc.py": {{8, 8}}}, 0, 0, 0, 0},
		{"a/ dropped once", map[string][]Range{"a/b/src/calc.py": {{8, 8}}}, 0, 0, 0, 0},
		{"dotdot kept", map[string][]Range{"x/../src/calc.py": {{8, 8}}}, 0, 0, 0, 0},
		{"absolute elsewhere", map[string][]Range{"/home/u/src/calc.py": {{8, 8}}}, 0, 0, 0, 0},
		{"no completion", map[string][]Range{"calc.py": {{8, 8}}}, 0, 0, 0, 0},
		// Bad ranges dropped, the file kept: recall 1, its lines counted
		// from the good range only.
		{"bad ranges", map[string][]Range{"src/calc.py": {{0, 3}, {9, 8}, {8, 8}}}, 1, 1, 1, 1},
		// Two spellings of one file are one file, their ranges merged.
		{"merged", map[string][]Range{"src/calc.py": {{8, 8}}, "./src/calc.py": {{9, 9}}}, 1, 0.5, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Found{Ranges: tc.found}
			for p := range tc.found {
				f.Files = append(f.Files, p)
			}
			m := Score(gt, f)
			got := [4]float64{m["file_recall"], m["line_precision_matched"], m["function_hit_rate"], m["file_precision"]}
			want := [4]float64{tc.recall, tc.lpm, tc.fnHit, tc.nFilesP}
			if got != want {
				t.Errorf("file_recall, line_precision_matched, function_hit_rate, file_precision = %v, want %v", got, want)
			}
		})
	}
	// The ground truth's side goes through the same normalization: a
	// ground-truth path under a top-level b/ matches itself and its
	// stripped form, as in relace-mcp.
	gtB := GroundTruth{Files: map[string]FileTruth{"b/util.py": {Ranges: []Range{{1, 2}}}}}
	for _, p := range []string{"b/util.py", "util.py"} {
		if m := Score(gtB, Found{Files: []string{p}, Ranges: map[string][]Range{p: {{1, 2}}}}); m["file_recall"] != 1 {
			t.Errorf("ground truth b/util.py, answer %s: file_recall %v, want 1 (relace-mcp drops b/ on both sides)", p, m["file_recall"])
		}
	}
}
