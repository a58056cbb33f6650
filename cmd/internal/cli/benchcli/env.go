package benchcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/repo"
)

// envOptions are the flags every env subcommand shares.
type envOptions struct {
	store string
	json  bool
}

func newEnvCommand(sio cli.Stdio) *cobra.Command {
	var o envOptions
	cmd := &cobra.Command{
		Use:   "env",
		Short: cli.FullShort("env"),
		Long: `Keep the tree a setup command leaves at each commit of a repository
(dependencies, build outputs) in a content-addressed store (--store DIR),
and restore one: as an overlay of the commit's tree where this process can
mount one (root), in the same time whatever the tree's size; else by
reflinks or hard links, or by copies where neither is safe.

Each file content is stored once, read-only, whatever the commit; each
commit has a manifest (path, mode, size, SHA-256; symlink targets). No write
through a restored tree reaches the store: restore uses reflinks where the
file system has them, hard links only where this process cannot write a
read-only file, and copies otherwise (root on a file system without
reflinks). Setups run with SOURCE_DATE_EPOCH set to the commit's committer
time, the checkout's files dated to it, and PYTHONHASHSEED=0, so build
outputs repeat across commits and are stored once. Only "env build" makes
a store; the other subcommands refuse a --store that holds none.

Exit status: 0 success; 1 the operation did not succeed (a setup failed, a
problem found by verify); 2 usage or input error.`,
	}
	cmd.PersistentFlags().StringVar(&o.store, "store", "", "environment store `DIR` (env build makes it if missing)")
	// restore and release parse their own flags, --store among them, as
	// the patchbench binary runs them (package cli).
	for _, c := range cli.EnvCommands(sio) {
		cmd.AddCommand(engineCommand(c, sio))
	}
	cmd.AddCommand(
		newEnvBuildCommand(sio, &o),
		newEnvStatsCommand(sio, &o),
		newEnvVerifyCommand(sio, &o),
		newEnvGCCommand(sio, &o),
		newEnvLsCommand(sio, &o),
	)
	return cmd
}

// open opens the store, which must exist unless create is set.
func (o *envOptions) open(create bool) (*envstore.Store, error) {
	// --store is required by every subcommand but release, which finds
	// the store in the restore's record.
	if o.store == "" {
		return nil, cli.Usage(errors.New(`required flag(s) "store" not set`))
	}
	open := envstore.OpenExisting
	if create {
		open = envstore.Open
	}
	s, err := open(o.store)
	if err != nil {
		return nil, cli.Usage(err)
	}
	return s, nil
}

type envBuildOptions struct {
	repo, commits, setup, sandbox string
	envstore.BuildOptions
}

func newEnvBuildCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	var o envBuildOptions
	cmd := &cobra.Command{
		Use:   "build --store DIR --repo DIR --commits REV-RANGE|FILE|REV,... --setup CMD",
		Short: "Build and store the environment of each commit",
		Long: `For each commit: a clean checkout (without .git) in the store's tmp
directory, the setup command run there with sh -c in the sandbox (bubblewrap:
no network unless --network, the tree its only writable directory), then the
whole tree snapshotted into the store and removed. Commits already stored
are skipped. A failed setup is recorded with its exit code and log (see
"env ls") and stores nothing; it is skipped next time unless --retry-failed.

--commits is a file of revisions (one a line), a git range (A..B, built
oldest first), or comma-separated revisions. One line per commit on stdout
(--json: one JSON object per commit).

The setup runs with SOURCE_DATE_EPOCH set to the commit's committer time
(unless --env sets it), and every file of the checkout has that time as its
modification time: tools that stamp times (Python's byte-compiler, which
then writes hash-checked .pyc files; archivers) write the same bytes at
every commit where the sources are the same, and the store keeps them once.
It also runs with PYTHONHASHSEED=0 (unless --env sets it; set it empty or
to "random" for Python's random seed): Python before 3.11 writes a set of
strings in a module's byte-code in the order of their hashes, which are
otherwise seeded at random in each process. Both are recorded in the
manifest.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEnvBuild(cmd, g, o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "git repository `DIR`")
	f.StringVar(&o.commits, "commits", "", "commits: `REV-RANGE|FILE|REV,...`")
	f.StringVar(&o.setup, "setup", "", "setup `CMD`, run with sh -c at the root of the tree")
	f.StringVar(&o.sandbox, "sandbox", "auto", "setup runner: auto (bubblewrap if it works, else unsandboxed), bwrap, none")
	f.IntVar(&o.Workers, "workers", 1, "commits built at once")
	f.BoolVar(&o.Network, "network", false, "let the setup use the network")
	f.StringArrayVar(&o.Env, "env", nil, "`KEY=VALUE` for the setup (repeatable)")
	f.DurationVar(&o.Timeout, "timeout", 0, "time limit of each setup (0: none)")
	f.BoolVar(&o.RetryFailed, "retry-failed", false, "build commits whose setup failed before")
	f.BoolVar(&o.NoReuse, "no-reuse", false, "hash every file, not trusting git's blob ids for unchanged tracked files (to measure what that saves)")
	f.BoolVar(&g.json, "json", false, "print one JSON object per commit")
	for _, name := range []string{"repo", "commits", "setup"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

func runEnvBuild(cmd *cobra.Command, g *envOptions, o envBuildOptions, sio cli.Stdio) error {
	ctx := cmd.Context()
	if o.sandbox == "docker" {
		return cli.Usage(errors.New("env build: --sandbox docker is not supported (the tree is a bind-mounted directory of the store)"))
	}
	// Every input is checked before the store is made: a refusal makes
	// nothing.
	for _, kv := range o.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return cli.Usage(fmt.Errorf("env build: --env %q: want KEY=VALUE", kv))
		}
	}
	r, err := repo.Open(ctx, o.repo)
	if err != nil {
		return cli.Usage(err)
	}
	defer r.Close()
	revs, err := envstore.Revisions(ctx, r, o.commits)
	if err != nil {
		return cli.Usage(err)
	}
	if len(revs) == 0 {
		return cli.Usage(fmt.Errorf("env build: --commits %s names no commit", o.commits))
	}
	o.Runner, err = swe.NewSandbox(ctx, o.sandbox, "")
	if err != nil {
		return cli.Usage(err)
	}
	s, err := g.open(true)
	if err != nil {
		return err
	}
	o.Setup = o.setup
	o.Progress = func(res envstore.BuildResult) {
		if res.Skipped > 0 {
			more := ""
			if n := res.Skipped - len(res.SkippedPaths); n > 0 {
				more = fmt.Sprintf(" and %d more", n)
			}
			fmt.Fprintf(sio.Err, "warning: env build %s: left out of the environment, not a file, directory or symbolic link: %s%s\n",
				res.Commit, strings.Join(res.SkippedPaths, ", "), more)
		}
		if g.json {
			json.NewEncoder(sio.Out).Encode(res)
			return
		}
		fmt.Fprintln(sio.Out, formatBuildResult(res))
	}
	results, err := s.Build(ctx, r, revs, o.BuildOptions)
	if err != nil {
		return cli.Failed(err)
	}
	bad := 0
	for _, res := range results {
		if res.Status == envstore.StatusFailed || res.Status == envstore.StatusError {
			bad++
		}
	}
	if bad > 0 {
		return cli.Failed(fmt.Errorf("env build: %d of %d commits not built", bad, len(results)))
	}
	return nil
}

func formatBuildResult(r envstore.BuildResult) string {
	switch r.Status {
	case envstore.StatusBuilt:
		return fmt.Sprintf("built   %s  %d files, %s; %d new objects, %s; %d files hashed, %d known from git; checkout %s, setup %s, snapshot %s",
			r.Commit, r.Files, cli.SizeString(r.Bytes), r.NewObjects, cli.SizeString(r.NewBytes), r.HashedFiles, r.ReusedFiles,
			ms(r.CheckoutMS), ms(r.SetupMS), ms(r.SnapshotMS))
	case envstore.StatusSkipped:
		return fmt.Sprintf("stored  %s  (skipped)", r.Commit)
	}
	return fmt.Sprintf("%-7s %s  %s", r.Status, r.Commit, r.Reason)
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }
