package benchcli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/envstore"
)

func newSWEEnvsCommand(sio cli.Stdio) *cobra.Command {
	var c swe.EnvConfig
	var sandboxKind string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "envs --dataset PATH --repos DIR --store DIR [--spec FILE]",
		Short: "Build the environments of a dataset's base commits in an environment store",
		Long: `For each base commit of the dataset's instances: a clean tree of the commit,
the setup commands of the instance's spec (--spec, else the built-in specs;
joined with &&) run there in the sandbox, and the tree stored in the
environment store (see "patchbench env"). Then "swe eval --env-store DIR"
tests each instance in its restored environment. Commits already stored are
skipped; a failed setup is recorded (see "env ls") and reported.

The built-in specs' setup commands install the repository with pip, which
needs a package index (--network); a spec file can give commands that work
offline. One line per commit (--json: one object).

Exit status: 0 every environment built or already stored; 1 some setup
failed; 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c.Dataset == "" || c.Repos == "" || c.Store == "" {
				return cli.Usage(errors.New("swe envs: --dataset, --repos and --store are needed"))
			}
			if sandboxKind == "docker" {
				return cli.Usage(errors.New("swe envs: --sandbox docker is not supported (the tree is a bind-mounted directory of the store)"))
			}
			r, err := swe.NewSandbox(cmd.Context(), sandboxKind, "")
			if err != nil {
				return cli.Usage(err)
			}
			c.Build.Runner = r
			res, err := swe.BuildEnvs(cmd.Context(), c)
			failedN := 0
			for _, e := range res {
				if asJSON {
					json.NewEncoder(sio.Out).Encode(e)
				} else {
					fmt.Fprintf(sio.Out, "%s %s %s (%d instances)%s\n", e.Repo, e.Commit, e.Status, len(e.Instances), reasonSuffix(e.Reason))
				}
				if e.Status == envstore.StatusFailed || e.Status == envstore.StatusError || e.Status == envstore.StatusSkippedFailed {
					failedN++
				}
			}
			if err != nil {
				if errors.Is(err, swe.ErrInput) {
					return cli.Usage(err)
				}
				return cli.Failed(err)
			}
			if failedN > 0 {
				return cli.Failed(fmt.Errorf("swe envs: %d of %d environments not built", failedN, len(res)))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Dataset, "dataset", "", "dataset `PATH` (.jsonl, .json or .parquet)")
	f.StringVar(&c.Repos, "repos", "", "repositories `DIR`: DIR/OWNER/NAME")
	f.StringVar(&c.Store, "store", "", "environment store `DIR`")
	f.StringVar(&c.SpecFile, "spec", "", "test specs `FILE` whose setup commands build the environments")
	f.BoolVar(&c.NoBuiltinSpecs, "no-builtin-specs", false, "do not use the built-in specs")
	f.StringVar(&sandboxKind, "sandbox", "auto", "setup runner: auto, bwrap, none")
	f.BoolVar(&c.Build.Network, "network", false, "let the setup use the network")
	f.StringArrayVar(&c.Build.Env, "env", nil, "`KEY=VALUE` for the setup (repeatable)")
	f.DurationVar(&c.Build.Timeout, "timeout", 0, "time limit of each setup (0: none)")
	f.BoolVar(&c.Build.RetryFailed, "retry-failed", false, "build commits whose setup failed before")
	f.BoolVar(&asJSON, "json", false, "one JSON object per commit")
	return cmd
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}
