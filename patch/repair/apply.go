package repair

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/patchbench/patchbench/patch"
)

// ApplyOptions controls [Apply].
type ApplyOptions struct {
	// Name names the patch text in error messages: a file name, or "-"
	// for standard input.
	Name string
	// Strict applies only a well-formed patch whose context matches
	// exactly, as git apply does (patch.Parse and patch.Apply); otherwise
	// the text is repaired and placed ([Repair]).
	Strict bool
	// Format of the patch; empty means detect.
	Format patch.Format
	// Target is the file, relative to the root, that a single-file patch
	// or one naming no file applies to.
	Target string
	// Reverse undoes the edit instead of making it.
	Reverse bool
	// Check computes and reports, and writes nothing (and takes no lock).
	Check bool
	// Strip is the number of leading path components to remove from the
	// file names: always in strict mode, and in tolerant mode when
	// FixedStrip is set (else it is decided per file, see
	// [Options.Strip]).
	Strip      int
	FixedStrip bool
	// Guard, when set, is called after the new contents are computed and
	// before the first write; its error stops the apply with nothing
	// written, and the function it returns is called when the writes are
	// done. The CLI holds interrupts off the writes with it; the MCP
	// server refuses the writes of a call it has given up on.
	Guard func() (done func(), err error)
	// Brief leaves out of the report the hunks that [ApplyReader]'s fast
	// path applied exactly at their own places (see fast.go): the command
	// line prints them only with --json, and 100,000 hunk reports weigh
	// as much as the file. Nothing else changes.
	Brief bool
}

// Modes of an apply, as the report names them.
const (
	ModeTolerant = "tolerant"
	ModeStrict   = "strict"
)

// Report is what an apply did: the JSON of apply --json, documented in
// docs/apply-json.md.
type Report struct {
	Status    string       `json:"status"`
	Mode      string       `json:"mode"`
	Check     bool         `json:"check,omitempty"`
	Reverse   bool         `json:"reverse,omitempty"`
	Format    patch.Format `json:"format,omitempty"`
	Extracted string       `json:"extracted,omitempty"`
	Repairs   []string     `json:"repairs,omitempty"`
	// Recovered lists what finishing an earlier write, killed midway,
	// did (see patch.Root.Recover).
	Recovered []string     `json:"recovered,omitempty"`
	Files     []FileReport `json:"files"`
	Error     string       `json:"error,omitempty"`
	// Kind is why the apply was refused (KindNone when it was not).
	Kind Kind `json:"-"`
	// Results are the new file contents: written, unless Check, when the
	// status is applied.
	Results []patch.FileResult `json:"-"`

	res *Result // the tolerant repair, for Canonical
}

// Canonical returns the edit of a tolerant apply as a well-formed patch
// that git apply accepts (see [Result.Canonical]); nil in strict mode and
// for a refusal.
func (r *Report) Canonical() *patch.Patch {
	if r.res == nil || r.Status == StatusRefused {
		return nil
	}
	return r.res.Canonical()
}

// Apply applies the patch text to the files under root, all or nothing:
// unless Check, it takes the root's lock (so that an apply by another
// process between the reads and the writes is not overwritten), finishes
// a write killed midway (patch.Root.Recover), parses the text strictly or
// repairs it, and writes every file through the journal and atomic
// renames (patch.Root.WriteResults) inside the Guard's window. The report
// says what happened to each file and hunk, also on error; the error's
// [KindOf] is the report's Kind, and an input error (Kind.Input) is the
// text's or the options' fault, not the files'.
func Apply(root *patch.Root, text string, opts ApplyOptions) (*Report, error) {
	return applySource(root, source{text: text}, opts)
}

// ApplyReader is [Apply] with the patch text read from src, size bytes:
// a large well-formed git diff of one file whose hunks all fit exactly
// at their own places is applied by streaming it (the fast path, which
// makes the decision the engine makes, see fast.go), with no copy of the
// text and the new content written straight to its file; anything else
// is read whole and applied as Apply does. A read error is an input
// error (KindBadInput) naming the patch.
func ApplyReader(root *patch.Root, src io.ReaderAt, size int64, opts ApplyOptions) (*Report, error) {
	return applySource(root, source{r: src, size: size}, opts)
}

