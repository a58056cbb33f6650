package benchcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/patchbench/patchbench/cmd/internal/cli"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/hfhub"
	"github.com/patchbench/patchbench/runner"
)

func newSWECommand(sio cli.Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "swe",
		Short: cli.FullShort("swe"),
		Long: `Evaluate predictions for a SWE-bench-style dataset in one command: the edit is
taken from each prediction, repaired and applied in memory at the instance's
base commit, the tests run in a sandboxed worktree, and SWE-bench's reports,
an error analysis and repaired predictions are written. See docs/swe.md.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Usage(errors.New("swe: give a subcommand: eval, rerun or envs"))
		},
	}
	cmd.AddCommand(newSWEEvalCommand(sio), newSWERerunCommand(sio), newSWEEnvsCommand(sio))
	return cmd
}

// sweTestFlags are the test-stage flags shared by eval and rerun.
type sweTestFlags struct {
	noTests  bool
	sandbox  string
	testCmd  string
	spec     string
	noSpecs  bool
	image    string
	timeout  time.Duration
	env      []string
	writable []string
	readOnly []string
	memory   uint64
	workDir  string
	workers  int
	// maxWorkers is --max-workers, the official harness's name of --workers.
	maxWorkers int
	envStore   string
}

func (t *sweTestFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&t.noTests, "no-tests", false, "skip the test stage: only extract, repair and apply")
	f.StringVar(&t.sandbox, "sandbox", "auto", "test runner: auto (bubblewrap if it works, else docker with --image, else unsandboxed), bwrap, docker, none")
	f.StringVar(&t.testCmd, "test-cmd", "", "test command `TEMPLATE` for rows without test_cmd, run with sh -c in the worktree; {tests}, {tests_regex}, {instance_id}, {repo}, {base_commit}, {version} are filled in")
	f.StringVar(&t.spec, "spec", "", "test specs `FILE` (YAML or JSON: per repository and version, test_cmd, parser, directives, env), tried before --test-cmd and the built-in specs")
	f.BoolVar(&t.noSpecs, "no-builtin-specs", false, "do not use the built-in specs of SWE-bench's repositories")
	f.StringVar(&t.image, "image", "", "container image `TEMPLATE` for --sandbox docker, with the same placeholders; swebench: the official harness's image of each instance (swebench/sweb.eval.x86_64.ID), tests run at /testbed as its eval script does")
	t.timeout = swe.DefaultTimeout
	f.Var(secondsValue{&t.timeout}, "timeout", "time limit of each test command, a duration (30m) or seconds as the official harness takes it (1800); its whole process tree is killed")
	f.StringArrayVar(&t.env, "env", nil, "`KEY=VALUE` for the test command (repeatable)")
	f.StringArrayVar(&t.writable, "writable", nil, "another `DIR` the test command may write to (repeatable)")
	f.StringArrayVar(&t.readOnly, "ro-bind", nil, "another host `PATH` the test command may read, such as a toolchain or module cache outside /usr (repeatable); the sandbox shows nothing else of the host but the system directories")
	f.Uint64Var(&t.memory, "memory", 0, "address-space limit of the test command in `BYTES` (0: none)")
	f.StringVar(&t.workDir, "work-dir", "", "`DIR` where worktrees are made (default: the system's temporary directory; also --testbed)")
	f.StringVar(&t.envStore, "env-store", "", "environment store `DIR` (patchbench env): tests run in the base commit's restored environment instead of a fresh worktree")
	f.IntVar(&t.workers, "workers", 0, "instances evaluated at once (0: 32 with --no-tests, else the number of CPUs)")
	f.IntVar(&t.maxWorkers, "max-workers", 0, "--workers as the official harness takes it (also --max_workers): 0 or less evaluates one instance at a time, as its run_threadpool does")
	f.SetNormalizeFunc(harnessNames)
}

// harnessAliases are the official harness's flag spellings (its
// run_evaluation.py, and the old harness's --swe_bench_tasks, --log_dir
// and --testbed) and the patchbench flags they mean. pflag reads each as
// the flag it names; --instance_ids also takes space-separated ids (see
// ExpandNargs).
var harnessAliases = map[string]string{
	"dataset_name":     "dataset",
	"swe_bench_tasks":  "dataset",
	"predictions_path": "predictions",
	"max_workers":      "max-workers",
	"run_id":           "run-id",
	"instance_ids":     "instance-ids",
	"report_dir":       "report-dir",
	"log_dir":          "out",
	"testbed":          "work-dir",
}

func harnessNames(f *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := harnessAliases[name]; ok && f.Lookup(n) != nil {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// nargsFlags take every word after them up to the next flag, as the
// official harness's argparse nargs="+" does.
var nargsFlags = []string{"--instance_ids"}

// harnessShort are the short options of the official harness's
// run_evaluation.py argparse and its long options. pflag would read "-id"
// as -i -d, and swe eval has no short flags of its own, so under "swe
// eval" ExpandNargs writes them long. (Its -n, --namespace, names Docker
// images and stays refused.)
var harnessShort = map[string]string{
	"-d":  "--dataset_name",
	"-s":  "--split",
	"-i":  "--instance_ids",
	"-p":  "--predictions_path",
	"-t":  "--timeout",
	"-id": "--run_id",
}

// ExpandNargs rewrites "--instance_ids A B C" as "--instance_ids=A
// --instance_ids=B --instance_ids=C", so that the official harness's
// space-separated ids parse; the words stop at the first that begins with
// "-", and nothing after "--" changes. Under "swe eval" it also writes the
// harness's short options long (harnessShort), "-d X" and "-d=X" alike.
func ExpandNargs(args []string) []string {
	out := make([]string, 0, len(args))
	eval := len(args) >= 2 && args[0] == "swe" && args[1] == "eval"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if eval && i >= 2 {
			name, val, hasVal := strings.Cut(a, "=")
			if long, ok := harnessShort[name]; ok {
				a = long
				if hasVal {
					a += "=" + val
				}
			}
		}
		if !slices.Contains(nargsFlags, a) {
			out = append(out, a)
			continue
		}
		j := i + 1
		for ; j < len(args) && !strings.HasPrefix(args[j], "-"); j++ {
			out = append(out, a+"="+args[j])
		}
		if j == i+1 {
			out = append(out, a) // no value: pflag says so
		}
		i = j - 1
	}
	return out
}

// checkWorkers makes --max-workers the value of --workers, refusing both
// given with different values, and a negative count. --max-workers means
// what the harness's --max_workers means: 0 or less runs one instance at a
// time (its run_threadpool runs them in sequence), not the default.
func (t *sweTestFlags) checkWorkers(f *pflag.FlagSet) error {
	if f.Changed("max-workers") {
		mw := max(t.maxWorkers, 1)
		if f.Changed("workers") && t.workers != mw {
			return cli.Usage(fmt.Errorf("--workers %d and --max-workers %d: give one (they are the same setting)", t.workers, t.maxWorkers))
		}
		t.workers = mw
	}
	if t.workers < 0 {
		return cli.Usage(fmt.Errorf("--workers %d: want at least 1 (0 for the default)", t.workers))
	}
	return nil
}

// apply copies the flags the user set (all of them with all) into c.
func (t *sweTestFlags) apply(f *pflag.FlagSet, c *swe.Config, all bool) {
	set := func(name string) bool { return all || f.Changed(name) }
	if set("no-tests") {
		c.NoTests = t.noTests
	}
	if set("sandbox") {
		c.Sandbox = t.sandbox
	}
	if set("test-cmd") {
		c.TestCmd = t.testCmd
	}
	if set("spec") {
		c.SpecFile = t.spec
	}
	if set("no-builtin-specs") {
		c.NoBuiltinSpecs = t.noSpecs
	}
	if set("image") {
		c.Image = t.image
	}
	if set("timeout") {
		c.Timeout = t.timeout
	}
	if set("env") {
		c.Env = t.env
	}
	if set("writable") {
		c.Writable = t.writable
	}
	if set("ro-bind") {
		c.ReadOnly = t.readOnly
	}
	if set("memory") {
		c.Memory = t.memory
	}
	if set("work-dir") {
		c.WorkDir = t.workDir
	}
	if set("workers") || f.Changed("max-workers") {
		c.Workers = t.workers
	}
	if set("env-store") {
		c.EnvStore = t.envStore
	}
}

type sweEvalOptions struct {
	swe.Config
	tests           sweTestFlags
	instanceIDsFile string
	split           string
	reportDir       string
}

func newSWEEvalCommand(sio cli.Stdio) *cobra.Command {
	var o sweEvalOptions
	cmd := &cobra.Command{
		Use:   "eval --dataset PATH --predictions PATH --repos DIR --run-id ID --out DIR [flags]",
		Short: "Evaluate predictions: patch stage in process, tests in a sandbox, SWE-bench reports",
		Long: `Evaluate SWE-bench predictions (JSON or JSONL: instance_id, model_name_or_path,
model_patch, optionally full_output) against a dataset (JSONL, JSON or
Parquet in SWE-bench's schema).

For each prediction, the edit is taken from model_patch (else full_output),
repaired and applied in memory to the files of base_commit, read from
--repos DIR/OWNER/NAME (cloned once as a mirror when missing). Status:
empty_patch, malformed, apply_failed, applied or applied_repaired. Then,
unless --no-tests, a worktree is made at base_commit, the repaired patch and
the test_patch are applied, and the instance's tests run in bubblewrap: the
dataset's test_cmd, else the --spec entry for its repository and version,
else --test-cmd, else the built-in spec (SWE-bench's command with the test
files of test_patch, and its log parser for the repository). The log is
graded against FAIL_TO_PASS and PASS_TO_PASS as SWE-bench grades: resolved,
unresolved, test_error, test_timeout (infra_error when the repository or
worktree fails).

--out DIR receives results.jsonl, report.json (SWE-bench's run report),
instances/ID/report.json, errors.md and errors.json, and
predictions.repaired.jsonl, which the official harness accepts.

Exit status: 0 every instance got a verdict; 1 some instances failed for
infrastructure reasons (test_error, test_timeout, infra_error: see
"swe rerun --type infra"); 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.tests.checkWorkers(cmd.Flags()); err != nil {
				return err
			}
			o.tests.apply(cmd.Flags(), &o.Config, true)
			if o.Out == "" {
				o.Out = filepath.Join("runs", swe.SafeID(o.RunID))
			}
			if o.split != "" {
				var err error
				if o.Dataset, err = withSplit(o.Dataset, o.split); err != nil {
					return cli.Usage(err)
				}
			}
			o.ReportDir = o.reportDir
			if o.instanceIDsFile != "" {
				ids, err := readIDsFile(o.instanceIDsFile)
				if err != nil {
					return cli.Usage(err)
				}
				o.InstanceIDs = append(o.InstanceIDs, ids...)
			}
			return runSWEEval(cmd, o.Config, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dataset, "dataset", "", "dataset `PATH` (.jsonl, .json or .parquet)"+datasetFlagHelp+" (also --dataset_name, --swe_bench_tasks)")
	f.StringVar(&o.split, "split", "", "the split of a Hugging Face --dataset given without one (the official harness's --split; a file has none)")
	f.StringVar(&o.Predictions, "predictions", "", "predictions `PATH` (.json or .jsonl), or gold for the dataset's gold patches (also --predictions_path)")
	f.StringVar(&o.Apply, "apply", swe.ApplyTolerant, "the patch stage's applier: tolerant (extract, repair, place), official (the official harness's chain on the raw model_patch: git apply --verbose, git apply --verbose --reject, patch --batch --fuzz=5 -p1 -i) or git (git apply alone)")
	f.StringVar(&o.reportDir, "report-dir", "", "also write the official harness's summary MODEL.RUN_ID.json into `DIR` (also --report_dir)")
	f.StringVar(&o.Repos, "repos", "", "repositories `DIR`: DIR/OWNER/NAME, cloned once when missing")
	f.StringVar(&o.CloneFrom, "clone-from", "", "clone missing repositories from `URL`/OWNER/NAME (default https://github.com)")
	f.StringVar(&o.RunID, "run-id", "", "`ID` naming the run in the reports (also --run_id)")
	f.StringVar(&o.Out, "out", "", "run `DIR` for results and reports (default runs/ID; also --log_dir)")
	f.BoolVar(&o.Resume, "resume", false, "continue an interrupted run in --out")
	f.StringSliceVar(&o.InstanceIDs, "instance-ids", nil, "evaluate only these instance `ID`s (comma-separated or repeated; also --instance_ids A B C, space-separated as the official harness takes them); an id not in the dataset is an error")
	f.StringVar(&o.instanceIDsFile, "instance-ids-file", "", "`FILE` of instance ids to evaluate, one a line (blank lines and # comments ignored), added to --instance-ids")
	f.StringVar(&o.Shard, "shard", "", "evaluate part `i/n` of the instances (env/n: i from $JOB_COMPLETION_INDEX); see patchbench merge")
	o.tests.register(f)
	for _, name := range []string{"dataset", "predictions", "repos", "run-id"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// readIDsFile reads instance ids, one a line; blank lines and lines
// starting with # are skipped.
func readIDsFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--instance-ids-file: %w", err)
	}
	var ids []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			ids = append(ids, line)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("--instance-ids-file %s: no instance id", path)
	}
	return ids, nil
}

// withSplit gives a Hugging Face dataset id without a split the split
// named by --split; a file, or an id with that split, is kept. An id
// with another split is refused: one of the two would be ignored.
func withSplit(dataset, split string) (string, error) {
	if _, err := os.Stat(dataset); err == nil || !hfhub.LooksLikeRef(dataset) {
		return dataset, nil
	}
	ref, err := hfhub.ParseRef(dataset)
	if err != nil || ref.Split == "" {
		return dataset + ":" + split, nil
	}
	if ref.Split != split {
		return "", fmt.Errorf("--split %s: the dataset %s names the split %s: give one", split, dataset, ref.Split)
	}
	return dataset, nil
}

func runSWEEval(cmd *cobra.Command, c swe.Config, sio cli.Stdio) error {
	c.Progress = runner.ProgressTo(sio.Err)
	c.Log = sio.Err
	var err error
	if c.Dataset, err = datasetPath(cmd.Context(), c.Dataset, sio); err != nil {
		return err
	}
	s, err := swe.Eval(cmd.Context(), c)
	if s != nil && s.Counts != nil {
		printSWESummary(sio.Out, s, c.Out)
	}
	return sweExit(cmd.Context(), s, err)
}

// sweExit is the exit of swe eval and rerun, whose errors about the
// inputs are typed (swe.ErrInput, runner.ErrRunDir).
func sweExit(ctx context.Context, s *swe.Summary, err error) error {
	e := runner.Ending{Err: err, Typed: true}
	if err == nil && s.Infra > 0 {
		e.Failures = []error{fmt.Errorf("swe: %d instances failed for infrastructure reasons (test_error, test_timeout, infra_error); see swe rerun --type infra", s.Infra)}
	}
	return exit(ctx, e)
}

func printSWESummary(w io.Writer, s *swe.Summary, out string) {
	fmt.Fprintf(w, "%d instances", s.Instances)
	if s.Sandbox != "" {
		fmt.Fprintf(w, ", tests in %s", s.Sandbox)
	}
	fmt.Fprintln(w)
	for _, st := range swe.Statuses {
		if n := s.Counts[st]; n > 0 {
			fmt.Fprintf(w, "  %-17s %d\n", st, n)
		}
	}
	fmt.Fprintf(w, "report: %s/report.json, errors: %s/errors.md\n", out, out)
}
