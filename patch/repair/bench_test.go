package repair_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// benchRepair repairs and applies, in memory and on every core, each patch
// against its file in turn; b.N counts patches. wantOK fails the benchmark
// on a refusal.
func benchRepair(b *testing.B, paths, patches, files []string, wantOK bool) {
	fss := make([]patch.MapFS, len(paths))
	for i := range paths {
		fss[i] = patch.MapFS{paths[i]: files[i]}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := int(next.Add(1)) % len(paths)
			res, err := repair.Repair(patches[k], repair.Options{Target: paths[k], FS: fss[k]})
			switch {
			case err != nil && wantOK:
				b.Error(err)
			case err == nil && len(res.Results) == 0:
				b.Error("applied without results")
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "patches/s")
}

// BenchmarkRepairDev: the malformed dev corpus, refusals included.
func BenchmarkRepairDev(b *testing.B) {
	rows := testdata.Load[testdata.Malformed](b, "malformed-dev.jsonl.gz")
	var paths, patches, files []string
	for _, r := range rows {
		paths, patches, files = append(paths, r.Path), append(patches, r.Patch), append(files, r.OldCode)
	}
	benchRepair(b, paths, patches, files, false)
}

// BenchmarkRepairWellFormed: git's own diffs of the dev commits.
func BenchmarkRepairWellFormed(b *testing.B) {
	rows := testdata.Load[testdata.Triple](b, "diffxyz-dev.jsonl.gz")
	var paths, patches, files []string
	for _, r := range rows {
		paths, patches, files = append(paths, r.Path), append(patches, r.UDiff), append(files, r.OldCode)
	}
	benchRepair(b, paths, patches, files, true)
}

// BenchmarkRepairLarge repairs and applies GNU-style diffs with about one
// hunk per 100 lines to files of 1k, 10k and 150k lines, in one goroutine;
// b.N counts patches. The cost per line should stay flat from one size to
// the next.
func BenchmarkRepairLarge(b *testing.B) {
	for _, n := range []int{1000, 10000, 150000} {
		old, new := testdata.LargePair(b, n)
		text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{patch.Make("f", "f", old, new, patch.DefaultMakeOptions())}}, patch.UDiff)
		if err != nil {
			b.Fatal(err)
		}
		fsys := patch.MapFS{"f": old}
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			cpu0 := testdata.CPUTime()
			for i := 0; i < b.N; i++ {
				res, err := repair.Repair(text, repair.Options{FS: fsys})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 && string(res.Results[0].Content) != new {
					b.Fatal("the result is not the new file")
				}
			}
			testdata.ReportPerLine(b, n, cpu0)
		})
	}
}

// repeatedPair is a file of n identical lines and the same file with every
// fourth line changed, with a diff between them as git writes it at one
// line of context (a hunk per change), and that diff made looser: its hunk
// counts wrong ("recount", which only the pipeline reads, with the line
// numbers as hints) or its headers bare ("@@ @@": every hunk fits every
// place, and none can be placed).
func repeatedPair(n int) (old, new string, diffs map[string]string) {
	var o, w, git, recount, bare strings.Builder
	for _, b := range []*strings.Builder{&git, &recount, &bare} {
		b.WriteString("--- a/f\n+++ b/f\n")
	}
	const same = "\tx = x + 1\n"
	for i := 0; i < n; i++ {
		o.WriteString(same)
		if i%4 != 2 || i+1 >= n {
			w.WriteString(same)
			continue
		}
		changed := fmt.Sprintf("\tx = x + %d\n", i)
		w.WriteString(changed)
		body := " " + same + "-" + same + "+" + changed + " " + same
		fmt.Fprintf(&git, "@@ -%d,3 +%d,3 @@\n%s", i, i, body)
		fmt.Fprintf(&recount, "@@ -%d,4 +%d,4 @@\n%s", i, i, body)
		fmt.Fprintf(&bare, "@@ @@\n%s", body)
	}
	return o.String(), w.String(), map[string]string{"git": git.String(), "recount": recount.String(), "bare": bare.String()}
}

// BenchmarkRepairRepeated: the worst case for placing hunks, a file whose
// lines are all alike, where every hunk fits every place. The cost should
// grow about linearly with the file (hunks grow with it).
func BenchmarkRepairRepeated(b *testing.B) {
	for _, kind := range []string{"git", "recount", "bare"} {
		for _, n := range []int{1000, 2000, 4000, 8000, 16000} {
			old, new, diffs := repeatedPair(n)
			fsys := patch.MapFS{"f": old}
			b.Run(fmt.Sprintf("%s/lines=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					res, err := repair.Repair(diffs[kind], repair.Options{FS: fsys})
					switch {
					case kind == "bare" && err == nil:
						b.Fatal("bare headers applied where every hunk fits everywhere")
					case kind != "bare" && err != nil:
						b.Fatal(err)
					case kind != "bare" && string(res.Results[0].Content) != new:
						b.Fatal("the result is not the new file")
					}
				}
			})
		}
	}
}

// BenchmarkRepairManyHunks repairs and applies a git diff of n hunks to
// its file; b.N counts applies. The cost per hunk should stay flat.
func BenchmarkRepairManyHunks(b *testing.B) {
	for _, n := range []int{1000, 20000, 100000} {
		b.Run(fmt.Sprintf("hunks=%d", n), func(b *testing.B) {
			old, new, diff := testdata.ManyHunks(n)
			fsys := patch.MapFS{"f": old}
			b.ResetTimer()
			cpu0 := testdata.CPUTime()
			for i := 0; i < b.N; i++ {
				res, err := repair.Repair(diff, repair.Options{FS: fsys})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 && string(res.Results[0].Content) != new {
					b.Fatal("the result is not the new file")
				}
			}
			per := float64(b.N * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/hunk")
			b.ReportMetric(float64((testdata.CPUTime()-cpu0).Nanoseconds())/per, "cpu-ns/hunk")
		})
	}
}

// BenchmarkApplyReaderManyHunks applies a git diff of n hunks to its file
// in a directory as `patchbench apply FILE` does (ApplyReader: the fast
// path, the journal and the atomic write); b.N counts applies.
func BenchmarkApplyReaderManyHunks(b *testing.B) {
	for _, n := range []int{1000, 20000, 100000} {
		b.Run(fmt.Sprintf("hunks=%d", n), func(b *testing.B) {
			old, new, diff := testdata.ManyHunks(n)
			dir := b.TempDir()
			f := filepath.Join(dir, "f")
			root, err := patch.OpenRoot(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer root.Close()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := os.WriteFile(f, []byte(old), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				cpu0 := testdata.CPUTime()
				rep, err := repair.ApplyReader(root, strings.NewReader(diff), int64(len(diff)), repair.ApplyOptions{Name: "p.diff", Strip: 1, Brief: true})
				cpu += testdata.CPUTime() - cpu0
				if err != nil || rep.Files[0].Hunks != nil {
					b.Fatalf("%v, or not the fast path", err)
				}
				if got, _ := os.ReadFile(f); i == 0 && string(got) != new {
					b.Fatal("the result is not the new file")
				}
			}
			per := float64(b.N * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/hunk")
			b.ReportMetric(float64(cpu.Nanoseconds())/per, "cpu-ns/hunk")
		})
	}
}
