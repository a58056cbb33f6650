package repair_test

import (
	"sync/atomic"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// BenchmarkRepairDev repairs and applies, in memory, every patch of the
// malformed dev corpus, on every core; b.N counts patches.
func BenchmarkRepairDev(b *testing.B) {
	rows := testdata.Load[testdata.Malformed](b, "malformed-dev.jsonl.gz")
	fss := make([]patch.MapFS, len(rows))
	for i, r := range rows {
		fss[i] = patch.MapFS{r.Path: r.OldCode}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := int(next.Add(1)) % len(rows)
			res, err := repair.Repair(rows[k].Patch, repair.Options{Target: rows[k].Path, FS: fss[k]})
			if err == nil && len(res.Results) == 0 {
				b.Error("applied without results")
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "patches/s")
}

// BenchmarkRepairWellFormed does the same for git's own diffs of the dev
// commits.
func BenchmarkRepairWellFormed(b *testing.B) {
	rows := testdata.Load[testdata.Triple](b, "diffxyz-dev.jsonl.gz")
	fss := make([]patch.MapFS, len(rows))
	for i, r := range rows {
		fss[i] = patch.MapFS{r.Path: r.OldCode}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := int(next.Add(1)) % len(rows)
			if _, err := repair.Repair(rows[k].UDiff, repair.Options{Target: rows[k].Path, FS: fss[k]}); err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "patches/s")
}
