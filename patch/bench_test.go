package patch_test

import (
	"fmt"
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

// largeSizes are the file sizes of the large-file benchmarks: the cost per
// line should stay flat from one to the next.
var largeSizes = []int{1000, 10000, 150000}

// BenchmarkApplyLarge strictly applies a diff with about one hunk per 100
// lines to files of 1k, 10k and 150k lines; b.N counts applies.
func BenchmarkApplyLarge(b *testing.B) {
	for _, n := range largeSizes {
		old, new := testdata.LargePair(b, n)
		fp := patch.Make("f", "f", old, new, patch.DefaultMakeOptions())
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			cpu0 := testdata.CPUTime()
			for i := 0; i < b.N; i++ {
				got, _, err := patch.ApplyFile(old, fp, patch.ApplyOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 && got != new {
					b.Fatal("the result is not the new file")
				}
			}
			testdata.ReportPerLine(b, n, cpu0)
		})
	}
}

// manyHunkCounts are the hunk counts of the many-hunk benchmarks: the cost
// per hunk should stay flat from one to the next.
var manyHunkCounts = []int{1000, 20000, 100000}

// BenchmarkApplyManyHunks parses and strictly applies a git diff of n
// hunks to its file, by git apply's rules as apply --strict does; b.N
// counts applies.
func BenchmarkApplyManyHunks(b *testing.B) {
	for _, n := range manyHunkCounts {
		b.Run(fmt.Sprintf("hunks=%d", n), func(b *testing.B) {
			old, new, diff := testdata.ManyHunks(n)
			b.ResetTimer()
			cpu0 := testdata.CPUTime()
			for i := 0; i < b.N; i++ {
				p, err := patch.ParseUDiff(diff, patch.DefaultParseOptions)
				if err != nil {
					b.Fatal(err)
				}
				got, _, err := patch.ApplyFile(old, p.Files[0], patch.ApplyOptions{Git: true})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 && got != new {
					b.Fatal("the result is not the new file")
				}
			}
			per := float64(b.N * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/hunk")
			b.ReportMetric(float64((testdata.CPUTime()-cpu0).Nanoseconds())/per, "cpu-ns/hunk")
		})
	}
}
