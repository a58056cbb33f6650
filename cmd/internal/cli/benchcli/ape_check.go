package benchcli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/runner"
)

type apeCheckOptions struct {
	dataset                            string
	codeKey, commitKey, pathKey, idKey string
	defaultPath, tempExt               string
	check                              apeCheckFlags
	run                                runFlags
}

// apeCheckRecord is an ape check run's run.json.
type apeCheckRecord struct {
	Benchmark string `json:"benchmark"` // "ape-check"
	Dataset   string `json:"dataset"`
	// DatasetSHA256 is the hash of the dataset's bytes (runner.HashFiles).
	DatasetSHA256 string `json:"dataset_sha256,omitempty"`
	Repo          string `json:"repo"`
	CodeKey       string `json:"code_key"`
	CommitKey     string `json:"commit_key"`
	PathKey       string `json:"path_key"`
	Shard         string `json:"shard,omitempty"`
	// CheckCmd is the check command ("" for the built-in check).
	CheckCmd string `json:"check_cmd,omitempty"`
}

func newApeCheckCommand(sio cli.Stdio) *cobra.Command {
	var o apeCheckOptions
	cmd := &cobra.Command{
		Use:   "check --dataset FILE --repo DIR --out DIR [--env-store DIR] [--check-cmd TEMPLATE] [flags]",
		Short: "Check whole-file code rows, each in its commit's environment",
		Long: `Check each row of the dataset (JSONL or Parquet) as APE-Bench's Eleanstic
verifies its gathered patches: the row's code (--code-key) written as the file
at --path-key (else --default-path, else a temporary file of extension
--temp-ext at the tree's root, as Eleanstic checks each row) in the
environment of its commit
(--commit-key; restored from --env-store, else a git archive of --repo), then
the file's check (built-in for .go, .py, .java, .rs, .lean, else
--check-cmd) in the sandbox. One row per code row goes to DIR/results.jsonl:
pass, errors, error kind, time. Rows with the same commit, path and code are
checked once. A row that is not JSON, lacks its commit or names a path
outside the tree is left out, named on stderr. The run resumes like every
run. Eleanstic's spellings are accepted: --commit_id_key (--commit-key),
--code_key (--code-key), --max_workers (--workers).

Exit status: 0 every row checked (pass or not); 1 some rows could not be
checked (environment problems, named) or the run was interrupted (continue
with --resume); 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApeCheck(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "code rows `FILE` (JSONL or Parquet)")
	f.StringVar(&o.codeKey, "code-key", "code", "column of the file's content")
	f.StringVar(&o.commitKey, "commit-key", "commit_hash", "column of the commit whose environment checks it")
	f.StringVar(&o.pathKey, "path-key", "file_path_after", "column of the file's path in the tree")
	f.StringVar(&o.defaultPath, "default-path", "", "path of rows without --path-key (default: a temporary file of --temp-ext)")
	f.StringVar(&o.idKey, "id-key", "id", "column naming a row (default: a hash of commit, path and code)")
	f.StringVar(&o.tempExt, "temp-ext", "lean", "extension of the temporary file a row without a path is checked in, at the tree's root, as Eleanstic checks every row (APE-Bench: lean)")
	o.check.register(f, false)
	o.run.register(f, ape.ResultsFile)
	acceptSpellings(f, map[string]string{"commit_id_key": "commit-key", "code_key": "code-key", "max_workers": "workers"})
	return cmd
}

func runApeCheck(ctx context.Context, o apeCheckOptions, sio cli.Stdio) error {
	if o.dataset == "" || o.run.out == "" {
		return cli.Usage(errors.New("ape check: --dataset and --out are required"))
	}
	copts, err := o.check.options(ctx)
	if err != nil {
		return cli.Usage(fmt.Errorf("ape check: %w", err))
	}
	ropts, sess, err := o.run.options("ape check", ape.ResultsFile, sio)
	if err != nil {
		return cli.Usage(err)
	}
	rows, bad, err := ape.ReadCodeRows(o.dataset, ape.CodeKeys{Code: o.codeKey, Commit: o.commitKey, Path: o.pathKey, DefaultPath: o.defaultPath, TempExt: o.tempExt, ID: o.idKey})
	if err != nil {
		return cli.Usage(err)
	}
	if err := usable(sio, "ape check", o.dataset, "row", len(rows), bad); err != nil {
		return err
	}
	if err := openDir(sess, &ropts); err != nil {
		return err
	}
	defer sess.Close()
	if !o.run.dryRun {
		abs, _ := filepath.Abs(o.dataset)
		repo, _ := filepath.Abs(o.check.repo)
		h, err := runner.HashFiles(abs)
		if err != nil {
			return cli.Usage(err)
		}
		rec := apeCheckRecord{Benchmark: "ape-check", Dataset: abs, DatasetSHA256: h, Repo: repo, CodeKey: o.codeKey, CommitKey: o.commitKey, PathKey: o.pathKey, Shard: ropts.Shard.String(), CheckCmd: copts.Command}
		if err := recordRun(sess, rec); err != nil {
			return err
		}
	}
	sum, err := ape.Verify(ctx, rows, ape.VerifyOptions{Runner: ropts, Check: copts})
	if o.run.dryRun {
		if err != nil {
			return exit(ctx, runner.Ending{Err: err, DryRun: true})
		}
		fmt.Fprintf(sio.Err, "%s: dry run: %d rows selected, %d already done, %d to run\n", cli.ProgramName, sum.Selected, sum.Skipped, len(sum.Pending))
		return nil
	}
	if err != nil {
		return exit(ctx, runner.Ending{Err: err, Started: sum.Done > 0})
	}
	vs, err := ape.SummarizeVerify(o.run.out)
	if err != nil {
		return cli.Failed(err)
	}
	for _, s := range vs.NotEvaluated {
		fmt.Fprintf(sio.Err, "%s: ape check: not evaluated: %s\n", cli.ProgramName, s)
	}
	fmt.Fprintf(sio.Out, "%d rows: %d pass, %d fail, %d not evaluated, %d failed\n", vs.Rows, vs.Pass, vs.Fail, len(vs.NotEvaluated), vs.Failed)
	return exit(ctx, runner.Ending{Failures: []error{runner.FailedRows(vs.Failed, vs.Rows, "rows"),
		notEvaluatedError(len(vs.NotEvaluated), vs.Rows, "rows")}})
}
