package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

type applyOptions struct {
	dir      string
	target   string
	reverse  bool
	check    bool
	format   string
	strip    int
	json     bool
	strict   bool
	stripSet bool
	recover  bool
	// guard, when set, is called after the new contents are computed and
	// before the first write; its error stops the apply with nothing
	// written, and the function it returns is called when the writes are
	// done. The command sets it to hold interrupts off the writes; the MCP
	// server, to refuse the writes of a call it has given up on.
	guard func() (done func(), err error)
}

func newApplyCommand(sio Stdio) *cmdline.Command {
	var o applyOptions
	var cmd *cmdline.Command
	cmd = &cmdline.Command{
		Quick: true,
		Use:   "apply [flags] PATCH|-",
		Short: "Apply a patch to files under a directory, all or nothing",
		Long: `Apply a patch in any supported format to files under -C DIR.

By default the patch is applied tolerantly: the edit is taken out of any
surrounding prose or fences, hunk counts are recounted, line numbers are only
hints, lost context spaces, whitespace drift, missing headers and hunks out of
order are repaired, and each hunk is placed where exactly one place fits. A
hunk that fits two places or removes lines that are not in the file is
refused, and nothing is written. A hunk whose change is already in the file
succeeds and changes nothing; each such hunk is listed on standard output
with the line where its new lines are. --strict applies only well-formed
patches whose context matches exactly, as git apply does.

Either every file of the patch applies and is written (atomically), or
nothing is written. Paths that are absolute, leave DIR with "..", run
through a symbolic link or are one are refused: links are never followed,
edited or created.

A write that was killed midway (its journal, .patchbench-journal-N in
DIR, is left) is undone, or completed if every file was in, by the next
apply that writes to DIR, or by --recover alone; see docs/confinement.md.

Exit status: 0 applied or already applied; 1 refused (nothing written);
2 usage or input error (including text that holds no edit, and a --strip
larger than the file names have leading components for).`,
		Args: func(args []string) error {
			if o.recover {
				return cmdline.NoArgs(args)
			}
			return cmdline.ExactArgs(1, "PATCH or -")(args)
		},
		Run: func(ctx context.Context, args []string) error {
			o.stripSet = cmd.Flags.Changed("strip")
			o.guard = holdSignals
			if o.recover {
				return runRecover(o.dir, sio)
			}
			return runApply(o, args[0], sio)
		},
	}
	f := &cmd.Flags
	f.String(&o.dir, "directory", 'C', ".", "apply to files under `DIR`")
	f.String(&o.target, "target", 0, "", "the file a single-file patch, or one without file headers, applies to (relative to DIR unless absolute)")
	f.Bool(&o.reverse, "reverse", 'R', false, "apply the patch in reverse")
	f.Bool(&o.check, "check", 0, false, "check that the patch applies; write nothing")
	f.String(&o.format, "format", 0, "", "patch format: udiff, udiff-h, udiff-l, search-replace, v4a (default: detect)")
	f.Int(&o.strip, "strip", 'p', 1, "remove `N` leading path components from file names")
	f.Bool(&o.json, "json", 0, false, "print what was applied where, as JSON (see docs/apply-json.md)")
	f.Bool(&o.strict, "strict", 0, false, "apply only a well-formed patch whose context matches exactly")
	f.Bool(&o.recover, "recover", 0, false, "only undo (or complete) a write to DIR that was killed midway, and remove what it left")
	f.AtLeast("strip", 0)
	return cmd
}

