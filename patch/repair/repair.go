// Package repair applies edits the way their author meant them, or refuses.
//
// Language models write patches that strict tools reject: wrong hunk counts,
// context lines without their leading space, invented or missing line
// numbers, whitespace drift, hunks out of order, missing file headers. This
// package parses every format tolerantly, places each hunk in its file, and
// returns the new file contents with a canonical unified diff that git apply
// accepts.
//
// # What git accepts
//
// A unified diff that strict mode (patch.Parse and patch.Apply, git apply's
// rules) applies is applied that way first: the default mode accepts all
// that strict mode does, with the same bytes, and reports no repair for
// it.
//
// # Placing a hunk
//
// A hunk is placed in tiers, from exact, to trailing-whitespace-insensitive,
// to whitespace-insensitive, to fuzzy (a few context lines missing from the
// hunk, or invented by it). Every tier counts all the places that fit. A hunk
// is applied only where exactly one place fits, every line it removes is
// found there, and (in the fuzzy tier) enough significant lines agree. When
// two places fit, the patch's own hunk order and, failing that, an exact
// line-number hint may decide; otherwise the hunk is refused as ambiguous
// and the places are listed. A hunk that fits nowhere but whose new side is
// in the file exactly once, with its removed lines gone, is already applied
// (a success that changes nothing, reported with its place, never reversed)
// when the new side says more than its context: an added line that differs
// from the removed ones, or, for a hunk that only removes, exact context on
// both sides of each removed block. A hunk with a removed line that is
// nowhere in the file is stale and refused. Every placed hunk is checked:
// no file line of its span disappears unless it removes it.
//
// Context and removed lines are always taken from the file, so its
// whitespace, line endings and final newline survive. Added lines take the
// file's line endings.
//
// Either every hunk of every file is placed, or nothing is changed: the
// result lists what was refused and why.
package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"syscall"
	"unsafe"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/extract"
)

// Options controls Repair.
type Options struct {
	// Format of the edit; empty means detect.
	Format patch.Format
	// Target is the file a patch without file names, or a single-file patch,
	// applies to.
	Target string
	// FS holds the files the patch applies to.
	FS patch.FileSystem
	// Files lists candidate paths for a patch that names no file and has no
	// Target; the one file where every hunk fits is chosen. May be nil.
	Files func() ([]string, error)
	// Reverse undoes the edit instead of making it.
	Reverse bool
	// Strip is the number of leading path components to remove from file
	// names when FixedStrip is set. Otherwise it is decided per file: one
	// for a/ and b/ names, else whatever names an existing file.
	Strip      int
	FixedStrip bool
}

// Outcomes of a repair. Applied and already applied are successes; an
// already applied hunk, file or patch changes nothing.
const (
	StatusApplied        = "applied"
	StatusAlreadyApplied = "already_applied"
	StatusRefused        = "refused"
	// StatusDuplicate: a hunk that repeats an earlier one (applied once).
	StatusDuplicate = "duplicate"
)

// HunkReport says what happened to one hunk.
type HunkReport struct {
	// Hunk is the 1-based index of the hunk in its file section.
	Hunk   int    `json:"hunk"`
	Status string `json:"status"`
	// Tier is how loosely the hunk matched: exact, whitespace, indentation
	// or fuzzy.
	Tier string `json:"tier,omitempty"`
	// Line is the 1-based line of the original file where the hunk's old
	// lines start (for an already applied hunk, where its new lines are);
	// Offset is Line minus the line number the patch gave (0
	// when it gave none).
	Line   int `json:"line,omitempty"`
	Offset int `json:"offset,omitempty"`
	// Repairs names what had to be assumed, such as "recount" or
	// "context-space".
	Repairs []string `json:"repairs,omitempty"`
	// ContextDropped counts context lines of the hunk not found in the file;
	// ContextRestored counts file lines the hunk left out and that were kept.
	ContextDropped  int `json:"context_dropped,omitempty"`
	ContextRestored int `json:"context_restored,omitempty"`
	// Unmatched lists the dropped context lines as the hunk wrote them.
	Unmatched []string `json:"unmatched,omitempty"`
	// Candidates are the 1-based lines of the places that fit at the
	// deciding tier (the first 10 when there are more).
	Candidates []int  `json:"candidates,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Kind is why a refused hunk was refused.
	Kind Kind `json:"-"`
}

// FileReport says what happened to one file.
type FileReport struct {
	Path    string       `json:"path,omitempty"`
	OldPath string       `json:"old_path,omitempty"`
	Op      string       `json:"op,omitempty"`
	Status  string       `json:"status"`
	Repairs []string     `json:"repairs,omitempty"`
	Hunks   []HunkReport `json:"hunks,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	// Binary: a binary section (a GIT binary patch), applied strictly; it
	// has no hunks.
	Binary bool `json:"binary,omitempty"`
	// Replaced: the file existed at Path and a V4A Add File or Move to
	// replaced it, as codex's apply_patch does.
	Replaced bool `json:"replaced,omitempty"`
	// Kind is why a refused file was refused.
	Kind Kind `json:"-"`
}

