package loc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
)

// uxarrayTruth is the ground truth of Loc-Bench's UXARRAY__uxarray-1117
// (loc_bench_v1): its edit_functions, with the lines its patch changes.
func uxarrayTruth(t *testing.T) GroundTruth {
	t.Helper()
	type row struct {
		ID        string   `json:"instance_id"`
		Patch     string   `json:"patch"`
		Functions []string `json:"edit_functions"`
	}
	rows, err := testdata.ReadJSONL[row](testdata.Path(t, "loc_bench_v1.jsonl.gz"))
	if err != nil {
		t.Skip(err)
	}
	for _, r := range rows {
		if r.ID != "UXARRAY__uxarray-1117" {
			continue
		}
		lines, err := ChangedLines(r.Patch)
		if err != nil {
			t.Fatal(err)
		}
		gt := GroundTruth{Files: map[string]FileTruth{}}
		for _, fn := range r.Functions {
			p, name, _ := strings.Cut(fn, ":")
			ft := gt.Files[p]
			ft.Functions = append(ft.Functions, name)
			ft.Ranges = Cluster(lines[p])
			gt.Files[p] = ft
		}
		return gt
	}
	t.Skip("UXARRAY__uxarray-1117 is not in loc_bench_v1")
	return GroundTruth{}
}

// TestReportShapes: the gold files and functions of a real case, reported
// in the shapes a model writes paths (./, Windows separators, spaces
// around, repeated, in another order), score file and function Acc@3 and
// Recall@3 of 1; a base name, a function without its file or under a
// class it is not in scores less.
func TestReportShapes(t *testing.T) {
	gt := uxarrayTruth(t)
	const a, b = "uxarray/grid/connectivity.py", "uxarray/grid/coordinates.py"
	const fa, fb = "_build_n_nodes_per_face", "_construct_face_centroids"
	report := func(files []string, funcs []string) string {
		fs := map[string][]int{}
		var keys []string
		for _, f := range files {
			k, _ := json.Marshal(f)
			keys = append(keys, fmt.Sprintf("%s: []", k))
			fs[f] = nil
		}
		fn, _ := json.Marshal(funcs)
		return fmt.Sprintf(`{"files": {%s}, "functions": %s}`, strings.Join(keys, ", "), fn)
	}
	exact := map[string]string{
		"as written":          report([]string{a, b}, []string{a + ":" + fa, b + ":" + fb}),
		"./":                  report([]string{"./" + a, "./" + b}, []string{"./" + a + ":" + fa, "./" + b + ":" + fb}),
		"Windows separators":  report([]string{`uxarray\grid\connectivity.py`, `uxarray\grid\coordinates.py`}, []string{`uxarray\grid\connectivity.py:` + fa, `uxarray\grid\coordinates.py:` + fb}),
		"spaces around":       report([]string{a + " ", " " + b}, []string{" " + a + ":" + fa, b + ": " + fb + " "}),
		"repeated":            report([]string{a, "./" + a, b}, []string{a + ":" + fa, a + ":" + fa, b + ":" + fb}),
		"in the other order":  report([]string{b, a}, []string{b + ":" + fb, a + ":" + fa}),
		"a double slash":      report([]string{"uxarray//grid/connectivity.py", b}, []string{a + ":" + fa, b + ":" + fb}),
		"functions only, ./ ": `{"files": {}, "functions": ["./` + a + ":" + fa + `", "` + b + ":" + fb + `"]}`,
	}
	for name, args := range exact {
		f, err := parseReport(args)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		m := Score(gt, f)
		for _, k := range []string{"file_acc@3", "file_recall@3", "function_acc@3", "function_recall@3", "module_acc@3"} {
			if m[k] != 1 {
				t.Errorf("%s: %s = %v, want 1 (found %+v)", name, k, m[k], f)
			}
		}
	}
	wrong := map[string]struct {
		args string
		key  string
	}{
		"base names":                   {report([]string{"connectivity.py", "coordinates.py"}, nil), "file_recall@3"},
		"one base name":                {report([]string{a, "coordinates.py"}, nil), "file_acc@3"},
		"a function without its file":  {report([]string{a, b}, []string{a + ":" + fa, "x.py:" + fb}), "function_acc@3"},
		"a function under a class":     {report([]string{a, b}, []string{a + ":" + fa, b + ":Grid." + fb}), "function_acc@3"},
		"a function in the other file": {report([]string{a, b}, []string{b + ":" + fa, a + ":" + fb}), "function_recall@3"},
	}
	for name, w := range wrong {
		f, err := parseReport(w.args)
		if err != nil {
			continue // refused: scores nothing
		}
		if m := Score(gt, f); m[w.key] >= 1 {
			t.Errorf("%s: %s = %v, want below 1", name, w.key, m[w.key])
		}
	}
}
