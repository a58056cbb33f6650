package benchcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"io/fs"
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
and restore one in well under a second by reflinks or hard links, or by
copies where neither is safe.

Each file content is stored once, read-only, whatever the commit; each
commit has a manifest (path, mode, size, SHA-256; symlink targets). No write
through a restored tree reaches the store: restore uses reflinks where the
file system has them, hard links only where this process cannot write a
read-only file, and copies otherwise (root on a file system without
reflinks). Setups run with SOURCE_DATE_EPOCH set to the commit's committer
time and the checkout's files dated to it, so build outputs repeat across
commits and are stored once. Only "env build" makes a store; the other
subcommands refuse a --store that holds none.

Exit status: 0 success; 1 the operation did not succeed (a setup failed, a
problem found by verify); 2 usage or input error.`,
	}
	cmd.PersistentFlags().StringVar(&o.store, "store", "", "environment store `DIR` (env build makes it if missing)")
	cmd.AddCommand(
		newEnvBuildCommand(sio, &o),
		newEnvRestoreCommand(sio, &o),
		newEnvReleaseCommand(sio),
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
every commit where the sources are the same, and the store keeps them once.`,
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
			r.Commit, r.Files, sizeString(r.Bytes), r.NewObjects, sizeString(r.NewBytes), r.HashedFiles, r.ReusedFiles,
			ms(r.CheckoutMS), ms(r.SetupMS), ms(r.SnapshotMS))
	case envstore.StatusSkipped:
		return fmt.Sprintf("stored  %s  (skipped)", r.Commit)
	}
	return fmt.Sprintf("%-7s %s  %s", r.Status, r.Commit, r.Reason)
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }

// sizeString prints n bytes in kB, MB or GB (powers of 1000).
func sizeString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

type envRestoreOptions struct {
	commit              string
	repo                string
	copy, link, reflink bool
	noOverlay           bool
	envstore.RestoreOptions
}

func newEnvRestoreCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	var o envRestoreOptions
	cmd := &cobra.Command{
		Use:   "restore --store DIR --commit C [--repo DIR] [--copy] [--verify] DEST",
		Short: "Rebuild a commit's environment at DEST (which must not exist or be empty)",
		Long: `Rebuild the tree of commit C (a full id or a unique prefix) at DEST, which
must not exist or be an empty directory (else exit 2). A restore that fails
leaves nothing at DEST.

Where this process can mount one (root: the kernel's overlayfs; else
fuse-overlayfs where it works), DEST is an overlay: the commit's read-only
tree in the store (made once, at its first such restore) below, a fresh
upper directory beside DEST (.NAME.overlay) above, so every write lands
there and the restore takes the same time whatever the tree's size (the
manifest is not read again). The output says why there is none otherwise.
"env release DEST" unmounts it and removes what was written. --no-overlay
(or --copy, --link, --reflink) makes files instead:

Files are made so that no write through DEST reaches the store: by reflinks
where the file system has them; else by hard links where this process
cannot write a read-only file (an ordinary user); else by copies (root, or
CAP_DAC_OVERRIDE, on a file system without reflinks). The output (and
--json's "method" and "method_reason") says which and why. --copy,
--reflink and --link ask for one; --link is refused (exit 2) where this
process could write through the links.

Each object's type, size and mode are checked. Copies hash the bytes they
copy, and a damaged object fails the restore (exit 1); reflinks and hard
links do not read the bytes unless --verify, which re-hashes every object
first.

Hard-linked files are read-only (0444, 0555 when executable): the manifest's
mode less its write bits. Copies and reflinks have the exact mode.`,
		Args: ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEnvRestore(cmd, g, o, args, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.commit, "commit", "", "`COMMIT` to restore: a stored commit id or a unique prefix, or with --repo any revision")
	f.StringVar(&o.repo, "repo", "", "git repository `DIR` in which --commit is resolved")
	f.BoolVar(&o.copy, "copy", false, "copy every file (the tree shares nothing with the store)")
	f.BoolVar(&o.link, "link", false, "hard links even where reflinks work (refused where this process can write read-only files)")
	f.BoolVar(&o.reflink, "reflink", false, "reflinks, or fail where the file system has none")
	f.BoolVar(&o.noOverlay, "no-overlay", false, "make files even where an overlay can be mounted")
	f.BoolVar(&o.Verify, "verify", false, "re-hash every object before using it")
	f.IntVar(&o.Workers, "workers", 0, "files made at once (0: 8)")
	f.BoolVar(&g.json, "json", false, "print the result as JSON")
	cmd.MarkFlagRequired("commit")
	return cmd
}

