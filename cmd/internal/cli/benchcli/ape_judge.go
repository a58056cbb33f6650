package benchcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/runner"
)

type apeJudgeOptions struct {
	from, dataset, judgeModel string
	config                    string
	judgeN, k, judgeThinking  int
	kRatio, judgeTemperature  float64

	run   runFlags
	model modelFlags
}

func newApeJudgeCommand(sio cli.Stdio) *cobra.Command {
	var o apeJudgeOptions
	cmd := &cobra.Command{
		Use:   "judge --from DIR --judge-model MODEL --out DIR2 [flags]",
		Short: "Judge a run's compiled candidates again with another judge",
		Long: `Judge again every compiled candidate of the run in DIR with --judge-model,
from the patches DIR/results.jsonl holds: nothing is generated or compiled
again. Rows that did not compile are copied. The new results, report.json and
report.md go to DIR2 (default DIR/judge-MODEL).

Exit status: 0 judged; 1 some rows failed or the run was interrupted; 2 usage
or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.config != "" {
				c, err := readApeConfig(o.config)
				if err == nil {
					err = c.applyJudge(configSetter{cmd.Flags(), o.config}, true)
				}
				if err != nil {
					return cli.Usage(fmt.Errorf("ape judge: %w", err))
				}
			}
			return runApeJudge(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "run `DIR` to judge again")
	f.StringVar(&o.dataset, "dataset", "", "tasks `FILE` (default: the one DIR/ape.json names)")
	f.StringVar(&o.judgeModel, "judge-model", "", "judge `MODEL`")
	f.IntVar(&o.judgeN, "judge-n", 4, "judge votes per compiled candidate")
	f.Float64Var(&o.judgeTemperature, "judge-temperature", 0, "the judge's sampling temperature")
	f.IntVar(&o.judgeThinking, "judge-thinking-budget", 0, "the judge's extended thinking in `TOKENS` (anthropic/ judges; at least 1024; votes at temperature 1, as the API requires)")
	f.IntVar(&o.k, "k", 0, "k of pass@k (default: that of the run, else --k-ratio of n)")
	f.Float64Var(&o.kRatio, "k-ratio", 0, "k as a fraction of n (default: that of the run)")
	o.model.register(f, "unused by judge: give --judge-model")
	f.Lookup("model").Hidden = true
	o.run.register(f, ape.ResultsFile)
	f.StringVar(&o.config, "config", "", "APE-Bench config `FILE` (YAML): its judgement model_name, temperature, n_responses and max_workers, where no flag gives them")
	acceptSpellings(f, map[string]string{"n_responses": "judge-n", "max_workers": "workers"})
	return cmd
}

func runApeJudge(ctx context.Context, o apeJudgeOptions, sio cli.Stdio) error {
	if o.from == "" || o.judgeModel == "" {
		return cli.Usage(errors.New("ape judge: --from and --judge-model are required"))
	}
	rec, recPath, err := readApeRunRecord(o.from)
	if errors.Is(err, os.ErrNotExist) {
		return cli.Usage(fmt.Errorf("ape judge: %w", err))
	}
	if err != nil {
		return cli.Usage(fmt.Errorf("ape judge: %s: %w", recPath, err))
	}
	// A run still being written has not all its candidates yet.
	if err := runner.CheckIdle(o.from, "judge it when its run has ended"); err != nil {
		return cli.Usage(fmt.Errorf("ape judge: --from %w", err))
	}
	if o.dataset == "" {
		o.dataset = rec.Dataset
	}
	// pass@k is defined for k ≤ n only.
	if o.k < 0 || o.k > rec.N || o.kRatio < 0 || o.kRatio > 1 {
		return cli.Usage(fmt.Errorf("ape judge: --k %d must be between 1 and the run's n %d, --k-ratio in (0, 1]", o.k, rec.N))
	}
	if o.run.out == "" {
		o.run.out = filepath.Join(o.from, "judge-"+strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(o.judgeModel))
	}
	if filepath.Clean(o.run.out) == filepath.Clean(o.from) {
		return cli.Usage(errors.New("ape judge: --out must differ from --from"))
	}
	o.model.model = o.judgeModel
	mopts, _, err := o.model.options("ape judge", o.run.out)
	if err != nil {
		return cli.Usage(err)
	}
	if o.judgeTemperature, err = judgeThinking("ape judge", o.judgeModel, o.judgeThinking, o.judgeTemperature, o.model.given("judge-temperature")); err != nil {
		return cli.Usage(err)
	}
	ropts, sess, err := o.run.options("ape judge", ape.ResultsFile, sio)
	if err != nil {
		return cli.Usage(err)
	}
	tasks, err := ape.ReadTasks(o.dataset)
	if err != nil {
		return cli.Usage(err)
	}
	if err := openDir(sess, &ropts); err != nil {
		return err
	}
	defer sess.Close()
	k, ratio := rec.K, rec.KRatio
	if o.k != 0 || o.kRatio != 0 {
		k, ratio = o.k, o.kRatio
	}
	if !o.run.dryRun {
		rec.Benchmark, rec.K, rec.KRatio = "ape", k, ratio
		rec.Judge, rec.JudgeN, rec.Shard = mopts.Model, o.judgeN, ropts.Shard.String()
		rec.setJudgeTemperature(o.judgeTemperature)
		rec.JudgeThinkingBudget = o.judgeThinking
		rec.Limit, rec.Shuffle, rec.ShuffleSeed = ropts.Limit, ropts.Shuffle, 0
		if ropts.Shuffle {
			rec.ShuffleSeed = ropts.Seed
		}
		if err := rec.record(sess); err != nil {
			return err
		}
	}
	sum, rep, err := ape.Rejudge(ctx, tasks, ape.RejudgeOptions{
		From: o.from, Runner: ropts, Judge: mopts, JudgeN: o.judgeN, JudgeTemperature: &o.judgeTemperature, JudgeThinkingBudget: o.judgeThinking,
		N: rec.N, K: k, KRatio: ratio,
	})
	return apeExit(ctx, "ape judge", o.run.out, o.run.dryRun, sum, rep, err, sio)
}
