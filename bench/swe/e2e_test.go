package swe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
)

func TestEvalNoTests(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	out := filepath.Join(dir, "out")
	s, err := swe.Eval(context.Background(), swe.Config{
		Dataset: f.Dataset, Predictions: f.Predictions, Repos: f.Repos, RunID: "t", Out: out, Workers: 4, NoTests: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := swetest.RowsByID(t, out)
	for id, exp := range f.Expected {
		r := rows[id]
		if r.Status != exp.Status || r.PatchStatus != exp.PatchStatus {
			t.Errorf("%s: status %s/%s, want %s/%s (reason %q)", id, r.Status, r.PatchStatus, exp.Status, exp.PatchStatus, r.Reason)
		}
		if exp.Repairs != nil && !cmp.Equal(r.Repairs, exp.Repairs) {
			t.Errorf("%s: repairs %v, want %v", id, r.Repairs, exp.Repairs)
		}
	}
	t.Logf("%+v", s)
}

// TestEvalGold evaluates the dataset's own gold patches.
func TestEvalGold(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	out := filepath.Join(dir, "out")
	s, err := swe.Eval(context.Background(), swe.Config{
		Dataset: f.Dataset, Predictions: swe.GoldPredictions, Repos: f.Repos, RunID: "gold", Out: out, NoTests: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Counts[swe.StatusApplied] != len(f.Expected) {
		t.Errorf("gold patches: %v, want all %d applied", s.Counts, len(f.Expected))
	}
	for id, r := range swetest.RowsByID(t, out) {
		if r.Model != "gold" {
			t.Errorf("%s: model %q", id, r.Model)
		}
	}
}

// TestEvalGoesPastBadRows: a dataset row without a repo, a line that is not
// JSON, a duplicate instance, and predictions without an id or for an
// unknown instance are left out and named on the log; every other instance
// is evaluated.
func TestEvalGoesPastBadRows(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	ds, err := os.ReadFile(f.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(ds), "\n", 2)[0]
	bad := string(ds) + `{"instance_id":"norepo__x-1","base_commit":"abc"}` + "\n" + `{"instance_id": "cut` + "\n" + first + "\n"
	if err := os.WriteFile(f.Dataset, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	preds, err := os.ReadFile(f.Predictions)
	if err != nil {
		t.Fatal(err)
	}
	badPreds := string(preds) + `{"model_patch":"x"}` + "\n" + `{"instance_id":"ghost__y-1","model_patch":"x","model_name_or_path":"m"}` + "\n"
	if err := os.WriteFile(f.Predictions, []byte(badPreds), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	out := filepath.Join(dir, "out")
	s, err := swe.Eval(context.Background(), swe.Config{
		Dataset: f.Dataset, Predictions: f.Predictions, Repos: f.Repos, RunID: "bad-rows", Out: out, NoTests: true, Log: &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(swetest.RowsByID(t, out)); got != len(f.Expected) || s.Instances != len(f.Expected) {
		t.Errorf("%d rows, %d instances; want every one of the %d good instances", got, s.Instances, len(f.Expected))
	}
	for _, want := range []string{`(instance_id "norepo__x-1")`, "line " + fmt.Sprint(strings.Count(string(ds), "\n")+2), "duplicate instance_id", "no instance_id", "ghost__y-1"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not name %q:\n%s", want, log.String())
		}
	}
}

// TestEvalInstanceIDsReport: with --instance_ids the official harness's
// make_run_report counts the selected instances as the dataset
// (load_swebench_dataset(name, split, instance_ids)) and every prediction
// of the file as submitted (len(predictions), sorted(predictions.keys())):
// report.json and MODEL.RUN_ID.json say the same, with the defaults.
func TestEvalInstanceIDsReport(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	var all []string
	for id := range f.Expected {
		all = append(all, id)
	}
	sort.Strings(all)
	// Gold patches apply under both appliers, so without the test stage
	// both are incomplete in both reports.
	selected := []string{"acme__gocalc-gold", "acme__pycalc-gold"}
	for _, id := range selected {
		if f.Expected[id].Status != swe.StatusApplied {
			t.Fatalf("fixture: %s is %q, want applied", id, f.Expected[id].Status)
		}
	}
	out := filepath.Join(dir, "out")
	if _, err := swe.Eval(context.Background(), swe.Config{
		Dataset: f.Dataset, Predictions: f.Predictions, Repos: f.Repos, RunID: "sel", Out: out, NoTests: true,
		InstanceIDs: selected,
	}); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Total         int      `json:"total_instances"`
		Submitted     int      `json:"submitted_instances"`
		SubmittedIDs  []string `json:"submitted_ids"`
		IncompleteIDs []string `json:"incomplete_ids"`
	}
	// Without the test stage every applied instance is incomplete: only
	// the selected ones are.
	want := summary{Total: 2, Submitted: len(all), SubmittedIDs: all, IncompleteIDs: selected}
	official, err := filepath.Glob(filepath.Join(out, "*.sel.json"))
	if err != nil || len(official) != 1 {
		t.Fatalf("official summary: %v %v", official, err)
	}
	for _, name := range []string{filepath.Join(out, "report.json"), official[0]} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var got summary
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", filepath.Base(name), d)
		}
	}
}

// TestInstanceReportPatchFields: patch_is_None and patch_exists of
// instances/ID/report.json are the harness's get_eval_report's: whether
// model_patch is null, and whether it is not, whatever it holds (prose with
// no edit in it exists; an empty string exists; null does not), so the two
// never agree.
func TestInstanceReportPatchFields(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	out := filepath.Join(dir, "out")
	if _, err := swe.Eval(context.Background(), swe.Config{
		Dataset: f.Dataset, Predictions: f.Predictions, Repos: f.Repos, RunID: "t", Out: out, NoTests: true,
	}); err != nil {
		t.Fatal(err)
	}
	type fields struct {
		IsNone bool `json:"patch_is_None"`
		Exists bool `json:"patch_exists"`
	}
	for _, tc := range []struct {
		id   string
		want fields
	}{
		{"acme__pycalc-gold", fields{false, true}},
		{"acme__pycalc-prose", fields{false, true}},
		{"acme__pycalc-broken", fields{false, true}},
		{"acme__pycalc-fullout", fields{false, true}}, // model_patch "", the edit in full_output
		{"acme__pycalc-empty", fields{true, false}},   // model_patch null
	} {
		b, err := os.ReadFile(filepath.Join(out, "instances", swe.SafeID(tc.id), "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]fields
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got[tc.id] != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.id, got[tc.id], tc.want)
		}
	}
}

// TestHarnessWhitespacePatch: the official harness counts a prediction as
// empty only when model_patch is "" or null (run_evaluation's
// `prediction.get("model_patch") in ["", None]`); a patch of white space
// goes to the run, no command of the chain applies it, and it is an error
// (no report file: error_ids). patchbench's own status keeps it
// empty_patch: there is no edit in it.
func TestHarnessWhitespacePatch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		patch      any // model_patch of acme__pycalc-empty
		harness    string
		reportIDs  string // the MODEL.RUN_ID.json list naming it
		patchbench string // report.json's "patchbench" (report.json's own SWE-bench fields are the harness's)
	}{
		{"null", nil, swe.StatusEmptyPatch, "empty_patch_ids", "empty_patch_ids"},
		{"empty string", "", swe.StatusEmptyPatch, "empty_patch_ids", "empty_patch_ids"},
		{"white space", " \n\t\n", swe.StatusApplyFailed, "error_ids", "empty_patch_ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := swetest.Build(t, dir)
			const id = "acme__pycalc-empty"
			b, err := os.ReadFile(f.Predictions)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var p map[string]any
				if err := json.Unmarshal([]byte(l), &p); err != nil {
					t.Fatal(err)
				}
				if p["instance_id"] == id {
					p["model_patch"], p["full_output"] = tc.patch, ""
					nb, err := json.Marshal(p)
					if err != nil {
						t.Fatal(err)
					}
					l = string(nb)
				}
				lines = append(lines, l)
			}
			if err := os.WriteFile(f.Predictions, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if _, err := swe.Eval(context.Background(), swe.Config{
				Dataset: f.Dataset, Predictions: f.Predictions, Repos: f.Repos, RunID: "ws", Out: out, NoTests: true,
			}); err != nil {
				t.Fatal(err)
			}
			r := swetest.RowsByID(t, out)[id]
			if r.Status != swe.StatusEmptyPatch || r.HarnessStatus != tc.harness {
				t.Errorf("status %s, harness_status %s; want %s, %s", r.Status, r.HarnessStatus, swe.StatusEmptyPatch, tc.harness)
			}
			official, err := filepath.Glob(filepath.Join(out, "*.ws.json"))
			if err != nil || len(official) != 1 {
				t.Fatalf("official summary: %v %v", official, err)
			}
			// report.json's SWE-bench fields are the harness's; patchbench's
			// own are under "patchbench".
			for _, c := range []struct{ name, key, want string }{
				{official[0], "", tc.reportIDs}, {filepath.Join(out, "report.json"), "", tc.reportIDs}, {filepath.Join(out, "report.json"), "patchbench", tc.patchbench},
			} {
				name, want := c.name+" "+c.key, c.want
				b, err := os.ReadFile(c.name)
				if err != nil {
					t.Fatal(err)
				}
				var rep map[string]any
				if err := json.Unmarshal(b, &rep); err != nil {
					t.Fatal(err)
				}
				if c.key != "" {
					rep, _ = rep[c.key].(map[string]any)
				}
				var in []string
				for _, list := range []string{"empty_patch_ids", "error_ids", "resolved_ids", "unresolved_ids", "incomplete_ids"} {
					ids, _ := rep[list].([]any)
					for _, x := range ids {
						if x == id {
							in = append(in, list)
						}
					}
				}
				if d := cmp.Diff([]string{want}, in); d != "" {
					t.Errorf("%s: lists naming %s (-want +got):\n%s", filepath.Base(name), id, d)
				}
			}
		})
	}
}
