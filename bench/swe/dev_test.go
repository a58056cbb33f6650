package swe_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// TestDevBench runs the patch stage on the benchmark built from the shared
// dev corpora (1009 instances in six repositories with real file
// histories) and checks every instance: git's own diffs are applied; every
// malformed patch with an expected result applies and gives exactly that
// file; the must-refuse ones are apply_failed; an instance classified applied
// is accepted by git apply as written; and every repaired patch passes
// git apply --check at its base commit.
func TestDevBench(t *testing.T) {
	data := testdata.SharedDir()
	dir := t.TempDir()
	b, err := swetest.BuildDev(dir, data)
	if err != nil {
		t.Skipf("building the dev benchmark: %v", err)
	}
	out := filepath.Join(dir, "out")
	if _, err := swe.Eval(context.Background(), swe.Config{
		Dataset: b.Dataset, Predictions: b.Predictions, Repos: b.Repos, RunID: "dev", Out: out, Workers: 32, NoTests: true,
	}); err != nil {
		t.Fatal(err)
	}
	rows := swetest.RowsByID(t, out)
	if len(rows) != len(b.Instances) || len(b.Instances) < 1000 {
		t.Fatalf("%d rows for %d instances", len(rows), len(b.Instances))
	}
	type check struct{ dir, commit, patch, what string }
	var checks []check
	counts := map[string]int{}
	missed, recoverable := 0, 0
	for _, in := range b.Instances {
		if in.Expected != nil {
			recoverable++
		}
		r := rows[in.ID]
		counts[r.Status]++
		gitDir := filepath.Join(b.Repos, filepath.FromSlash(in.Repo))
		switch {
		case in.Expected == nil:
			if r.Status != swe.StatusApplyFailed {
				t.Errorf("%s (%s): status %s, want apply_failed", in.ID, in.Family, r.Status)
			}
			continue
		case in.Family == "" && r.Status != swe.StatusApplied:
			t.Errorf("%s: git's diff has status %s %v, want applied", in.ID, r.Status, r.Repairs)
		case r.PatchStatus == "":
			// A recoverable case refused is a recovery missed, not a
			// wrong apply: allowed when the refusal says why, and
			// counted below.
			if r.Status != swe.StatusApplyFailed || !strings.Contains(r.Reason, "refused") {
				t.Errorf("%s (%s): status %s (%s), want applied", in.ID, in.Family, r.Status, r.Reason)
			} else {
				missed++
				t.Logf("%s (%s): refused: %s", in.ID, in.Family, r.Reason)
			}
			continue
		}
		if r.Status == swe.StatusApplied && len(r.Repairs) != 0 || r.Status == swe.StatusAppliedRepaired && len(r.Repairs) == 0 {
			t.Errorf("%s: status %s with repairs %v", in.ID, r.Status, r.Repairs)
		}
		p, err := patch.ParseUDiff(r.RepairedPatch, patch.DefaultParseOptions)
		if err != nil {
			t.Errorf("%s: repaired patch does not parse: %v", in.ID, err)
			continue
		}
		res, err := patch.Apply(p, patch.MapFS{in.Path: in.Old}, patch.ApplyOptions{})
		if err != nil || len(res) != 1 || string(res[0].Content) != *in.Expected {
			t.Errorf("%s (%s): the repaired patch does not give the expected file (%v)", in.ID, in.Family, err)
		}
		checks = append(checks, check{gitDir, in.Base, r.RepairedPatch, "repaired patch"})
		if r.Status == swe.StatusApplied {
			checks = append(checks, check{gitDir, in.Base, in.Patch, "model_patch of an applied instance"})
		}
	}
	t.Logf("statuses: %v; %d git apply --check runs; %d of %d recoverable cases refused", counts, len(checks), missed, recoverable)
	if missed*100 > recoverable {
		t.Errorf("%d of %d recoverable cases refused: more than 1%%", missed, recoverable)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(checks) {
					mu.Unlock()
					return
				}
				c := checks[next]
				next++
				mu.Unlock()
				if err := swetest.GitApplyCheck(t, c.dir, c.commit, c.patch); err != nil {
					t.Errorf("git apply --check at %s rejects the %s: %v", c.commit, c.what, err)
				}
			}
		}()
	}
	wg.Wait()
}
