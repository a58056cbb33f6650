package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/repo"
)

// Env's restore and release run in both binaries: a test harness runs them
// once per test, and an overlay restore takes a few milliseconds, less
// than starting patchbench-full (its package initialisation alone, the
// model SDKs, SQLite, Parquet and Kubernetes types, is some 30 ms). The
// other env subcommands are handed to patchbench-full.

// envLocal are the env subcommands this binary runs itself.
var envLocal = commandList{
	{"restore", newEnvRestoreCommand},
	{"release", newEnvReleaseCommand},
}

// EnvCommands returns the env subcommands both binaries run (restore,
// release); patchbench-full adds them to its env command.
func EnvCommands(sio Stdio) []*cmdline.Command { return envLocal.all(sio) }

type envRestoreOptions struct {
	store, commit, repo       string
	copy, link, reflink, json bool
	noOverlay                 bool
	envstore.RestoreOptions
}

func newEnvRestoreCommand(sio Stdio) *cmdline.Command {
	var o envRestoreOptions
	cmd := &cmdline.Command{
		Parent: "env",
		Use:    "restore --store DIR --commit C [--repo DIR] [--copy] [--verify] DEST",
		Short:  "Rebuild a commit's environment at DEST (which must not exist or be empty)",
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
		Args: cmdline.ExactArgs(1, "DEST"),
		Run: func(ctx context.Context, args []string) error {
			return runEnvRestore(ctx, o, args[0], sio)
		},
	}
	f := &cmd.Flags
	f.String(&o.store, "store", 0, "", "environment store `DIR`")
	f.String(&o.commit, "commit", 0, "", "`COMMIT` to restore: a stored commit id or a unique prefix, or with --repo any revision")
	f.String(&o.repo, "repo", 0, "", "git repository `DIR` in which --commit is resolved")
	f.Bool(&o.copy, "copy", 0, false, "copy every file (the tree shares nothing with the store)")
	f.Bool(&o.link, "link", 0, false, "hard links even where reflinks work (refused where this process can write read-only files)")
	f.Bool(&o.reflink, "reflink", 0, false, "reflinks, or fail where the file system has none")
	f.Bool(&o.noOverlay, "no-overlay", 0, false, "make files even where an overlay can be mounted")
	f.Bool(&o.Verify, "verify", 0, false, "re-hash every object before using it")
	f.Int(&o.Workers, "workers", 0, 0, "files made at once (0: 8)")
	f.Bool(&o.json, "json", 0, false, "print the result as JSON")
	f.Require("store")
	f.Require("commit")
	f.AtLeast("workers", 0)
	return cmd
}

func runEnvRestore(ctx context.Context, o envRestoreOptions, dest string, sio Stdio) error {
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
		return Usage(errors.New("env restore: --copy, --link and --reflink exclude each other"))
	}
	o.Overlay = !o.noOverlay
	s, err := envstore.OpenExisting(o.store)
	if err != nil {
		return Usage(err)
	}
	start := time.Now()
	if o.repo != "" {
		r, err := repo.Open(ctx, o.repo)
		if err != nil {
			return Usage(err)
		}
		o.commit, err = r.ResolveCommit(ctx, o.commit)
		r.Close()
		if err != nil {
			return Usage(err)
		}
	}
	res, err := s.Restore(ctx, o.commit, dest, o.RestoreOptions)
	// A missing object is a damaged store (1), not a missing commit (2).
	if !errors.Is(err, envstore.ErrCorrupt) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, envstore.ErrDestination) || errors.Is(err, envstore.ErrMethod)) {
		return Usage(err)
	}
	if err != nil {
		return Failed(err)
	}
	if o.json {
		return WriteJSON(sio, res)
	}
	if res.Method == envstore.RestoreOverlay.String() {
		fmt.Fprintf(sio.Out, "restored %s to %s: %d files, %d directories, %d symlinks, %s, mounted in %s\nmethod %s: %s\n(env release %s unmounts it)\n",
			res.Commit, res.Dir, res.Files, res.Dirs, res.Symlinks, SizeString(res.Bytes), time.Since(start).Round(time.Millisecond), res.Method, res.MethodReason, res.Dir)
		return nil
	}
	fmt.Fprintf(sio.Out, "restored %s to %s: %d files (%d hard links, %d reflinks, %d copies), %d directories, %d symlinks, %s in %s\nmethod %s: %s\n",
		res.Commit, res.Dir, res.Files, res.Linked, res.Reflinked, res.Copied, res.Dirs, res.Symlinks,
		SizeString(res.Bytes), time.Since(start).Round(time.Millisecond), res.Method, res.MethodReason)
	return nil
}

func newEnvReleaseCommand(sio Stdio) *cmdline.Command {
	return &cmdline.Command{
		Parent: "env",
		Quick:  true,
		Use:    "release DEST",
		Short:  "Unmount an overlay restore and remove what was written to it",
		Long: `Undo an overlay restore (env restore as root): unmount DEST, remove its
upper layer (.NAME.overlay beside it: every file written through DEST) and
the empty mount point. The store is not changed. A DEST restored as files
is refused (exit 2): remove it as any directory.`,
		Args: cmdline.ExactArgs(1, "DEST"),
		Run: func(ctx context.Context, args []string) error {
			err := envstore.Release(args[0])
			if errors.Is(err, envstore.ErrNotRestored) {
				return Usage(err)
			}
			if err != nil {
				return Failed(err)
			}
			fmt.Fprintf(sio.Out, "released %s\n", args[0])
			return nil
		},
	}
}

// SizeString prints n bytes in kB, MB or GB (powers of 1000).
func SizeString(n int64) string {
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
