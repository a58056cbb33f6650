package benchcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/llm"
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
	EnvCommit     string  `json:"env_commit,omitempty"`
	Limit         int     `json:"limit,omitempty"`
	Shuffle       bool    `json:"shuffle,omitempty"`
	ShuffleSeed   int64   `json:"shuffle_seed,omitempty"`
	Shard         string  `json:"shard,omitempty"`
	// What the candidates and votes were asked with, each left out at its
	// default (so a run recorded before these fields resumes with the
	// defaults): the candidates' temperature (1), answer bound and seed,
	// the judge's temperature (0), and the check command (the built-in
	// check). A resume or merge with other values is refused.
	Temperature      *float64 `json:"temperature,omitempty"`
	MaxTokens        int      `json:"max_tokens,omitempty"`
	ModelSeed        *int64   `json:"model_seed,omitempty"`
	JudgeTemperature *float64 `json:"judge_temperature,omitempty"`
	CheckCmd         string   `json:"check_cmd,omitempty"`
	// JudgeThinkingBudget is the judge's extended thinking in tokens (0:
	// none); it changes the votes as the temperature does.
	JudgeThinkingBudget int `json:"judge_thinking_budget,omitempty"`
}

// setSampling records the candidates' sampling parameters s (a nil
// temperature is ape's default, 1).
func (r *apeRunRecord) setSampling(s sampling) {
	r.Temperature, r.MaxTokens, r.ModelSeed = nil, s.MaxTokens, s.Seed
	if s.Temperature != nil && *s.Temperature != 1 {
		t := *s.Temperature
		r.Temperature = &t
	}
}

// setJudgeTemperature records the judge's temperature t (0 by default).
func (r *apeRunRecord) setJudgeTemperature(t float64) {
	r.JudgeTemperature = nil
	if t != 0 {
		r.JudgeTemperature = &t
	}
}

// minThinkingBudget is the smallest thinking budget the Messages API takes.
const minThinkingBudget = 1024

// judgeThinking checks --judge-thinking-budget against the judge and its
// temperature, and returns the temperature the votes are asked at: with
// thinking, the only one the API takes (1).
func judgeThinking(cmd, judge string, budget int, temp float64, tempGiven bool) (float64, error) {
	if budget == 0 {
		return temp, nil
	}
	if p, _ := llm.SplitModel(judge); p != llm.ProviderAnthropic {
		return 0, fmt.Errorf("%s: --judge-thinking-budget is Anthropic's extended thinking: give an anthropic/ --judge-model, not %s", cmd, judge)
	}
	if budget < minThinkingBudget {
		return 0, fmt.Errorf("%s: --judge-thinking-budget %d: the API's minimum is %d tokens", cmd, budget, minThinkingBudget)
	}
	if tempGiven && temp != 1 {
		return 0, fmt.Errorf("%s: --judge-temperature %g: with --judge-thinking-budget the API takes only temperature 1", cmd, temp)
	}
	return 1, nil
}

// apeOldRunFile is where runs before run.json recorded themselves.
const apeOldRunFile = "ape.json"

// record records the run in sess; a resume must be of the same run (the
// dataset compared by its bytes, not its path).
func (r apeRunRecord) record(sess *runner.Session) error {
	h, err := runner.HashFiles(r.Dataset)
	if err != nil {
		return cli.Usage(err)
	}
	r.DatasetSHA256 = h
	return recordRun(sess, r)
}

