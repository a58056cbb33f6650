package cli

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/patch"
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
	p, from, err := loadPatch(sio, name, o.from, o.strip, o.target)
	if err != nil {
		return err
	}
	if !from.HasPositions() || !to.HasPositions() {
		root, err := openRoot(o.dir)
		if err != nil {
			return err
		}
		defer root.Close()
		if p, err = regenerate(p, root, to, o.context); err != nil {
			return err
		}
	}
	text, err := patch.Print(p, to)
	if err != nil {
		return Failed(err)
	}
	_, err = fmt.Fprint(sio.Out, text)
	return err
}

// regenerate applies p to the files and makes the same change anew from the
// old and new contents, so that hunks get line numbers and unique context.
func regenerate(p *patch.Patch, fsys patch.FileSystem, to patch.Format, context int) (*patch.Patch, error) {
	results, err := patch.Apply(p, fsys, patch.ApplyOptions{})
	if err != nil {
		return nil, Failed(fmt.Errorf("convert: the patch must apply to the files to be converted: %w", err))
	}
	opts := patch.DefaultMakeOptions()
	opts.Context, opts.Unique = context, !to.HasPositions()
	out := &patch.Patch{}
	for _, r := range results {
		var old []byte
		if r.OldPath != "" {
			if old, err = fsys.ReadFile(r.OldPath); err != nil {
				return nil, Usage(fmt.Errorf("convert: read %s: %w", r.OldPath, err))
			}
		}
		oldPath, newPath := r.OldPath, r.Path
		fp := patch.Make(oldPath, newPath, string(old), string(r.Content), opts)
		fp.Op = r.Op
		fp.NewMode = r.Mode
		out.Files = append(out.Files, fp)
	}
	return out, nil
}
