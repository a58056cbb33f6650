package benchcli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/bench/diffxyz"
	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/runner"
)

// benchmarks are the benchmarks whose runs merge and report --html read;
// a new benchmark adds its value here.
func benchmarks() []*runner.Benchmark {
	return []*runner.Benchmark{diffxyz.Benchmark(), loc.Benchmark(), ape.Benchmark(), swe.Benchmark()}
}

func newMergeCommand(sio cli.Stdio) *cobra.Command {
	var out string
	var withCache bool
	cmd := &cobra.Command{
		Use:   "merge --out DIR RUN_DIR...",
		Short: cli.FullShort("merge"),
		Long: `Merge the run directories of the shards of one run (each run with
--shard i/n or --shard env/n) into DIR as if the run had not been split:
results.jsonl with one row per case, run.json without the shard, and the
benchmark's reports, which are the ones the unsharded run writes.

merge refuses, writing nothing: run directories whose run.json differ in
anything but the shard (another benchmark, dataset, model or option); a
missing shard or one given twice (it names it); a row in a shard it does not
belong to, as overlapping shards have (it names the case). DIR must be
missing or empty.

With --cache, the shards' response caches (RUN_DIR/cache.db) are merged
into DIR/cache.db, so that the whole run done again (--resume elsewhere,
another report) asks the model nothing.

Benchmarks: diffxyz run, swe eval, loc run, ape run and ape judge.

Exit status: 0 merged; 2 usage or input error.`,
		Args: ArgsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(out, withCache, args, sio)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "merged run `DIR` (missing or empty)")
	cmd.Flags().BoolVar(&withCache, "cache", false, "merge the shards' response caches (RUN_DIR/cache.db) into DIR/cache.db too")
	return cmd
}

func runMerge(out string, withCache bool, dirs []string, sio cli.Stdio) error {
	if out == "" {
		return cli.Usage(errors.New("merge: --out is required"))
	}
	info, err := runner.ReadRunInfo(dirs[0])
	if err != nil {
		return cli.Usage(err)
	}
	b := runner.FindBenchmark(benchmarks(), info)
	if b == nil {
		return cli.Usage(fmt.Errorf("merge: %s: not a run of a benchmark merge knows", filepath.Join(dirs[0], runner.RunFile)))
	}
	sum, err := runner.MergeRun(b, dirs, out, withCache)
	if err != nil {
		return cli.Usage(err)
	}
	fmt.Fprintf(sio.Err, "%s: merged %d shards of a %s run: %d rows in %s\n",
		cli.ProgramName, sum.Shards, b.Name, sum.Rows, filepath.Join(out, b.ResultsFile))
	if withCache {
		fmt.Fprintf(sio.Err, "%s: merged %d response caches: %d responses in %s (%d keys answered differently by two shards; the first answer kept)\n",
			cli.ProgramName, sum.Caches, sum.CachedResponses, filepath.Join(out, runner.CacheFile), sum.CacheDiffering)
	}
	return nil
}
