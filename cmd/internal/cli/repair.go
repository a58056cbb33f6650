package cli

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

func newRepairCommand(sio Stdio) *cmdline.Command {
	var o applyOptions
	var cmd *cmdline.Command
	cmd = &cmdline.Command{
		Quick: true,
		Use:   "repair [flags] PATCH|-",
		Short: "Print the canonical unified diff of an edit, repaired against the files",
		Long: `Repair an edit in any format, as apply does, and print it as a canonical
unified diff (exact context, correct counts and line numbers, git file
headers) that git apply accepts. Nothing is written to the files.

An edit already in the files prints nothing on standard output and lists
what was already there on standard error.

Exit status: 0 repaired or already applied; 1 refused; 2 usage or input error.`,
		Args: cmdline.ExactArgs(1, "PATCH or -"),
		Run: func(ctx context.Context, args []string) error {
			o.stripSet = cmd.Flags.Changed("strip")
			if !o.stripSet {
				o.strip = 1 // a hint only: the repair decides per file
			}
			return runRepair(o, args[0], sio)
		},
	}
	f := &cmd.Flags
	f.String(&o.dir, "directory", 'C', ".", "read the files from `DIR`")
	f.String(&o.target, "target", 0, "", "the file a single-file patch, or one without file headers, applies to (relative to DIR unless absolute)")
	f.Bool(&o.reverse, "reverse", 'R', false, "repair the reverse of the patch")
	f.String(&o.format, "format", 0, "", "patch format: udiff, udiff-h, udiff-l, search-replace, v4a (default: detect)")
	// Registered with 0 so that the help prints no "(default 1)" beside
	// the help's own default.
	f.Int(&o.strip, "strip", 'p', 0, "remove `N` leading path components from file names (default: decided per file)")
	f.Bool(&o.json, "json", 0, false, "print the repair report as JSON instead of the diff")
	f.AtLeast("strip", 0)
	return cmd
}

func runRepair(o applyOptions, name string, sio Stdio) error {
	label := rootLabel(o.dir, o.target)
	o.dir, o.target = targetDir(o.dir, o.target)
	root, err := openRoot(o.dir, label)
	if err != nil {
		return err
	}
	defer root.Close()
	text, err := ReadInput(sio, name)
	if err != nil {
		return err
	}
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	rep, err := repair.Apply(root, text, repair.ApplyOptions{Name: name, Format: f, Target: o.target,
		Reverse: o.reverse, Check: true, Strip: o.strip, FixedStrip: o.stripSet})
	// Repair writes nothing by its nature: its report does not say check.
	rep.Check = false
	if err != nil {
		err = exitOf(err)
		if o.json {
			if werr := WriteJSON(sio, rep); werr != nil {
				return werr
			}
		}
		return err
	}
	if o.json {
		return WriteJSON(sio, rep)
	}
	if rep.Status == repair.StatusAlreadyApplied {
		return writeAlready(sio.Err, rep)
	}
	text, err = patch.Print(rep.Canonical(), patch.UDiff)
	if err != nil {
		return Failed(err)
	}
	_, err = fmt.Fprint(sio.Out, text)
	return err
}
