package patch_test

import (
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// BenchmarkApplyDev parses and strictly applies git's diff of every dev
// commit; b.N counts patches.
func BenchmarkApplyDev(b *testing.B) {
	rows := testdata.Load[testdata.Triple](b, "diffxyz-dev.jsonl.gz")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := rows[i%len(rows)]
		p, err := patch.ParseUDiff(r.UDiff, patch.DefaultParseOptions)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := patch.ApplyFile(r.OldCode, p.Files[0], patch.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "patches/s")
}

// BenchmarkMakeDev generates the udiff of every dev commit.
func BenchmarkMakeDev(b *testing.B) {
	rows := testdata.Load[testdata.Triple](b, "diffxyz-dev.jsonl.gz")
	opts := patch.DefaultMakeOptions()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := rows[i%len(rows)]
		fp := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, opts)
		if _, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff); err != nil {
			b.Fatal(err)
		}
	}
}
