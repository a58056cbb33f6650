package swe_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
