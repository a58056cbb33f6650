package runner

import (
	"fmt"
	"path/filepath"

	"github.com/patchbench/patchbench/report/html"
)

// Benchmark is what a benchmark registers with the commands that read its
// runs after the fact: merge, report and the HTML page. Each benchmark
// package exports its value and the command line lists them; nothing
// else knows a benchmark by name.
type Benchmark struct {
	// Name is the benchmark's name, the "benchmark" field of its run.json.
	Name string
	// ResultsFile is the name of its runs' results file.
	ResultsFile string
	// Row is a value of its results row type: the fields each row holds
	// beside the runner's (key, id, failed, error, elapsed_ms).
	Row Result
	// Is recognises its run.json; nil means a "benchmark" field equal to
	// Name.
	Is func(info map[string]any) bool
	// MergeIgnore are the run.json fields that may differ between the
	// shards of one run besides "shard" and "started" (see
	// MergeOptions.Ignore).
	MergeIgnore []string
	// WriteReport writes the reports of the run directory dir from its
	// results file and info (its run.json), as the run does at its end:
	// merge calls it on the merged run, which will lie in out (absolute).
	// It may edit info, which is then written as run.json.
	WriteReport func(dir, out string, info map[string]any) error
	// Page is how the HTML page shows its rows: the case table, the
	// status words, the charts and each case's edit (the page knows no
	// benchmark by name).
	Page *html.Kind
}

// Recognises reports whether info, a run.json, is a run of b.
func (b *Benchmark) Recognises(info map[string]any) bool {
	if b.Is != nil {
		return b.Is(info)
	}
	return info["benchmark"] == b.Name
}

// FindBenchmark returns the benchmark of benchmarks that recognises info,
// a run.json, or nil.
func FindBenchmark(benchmarks []*Benchmark, info map[string]any) *Benchmark {
	for _, b := range benchmarks {
		if b.Recognises(info) {
			return b
		}
	}
	return nil
}

// MergeRun merges the shards of a run of b in dirs into out (see
// [Merge]) and writes the merged run's reports with b.WriteReport. With
// withCache the shards' response caches are merged too.
func MergeRun(b *Benchmark, dirs []string, out string, withCache bool) (MergeSummary, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return MergeSummary{}, fmt.Errorf("merge: %w", err)
	}
	o := MergeOptions{Dirs: dirs, Out: out, ResultsFile: b.ResultsFile, Ignore: b.MergeIgnore}
	if withCache {
		o.Cache = CacheFile
	}
	if b.WriteReport != nil {
		o.Finish = func(dir string, info map[string]any) error { return b.WriteReport(dir, abs, info) }
	}
	return Merge(o)
}
