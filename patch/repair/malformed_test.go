package repair_test

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestMalformedDev scores Repair on the shared corpus of broken patches:
// every must-refuse case is refused and nothing is ever misapplied.
func TestMalformedDev(t *testing.T) {
	rows := testdata.Load[testdata.Malformed](t, "malformed-dev.jsonl.gz")
	recovered, falseApply, refused, mustRefuse := 0, 0, 0, 0
	byFam := map[string][2]int{}
	var twice []applybench.Case // the recovered cases, to apply again
	for _, r := range rows {
		res, err := repair.Repair(r.Patch, repair.Options{Target: r.Path, FS: patch.MapFS{r.Path: r.OldCode}})
		fam := r.Family
		c := byFam[fam]
		c[1]++
		switch {
		case err != nil:
			refused++
			if r.Expected == nil {
				mustRefuse++
				c[0]++
			} else {
				t.Logf("%s: not recovered: %v", r.ID, err)
			}
		case r.Expected == nil:
			falseApply++
			t.Errorf("%s: must be refused, but applied", r.ID)
		default:
			got := string(res.Results[0].Content)
			if got == *r.Expected {
				recovered++
				c[0]++
				twice = append(twice, applybench.Case{ID: r.ID, Path: r.Path, OldCode: r.OldCode, Patch: r.Patch, Expected: r.Expected})
			} else {
				falseApply++
				t.Errorf("%s: applied with a wrong result", r.ID)
			}
		}
		byFam[fam] = c
		_ = errors.Is
	}
	checkTwice(t, twice, func() map[string]bool {
		m := map[string]bool{}
		for _, c := range twice {
			m[c.ID] = true
		}
		return m
	}())
	var fams []string
	for f := range byFam {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	var b strings.Builder
	for _, f := range fams {
		b.WriteString(f)
		b.WriteString(" ")
		c := byFam[f]
		b.WriteString(strings.Repeat("", 0))
		t.Logf("%-45s %d/%d", f, c[0], c[1])
	}
	t.Logf("recovered %d of %d recoverable, false applies %d, must-refuse refused %d", recovered, len(rows)-mustRefuseCount(rows), falseApply, mustRefuse)
}

func mustRefuseCount(rows []testdata.Malformed) int {
	n := 0
	for _, r := range rows {
		if r.Expected == nil {
			n++
		}
	}
	return n
}

// TestWellFormedDev: git's own diff of every dev commit applies tolerantly
// exactly as written, with no repair.
func TestWellFormedDev(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	for _, r := range rows {
		res, err := repair.Repair(r.UDiff, repair.Options{Target: r.Path, FS: patch.MapFS{r.Path: r.OldCode}})
		if err != nil {
			t.Errorf("%s: %v", r.ID, err)
			continue
		}
		if got := string(res.Results[0].Content); got != r.NewCode {
			t.Errorf("%s: result differs from new_code", r.ID)
		}
		for _, h := range res.Files[0].Hunks {
			if h.Tier != repair.TierExact || len(h.Repairs) > 0 || h.Offset != 0 {
				t.Errorf("%s: hunk %d: tier %s, offset %d, repairs %v; want exact and none", r.ID, h.Hunk, h.Tier, h.Offset, h.Repairs)
			}
		}
	}
}