// loadPatch reads and parses a patch, detecting its format unless given,
// and points it at target when one is given.
func loadPatch(sio Stdio, name, format string, strip int, target string) (*patch.Patch, patch.Format, error) {
	text, err := ReadInput(sio, name)
	if err != nil {
		return nil, "", err
	}
	var f patch.Format
	if format != "" {
		if f, err = patch.ParseFormat(format); err != nil {
			return nil, "", Usage(err)
		}
	} else {
		var ok bool
		if f, ok = patch.Detect(text); !ok {
			return nil, "", Usage(fmt.Errorf("%s: no edit found in any known format", name))
		}
	}
	p, err := patch.Parse(text, f, patch.ParseOptions{Strip: strip})
	if err != nil {
		return nil, "", Usage(fmt.Errorf("%s: %w", name, err))
	}
	if target != "" {
		if len(p.Files) != 1 {
			return nil, "", Usage(fmt.Errorf("--target needs a single-file patch; %s has %d files", name, len(p.Files)))
		}
		repair.Retarget(p.Files[0], target)
	}
	for i, fp := range p.Files {
		if fp.Path() == "" {
			return nil, "", Usage(fmt.Errorf("%s: file %d of the patch names no file; give --target", name, i+1))
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

// applyReport is the --json output of apply, documented in
// docs/apply-json.md. The file and hunk reports are repair's.
type applyReport struct {
	Status    string              `json:"status"`
	Mode      string              `json:"mode"`
	Check     bool                `json:"check,omitempty"`
	Reverse   bool                `json:"reverse,omitempty"`
	Format    patch.Format        `json:"format,omitempty"`
	Extracted string              `json:"extracted,omitempty"`
	Repairs   []string            `json:"repairs,omitempty"`
	Recovered []string            `json:"recovered,omitempty"`
	Files     []repair.FileReport `json:"files"`
	Error     string              `json:"error,omitempty"`
}

func runApply(o applyOptions, name string, sio Stdio) error {
	o.dir, o.target = targetDir(o.dir, o.target)
	rep := applyReport{Mode: "tolerant", Check: o.check, Reverse: o.reverse, Files: []repair.FileReport{}}
	if o.strict {
		rep.Mode = "strict"
	}
	root, err := openRoot(o.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if !o.check {
		// From the reads to the writes, so that an apply by another
		// process in between is not overwritten.
		unlock, err := root.Lock()
		if err != nil {
			return Failed(fmt.Errorf("lock %s: %w", o.dir, err))
		}
		defer unlock()
		// A write killed midway is finished before anything is read.
		if rep.Recovered, err = root.Recover(); err != nil {
			return Failed(err)
		}
		pauseWrites(root, sio)
	}
	results, status, err := applyPatch(o, root, name, sio, &rep)
	if err == nil && !o.check {
		err = writeGuarded(root, results, o.guard)
		if err != nil {
			rep.Status = repair.StatusRefused
			err = Failed(err)
		}
	}
	if err != nil {
		rep.Error = err.Error()
		if rep.Status == "" {
			rep.Status = repair.StatusRefused
		}
	} else {
		rep.Status = status
	}
	if o.json {
		if werr := WriteJSON(sio, rep); werr != nil {
			return werr
		}
	} else if err == nil {
		if werr := writeAlready(sio, rep.Files); werr != nil {
			return werr
		}
	}
	return err
}

// runRecover undoes, or completes, a write to dir that was killed midway
// and lists what it did.
func runRecover(dir string, sio Stdio) error {
	root, err := openRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	unlock, err := root.Lock()
	if err != nil {
		return Failed(fmt.Errorf("lock %s: %w", dir, err))
	}
	defer unlock()
	did, err := root.Recover()
	for _, d := range did {
		fmt.Fprintln(sio.Out, d)
	}
	if err != nil {
		return Failed(err)
	}
	if len(did) == 0 {
		fmt.Fprintln(sio.Out, "nothing to recover")
	}
	return nil
}

// pauseWrites stops the writes, for tests that kill them midway, at the
// point (see patch.Root.OnWrite) named by PATCHBENCH_TEST_PAUSE_WRITE:
// the command says so on standard error and waits to be killed.
func pauseWrites(root *patch.Root, sio Stdio) {
	point := os.Getenv("PATCHBENCH_TEST_PAUSE_WRITE")
	if point == "" {
		return
	}
	root.OnWrite(func(p string) {
		if p == point {
			fmt.Fprintf(sio.Err, "patchbench: paused at %s\n", p)
			time.Sleep(time.Hour) // until killed
		}
	})
}

// writeGuarded writes the results, inside guard's window when there is one.
func writeGuarded(root *patch.Root, results []patch.FileResult, guard func() (func(), error)) error {
	if guard != nil {
		done, err := guard()
		if err != nil {
			return err
		}
		defer done()
	}
	return root.WriteResults(results)
}

// holdSignals keeps SIGINT and SIGTERM from ending the process between the
// files of a multi-file write: they are caught for the length of the
// writes only, then the default handling is back and a signal that came
// meanwhile is raised again, so the command ends as it would have, with
// every file written. Caught, not ignored: an ignored signal stays ignored
// in every child the process starts later, and for the rest of a
// long-lived process.
func holdSignals() (func(), error) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return func() {
		signal.Stop(ch)
		select {
		case s := <-ch:
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Signal(s)
			}
		default:
		}
	}, nil
}

// writeAlready lists the files and hunks whose change was already there.
func writeAlready(sio Stdio, files []repair.FileReport) error {
	for _, fr := range files {
		name := fr.Path
		if name == "" {
			name = fr.OldPath
		}
		n := 0
		for _, h := range fr.Hunks {
			if h.Status == repair.StatusAlreadyApplied {
				n++
				if _, err := fmt.Fprintf(sio.Out, "%s: hunk %d already applied at line %d\n", name, h.Hunk, h.Line); err != nil {
					return err
				}
			}
		}
		if n == 0 && fr.Status == repair.StatusAlreadyApplied {
			if _, err := fmt.Fprintf(sio.Out, "%s: already applied: %s\n", name, fr.Reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyPatch computes the new contents, strictly or tolerantly, filling in
// the report as it goes, and returns them with the status of success.
func applyPatch(o applyOptions, root *patch.Root, name string, sio Stdio, rep *applyReport) ([]patch.FileResult, string, error) {
	if o.strict {
		p, f, err := loadPatch(sio, name, o.format, o.strip, o.target)
		if err != nil {
			return nil, "", err
		}
		rep.Format = f
		results, err := patch.Apply(p, root, patch.ApplyOptions{Reverse: o.reverse, Git: true})
		if err != nil {
			var he *patch.HunkError
			if errors.As(err, &he) {
				rep.Files = append(rep.Files, repair.FileReport{Path: he.File, Status: repair.StatusRefused, Reason: err.Error(),
					Hunks: []repair.HunkReport{{Hunk: he.Hunk, Status: repair.StatusRefused, Reason: he.Err.Error()}}})
			}
			return nil, "", Failed(err)
		}
		for _, r := range results {
			rep.Files = append(rep.Files, repair.ResultReport(r))
		}
		return results, repair.StatusApplied, nil
	}

	res, err := tolerant(o, root, name, sio, rep)
	if err != nil {
		return nil, "", err
	}
	return res.Results, res.Status, nil
}

// tolerant runs the repair pipeline on the patch in name.
func tolerant(o applyOptions, root *patch.Root, name string, sio Stdio, rep *applyReport) (*repair.Result, error) {
	text, err := ReadInput(sio, name)
	if err != nil {
		return nil, err
	}
	var f patch.Format
	if o.format != "" {
		if f, err = patch.ParseFormat(o.format); err != nil {
			return nil, Usage(err)
		}
	}
	res, err := repair.Repair(text, repair.Options{
		Format:     f,
		Target:     o.target,
		FS:         root,
		Files:      listFiles(root),
		Reverse:    o.reverse,
		Strip:      o.strip,
		FixedStrip: o.stripSet,
	})
	rep.Format, rep.Extracted, rep.Repairs = res.Format, res.Extracted, res.Repairs
	if res.Files != nil {
		rep.Files = res.Files
	}
	if err != nil {
		rep.Status = res.Status
		if errors.Is(err, repair.ErrNoEdit) || errors.Is(err, repair.ErrStrip) {
			return nil, Usage(fmt.Errorf("%s: %w", name, err))
		}
		return nil, Failed(err)
	}
	return res, nil
}

// openRoot opens the directory a patch applies to; every read and write of
// the patch goes through it (see patch.Root).
func openRoot(dir string) (*patch.Root, error) {
	root, err := patch.OpenRoot(dir)
	if err != nil {
		return nil, Usage(err)
	}
	return root, nil
}

// listFiles lists the regular files under the root, for patches that name
// no file. Symbolic links are not listed: the root refuses them.
func listFiles(root *patch.Root) func() ([]string, error) {
	return func() ([]string, error) {
		var out []string
		err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (patch.IsDotGit(d.Name()) || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				if info, err := d.Info(); err == nil && info.Size() < 4<<20 {
					out = append(out, p)
				}
			}
			if len(out) > 50000 {
				return fmt.Errorf("more than 50000 files under %s: give --target", root.Dir())
			}
			return nil
		})
		return out, err
	}
}

// WriteJSON writes v as indented JSON to standard output.
func WriteJSON(sio Stdio, v any) error {
	enc := json.NewEncoder(sio.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
