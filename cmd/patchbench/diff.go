package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/diff"
	"github.com/patchbench/patchbench/patch"
)

type diffOptions struct {
	format    string
	algorithm string
	context   int
}

func newDiffCommand(sio stdio) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff [flags] OLD NEW",
		Short: "Print the edit that turns file OLD into file NEW, in any format",
		Long: `Print the edit that turns file OLD into file NEW.

OLD or NEW may be /dev/null for a creation or a deletion. Formats without line
numbers (udiff-h, search-replace, v4a) get enough context for every hunk to be
placed uniquely. The exit status is 0 whether or not the files differ.`,
		Args: argsUsage(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(o, args[0], args[1], sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "udiff", "output format: udiff, udiff-h, udiff-l, search-replace, v4a")
	f.StringVar(&o.algorithm, "algorithm", "histogram", "diff algorithm: histogram or myers")
	f.IntVarP(&o.context, "unified", "U", patch.DefaultContext, "lines of context around each change")
	return cmd
}

func runDiff(o diffOptions, oldName, newName string, sio stdio) error {
	f, err := patch.ParseFormat(o.format)
	if err != nil {
		return usage(err)
	}
	alg, err := diff.ParseAlgorithm(o.algorithm)
	if err != nil {
		return usage(err)
	}
	if o.context < 0 {
		return usage(fmt.Errorf("-U %d: context must be at least 0", o.context))
	}
	old, err := readSide(oldName)
	if err != nil {
		return err
	}
	neu, err := readSide(newName)
	if err != nil {
		return err
	}
	oldPath, newPath := oldName, newName
	if oldName == os.DevNull {
		oldPath = ""
	}
	if newName == os.DevNull {
		newPath = ""
	}
	fp := patch.Make(oldPath, newPath, old, neu, patch.MakeOptions{Context: o.context, Algorithm: alg, Unique: !f.HasPositions()})
	if fp.Op == patch.Rename {
		// Two files compared, not a rename. Formats with one name per file
		// get the new one.
		fp.Op = patch.Modify
		if f == patch.SearchReplace || f == patch.V4A {
			fp.OldPath = fp.NewPath
		}
	}
	if len(fp.Hunks) == 0 {
		return nil
	}
	text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f)
	if err != nil {
		return failed(err)
	}
	_, err = fmt.Fprint(sio.out, text)
	return err
}

func readSide(name string) (string, error) {
	if name == os.DevNull {
		return "", nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", usage(fmt.Errorf("read %s: %w", name, err))
	}
	return string(b), nil
}
