package benchcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/internal/cli"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// apeRunRecord is an APE run's run.json: what it was made from and asked
// to do, so that ape judge --from finds its dataset and n without being
// told again, and merge knows the shards of one run. (Runs made before it
// was run.json have it as ape.json.)
type apeRunRecord struct {
	Benchmark string `json:"benchmark"` // "ape"
	Dataset   string `json:"dataset"`
	// DatasetSHA256 is the hash of the dataset's bytes (runner.HashFiles).
	DatasetSHA256 string  `json:"dataset_sha256,omitempty"`
	Repo          string  `json:"repo"`
	Model         string  `json:"model,omitempty"`
	Judge         string  `json:"judge,omitempty"`
	N             int     `json:"n"`
	JudgeN        int     `json:"judge_n,omitempty"`
	K             int     `json:"k,omitempty"`
	KRatio        float64 `json:"k_ratio,omitempty"`
	Format        string  `json:"format"`
	Limit         int     `json:"limit,omitempty"`
	Shuffle       bool    `json:"shuffle,omitempty"`
	ShuffleSeed   int64   `json:"shuffle_seed,omitempty"`
	Shard         string  `json:"shard,omitempty"`
}

// apeOldRunFile is where runs before run.json recorded themselves.
const apeOldRunFile = "ape.json"

// write records the run in dir; a resume must be of the same run (the
// dataset compared by its bytes, not its path).
func (r apeRunRecord) write(dir string, resume bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.Failed(err)
	}
	h, err := runner.HashFiles(r.Dataset)
	if err != nil {
		return cli.Usage(err)
	}
	r.DatasetSHA256 = h
	if err := runner.RecordRun(dir, r, resume, "dataset", "repo"); err != nil {
		return exitFor(err)
	}
	return nil
}

// readApeRunRecord reads the record of the run in dir.
func readApeRunRecord(dir string) (apeRunRecord, string, error) {
	var rec apeRunRecord
	path := filepath.Join(dir, runner.RunFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(dir, apeOldRunFile)
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return rec, path, err
	}
	return rec, path, json.Unmarshal(data, &rec)
}

func newApeCommand(sio cli.Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ape",
		Short: "APE-Bench I style evaluation of instructed edits: build, run, judge",
		Long: `APE-Bench I evaluates edits of one file made from a natural-language
instruction: n candidates per task, applied with the tolerant patch engine,
compiled in the environment of the task's commit, graded by a judge model by
majority of votes. The figures are compile_pass@K, judge_pass@K and the
semantic drop between them.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Usage(errors.New("ape: give a subcommand: build, run or judge"))
		},
	}
	cmd.AddCommand(newApeBuildCommand(sio), newApeRunCommand(sio), newApeJudgeCommand(sio))
	return cmd
}

func newApeBuildCommand(sio cli.Stdio) *cobra.Command {
	var repo, commits, out, instruct string
	var model modelFlags
	cmd := &cobra.Command{
		Use:   "build --repo DIR --commits RANGE --out FILE [--instruct-model MODEL]",
		Short: "Make tasks from a git history: one per commit and modified file",
		Long: `Make one task per commit of RANGE (git rev-list syntax) and per file the
commit modifies, in the columns of the published APE-Bench I data: the file
before the commit, the gold diff, the instruction, category and difficulty.

The instruction is the commit message; with --instruct-model MODEL, a model
writes it from the gold diff (and the message), as APE-Bench's instructions
were written: openai/..., anthropic/..., replay/FILE (rows {id, response}),
or reference (the commit message). The model flags (--base-url, --cache,
rate limits) apply to it; its cache is FILE's directory's cache.db. A task
whose instruction request fails keeps its commit message and is named on
stderr (exit 1).

Exit status: 0 tasks written; 1 some instructions could not be written; 2
usage or input error.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if repo == "" || out == "" {
				return cli.Usage(errors.New("ape build: --repo and --out are required"))
			}
			var m *runner.Model
			if instruct != "" {
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					return cli.Failed(err)
				}
				model.model = instruct
				mopts, _, err := model.options("ape build", filepath.Dir(out))
				if err != nil {
					return cli.Usage(err)
				}
				if m, err = ape.OpenModel(cmd.Context(), mopts, false); err != nil {
					return cli.Usage(err)
				}
				defer m.Close()
			}
			tasks, err := ape.Build(cmd.Context(), repo, commits)
			if err != nil {
				return cli.Usage(err)
			}
			var failed []error
			if m != nil {
				failed = ape.Instruct(cmd.Context(), tasks, m, 8)
				for _, e := range failed {
					fmt.Fprintf(sio.Err, "%s: warning: %v\n", cli.ProgramName, e)
				}
			}
			if err := ape.WriteTasks(out, tasks); err != nil {
				return cli.Failed(err)
			}
			fmt.Fprintf(sio.Out, "%d tasks in %s\n", len(tasks), out)
			if len(failed) > 0 {
				return cli.Failed(fmt.Errorf("%d of %d instructions could not be written; those tasks keep their commit message", len(failed), len(tasks)))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&repo, "repo", "", "git repository `DIR`")
	f.StringVar(&commits, "commits", "HEAD", "commit `RANGE` (git rev-list syntax)")
	f.StringVar(&out, "out", "", "tasks `FILE` (JSONL)")
	f.StringVar(&instruct, "instruct-model", "", "write the instructions with `MODEL` from the gold diffs")
	model.register(f, "")
	f.MarkHidden("model") // --instruct-model names it
	return cmd
}

