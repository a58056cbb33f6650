package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

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
				// Recovering writes (it undoes or completes a killed
				// write); a dry run must write nothing.
				if o.check {
					return fmt.Errorf("--recover writes to DIR (it undoes an interrupted write); it cannot be combined with --check or --dry-run")
				}
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
	f.Bool(&o.check, "dry-run", 0, false, "the same as --check (GNU patch's spelling)")
	f.String(&o.format, "format", 0, "", "patch format: udiff, udiff-h, udiff-l, search-replace, v4a (default: detect)")
	f.Int(&o.strip, "strip", 'p', 1, "remove `N` leading path components from file names")
	f.Bool(&o.json, "json", 0, false, "print what was applied where, as JSON (see docs/apply-json.md)")
	f.Bool(&o.strict, "strict", 0, false, "apply only a well-formed patch whose context matches exactly")
	f.Bool(&o.recover, "recover", 0, false, "only undo (or complete) a write to DIR that was killed midway, and remove what it left")
	f.AtLeast("strip", 0)
	return cmd
}

// parseFormat reads --format: empty means detect.
func parseFormat(format string) (patch.Format, error) {
	if format == "" {
		return "", nil
	}
	f, err := patch.ParseFormat(format)
	if err != nil {
		return "", Usage(err)
	}
	return f, nil
}

// targetDir turns an absolute --target into its directory and base name, so
// that patch paths stay relative to the directory applied to.
func targetDir(dir, target string) (string, string) {
	if filepath.IsAbs(target) {
		return filepath.Dir(target), filepath.Base(target)
	}
	return dir, target
}

func runApply(o applyOptions, name string, sio Stdio) error {
	label := rootLabel(o.dir, o.target)
	o.dir, o.target = targetDir(o.dir, o.target)
	root, err := openRoot(o.dir, label)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	if !o.check {
		pauseWrites(root, sio)
	}
	opts := repair.ApplyOptions{Name: name, Strict: o.strict, Format: f, Target: o.target,
		Reverse: o.reverse, Check: o.check, Strip: o.strip, FixedStrip: o.stripSet, Guard: o.guard, Brief: !o.json}
	rep, err := applyInput(root, name, sio, opts)
	if rep == nil {
		return err
	}
	err = exitOf(err)
	if o.json {
		if werr := WriteJSON(sio, rep); werr != nil {
			return werr
		}
	} else if err == nil {
		if werr := writeAlready(sio.Out, rep); werr != nil {
			return werr
		}
	}
	return err
}

// applyInput applies the patch named name ("-" for standard input) so
// that a large diff can take the fast path (repair.ApplyReader), which
// streams it instead of holding it whole: a regular file, or standard
// input redirected from one, is read where it is; standard input on a
// pipe is spooled to a temporary file when it holds repair.FastMinSize
// bytes or more, else held in memory (readStdin, repair.ApplyText);
// another named input (a named pipe) is read whole. A nil report comes
// with the input's error (exit 2).
func applyInput(root *patch.Root, name string, sio Stdio, opts repair.ApplyOptions) (*repair.Report, error) {
	if name != "-" {
		if pf, size, ok := openPatchFile(name); ok {
			defer pf.Close()
			return repair.ApplyReader(root, pf, size, opts)
		}
		text, err := ReadInput(sio, name)
		if err != nil {
			return nil, err
		}
		return repair.Apply(root, text, opts)
	}
	if f, ok := sio.In.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil && off <= fi.Size() {
				// Read from where standard input is, and leave it at its
				// end, as reading it would.
				defer f.Seek(0, io.SeekEnd)
				return repair.ApplyReader(root, io.NewSectionReader(f, off, fi.Size()-off), fi.Size()-off, opts)
			}
		}
	}
	sp, text, err := readStdin(sio.In, newSpool)
	if err != nil {
		return nil, Usage(fmt.Errorf("read -: %w", err))
	}
	if sp == nil {
		return repair.ApplyText(root, unsafe.String(unsafe.SliceData(text), len(text)), opts)
	}
	defer sp.Close()
	return repair.ApplyReader(root, sp, sp.size, opts)
}