// ApplyText is [ApplyReader] on a text held in memory (the MCP server's
// apply_patch, a patch read from a pipe): the fast path reads it from
// memory, and the engine takes it as it is, uncopied. Unlike [Apply], the
// report of a patch the fast path took has no [Report.Canonical].
func ApplyText(root *patch.Root, text string, opts ApplyOptions) (*Report, error) {
	return applySource(root, source{text: text, held: true, r: strings.NewReader(text), size: int64(len(text))}, opts)
}

// source is the patch text, or where to read it, or both (held).
type source struct {
	text string
	held bool
	r    io.ReaderAt
	size int64
}

// read returns the whole text.
func (s source) read(name string) (string, error) {
	if s.r == nil || s.held {
		return s.text, nil
	}
	b := make([]byte, s.size)
	if _, err := s.r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && len(b) == 0) {
		return "", kinded{fmt.Errorf("read %s: %w", name, err), KindBadInput}
	}
	// Nothing writes b: the text shares it rather than copying a patch
	// that may be as large as the files it edits.
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

func applySource(root *patch.Root, src source, opts ApplyOptions) (*Report, error) {
	rep := &Report{Mode: ModeTolerant, Check: opts.Check, Reverse: opts.Reverse, Files: []FileReport{}}
	if opts.Strict {
		rep.Mode = ModeStrict
	}
	err := apply(root, src, opts, rep)
	if err != nil {
		rep.Error, rep.Kind, rep.Results = err.Error(), KindOf(err), nil
		if rep.Status == "" {
			rep.Status = StatusRefused
		}
	}
	return rep, err
}