// apeCheckFlags are the compile stage's flags, shared by run.
type apeCheckFlags struct {
	repo, envStore, checkCmd string
	checkTimeout             time.Duration
}

func (c *apeCheckFlags) options() (ape.CheckOptions, error) {
	o := ape.CheckOptions{Repo: c.repo, Command: c.checkCmd, Timeout: c.checkTimeout}
	if c.envStore != "" {
		s, err := envstore.Open(c.envStore)
		if err != nil {
			return o, err
		}
		o.Store = s
	}
	if c.repo == "" {
		return o, errors.New("--repo is required (the repository of the tasks' commits)")
	}
	return o, nil
}

type apeRunOptions struct {
	dataset, format, judgeModel string
	n, judgeN, k                int
	kRatio                      float64
	check                       apeCheckFlags

	run   runFlags
	model modelFlags
}

func newApeRunCommand(sio cli.Stdio) *cobra.Command {
	var o apeRunOptions
	cmd := &cobra.Command{
		Use:   "run --dataset FILE --repo DIR --model MODEL --out DIR [flags]",
		Short: "Generate, apply, compile and judge n candidates per task",
		Long: `For every task of the dataset ask the model --n times for an edit in
--format, apply it to the file with the tolerant patch engine, check the
patched file in the environment of the task's commit (restored from
--env-store, else a git archive of --repo) inside the sandbox, and have
--judge-model grade the compiled candidates --judge-n times at temperature 0.
One row per candidate goes to DIR/results.jsonl as it finishes, with its
response, patch, compile result and votes; DIR/report.json and DIR/report.md
give compile_pass@K, judge_pass@K and semantic_drop.

Checks: go build and go vet of the package for .go files, byte-compile and
an undefined-name check for .py files, --check-cmd TEMPLATE for anything
else ({file} the file, {dir} its directory, run at the tree's root; for
Lean: --check-cmd 'lake env lean {file}').

Models: openai/NAME, anthropic/NAME, replay/FILE (rows {id, sample,
response}; for the judge {id, sample, vote, response}) and reference (the
gold patch; as judge, Excellent exactly when the file equals the gold
result).

Exit status: 0 every candidate evaluated; 1 some failed or the run was
interrupted (continue with --resume); 2 usage or input error.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApeRun(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "tasks `FILE` (JSONL in the APE-Bench I columns; see ape build)")
	f.StringVar(&o.check.repo, "repo", "", "git repository `DIR` of the tasks' commits")
	f.StringVar(&o.check.envStore, "env-store", "", "environment store `DIR` (patchbench env) to restore each commit's environment from")
	f.StringVar(&o.check.checkCmd, "check-cmd", "", "check command `TEMPLATE` run with sh -c at the tree's root; {file}, {dir}")
	f.DurationVar(&o.check.checkTimeout, "check-timeout", 2*time.Minute, "bound on one check")
	f.StringVar(&o.format, "format", "udiff", "edit format asked for: udiff, udiff-h, udiff-l, search-replace or v4a")
	f.IntVar(&o.n, "n", 20, "candidates per task")
	f.StringVar(&o.judgeModel, "judge-model", "reference", "judge `MODEL` (same forms as --model)")
	f.IntVar(&o.judgeN, "judge-n", 4, "judge votes per compiled candidate")
	f.IntVar(&o.k, "k", 0, "k of pass@k (default: --k-ratio of n)")
	f.Float64Var(&o.kRatio, "k-ratio", 0.8, "k as a fraction of n when --k is not given")
	o.model.register(f, "openai/NAME, anthropic/NAME, replay/FILE or reference")
	o.run.register(f, ape.ResultsFile)
	return cmd
}

// judgeOptions derives the judge's model options from the candidate
// model's (same provider settings and limits) for model name judge; its
// default cache is a file of its own so the two never share a connection.
func judgeOptions(m runner.ModelOptions, judge, out string, explicitCache bool) (runner.ModelOptions, error) {
	if err := checkModelName(judge); err != nil {
		return m, fmt.Errorf("--judge-model: %w", err)
	}
	m.Model = judge
	if !explicitCache && m.Cache != runner.CacheOff && out != "" {
		m.Cache = filepath.Join(out, "judge-"+runner.CacheFile)
	}
	return m, nil
}

func runApeRun(ctx context.Context, o apeRunOptions, sio cli.Stdio) error {
	if o.dataset == "" {
		return cli.Usage(errors.New("ape run: --dataset is required"))
	}
	if o.n < 1 || o.judgeN < 1 || o.k < 0 || o.k > o.n || o.kRatio <= 0 || o.kRatio > 1 {
		return cli.Usage(errors.New("ape run: want --n >= 1, --judge-n >= 1, 0 <= --k <= --n, 0 < --k-ratio <= 1"))
	}
	format, err := patch.ParseFormat(o.format)
	if err != nil {
		return cli.Usage(fmt.Errorf("--format: %w", err))
	}
	mopts, _, err := o.model.options("ape run", o.run.out)
	if err != nil {
		return cli.Usage(err)
	}
	jopts, err := judgeOptions(mopts, o.judgeModel, o.run.out, o.model.given("cache"))
	if err != nil {
		return cli.Usage(err)
	}
	ropts, err := o.run.options("ape run", ape.ResultsFile, sio)
	if err != nil {
		return cli.Usage(err)
	}
	copts, err := o.check.options()
	if err != nil {
		return cli.Usage(fmt.Errorf("ape run: %w", err))
	}
	// A bad task is left out, named; the others run.
	tasks, bad, err := ape.ReadTasksLenient(o.dataset)
	if err != nil {
		return cli.Usage(err)
	}
	for _, b := range bad {
		fmt.Fprintf(sio.Err, "%s: warning: left out: %v\n", cli.ProgramName, b)
	}
	if len(tasks) == 0 {
		return cli.Usage(fmt.Errorf("ape run: %s: no usable task", o.dataset))
	}
	dir, err := o.run.openDir("ape run", ape.ResultsFile, &ropts)
	if err != nil {
		return err
	}
	defer dir.Release()
	if o.run.out != "" {
		ropts.Out = filepath.Join(o.run.out, ape.ResultsFile)
		if o.run.force {
			_ = os.Remove(ropts.Out)
		}
	}
	if !o.run.dryRun {
		abs, _ := filepath.Abs(o.dataset)
		repo, _ := filepath.Abs(o.check.repo)
		rec := apeRunRecord{Benchmark: "ape", Dataset: abs, Repo: repo, Model: mopts.Model, Judge: jopts.Model,
			N: o.n, JudgeN: o.judgeN, K: o.k, KRatio: o.kRatio, Format: string(format),
			Limit: ropts.Limit, Shuffle: ropts.Shuffle, Shard: ropts.Shard.String()}
		if ropts.Shuffle {
			rec.ShuffleSeed = ropts.Seed
		}
		if err := rec.write(o.run.out, o.run.resume); err != nil {
			return err
		}
	}
	sum, rep, err := ape.Run(ctx, tasks, ape.RunOptions{
		Runner: ropts, Model: mopts, Judge: jopts, N: o.n, JudgeN: o.judgeN, Check: copts,
		Format: format, K: o.k, KRatio: o.kRatio,
	})
	return apeExit("ape run", o.run.out, o.run.dryRun, sum, rep, err, sio)
}

// apeExit prints the report and summary of a run or re-judging and maps
// its outcome to the exit status.
func apeExit(cmd, out string, dryRun bool, sum runner.Summary, rep *ape.Report, err error, sio cli.Stdio) error {
	if dryRun {
		if err != nil {
			return cli.Usage(err)
		}
		fmt.Fprintf(sio.Err, "%s: dry run: %d candidates selected, %d already done, %d to run\n",
			cli.ProgramName, sum.Selected, sum.Skipped, len(sum.Pending))
		return nil
	}
	if rep != nil {
		io.WriteString(sio.Out, rep.Markdown())
		fmt.Fprintf(sio.Err, "%s: %s: %d candidates run (%d failed, %d skipped as done); report in %s\n",
			cli.ProgramName, cmd, sum.Done, sum.Failed, sum.Skipped, filepath.Join(out, "report.md"))
	}
	switch {
	case err != nil && rep == nil && sum.Done == 0 && ctx0(err):
		return cli.Usage(err)
	case err != nil:
		return cli.Failed(fmt.Errorf("%w; continue with --resume", err))
	case rep != nil && rep.Failed > 0:
		return cli.Failed(fmt.Errorf("%d of %d candidates failed; run again with --resume --retry-failed", rep.Failed, rep.Candidates))
	}
	return nil
}

// ctx0 reports whether err is an input error rather than an interruption.
func ctx0(err error) bool {
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, runner.ErrFailFast)
}

type apeJudgeOptions struct {
	from, dataset, judgeModel string
	judgeN, k                 int
	kRatio                    float64

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
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApeJudge(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "run `DIR` to judge again")
	f.StringVar(&o.dataset, "dataset", "", "tasks `FILE` (default: the one DIR/ape.json names)")
	f.StringVar(&o.judgeModel, "judge-model", "", "judge `MODEL`")
	f.IntVar(&o.judgeN, "judge-n", 4, "judge votes per compiled candidate")
	f.IntVar(&o.k, "k", 0, "k of pass@k (default: that of the run, else --k-ratio of n)")
	f.Float64Var(&o.kRatio, "k-ratio", 0, "k as a fraction of n (default: that of the run)")
	o.model.register(f, "unused by judge: give --judge-model")
	f.Lookup("model").Hidden = true
	o.run.register(f, ape.ResultsFile)
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
	if o.dataset == "" {
		o.dataset = rec.Dataset
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
	ropts, err := o.run.options("ape judge", ape.ResultsFile, sio)
	if err != nil {
		return cli.Usage(err)
	}
	tasks, err := ape.ReadTasks(o.dataset)
	if err != nil {
		return cli.Usage(err)
	}
	dir, err := o.run.openDir("ape judge", ape.ResultsFile, &ropts)
	if err != nil {
		return err
	}
	defer dir.Release()
	ropts.Out = filepath.Join(o.run.out, ape.ResultsFile)
	if o.run.force {
		_ = os.Remove(ropts.Out)
	}
	k, ratio := rec.K, rec.KRatio
	if o.k != 0 || o.kRatio != 0 {
		k, ratio = o.k, o.kRatio
	}
	if !o.run.dryRun {
		rec.Benchmark, rec.K, rec.KRatio = "ape", k, ratio
		rec.Judge, rec.JudgeN, rec.Shard = mopts.Model, o.judgeN, ropts.Shard.String()
		rec.Limit, rec.Shuffle, rec.ShuffleSeed = ropts.Limit, ropts.Shuffle, 0
		if ropts.Shuffle {
			rec.ShuffleSeed = ropts.Seed
		}
		if err := rec.write(o.run.out, o.run.resume); err != nil {
			return err
		}
	}
	sum, rep, err := ape.Rejudge(ctx, tasks, ape.RejudgeOptions{
		From: o.from, Runner: ropts, Judge: mopts, JudgeN: o.judgeN, N: rec.N, K: k, KRatio: ratio,
	})
	return apeExit("ape judge", o.run.out, o.run.dryRun, sum, rep, err, sio)
}
