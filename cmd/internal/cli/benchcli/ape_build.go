package benchcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

func newApeBuildCommand(sio cli.Stdio) *cobra.Command {
	var repo, commits, out, instruct, checkCmd string
	var model modelFlags
	cmd := &cobra.Command{
		Use:   "build --repo DIR --commits RANGE --out FILE [--instruct-model MODEL]",
		Short: "Make tasks from a git history: one per commit and modified file",
		Long: `Make one task per commit of RANGE (git rev-list syntax) and per file the
commit modifies, in the columns of the published APE-Bench I data: the file
before the commit, the gold diff, the instruction, category and difficulty.
Files no built-in check compiles (.go, .py, .java, .rs and .lean have one)
are left out, named on stderr, unless --check-cmd says the run will give a
check command for them.

The instruction is the commit message; with --instruct-model MODEL, a model
writes it from the gold diff (and the message), as APE-Bench's instructions
were written: openai/..., anthropic/..., replay/FILE (rows {id, response}),
or reference (the commit message). The model flags (--base-url, --cache,
rate limits) apply to it; its cache is FILE's directory's cache.db. A task
whose instruction request fails keeps its commit message and is named on
stderr (exit 1).

Exit status: 0 tasks written; 1 some instructions could not be written; 2
usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if repo == "" || out == "" {
				return cli.Usage(errors.New("ape build: --repo and --out are required"))
			}
			// --out may name a file in a directory not made yet.
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return cli.Failed(err)
			}
			var m *runner.Model
			if instruct != "" {
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
			tasks, skipped, err := ape.Build(cmd.Context(), repo, commits, ape.BuildOptions{AnyFile: checkCmd != ""})
			if err != nil {
				return cli.Usage(err)
			}
			if len(skipped) > 0 {
				fmt.Fprintf(sio.Err, "%s: ape build: left out %d files no built-in check compiles (give --check-cmd to keep them): %s\n",
					cli.ProgramName, len(skipped), strings.Join(skipped, ", "))
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
	f.StringVar(&checkCmd, "check-cmd", "", "the check `TEMPLATE` the run will use: keep files without a built-in check")
	model.register(f, "")
	f.MarkHidden("model") // --instruct-model names it
	return cmd
}

// apeCheckFlags are the compile stage's flags, shared by run and check.
type apeCheckFlags struct {
	repo, envStore, checkCmd, envCommit string
	checkTimeout                        time.Duration
}

func (c *apeCheckFlags) register(f *pflag.FlagSet, envCommit bool) {
	f.StringVar(&c.repo, "repo", "", "git repository `DIR` of the tasks' commits")
	f.StringVar(&c.envStore, "env-store", "", "environment store `DIR` (patchbench env) to restore each commit's environment from")
	f.StringVar(&c.checkCmd, "check-cmd", "", "check command `TEMPLATE` run with sh -c at the tree's root; {file}, {dir}")
	f.DurationVar(&c.checkTimeout, "check-timeout", 2*time.Minute, "bound on one check")
	if envCommit {
		f.StringVar(&c.envCommit, "env-commit", ape.EnvCommitTask, "environment a candidate is checked in: commit (the task's commit_hash, as APE-Bench) or parent")
	}
}

func (c *apeCheckFlags) options(ctx context.Context) (ape.CheckOptions, error) {
	o := ape.CheckOptions{Repo: c.repo, Command: c.checkCmd, Timeout: c.checkTimeout, EnvCommit: c.envCommit}
	if c.envCommit != "" && c.envCommit != ape.EnvCommitTask && c.envCommit != ape.EnvCommitParent {
		return o, fmt.Errorf("--env-commit %q: want %s or %s", c.envCommit, ape.EnvCommitTask, ape.EnvCommitParent)
	}
	if c.envStore != "" {
		s, err := envstore.OpenExisting(c.envStore)
		if err != nil {
			return o, err
		}
		// Overlays a killed run left mounted.
		if _, err := s.ReleaseStale(ctx); err != nil {
			return o, err
		}
		o.Store = s
	}
	if c.repo == "" {
		return o, errors.New("--repo is required (the repository of the tasks' commits)")
	}
	// A --repo that is no repository is an input error before the run,
	// not one environment failure per candidate after it.
	r, err := repo.Open(ctx, c.repo)
	if err != nil {
		return o, fmt.Errorf("--repo: %w", err)
	}
	r.Close()
	return o, nil
}
