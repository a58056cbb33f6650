package benchcli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/repo"
)

type locBuildOptions struct {
	dataset, out, format      string
	output                    string
	repoDir, commits, name    string
	maxFiles, maxLines, minLn int
	kinds                     string
	repos                     locRepoFlags
}

func newLocBuildCommand(sio cli.Stdio) *cobra.Command {
	var o locBuildOptions
	cmd := &cobra.Command{
		Use:   "build (--dataset FILE --repos DIR | --repo DIR --commits RANGE) --out CASES.jsonl",
		Short: "Make Loc-Bench cases from a SWE-bench-schema dataset or a git history",
		Long: `Write one case per line to --out from either
  --dataset FILE: SWE-bench schema (instance_id, repo, base_commit,
    problem_statement, patch; JSONL, JSON or Parquet) or Loc-Bench_V1 (also
    category, edit_functions); repositories under --repos DIR; or
  --repo DIR --commits RANGE: every non-merge commit of RANGE (git rev-list
    syntax); query = the commit message, base_commit = its parent, category =
    the commit's kind (fix, feature, refactor, docs, test, other).
Ground truth: the patch's old-side lines at base_commit, grouped by the
innermost function (tree-sitter), clustered (a line joins the cluster before
it when at most 3 unchanged lines lie between), more than 2 clusters of a
function collapsed to [first, last], clamped to the function.

Exit status: 0 every row made a case; 1 some rows were left out (each
reported with its id); 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runLocBuild(cmd.Context(), o, sio) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "dataset `FILE`: .jsonl, .json (.gz) or .parquet"+datasetFlagHelp)
	f.StringVar(&o.repoDir, "repo", "", "build from the history of the git repository `DIR`")
	f.StringVar(&o.commits, "commits", "", "with --repo: the commits, as git rev-list takes them (e.g. v1.0..main, -n50 HEAD)")
	f.StringVar(&o.name, "name", "", "with --repo: the repository's OWNER/NAME in the cases (default local/BASENAME)")
	f.IntVar(&o.maxFiles, "max-files", 5, "with --repo: skip commits changing more than `N` files (0: no bound)")
	f.IntVar(&o.maxLines, "max-lines", 200, "with --repo: skip commits changing more than `N` lines (0: no bound)")
	f.IntVar(&o.minLn, "min-lines", 1, "with --repo: skip commits changing fewer than `N` lines")
	f.StringVar(&o.kinds, "kind", "", "with --repo: keep only these commit kinds, comma-separated (fix, feature, refactor, docs, test, other)")
	f.StringVar(&o.out, "out", "", "cases `FILE` to write (JSONL)")
	f.StringVar(&o.output, "output", "", "another name of --out (relace-mcp)")
	f.StringVar(&o.format, "format", "cases", "schema of --out: cases (patchbench's) or relace (relace-mcp's hard_gt entries; cases without a function left out)")
	o.repos.register(cmd)
	return cmd
}

func runLocBuild(ctx context.Context, o locBuildOptions, sio cli.Stdio) error {
	if o.output != "" {
		if o.out != "" && o.out != o.output {
			return cli.Usage(fmt.Errorf("loc build: --out %s and --output %s differ", o.out, o.output))
		}
		o.out = o.output
	}
	if o.out == "" {
		return cli.Usage(errors.New("loc build: --out is required"))
	}
	if o.format != "cases" && o.format != "relace" {
		return cli.Usage(fmt.Errorf("loc build: --format %q: want cases or relace", o.format))
	}
	if (o.dataset == "") == (o.repoDir == "") {
		return cli.Usage(errors.New("loc build: give either --dataset or --repo"))
	}
	var cases []loc.Case
	var problems []loc.Problem
	var skipped, rows int
	if o.dataset != "" {
		if err := o.repos.resolve(); err != nil {
			return cli.Usage(fmt.Errorf("loc build: %w", err))
		}
		var err error
		if o.dataset, err = datasetPath(ctx, o.dataset, sio); err != nil {
			return err
		}
		store := o.repos.store()
		defer store.Close()
		cases, problems, err = loc.BuildFromDataset(ctx, o.dataset, store)
		if err != nil {
			return cli.Usage(err)
		}
		rows = len(cases) + loc.RowsOf(problems)
		if len(cases) == 0 && len(problems) > 0 {
			// Nothing to write: a refusal leaves no file.
			fmt.Fprintf(sio.Err, "%s: no case made of %d rows; nothing written to %s\n", cli.ProgramName, rows, o.out)
			return buildProblems(sio, problems, rows)
		}
	} else {
		if o.commits == "" {
			return cli.Usage(errors.New("loc build: --repo needs --commits"))
		}
		rp, err := repo.Open(ctx, o.repoDir)
		if err != nil {
			return cli.Usage(err)
		}
		defer rp.Close()
		name := o.name
		if name == "" {
			abs, _ := filepath.Abs(o.repoDir)
			name = "local/" + strings.TrimSuffix(filepath.Base(abs), ".git")
		}
		var kinds []string
		if o.kinds != "" {
			kinds = strings.Split(o.kinds, ",")
		}
		cases, problems, skipped, err = loc.BuildFromHistory(ctx, rp, name, o.commits,
			loc.HistoryFilter{MaxFiles: o.maxFiles, MaxLines: o.maxLines, MinLines: o.minLn, Kinds: kinds})
		if err != nil {
			return cli.Usage(err)
		}
		rows = len(cases) + len(problems) + skipped
	}
	written := len(cases)
	schema := ""
	if o.format == "relace" {
		n, left, err := loc.WriteRelaceCases(o.out, cases)
		if err != nil {
			return err
		}
		written, problems, schema = n, append(problems, left...), " in relace-mcp's schema"
	} else if err := loc.WriteCases(o.out, cases); err != nil {
		return err
	}
	fmt.Fprintf(sio.Err, "%s: %d cases written to %s%s (%d rows or commits, %d skipped by the filters, %d with problems)\n",
		cli.ProgramName, written, o.out, schema, rows, skipped, len(problems))
	return buildProblems(sio, problems, rows)
}

// buildProblems prints loc build's problems and returns the exit error:
// a problem may leave out several rows (a missing repository).
func buildProblems(sio cli.Stdio, problems []loc.Problem, rows int) error {
	if err := reportProblems(sio, "loc build", problems, rows); err != nil {
		return cli.Failed(fmt.Errorf("loc build: %d problems leave out %d of %d rows", len(problems), loc.RowsOf(problems), rows))
	}
	return nil
}