// Result is the outcome of Repair.
type Result struct {
	Status string       `json:"status"`
	Format patch.Format `json:"format"`
	// Extracted says where in the input the edit was found, when it was
	// taken out of surrounding text.
	Extracted string `json:"extracted,omitempty"`
	// Repairs names what was assumed about the patch text as a whole:
	// "crlf" (CRLF line endings in the patch's structure), "no-final-newline"
	// (the text ends without one), "v4a-envelope" (no *** Begin Patch).
	Repairs []string     `json:"repairs,omitempty"`
	Files   []FileReport `json:"files"`
	// Results are the new file contents, ready for patch.WriteResults, for
	// the files the edit changes: none when Status is already_applied, nil
	// when it is refused.
	Results []patch.FileResult `json:"-"`

	orig map[string]string // the files as read, for Canonical
}

// Canonical returns the edit as a well-formed patch with exact context and
// line numbers, made anew from the old and new contents, which git apply
// accepts: empty when the edit is already applied, nil when it was refused.
func (r *Result) Canonical() *patch.Patch {
	if r.Status == StatusRefused {
		return nil
	}
	return canonical(r.Results, r.orig)
}

// Errors returned with a Result whose Status is refused.
var (
	ErrRefused = errors.New("refused")
	ErrNoEdit  = errors.New("no edit found")
	// ErrStrip is a fixed Options.Strip that the patch's file names do
	// not have as many leading components for.
	ErrStrip = errors.New("bad --strip")
)

// Error explains a refusal.
type Error struct {
	File   string
	Hunk   int // 1-based, 0 when the whole file is concerned
	Reason string
	Err    error // ErrRefused, ErrNoEdit or ErrStrip
	// Kind is why, from a fixed set.
	Kind Kind
}

