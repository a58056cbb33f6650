package benchcli

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/repo"
)

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
