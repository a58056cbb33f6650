package swe_test

import (
	"context"
	"path/filepath"
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