func (e *Error) Error() string {
	if e.Hunk > 0 {
		return fmt.Sprintf("repair: hunk %d of %s: %s: %s", e.Hunk, e.File, e.Err, e.Reason)
	}
	if e.File != "" {
		return fmt.Sprintf("repair: %s: %s: %s", e.File, e.Err, e.Reason)
	}
	return fmt.Sprintf("repair: %s: %s", e.Err, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// diags collects patch-level notes.
type diags struct{ list []patch.Diagnostic }

func (d *diags) add(line int, code, msg string) {
	d.list = append(d.list, patch.Diagnostic{Line: line, Code: code, Message: msg})
}

// Repair parses text tolerantly, places every hunk in its file and returns
// the new contents. With an error, the Result still says what happened to
// each file and hunk, and nothing must be written.
func Repair(text string, opts Options) (*Result, error) {
	res := &Result{Status: StatusRefused}
	f := opts.Format
	v4aFirst := !opts.Reverse && opts.Target == "" && opts.FS != nil
	if v4aFirst && (f == "" || f == patch.V4A) && applyV4A(text, opts, res) {
		// A well-formed envelope, as codex's apply_patch takes it.
		res.Format = patch.V4A
		return res, nil
	}
	if bare(text) {
		// A patch and nothing else: extraction could only lose lines that
		// lost their context space and look like prose.
		if f == "" {
			var ok bool
			if f, ok = patch.Detect(text); !ok {
				return res, &Error{Reason: "the text holds no edit in any known format", Err: ErrNoEdit, Kind: KindNoEdit}
			}
		}
	} else {
		// Take the edit out of prose, fences and tags.
		ex, err := extract.Extract(text)
		if errors.Is(err, extract.ErrMixed) || errors.Is(err, extract.ErrRetracted) || errors.Is(err, extract.ErrAlternatives) || errors.Is(err, extract.ErrSample) || errors.Is(err, extract.ErrPartSample) {
			return res, &Error{Reason: err.Error(), Err: ErrRefused, Kind: KindAmbiguous}
		}
		if err != nil {
			// The error's own "extract: no edit found: " would say it
			// twice after this Error's "no edit found: ".
			reason := strings.TrimPrefix(err.Error(), "extract: "+extract.ErrNoEdit.Error()+": ")
			return res, &Error{Reason: reason, Err: ErrNoEdit, Kind: KindNoEdit}
		}
		res.Extracted = ex.Source
		text = ex.Text
		if f == "" {
			f = ex.Format
		}
	}
	res.Format = f
	if applyStrict(text, opts, res) {
		// What strict mode applies, tolerant mode applies the same way.
		return res, nil
	}
	var d diags
	var files []*looseFile
	switch f {
	case patch.V4A:
		if v4aFirst && res.Extracted != "" && applyV4A(text, opts, res) {
			return res, nil
		}
		var err error
		if files, err = parseV4A(text, &d); err != nil {
			return res, &Error{Reason: err.Error(), Err: ErrNoEdit, Kind: KindNoEdit}
		}
	case patch.SearchReplace:
		p, err := patch.Parse(text, f, patch.DefaultParseOptions)
		if err != nil {
			return res, &Error{Reason: err.Error(), Err: ErrNoEdit, Kind: KindNoEdit}
		}
		files = fromStrict(p)
		if err := chained(files); err != nil {
			return res, err
		}
	default:
		files = parseUnified(text, &d)
	}
	if f == patch.V4A || f == patch.SearchReplace {
		for _, lf := range files {
			lf.plain = true
		}
	}
	if text != "" && !strings.HasSuffix(text, "\n") && res.Extracted == "" {
		d.add(0, "no-final-newline", "the patch text does not end with a newline")
	}
	for _, x := range d.list {
		res.Repairs = appendOnce(res.Repairs, x.Code)
	}
	files = dropEmpty(files)
	if opts.Reverse {
		for _, f := range files {
			f.reverse()
			for i, h := range f.hunks {
				if sameSides(h) {
					// A change of trailing whitespace the damage took from
					// both sides: either way it reads the same, so reversed
					// it would strip the whitespace again, not restore it.
					return res, &Error{Reason: fmt.Sprintf("hunk %d of %s: ambiguous: its old and new sides read the same: reversed, nothing says what to restore", i+1, f.newName), Err: ErrRefused, Kind: KindAmbiguous}
				}
			}
		}
	}
	if len(files) == 0 {
		return res, &Error{Reason: "the text holds no hunk", Err: ErrNoEdit, Kind: KindNoEdit}
	}
	if opts.Target != "" && len(files) > 1 {
		// A flag that does not fit the patch: an input error (exit 2), as
		// in strict mode, not a refusal of the edit.
		return res, &Error{Reason: fmt.Sprintf("--target needs a single-file patch; this one has %d files", len(files)), Err: ErrRefused, Kind: KindBadInput}
	}
	width := contextWidth(files)
	markCutEvidence(files)
	ov := overlay{fsys: opts.FS, files: map[string]*string{}}
	for _, lf := range files {
		// The paths renamed or deleted away, as git apply counts them
		// before it applies anything.
		if o, n, _, err := resolvePath(lf, opts, &ov); err == nil && vacates(lf, o, n) {
			ov.vac.Leaves(o)
		}
	}
	var firstErr error
	res.Results = []patch.FileResult{}
	for _, lf := range files {
		fr, fres, err := repairFile(lf, opts, &ov, width)
		res.Files = append(res.Files, fr)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if fr.Status != StatusAlreadyApplied {
			res.Results = append(res.Results, fres)
		}
	}
	if firstErr != nil {
		res.Results = nil
		return res, firstErr
	}
	res.Status = StatusApplied
	if allAlready(res.Files) {
		res.Status = StatusAlreadyApplied
	}
	res.orig = ov.orig
	return res, nil
}

// chained refuses search-replace blocks of which one searches for text
// (an added line among it) that an earlier one writes: Aider applies blocks
// in turn, so the later block may mean the text the earlier one just wrote,
// or the file's own copy of it.
func chained(files []*looseFile) error {
	for _, f := range files {
		for i, a := range f.hunks {
			var neu []string
			var added []bool
			for _, l := range a.lines {
				if l.kind != patch.LineDelete {
					neu = append(neu, l.texts[0])
					added = append(added, l.kind == patch.LineInsert)
				}
			}
			for j, b := range f.hunks[i+1:] {
				j += i + 1
				var old []string
				for _, l := range b.lines {
					if l.kind != patch.LineInsert {
						old = append(old, l.texts[0])
					}
				}
				if len(old) == 0 {
					continue
				}
				for p := 0; p+len(old) <= len(neu); p++ {
					if slices.Equal(neu[p:p+len(old)], old) && slices.Contains(added[p:p+len(old)], true) {
						reason := fmt.Sprintf("ambiguous: block %d searches for lines block %d writes: the lines block %d wrote, or the file's own?", j+1, i+1, i+1)
						return &Error{File: f.newName, Hunk: j + 1, Reason: reason, Err: ErrRefused, Kind: KindAmbiguous}
					}
				}
			}
		}
	}
	return nil
}

// bare reports whether text starts as a patch does, with nothing before it.
func bare(text string) bool {
	s := strings.TrimLeft(text, " \t\r\n")
	// Only unified diffs: search-replace and V4A go through extraction,
	// which also mends a V4A envelope that lacks its end.
	for _, p := range []string{"diff --git ", "--- ", "@@ ", "@@\n", "Index: ", "Binary files "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func allHunksAlready(hrs []HunkReport) bool {
	for _, h := range hrs {
		if h.Status != StatusAlreadyApplied && h.Status != StatusDuplicate {
			return false
		}
	}
	return len(hrs) > 0
}

func allAlready(frs []FileReport) bool {
	for _, fr := range frs {
		if fr.Status != StatusAlreadyApplied {
			return false
		}
	}
	return true
}

func dropEmpty(files []*looseFile) []*looseFile {
	out := files[:0]
	for _, f := range files {
		modeChange := f.oldMode != 0 && f.newMode != 0 && f.oldMode != f.newMode
		if len(f.hunks) > 0 || f.op == patch.Delete || f.op == patch.Rename || f.op == patch.Create || f.bin != nil || f.binErr != nil || modeChange {
			out = append(out, f)
		}
	}
	return out
}

// contextWidth infers the number of context lines the patch was written
// with: the longest run of context at either end of any hunk, 3 if none.
func contextWidth(files []*looseFile) int {
	w := 0
	for _, f := range files {
		for _, h := range f.hunks {
			lead, trail := 0, 0
			for _, l := range h.lines {
				if l.kind != patch.LineContext {
					break
				}
				lead++
			}
			for i := len(h.lines) - 1; i >= 0 && h.lines[i].kind == patch.LineContext; i-- {
				trail++
			}
			if lead == len(h.lines) {
				continue
			}
			w = max(w, lead, trail)
		}
	}
	if w == 0 {
		return 3
	}
	return w
}

// overlay is the file system plus the changes of earlier file sections.
type overlay struct {
	fsys  patch.FileSystem
	files map[string]*string // nil: removed
	orig  map[string]string  // first content read, for the canonical diff
	// missing remembers files the file system does not have.
	missing map[string]bool
	// vac: the paths sections still to come rename or delete away, which
	// a rename or creation may take (two files swapped, x and x/y).
	vac patch.Vacancies
}

func (ov *overlay) read(name string) (string, bool, error) {
	if c, ok := ov.files[name]; ok {
		if c == nil {
			return "", false, nil
		}
		return *c, true, nil
	}
	if ov.vac.UnderLeaving(name, ov.removed) {
		// Under a file that the patch moves away (x renamed to x/y).
		return "", false, nil
	}
	return ov.readOrig(name)
}

// readOrig reads name as it was before the patch.
func (ov *overlay) readOrig(name string) (string, bool, error) {
	if c, ok := ov.orig[name]; ok {
		return c, true, nil
	}
	if ov.missing[name] || ov.fsys == nil {
		return "", false, nil
	}
	c, err := patch.ReadFileString(ov.fsys, name)
	if errors.Is(err, syscall.EISDIR) && ov.vac.Below(name) {
		// A directory whose files the patch moves away (x/y renamed to
		// x): the write checks that nothing else is in it.
		return "", false, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if ov.missing == nil {
			ov.missing = map[string]bool{}
		}
		ov.missing[name] = true
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if ov.orig == nil {
		ov.orig = map[string]string{}
	}
	if _, ok := ov.orig[name]; !ok {
		ov.orig[name] = c
	}
	return c, true, nil
}

// removed reports whether an earlier section removed name.
func (ov *overlay) removed(name string) bool {
	c, ok := ov.files[name]
	return ok && c == nil
}

// written reports whether an earlier section wrote name.
func (ov *overlay) written(name string) bool { return ov.files[name] != nil }

func (ov *overlay) exists(name string) bool {
	_, ok, err := ov.read(name)
	return ok && err == nil
}

// resolvePath picks the file a section is about.
func resolvePath(lf *looseFile, opts Options, ov *overlay) (oldPath, newPath string, repairs []string, err error) {
	if opts.Target != "" {
		switch lf.op {
		case patch.Create:
			return "", opts.Target, nil, nil
		case patch.Delete:
			return opts.Target, "", nil, nil
		}
		return opts.Target, opts.Target, nil, nil
	}
	names := []string{lf.oldName, lf.newName}
	if lf.oldName == "" && lf.newName == "" {
		return "", "", nil, nil
	}
	// With a/ and b/ prefixes strip one component; without them, the names
	// are probably already relative to the root, but the file system decides.
	prefixed := (strings.HasPrefix(lf.oldName, "a/") || lf.oldName == "/dev/null") &&
		(strings.HasPrefix(lf.newName, "b/") || lf.newName == "/dev/null")
	strips := []int{1, 0, 2}
	switch {
	case opts.FixedStrip:
		strips = []int{opts.Strip}
	case !prefixed:
		strips = []int{0, 1, 2}
	}
	var first []string // the conventional reading, used when no file exists
	for _, s := range strips {
		out := make([]string, 2)
		ok := true
		for k, n := range names {
			if n == "/dev/null" || n == "" {
				continue
			}
			p, perr := strip(n, s)
			if perr != nil {
				if opts.FixedStrip {
					// The -p the user gave does not fit the patch: an
					// input error, as in strict mode, not a refusal.
					return "", "", nil, fmt.Errorf("%w: cannot strip %d leading components from %q", ErrStrip, s, n)
				}
				ok = false
				break
			}
			out[k] = p
		}
		if !ok {
			continue
		}
		if lf.op == patch.Create {
			out[0] = ""
		}
		if lf.op == patch.Delete {
			out[1] = ""
		}
		for _, p := range out {
			if p != "" {
				if err := patch.CheckPath(p); err != nil {
					return "", "", nil, err
				}
			}
		}
		if first == nil {
			first = out
			if !prefixed && s == 0 && !lf.plain {
				repairs = []string{"no-ab-prefix"}
			}
		}
		probe := out[0]
		if probe == "" {
			probe = out[1]
		}
		if lf.op != patch.Create && ov.exists(probe) {
			if !prefixed && s == 0 && !lf.plain {
				repairs = []string{"no-ab-prefix"}
			}
			if !prefixed && !opts.FixedStrip {
				// Without a/ and b/ nothing says how many components
				// to strip: a second file that another reading names
				// makes the choice a guess (git apply takes -p1, the
				// first reading here is the name as written).
				if other, o := otherReading(n0(names), s, ov); other != "" {
					return "", "", nil, kinded{fmt.Errorf("%s names %s with -p%d and %s with -p%d, and both exist: say which with -p", n0(names), probe, s, other, o), KindAmbiguous}
				}
			}
			if prefixed && s != 1 && !opts.FixedStrip {
				// a/ and b/ ask for -p1, which git apply and GNU patch
				// -p1 take and which named no file: another strip is
				// an assumption, said like the others.
				repairs = append(repairs, "path-strip")
			}
			return out[0], out[1], repairs, nil
		}
	}
	if first == nil {
		return "", "", nil, fmt.Errorf("%w from %q", errNoName, lf.oldName)
	}
	if lf.op == patch.Modify && first[0] == first[1] && opts.Files != nil {
		// No such file: a model may have written the path relative to a
		// subdirectory. One file whose path ends with it is that file.
		if p, ok := bySuffix(first[0], opts.Files); ok {
			return p, p, append(repairs, "path-suffix"), nil
		}
	}
	return first[0], first[1], repairs, nil
}

// n0 is the name a modified or deleted file is read by.
func n0(names []string) string {
	if names[0] != "" && names[0] != "/dev/null" {
		return names[0]
	}
	return names[1]
}

// otherReading returns a file that exists and that name names with a
// strip o other than s (0 to 2), or "".
func otherReading(name string, s int, ov *overlay) (string, int) {
	for o := 0; o <= 2; o++ {
		if o == s {
			continue
		}
		if p, err := strip(name, o); err == nil && patch.CheckPath(p) == nil && ov.exists(p) {
			return p, o
		}
	}
	return "", 0
}

// bySuffix finds the one listed file whose path ends with /name.
func bySuffix(name string, files func() ([]string, error)) (string, bool) {
	paths, err := files()
	if err != nil {
		return "", false
	}
	found := ""
	for _, p := range paths {
		if strings.HasSuffix(p, "/"+name) {
			if found != "" {
				return "", false
			}
			found = p
		}
	}
	return found, found != ""
}

func strip(name string, n int) (string, error) {
	s := name
	for k := 0; k < n; k++ {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return "", fmt.Errorf("too few components")
		}
		s = s[i+1:]
	}
	if s == "" {
		return "", fmt.Errorf("empty name")
	}
	return s, nil
}

// repairFile places the hunks of one section and computes the new content.
func repairFile(lf *looseFile, opts Options, ov *overlay, width int) (FileReport, patch.FileResult, error) {
	fr := FileReport{Op: lf.op.String(), Status: StatusRefused}
	var res patch.FileResult
	oldPath, newPath, repairs, err := resolvePath(lf, opts, ov)
	if err != nil {
		fr.Path, fr.Reason, fr.Kind = lf.newName, err.Error(), pathKind(err)
		if errors.Is(err, ErrStrip) {
			return fr, res, &Error{File: lf.newName, Reason: strings.TrimPrefix(err.Error(), ErrStrip.Error()+": "), Err: ErrStrip, Kind: fr.Kind}
		}
		return fr, res, &Error{File: lf.newName, Reason: err.Error(), Err: ErrRefused, Kind: fr.Kind}
	}
	fr.Repairs = repairs
	if lf.op == patch.Modify && oldPath != "" && newPath != "" && oldPath != newPath {
		if lf.git {
			// git apply's rule: a git diff whose names differ renames.
			lf.op = patch.Rename
			fr.Op = lf.op.String()
		} else {
			// A traditional diff with two names patches one file in place,
			// chosen by the names in the patch's order in both directions
			// (GNU patch's rule), so a reverse undoes the forward apply.
			if opts.Reverse {
				oldPath = patch.TraditionalTarget(newPath, oldPath, ov.exists)
			} else {
				oldPath = patch.TraditionalTarget(oldPath, newPath, ov.exists)
			}
			newPath = oldPath
		}
	}
	if oldPath == "" && newPath == "" {
		// No names and no target: find the file by its content.
		p, err := findByContent(lf, opts, ov, width)
		if err != nil {
			fr.Reason, fr.Kind = err.Error(), KindNoFile
			if !errors.Is(err, errNoFile) {
				fr.Kind = KindIO // listing the files failed
			}
			return fr, res, &Error{Reason: err.Error(), Err: ErrRefused, Kind: fr.Kind}
		}
		oldPath, newPath = p, p
		fr.Repairs = append(fr.Repairs, "file-by-content")
	}
	fr.Path, fr.OldPath = newPath, oldPath
	name := newPath
	if name == "" {
		name = oldPath
	}
	fail := func(reason string, kind Kind) (FileReport, patch.FileResult, error) {
		fr.Reason, fr.Kind = reason, kind
		return fr, res, &Error{File: name, Reason: reason, Err: ErrRefused, Kind: kind}
	}
	if err := patch.CheckModes(name, lf.oldMode, lf.newMode); err != nil {
		return fail(err.Error(), readKind(err))
	}
	// A path the file system refuses (through a symbolic link, say) is
	// refused here, whatever the section does with it: a creation or the
	// target of a rename would otherwise only fail when written.
	for _, p := range []string{oldPath, newPath} {
		if p == "" {
			continue
		}
		if _, _, err := ov.read(p); err != nil {
			return fail(err.Error(), readKind(err))
		}
	}
	if lf.git && lf.op == patch.Rename && newPath != oldPath && lf.bin == nil && lf.binErr == nil &&
		ov.exists(newPath) && !ov.written(newPath) && !ov.exists(oldPath) && !ov.removed(oldPath) {
		// The source gone and the target there: renamed already, when
		// the target holds what the rename makes. The index line's blob
		// name, when there is one, says what that is; a rename without
		// hunks or index line says nothing of the content, and is taken
		// as done, as GNU patch takes it ("already renamed"); with hunks,
		// every hunk's new side must be at its place in the target
		// (apply once).
		c, _, _ := ov.read(newPath)
		if lf.newHash != "" && !patch.BlobIs(c, lf.newHash) {
			return fail(fmt.Sprintf("%s does not exist and the rename target %s does, but it is not the blob %s the index line names: another file, not this rename applied", oldPath, newPath, lf.newHash), KindFileExists)
		}
		if len(lf.hunks) > 0 {
			_, reports, err := placeHunks(newText(c), lf.hunks, width, newPath)
			if err != nil || !allHunksAlready(reports) {
				return fail(fmt.Sprintf("%s does not exist and the rename target %s does, without the content the patch makes: another file, not this rename applied", oldPath, newPath), KindFileExists)
			}
			fr.Hunks = reports
		}
		fr.Status, fr.Reason = StatusAlreadyApplied, fmt.Sprintf("renamed already: %s does not exist and %s does", oldPath, newPath)
		return fr, res, nil
	}
	if lf.git && lf.op == patch.Copy && newPath != oldPath && lf.bin == nil && lf.binErr == nil &&
		ov.exists(newPath) && !ov.written(newPath) && !ov.vac.Left(newPath) {
		// The target there: copied already when it holds the source's
		// content with the hunks applied (the blob the index line names,
		// when there is one); otherwise the copy would replace a file.
		return copiedAlready(lf, fr, oldPath, newPath, ov, width)
	}
	if lf.git && (lf.op == patch.Rename || lf.op == patch.Copy) && ov.exists(newPath) && (newPath == oldPath || !ov.vac.Take(newPath, ov.written(newPath))) {
		// As git apply: a rename or copy does not replace a file (V4A's
		// Move to does, as codex's apply_patch).
		return fail(fmt.Sprintf("the %s target %s already exists", lf.op, newPath), KindFileExists)
	}
	if lf.bin != nil || lf.binErr != nil {
		return repairBinary(lf, fr, oldPath, newPath, ov)
	}

	content := ""
	op := lf.op
	if op != patch.Create {
		read := ov.read
		if ov.vac.Taken(oldPath) && (op == patch.Rename || op == patch.Delete) {
			read = ov.readOrig // its new content came from an earlier section
		}
		c, ok, err := read(oldPath)
		if err != nil {
			return fail(err.Error(), readKind(err))
		}
		if !ok {
			if op == patch.Modify && allAppends(lf) {
				op = patch.Create
			} else {
				return fail("the file does not exist", KindFileNotFound)
			}
		}
		content = c
	} else if ov.exists(newPath) && !ov.vac.Take(newPath, ov.written(newPath)) {
		// Creating a file that exists: already applied if it has the content.
		c, _, _ := ov.read(newPath)
		if want := createdContent(lf); c == want {
			fr.Status, fr.Reason = StatusAlreadyApplied, "the file already exists with this content"
			return fr, res, nil
		}
		return fail("the file to create already exists", KindFileExists)
	}

	t := newText(content)
	lf.hunks = joinStraySplits(t, lf.hunks)
	newBytes, reports, err := placeHunks(t, lf.hunks, width, name)
	fr.Hunks = reports
	if err != nil && op == patch.Delete {
		// A deletion's hunks are the whole file: where they do not fit,
		// the file is not what the patch deletes, whatever the hunk's
		// place says.
		if k, why := deletionDiffers(t, lf.hunks, name); why != "" {
			err = &Error{File: name, Hunk: k + 1, Reason: why, Err: ErrRefused, Kind: KindOf(err)}
			for i := range reports {
				if reports[i].Status == StatusRefused {
					reports[i].Reason = why
				}
			}
		}
	}
	if err != nil {
		fr.Reason, fr.Kind = err.Error(), KindOf(err)
		return fr, res, err
	}
	modeOld, modeNew := patch.ResultModes(op, lf.oldMode, lf.newMode)
	if op == patch.Modify && modeNew == 0 && allHunksAlready(reports) {
		fr.Status = StatusAlreadyApplied
		return fr, res, nil
	}
	if op == patch.Modify && modeNew != 0 && (len(reports) == 0 || allHunksAlready(reports)) && !ov.written(oldPath) && hasMode(ov.fsys, oldPath, modeNew) {
		// The mode change is made already, and every hunk: a second apply
		// changes nothing and says so.
		fr.Status, fr.Reason = StatusAlreadyApplied, fmt.Sprintf("the file's mode is %o already", modeNew)
		return fr, res, nil
	}
	// The new content is made once, as the bytes of the result; later
	// sections read it as a string, which nothing changes while Repair runs.
	newContent := unsafe.String(unsafe.SliceData(newBytes), len(newBytes))
	if op == patch.Delete && newContent != "" && len(lf.hunks) > 0 {
		if _, why := deletionDiffers(t, lf.hunks, name); why != "" {
			return fail(why, KindBadDeletion)
		}
		return fail("the patch deletes the file but leaves lines in it", KindBadDeletion)
	}
	fr.Status = StatusApplied
	fr.Op = op.String()
	res = patch.FileResult{OldPath: oldPath, Path: newPath, Op: op, OldMode: modeOld, Mode: modeNew}
	if op == patch.Create {
		res.OldPath = ""
	}
	// vacate: the path holds nothing now, or the new file that took it.
	vacate := func() {
		if !ov.vac.Left(oldPath) {
			ov.files[oldPath] = nil
		}
	}
	switch op {
	case patch.Delete:
		vacate()
	default:
		res.Content = newBytes
		if op == patch.Rename {
			vacate()
		}
		ov.files[newPath] = &newContent
	}
	return fr, res, nil
}

// copiedAlready judges a copy whose target exists: already applied when
// the target is the source with the hunks applied, else refused.
func copiedAlready(lf *looseFile, fr FileReport, oldPath, newPath string, ov *overlay, width int) (FileReport, patch.FileResult, error) {
	var res patch.FileResult
	target, _, _ := ov.read(newPath)
	src, ok, _ := ov.read(oldPath)
	made, why := "", ""
	if !ok {
		why = fmt.Sprintf("the copy target %s already exists and the source %s does not", newPath, oldPath)
	} else if b, _, err := placeHunks(newText(src), lf.hunks, width, newPath); err != nil {
		why = fmt.Sprintf("the copy target %s already exists and the hunks do not fit the source %s: %v", newPath, oldPath, err)
	} else {
		made = string(b)
	}
	if why == "" && (made != target || lf.newHash != "" && !patch.BlobIs(target, lf.newHash)) {
		why = fmt.Sprintf("the copy target %s already exists and is not the copy of %s the patch makes", newPath, oldPath)
	}
	if why != "" {
		fr.Reason, fr.Kind = why, KindFileExists
		return fr, res, &Error{File: newPath, Reason: why, Err: ErrRefused, Kind: KindFileExists}
	}
	fr.Status, fr.Reason = StatusAlreadyApplied, fmt.Sprintf("copied already: %s holds the copy of %s the patch makes", newPath, oldPath)
	return fr, res, nil
}

// deletionDiffers compares the file with the lines a deletion's hunks
// remove (and keep, as context), in order, and says where they first
// differ: the hunk (0-based) and why, or "" when the lines are the file's.
func deletionDiffers(t *text, hunks []*looseHunk, name string) (int, string) {
	const head = "the file's content differs from what the patch deletes: "
	n := 0 // file lines compared
	for k, h := range hunks {
		for _, l := range h.lines {
			if l.kind == patch.LineInsert || l.elision {
				continue
			}
			want := strings.TrimSuffix(l.texts[0], "\r")
			if n >= len(t.lines) {
				return k, fmt.Sprintf("%s%s has %d lines, the patch deletes more (line %d would be %q)", head, name, len(t.lines), n+1, want)
			}
			if got := strings.TrimSuffix(t.lines[n], "\r"); got != want {
				return k, fmt.Sprintf("%sline %d of %s is %q, the patch deletes %q", head, n+1, name, got, want)
			}
			n++
		}
	}
	if n < len(t.lines) {
		return len(hunks) - 1, fmt.Sprintf("%s%s has %d lines, the patch deletes %d (line %d is %q)", head, name, len(t.lines), n, n+1, strings.TrimSuffix(t.lines[n], "\r"))
	}
	return 0, ""
}

// hasMode reports whether name, in a file system that tells (a
// patch.Root), has git mode mode already: executable or not.
func hasMode(fsys patch.FileSystem, name string, mode uint32) bool {
	if r, ok := fsys.(*recordFS); ok {
		fsys = r.fsys
	}
	x, ok := fsys.(interface {
		Executable(name string) (bool, error)
	})
	if !ok {
		return false
	}
	exe, err := x.Executable(name)
	return err == nil && exe == (mode&0o111 != 0)
}

// vacates reports whether a section with these resolved names renames or
// deletes its file away (a git diff whose names differ renames).
func vacates(lf *looseFile, oldPath, newPath string) bool {
	switch {
	case oldPath == "":
		return false
	case lf.op == patch.Rename || lf.op == patch.Delete:
		return true
	}
	return lf.op == patch.Modify && lf.git && newPath != "" && newPath != oldPath
}

func allAppends(lf *looseFile) bool {
	for _, h := range lf.hunks {
		for _, l := range h.lines {
			if l.kind != patch.LineInsert {
				return false
			}
		}
	}
	return len(lf.hunks) > 0
}

func createdContent(lf *looseFile) string {
	var lines []string
	eol := true
	for _, h := range lf.hunks {
		for _, l := range h.lines {
			if l.kind == patch.LineInsert {
				lines = append(lines, l.texts[0])
			}
		}
		if h.newNoEOL {
			eol = false
		}
	}
	return patch.JoinLines(lines, eol)
}

// findByContent tries every candidate file and keeps the one where every
// hunk fits.
func findByContent(lf *looseFile, opts Options, ov *overlay, width int) (string, error) {
	if opts.Files == nil {
		return "", fmt.Errorf("%w; give a target", errNoFile)
	}
	paths, err := opts.Files()
	if err != nil {
		return "", err
	}
	var fits []string
	for _, p := range paths {
		c, ok, err := ov.read(p)
		if err != nil || !ok {
			continue
		}
		if _, _, err := placeHunks(newText(c), lf.hunks, width, p); err == nil {
			fits = append(fits, p)
		}
	}
	switch len(fits) {
	case 0:
		return "", fmt.Errorf("%w and fits none", errNoFile)
	case 1:
		return fits[0], nil
	}
	sort.Strings(fits)
	return "", fmt.Errorf("%w and fits several: %s", errNoFile, strings.Join(fits, ", "))
}

// canonical makes the unified diff of the final contents. Sections that
// touch a file again (a model that wrote two sections for one file) are
// folded into one section from the original content to the final one: git
// apply reads every section against the original file, so a second section
// for the same path would not apply. A file left as it was gets no section.
func canonical(results []patch.FileResult, orig map[string]string) *patch.Patch {
	type chain struct {
		from, to string // original and current path; "" for none
		content  string
		copy     bool
		binary   bool   // a binary patch made it: print it as one
		oldMode  uint32 // the modes a section changed or created, 0 if none
		mode     uint32
	}
	var chains []*chain
	byPath := map[string]*chain{} // current path → its chain
	for _, r := range results {
		c := byPath[r.OldPath]
		if r.OldPath == "" || c == nil || r.Op == patch.Copy {
			c = &chain{from: r.OldPath, copy: r.Op == patch.Copy}
			chains = append(chains, c)
		}
		if r.Op != patch.Copy {
			delete(byPath, r.OldPath)
		}
		c.to, c.content = r.Path, string(r.Content)
		c.binary = c.binary || r.Binary
		if r.Mode != 0 {
			if c.mode == 0 {
				c.oldMode = r.OldMode
			}
			c.mode = r.Mode
		}
		if r.Path != "" {
			byPath[r.Path] = c
		}
	}
	p := &patch.Patch{}
	for _, c := range chains {
		if c.from == "" && c.to == "" {
			continue // created, then deleted
		}
		old := ""
		if c.from != "" {
			old = orig[c.from]
		}
		if c.from == c.to && old == c.content && c.oldMode == c.mode {
			continue
		}
		var fp *patch.FilePatch
		if c.binary {
			fp = patch.MakeBinary(c.from, c.to, old, c.content, true)
		} else {
			fp = patch.Make(c.from, c.to, old, c.content, patch.DefaultMakeOptions())
		}
		if c.copy {
			fp.Op = patch.Copy
		}
		switch {
		case fp.Op == patch.Create:
			fp.NewMode = c.mode
		case c.mode != 0 && fp.Op != patch.Delete:
			fp.OldMode, fp.NewMode = c.oldMode, c.mode
		}
		p.Files = append(p.Files, fp)
	}
	return p
}

// sameSides reports whether a hunk that removes or adds lines has its old
// side equal to its new side, line for line.
func sameSides(h *looseHunk) bool {
	if h.markers && h.oldNoEOL != h.newNoEOL {
		// It changes the final newline, which its lines do not show.
		return false
	}
	var old, neu []string
	changed := false
	for _, l := range h.lines {
		if l.elision {
			return false
		}
		if l.kind != patch.LineContext {
			changed = true
		}
		if l.kind != patch.LineInsert {
			old = append(old, l.texts[0])
		}
		if l.kind != patch.LineDelete {
			neu = append(neu, l.texts[0])
		}
	}
	return changed && slices.Equal(old, neu)
}