func apply(root *patch.Root, src source, opts ApplyOptions, rep *Report) error {
	if !opts.Check {
		unlock, err := root.Lock()
		if err != nil {
			return kinded{fmt.Errorf("lock %s: %w", root.Dir(), err), KindWrite}
		}
		defer unlock()
		// A write killed midway is finished before anything is read.
		if rep.Recovered, err = root.Recover(); err != nil {
			return kinded{err, KindWrite}
		}
	}
	status := StatusApplied
	if src.r == nil || !applyFast(root, src.r, src.size, opts, opts.Brief, rep) {
		text, err := src.read(opts.Name)
		if err != nil {
			return err
		}
		if opts.Strict {
			status, err = applyStrictText(root, text, opts, rep)
		} else {
			status, err = applyTolerant(root, text, opts, rep)
		}
		if err != nil {
			return err
		}
	}
	if !opts.Check {
		if err := writeGuarded(root, rep.Results, opts.Guard); err != nil {
			rep.Status = StatusRefused
			return kinded{err, KindWrite}
		}
	}
	rep.Status = status
	return nil
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

// applyStrictText parses the text strictly and applies it as git apply
// does.
func applyStrictText(root *patch.Root, text string, opts ApplyOptions, rep *Report) (string, error) {
	p, f, err := ParseStrict(text, opts.Name, opts.Format, opts.Strip, opts.Target)
	if err != nil {
		return "", err
	}
	rep.Format = f
	results, err := patch.Apply(p, root, patch.ApplyOptions{Reverse: opts.Reverse, Git: true})
	if err != nil {
		kind := strictKind(err)
		var he *patch.HunkError
		if errors.As(err, &he) {
			rep.Files = append(rep.Files, FileReport{Path: he.File, Status: StatusRefused, Reason: err.Error(), Kind: kind,
				Hunks: []HunkReport{{Hunk: he.Hunk, Status: StatusRefused, Reason: he.Err.Error(), Kind: kind}}})
		}
		return "", kinded{err, kind}
	}
	for _, r := range results {
		rep.Files = append(rep.Files, ResultReport(r))
	}
	rep.Results = results
	return StatusApplied, nil
}

// ParseStrict parses a patch strictly, detecting its format unless given,
// and points it at target when one is given. Its errors are input errors
// (KindNoEdit, KindBadInput) naming the patch by name.
func ParseStrict(text, name string, format patch.Format, strip int, target string) (*patch.Patch, patch.Format, error) {
	f := format
	if f == "" {
		var ok bool
		if f, ok = patch.Detect(text); !ok {
			return nil, "", kinded{fmt.Errorf("%s: no edit found in any known format", name), KindNoEdit}
		}
	}
	p, err := patch.Parse(text, f, patch.ParseOptions{Strip: strip})
	if err != nil {
		return nil, "", kinded{fmt.Errorf("%s: %w", name, err), KindBadInput}
	}
	if target != "" {
		if len(p.Files) != 1 {
			return nil, "", kinded{fmt.Errorf("--target needs a single-file patch; %s has %d files", name, len(p.Files)), KindBadInput}
		}
		Retarget(p.Files[0], target)
	}
	for i, fp := range p.Files {
		if fp.Path() == "" {
			return nil, "", kinded{fmt.Errorf("%s: file %d of the patch names no file; give --target", name, i+1), KindBadInput}
		}
	}
	return p, f, nil
}

// strictKind is the kind of a strict apply's refusal.
func strictKind(err error) Kind {
	switch {
	case errors.Is(err, patch.ErrUnsafePath):
		return KindUnsafePath
	case errors.Is(err, patch.ErrFileExists):
		return KindFileExists
	case errors.Is(err, patch.ErrFileMissing):
		return KindFileNotFound
	case errors.Is(err, patch.ErrNoPath):
		return KindNoFile
	case errors.Is(err, patch.ErrAmbiguous):
		return KindAmbiguous
	}
	return KindContextNotFound
}

// applyTolerant repairs the text and places it in the files.
func applyTolerant(root *patch.Root, text string, opts ApplyOptions, rep *Report) (string, error) {
	res, err := Repair(text, Options{
		Format:     opts.Format,
		Target:     opts.Target,
		FS:         root,
		Files:      RootFiles(root),
		Reverse:    opts.Reverse,
		Strip:      opts.Strip,
		FixedStrip: opts.FixedStrip,
	})
	rep.Format, rep.Extracted, rep.Repairs, rep.res = res.Format, res.Extracted, res.Repairs, res
	if res.Files != nil {
		rep.Files = res.Files
	}
	if err != nil {
		rep.Status = res.Status
		if errors.Is(err, ErrNoEdit) || errors.Is(err, ErrStrip) {
			return "", kinded{fmt.Errorf("%s: %w", opts.Name, err), KindOf(err)}
		}
		return "", err
	}
	rep.Results = res.Results
	return res.Status, nil
}

// RootFiles lists the regular files under the root, for patches that name
// no file ([Options.Files]). Symbolic links are not listed: the root
// refuses them; nor are .git and node_modules directories and files of 4
// MiB or more.
func RootFiles(root *patch.Root) func() ([]string, error) {
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

// ConvertOptions controls [Convert].
type ConvertOptions struct {
	// Name names the patch text in error messages.
	Name string
	// From is the patch's format (empty: detect); To the format wanted.
	From, To patch.Format
	// Strip and Target are as in [ParseStrict].
	Strip  int
	Target string
	// Context is the lines of context when the edit is made anew.
	Context int
}

// Convert parses text strictly and prints it in format o.To. When either
// format has no line numbers the edit is applied in memory to the files
// under dir, which is opened then only, and made anew (see
// patch.Convert). Its input errors (Kind.Input) are those of ParseStrict
// and a dir that cannot be opened.
func Convert(text, dir string, o ConvertOptions) (string, error) {
	p, from, err := ParseStrict(text, o.Name, o.From, o.Strip, o.Target)
	if err != nil {
		return "", err
	}
	var fsys patch.FileSystem
	if !from.HasPositions() || !o.To.HasPositions() {
		root, err := patch.OpenRoot(dir)
		if err != nil {
			return "", kinded{err, KindBadInput}
		}
		defer root.Close()
		fsys = root
	}
	if p, err = patch.Convert(p, fsys, from, o.To, o.Context); err != nil {
		return "", err
	}
	return patch.Print(p, o.To)
}

// AlreadyApplied lists, one line each, the hunks whose change was already
// in the files ("NAME: hunk N already applied at line L"), and the files
// already applied without hunks ("NAME: already applied: REASON").
func (r *Report) AlreadyApplied() []string {
	var out []string
	for _, fr := range r.Files {
		name := fr.Path
		if name == "" {
			name = fr.OldPath
		}
		n := 0
		for _, h := range fr.Hunks {
			if h.Status == StatusAlreadyApplied {
				n++
				out = append(out, fmt.Sprintf("%s: hunk %d already applied at line %d", name, h.Hunk, h.Line))
			}
		}
		if n == 0 && fr.Status == StatusAlreadyApplied {
			out = append(out, fmt.Sprintf("%s: already applied: %s", name, fr.Reason))
		}
	}
	return out
}