// readStdin reads standard input: whole into memory (text) when it is
// under repair.FastMinSize or no temporary file can be written (a full
// disk), else into the file create makes (sp).
func readStdin(in io.Reader, create func() (*spooled, error)) (sp *spooled, text []byte, err error) {
	head := make([]byte, repair.FastMinSize)
	n, err := io.ReadFull(in, head)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, head[:n], nil
	case err != nil:
		return nil, nil, err
	}
	sp, err = create()
	if err != nil {
		rest, err := io.ReadAll(in)
		return nil, append(head, rest...), err
	}
	buf := head
	for {
		if _, werr := sp.Write(buf); werr != nil {
			// The bytes before buf are in the file whole: read them
			// back, then buf and the rest, into memory.
			text = make([]byte, sp.size, sp.size+int64(len(buf)))
			_, rerr := sp.ReadAt(text, 0)
			sp.Close()
			if rerr != nil {
				return nil, nil, fmt.Errorf("spool: %w (after %w)", rerr, werr)
			}
			rest, err := io.ReadAll(in)
			return nil, append(append(text, buf...), rest...), err
		}
		sp.size += int64(len(buf))
		n, err := io.ReadFull(in, buf[:cap(buf)])
		buf = buf[:n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if n == 0 {
				return sp, nil, nil
			}
			continue
		}
		if err != nil {
			sp.Close()
			return nil, nil, err
		}
	}
}

// newSpool makes a temporary file for standard input, removed at once so
// that nothing is left if the command is killed (where an open file
// cannot be removed, it is removed at Close).
func newSpool() (*spooled, error) {
	f, err := os.CreateTemp("", "patchbench-stdin-*")
	if err != nil {
		return nil, err
	}
	sp := &spooled{spoolFile: f}
	if os.Remove(f.Name()) != nil {
		sp.name = f.Name()
	}
	return sp, nil
}

// spoolFile is what a spool is written and read through: an *os.File.
type spoolFile interface {
	io.Writer
	io.ReaderAt
	io.Closer
}

// spooled is standard input in a temporary file.
type spooled struct {
	spoolFile
	size int64
	name string // to remove at Close, when it could not be at once
}

func (s *spooled) Close() error {
	err := s.spoolFile.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	return err
}

// openPatchFile opens the patch file name when it is a regular file
// (not a pipe or a directory, which ReadInput reads or refuses).
func openPatchFile(name string) (*os.File, int64, bool) {
	pf, err := os.Open(name)
	if err != nil {
		return nil, 0, false
	}
	fi, err := pf.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		pf.Close()
		return nil, 0, false
	}
	return pf, fi.Size(), true
}

// exitOf gives an error of repair.Apply its exit status: 2 for an input
// error, else 1.
func exitOf(err error) error {
	switch {
	case err == nil:
		return nil
	case repair.KindOf(err).Input():
		return Usage(err)
	}
	return Failed(err)
}

// runRecover undoes, or completes, a write to dir that was killed midway
// and lists what it did.
func runRecover(dir string, sio Stdio) error {
	root, err := openRoot(dir, "-C "+dir)
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
func writeAlready(w io.Writer, rep *repair.Report) error {
	for _, line := range rep.AlreadyApplied() {
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// openRoot opens the directory a patch applies to; every read and write of
// the patch goes through it (see patch.Root).
// openRoot opens the directory a command works under; label is the flag
// and value that named it, so that a missing directory is not taken for a
// missing patch file.
func openRoot(dir, label string) (*patch.Root, error) {
	root, err := patch.OpenRoot(dir)
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, Usage(fmt.Errorf("%s: %w", label, err))
	}
	return root, nil
}

// rootLabel names the flag that gives the directory: --target when it is
// absolute (its directory is the root), else -C.
func rootLabel(dir, target string) string {
	if filepath.IsAbs(target) {
		return "--target " + target
	}
	return "-C " + dir
}

// WriteJSON writes v as indented JSON to standard output.
func WriteJSON(sio Stdio, v any) error {
	enc := json.NewEncoder(sio.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
