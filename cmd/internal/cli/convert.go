package cli

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

type convertOptions struct {
	to, from string
	dir      string
	target   string
	strip    int
	context  int
}

func newConvertCommand(sio Stdio) *cmdline.Command {
	var o convertOptions
	cmd := &cmdline.Command{
		Quick: true,
		Use:   "convert --to FORMAT [flags] PATCH|-",
		Short: "Convert a patch from one format to another",
		Long: `Convert a patch to another format.

Between udiff and udiff-l the hunks are printed as they are. When the source or
the target format has no line numbers, the patch is applied (in memory) to the
files under -C DIR and the edit is generated anew from the result, with enough
context for every hunk to be placed uniquely.`,
		Args: cmdline.ExactArgs(1, "PATCH or -"),
		Run: func(ctx context.Context, args []string) error {
			return runConvert(o, args[0], sio)
		},
	}
	f := &cmd.Flags
	f.String(&o.to, "to", 0, "", "target format: udiff, udiff-h, udiff-l, search-replace, v4a")
	f.String(&o.from, "format", 0, "", "source format (default: detect)")
	f.String(&o.dir, "directory", 'C', ".", "read the patched files from `DIR`")
	f.String(&o.target, "target", 0, "", "the file a patch without file headers applies to")
	f.Int(&o.strip, "strip", 'p', 1, "remove `N` leading path components from file names")
	f.Int(&o.context, "unified", 'U', patch.DefaultContext, "lines of context when generating")
	f.Require("to")
	f.AtLeast("strip", 0)
	f.AtLeast("unified", 0)
	return cmd
}

func runConvert(o convertOptions, name string, sio Stdio) error {
	to, err := patch.ParseFormat(o.to)
	if err != nil {
		return Usage(err)
	}
	o.dir, o.target = targetDir(o.dir, o.target)
	text, err := ReadInput(sio, name)
	if err != nil {
		return err
	}
	from, err := parseFormat(o.from)
	if err != nil {
		return err
	}
	out, err := repair.Convert(text, o.dir, repair.ConvertOptions{Name: name, From: from, To: to, Strip: o.strip, Target: o.target, Context: o.context})
	if err != nil {
		return exitOf(err)
	}
	_, err = fmt.Fprint(sio.Out, out)
	return err
}