func runEnvRestore(cmd *cobra.Command, g *envOptions, o envRestoreOptions, args []string, sio cli.Stdio) error {
	n := 0
	for _, m := range []struct {
		set    bool
		method envstore.RestoreMethod
	}{{o.copy, envstore.RestoreCopy}, {o.link, envstore.RestoreLink}, {o.reflink, envstore.RestoreReflink}} {
		if m.set {
			n++
			o.Method = m.method
		}
	}
	if n > 1 {
		return cli.Usage(errors.New("env restore: --copy, --link and --reflink exclude each other"))
	}
	o.Overlay = !o.noOverlay
	s, err := g.open(false)
	if err != nil {
		return err
	}
	start := time.Now()
	if o.repo != "" {
		r, err := repo.Open(cmd.Context(), o.repo)
		if err != nil {
			return cli.Usage(err)
		}
		o.commit, err = r.ResolveCommit(cmd.Context(), o.commit)
		r.Close()
		if err != nil {
			return cli.Usage(err)
		}
	}
	res, err := s.Restore(cmd.Context(), o.commit, args[0], o.RestoreOptions)
	// A missing object is a damaged store (1), not a missing commit (2).
	if !errors.Is(err, envstore.ErrCorrupt) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, envstore.ErrDestination) || errors.Is(err, envstore.ErrMethod)) {
		return cli.Usage(err)
	}
	if err != nil {
		return cli.Failed(err)
	}
	if g.json {
		return cli.WriteJSON(sio, res)
	}
	if res.Method == envstore.RestoreOverlay.String() {
		fmt.Fprintf(sio.Out, "restored %s to %s: %d files, %d directories, %d symlinks, %s, mounted in %s\nmethod %s: %s\n(env release %s unmounts it)\n",
			res.Commit, res.Dir, res.Files, res.Dirs, res.Symlinks, sizeString(res.Bytes), time.Since(start).Round(time.Millisecond), res.Method, res.MethodReason, res.Dir)
		return nil
	}
	fmt.Fprintf(sio.Out, "restored %s to %s: %d files (%d hard links, %d reflinks, %d copies), %d directories, %d symlinks, %s in %s\nmethod %s: %s\n",
		res.Commit, res.Dir, res.Files, res.Linked, res.Reflinked, res.Copied, res.Dirs, res.Symlinks,
		sizeString(res.Bytes), time.Since(start).Round(time.Millisecond), res.Method, res.MethodReason)
	return nil
}

func newEnvStatsCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats --store DIR [--json]",
		Short: "Commits, files, bytes of the trees and bytes stored",
		Long: `Print the store's totals: stored commits, their files, the bytes the trees
would take as copies (logical), the bytes the store takes (objects,
manifests, git map) and their ratio. --json prints {"commits", "files",
"logical_bytes", "stored_bytes", ...}.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			st, err := s.Stats()
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				return cli.WriteJSON(sio, st)
			}
			fmt.Fprintf(sio.Out, "commits        %d (and %d failed setups)\nfiles          %d\nlogical bytes  %d (%s)\nstored bytes   %d (%s: %d objects %s, manifests %s)\nratio          %.1fx\n",
				st.Commits, st.Failed, st.Files, st.LogicalBytes, sizeString(st.LogicalBytes), st.StoredBytes, sizeString(st.StoredBytes),
				st.Objects, sizeString(st.ObjectBytes), sizeString(st.ManifestBytes), st.Ratio())
			return nil
		},
	}
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}

func newEnvVerifyCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	var workers int
	cmd := &cobra.Command{
		Use:   "verify --store DIR",
		Short: "Re-hash every object and check every manifest; exit 1 on any problem, naming it",
		Args:  ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			rep, err := s.Verify(cmd.Context(), workers)
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				if err := cli.WriteJSON(sio, rep); err != nil {
					return err
				}
			} else {
				for _, p := range rep.Problems {
					fmt.Fprintln(sio.Out, p)
				}
				fmt.Fprintf(sio.Out, "%d objects, %d manifests, %d problems", rep.Objects, rep.Manifests, len(rep.Problems))
				if rep.Temporary > 0 {
					fmt.Fprintf(sio.Out, "; %d temporary files of interrupted builds (env gc removes them)", rep.Temporary)
				}
				fmt.Fprintln(sio.Out)
			}
			if !rep.OK() {
				return cli.Failed(fmt.Errorf("env verify: %d problems in %s", len(rep.Problems), s.Dir()))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&workers, "workers", 0, "objects hashed at once (0: one per CPU)")
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}

func newEnvGCCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gc --store DIR",
		Short: "Remove objects no manifest names, and what interrupted builds left",
		Long: `Remove the objects no manifest names and the temporary files of
interrupted builds. gc waits for running builds and builds wait for it (a
lock every build holds shared from its first object to its manifest), so it
is safe to run at any time.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			res, err := s.GC(cmd.Context())
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				return cli.WriteJSON(sio, res)
			}
			fmt.Fprintf(sio.Out, "removed %d objects (%s) and %d temporary entries\n", res.Objects, sizeString(res.Bytes), res.Temporary)
			return nil
		},
	}
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}

func newEnvLsCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls --store DIR [--json]",
		Short: "List stored commits and failed setups",
		Args:  ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			list, err := s.List()
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				return cli.WriteJSON(sio, list)
			}
			for _, in := range list {
				if in.Status == "failed" {
					fmt.Fprintf(sio.Out, "%s  failed (exit %d)  %s  %s\n", in.Commit, in.ExitCode, in.Created, in.Setup)
					continue
				}
				fmt.Fprintf(sio.Out, "%s  %d files, %s  %s  %s\n", in.Commit, in.Files, sizeString(in.Bytes), in.Created, in.Setup)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}
