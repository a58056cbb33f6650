package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/patch"
)

type applyOptions struct {
	dir     string
	target  string
	reverse bool
	check   bool
	format  string
	strip   int
	json    bool
}

func newApplyCommand(sio stdio) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply [flags] PATCH|-",
		Short: "Apply a patch to files under a directory, all or nothing",
		Long: `Apply a patch in any supported format to files under -C DIR.

Context must match exactly; line numbers are hints searched outward from.
Either every file of the patch applies and is written (atomically), or
nothing is written.

Exit status: 0 applied; 1 refused (nothing written); 2 usage or input error.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApply(o, args[0], sio)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.dir, "directory", "C", ".", "apply to files under `DIR`")
	f.StringVar(&o.target, "target", "", "the file a single-file patch, or one without file headers, applies to (relative to DIR unless absolute)")
	f.BoolVarP(&o.reverse, "reverse", "R", false, "apply the patch in reverse")
	f.BoolVar(&o.check, "check", false, "check that the patch applies; write nothing")
	f.StringVar(&o.format, "format", "", "patch format: udiff, udiff-h, udiff-l, search-replace, v4a (default: detect)")
	f.IntVarP(&o.strip, "strip", "p", 1, "remove `N` leading path components from file names")
	f.BoolVar(&o.json, "json", false, "print what was applied where, as JSON")
	return cmd
}

// loadPatch reads and parses a patch, detecting its format unless given,
// and points it at target when one is given.
func loadPatch(sio stdio, name, format string, strip int, target string) (*patch.Patch, patch.Format, error) {
	text, err := readInput(sio, name)
	if err != nil {
		return nil, "", err
	}
	var f patch.Format
	if format != "" {
		if f, err = patch.ParseFormat(format); err != nil {
			return nil, "", usage(err)
		}
	} else {
		var ok bool
		if f, ok = patch.Detect(text); !ok {
			return nil, "", usage(fmt.Errorf("%s: no edit found in any known format", name))
		}
	}
	p, err := patch.Parse(text, f, patch.ParseOptions{Strip: strip})
	if err != nil {
		return nil, "", usage(fmt.Errorf("%s: %w", name, err))
	}
	if target != "" {
		if len(p.Files) != 1 {
			return nil, "", usage(fmt.Errorf("--target needs a single-file patch; %s has %d files", name, len(p.Files)))
		}
		retarget(p.Files[0], target)
	}
	for i, fp := range p.Files {
		if fp.Path() == "" {
			return nil, "", usage(fmt.Errorf("%s: file %d of the patch names no file; give --target", name, i+1))
		}
	}
	return p, f, nil
}

// targetDir turns an absolute --target into its directory and base name, so
// that patch paths stay relative to the directory applied to.
func targetDir(dir, target string) (string, string) {
	if filepath.IsAbs(target) {
		return filepath.Dir(target), filepath.Base(target)
	}
	return dir, target
}

func retarget(fp *patch.FilePatch, target string) {
	switch fp.Op {
	case patch.Create:
		fp.NewPath = target
	case patch.Delete:
		fp.OldPath = target
	default:
		fp.OldPath, fp.NewPath, fp.Op = target, target, patch.Modify
	}
}

// applyReport is the --json output of apply.
type applyReport struct {
	OK      bool         `json:"ok"`
	Check   bool         `json:"check,omitempty"`
	Reverse bool         `json:"reverse,omitempty"`
	Format  patch.Format `json:"format"`
	Files   []fileReport `json:"files,omitempty"`
	Error   *errorReport `json:"error,omitempty"`
}

type fileReport struct {
	Path    string       `json:"path,omitempty"`
	OldPath string       `json:"old_path,omitempty"`
	Op      string       `json:"op"`
	Hunks   []hunkReport `json:"hunks,omitempty"`
}

type hunkReport struct {
	Hunk   int `json:"hunk"`
	Line   int `json:"line"`
	Offset int `json:"offset"`
}

type errorReport struct {
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Hunk    int    `json:"hunk,omitempty"`
}

func runApply(o applyOptions, name string, sio stdio) error {
	o.dir, o.target = targetDir(o.dir, o.target)
	p, f, err := loadPatch(sio, name, o.format, o.strip, o.target)
	if err != nil {
		return err
	}
	rep := applyReport{Check: o.check, Reverse: o.reverse, Format: f}
	results, err := patch.Apply(p, patch.DirFS(o.dir), patch.ApplyOptions{Reverse: o.reverse})
	if err == nil && !o.check {
		err = patch.WriteResults(o.dir, results)
	}
	if err != nil {
		if o.json {
			rep.Error = &errorReport{Message: err.Error()}
			var he *patch.HunkError
			if errors.As(err, &he) {
				rep.Error.File, rep.Error.Hunk = he.File, he.Hunk
			}
			if werr := writeJSON(sio, rep); werr != nil {
				return werr
			}
		}
		return failed(err)
	}
	rep.OK = true
	for _, r := range results {
		fr := fileReport{Path: r.Path, OldPath: r.OldPath, Op: r.Op.String()}
		for i, pl := range r.Placements {
			fr.Hunks = append(fr.Hunks, hunkReport{Hunk: i + 1, Line: pl.Line, Offset: pl.Offset})
		}
		rep.Files = append(rep.Files, fr)
	}
	if o.json {
		return writeJSON(sio, rep)
	}
	return nil
}

func writeJSON(sio stdio, v any) error {
	enc := json.NewEncoder(sio.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