// recordRun records info as the run of sess (see runner.Session.Record);
// the dataset and repository of an APE run are compared by the dataset's
// bytes, not their paths.
func recordRun(sess *runner.Session, info any) error {
	sess.MayChange = []string{"dataset", "repo"}
	if err := sess.Record(info); err != nil {
		// Errors about the inputs are typed here (runner.ErrRunDir): any
		// other is the run's.
		return exit(context.Background(), runner.Ending{Err: err, Typed: true})
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
		Short: cli.FullShort("ape"),
		Long: `APE-Bench I evaluates edits of one file made from a natural-language
instruction: n candidates per task, applied with the tolerant patch engine,
compiled in the environment of the task's commit, graded by a judge by
APE-Bench's vote rule. The figures are compile_pass@K, judge_pass@K and the
semantic drop between them. ape check verifies whole-file code rows in their
commits' environments.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Usage(errors.New("ape: give a subcommand: build, run, judge or check"))
		},
	}
	cmd.AddCommand(newApeBuildCommand(sio), newApeRunCommand(sio), newApeJudgeCommand(sio), newApeCheckCommand(sio))
	return cmd
}

type apeRunOptions struct {
	dataset, format, judgeModel string
	config                      string
	n, judgeN, k, judgeThinking int
	kRatio, judgeTemperature    float64
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
--format (at --temperature, 1 by default; each candidate its own sample, so
the response cache holds n answers and a rerun asks nothing), apply it to the
file with the tolerant patch engine, check the patched file in the
environment of the task's commit_hash (--env-commit parent: of the commit
before it; restored from --env-store, else a git archive of --repo) inside
the sandbox, and have --judge-model grade the compiled candidates --judge-n
times at --judge-temperature (0). A candidate passes the judge by
APE-Bench's rule: over every grade of every vote, more of Good and Excellent
than of Poor and Unacceptable. One row per candidate goes to
DIR/results.jsonl as it finishes, with its response, patch, compile result
and votes; DIR/report.json, report.md and report.html give compile_pass@K,
judge_pass@K, semantic_drop (the percentage of compile_pass@K the judge
takes away) and compile_judge_gap (the difference). Candidates whose
environment could not be had, or whose task names a path outside the tree,
are named on stderr and in the report and left out of pass@k.

Checks: go build and go vet of the package for .go files, byte-compile and
an undefined-name check for .py files, --check-cmd TEMPLATE for anything
else ({file} the file, {dir} its directory, run at the tree's root; for
Lean: --check-cmd 'lake env lean {file}').

Models: openai/NAME, anthropic/NAME, replay/FILE (rows {id, sample,
response}; for the judge {id, sample, vote, response}) and reference (the
gold patch; as judge, an exact match with the gold file, which the reports
name as such: it is no model).

APE-Bench's spellings are accepted: --n_responses (--n), --max_workers
(--workers); --config FILE reads APE-Bench's config.yaml (flags win).

Exit status: 0 every candidate evaluated; 1 some failed or the run was
interrupted (continue with --resume); 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.config != "" {
				c, err := readApeConfig(o.config)
				if err == nil {
					err = c.applyRun(configSetter{cmd.Flags(), o.config}, o.model.model)
				}
				if err != nil {
					return cli.Usage(fmt.Errorf("ape run: %w", err))
				}
			}
			return runApeRun(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "tasks `FILE` (JSONL or Parquet in the APE-Bench I columns; see ape build)"+datasetFlagHelp)
	o.check.register(f, true)
	f.StringVar(&o.format, "format", "udiff", "edit format asked for: udiff, udiff-h, udiff-l, search-replace or v4a")
	f.IntVar(&o.n, "n", 20, "candidates per task")
	f.StringVar(&o.judgeModel, "judge-model", "", "judge `MODEL` (same forms as --model; reference: exact match with the gold file, the default only for --model reference)")
	f.Float64Var(&o.judgeTemperature, "judge-temperature", 0, "the judge's sampling temperature")
	f.IntVar(&o.judgeN, "judge-n", 4, "judge votes per compiled candidate")
	f.IntVar(&o.judgeThinking, "judge-thinking-budget", 0, "the judge's extended thinking in `TOKENS` (anthropic/ judges; at least 1024; votes at temperature 1, as the API requires)")
	f.IntVar(&o.k, "k", 0, "k of pass@k (default: --k-ratio of n)")
	f.Float64Var(&o.kRatio, "k-ratio", 0.8, "k as a fraction of n when --k is not given")
	o.model.register(f, "openai/NAME, anthropic/NAME, replay/FILE or reference")
	o.run.register(f, ape.ResultsFile)
	f.StringVar(&o.config, "config", "", "APE-Bench config `FILE` (YAML): its generation model, temperature, n_responses and max_workers, its judgement model_name, temperature and n_responses, and evaluation.k_ratio, where no flag gives them")
	acceptSpellings(f, map[string]string{"n_responses": "n", "max_workers": "workers"})
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
	mopts, samp, err := o.model.options("ape run", o.run.out)
	if err != nil {
		return cli.Usage(err)
	}
	if o.judgeModel == "" {
		// APE-Bench grades with a model; an exact match with the gold
		// file is no stand-in for it unless asked for.
		if mopts.Model != llm.ProviderReference {
			return cli.Usage(fmt.Errorf("ape run: --model %s needs --judge-model: APE-Bench grades candidates with a model judge "+
				"(its paper: Claude 3.7 Sonnet with thinking, 4 votes at temperature 0); give --judge-model MODEL, "+
				"or --judge-model reference for an exact match with the gold file", mopts.Model))
		}
		o.judgeModel = llm.ProviderReference
	}
	jopts, err := judgeOptions(mopts, o.judgeModel, o.run.out, o.model.given("cache"))
	if err != nil {
		return cli.Usage(err)
	}
	if o.judgeTemperature, err = judgeThinking("ape run", o.judgeModel, o.judgeThinking, o.judgeTemperature, o.model.given("judge-temperature")); err != nil {
		return cli.Usage(err)
	}
	ropts, sess, err := o.run.options("ape run", ape.ResultsFile, sio)
	if err != nil {
		return cli.Usage(err)
	}
	copts, err := o.check.options(ctx)
	if err != nil {
		return cli.Usage(fmt.Errorf("ape run: %w", err))
	}
	if o.dataset, err = datasetPath(ctx, o.dataset, sio); err != nil {
		return err
	}
	// A bad task is left out, named; the others run.
	tasks, bad, err := ape.ReadTasksLenient(o.dataset)
	if err != nil {
		return cli.Usage(err)
	}
	if err := usable(sio, "ape run", o.dataset, "task", len(tasks), bad); err != nil {
		return err
	}
	if err := openDir(sess, &ropts); err != nil {
		return err
	}
	defer sess.Close()
	if !o.run.dryRun {
		abs, _ := filepath.Abs(o.dataset)
		repo, _ := filepath.Abs(o.check.repo)
		rec := apeRunRecord{Benchmark: "ape", Dataset: abs, Repo: repo, Model: mopts.Model, Judge: jopts.Model,
			N: o.n, JudgeN: o.judgeN, K: o.k, KRatio: o.kRatio, Format: string(format), EnvCommit: copts.EnvCommit,
			Limit: ropts.Limit, Shuffle: ropts.Shuffle, Shard: ropts.Shard.String(), CheckCmd: copts.Command}
		if ropts.Shuffle {
			rec.ShuffleSeed = ropts.Seed
		}
		rec.setSampling(samp)
		rec.setJudgeTemperature(o.judgeTemperature)
		rec.JudgeThinkingBudget = o.judgeThinking
		if err := rec.record(sess); err != nil {
			return err
		}
	}
	sum, rep, err := ape.Run(ctx, tasks, ape.RunOptions{
		Runner: ropts, Model: mopts, Judge: jopts, N: o.n, JudgeN: o.judgeN, Check: copts,
		Format: format, K: o.k, KRatio: o.kRatio, JudgeTemperature: &o.judgeTemperature, JudgeThinkingBudget: o.judgeThinking,
		Sampling: ape.Sampling{Temperature: samp.Temperature, MaxTokens: samp.MaxTokens, Seed: samp.Seed},
	})
	return apeExit(ctx, "ape run", o.run.out, o.run.dryRun, sum, rep, err, sio)
}

// apeExit prints the report and summary of a run or re-judging and maps
// its outcome to the exit status.
func apeExit(ctx context.Context, cmd, out string, dryRun bool, sum runner.Summary, rep *ape.Report, err error, sio cli.Stdio) error {
	if dryRun {
		if err != nil {
			return exit(ctx, runner.Ending{Err: err, DryRun: true})
		}
		fmt.Fprintf(sio.Err, "%s: dry run: %d candidates selected, %d already done, %d to run\n",
			cli.ProgramName, sum.Selected, sum.Skipped, len(sum.Pending))
		return nil
	}
	if rep != nil {
		io.WriteString(sio.Out, rep.Markdown())
		for _, s := range rep.NotEvaluated {
			fmt.Fprintf(sio.Err, "%s: %s: not evaluated: %s\n", cli.ProgramName, cmd, s)
		}
		fmt.Fprintf(sio.Err, "%s: %s: %d candidates run (%d failed, %d not evaluated, %d skipped as done); report in %s\n",
			cli.ProgramName, cmd, sum.Done, rep.Failed, len(rep.NotEvaluated), sum.Skipped, filepath.Join(out, "report.md"))
	}
	e := runner.Ending{Err: err, Started: rep != nil || sum.Done > 0}
	if rep != nil {
		e.Failures = []error{runner.FailedRows(rep.Failed, rep.Candidates, "candidates"),
			notEvaluatedError(len(rep.NotEvaluated), rep.Candidates, "candidates")}
	}
	return exit(ctx, e)
}

// notEvaluatedError says that n of total items could not be evaluated for
// environment or input problems: rerunning as it is cannot help, so it
// gives no --retry-failed hint.
func notEvaluatedError(n, total int, what string) error {
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d %s not evaluated: environment or input problems, named above; fix the environment (patchbench env) or the dataset first", n, total, what)
}
