package patch

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"unsafe"
)

// ApplyOptions controls applying.
type ApplyOptions struct {
	// Reverse applies the patch backwards: deleted lines are inserted and
	// inserted lines deleted.
	Reverse bool
	// Unique holds the hunks of a Lenient (V4A) file patch to one reading:
	// a hunk whose old lines fit more than one place after the previous
	// hunk, at the level that decides, or whose place depends on which
	// line of the file its last anchor names, is refused with ErrAmbiguous
	// instead of going to the first place as codex's apply_patch does.
	// Tolerant apply sets it; strict mode (codex's rules) does not.
	Unique bool
	// Git holds hunks with line numbers to git apply's rules where they are
	// stricter than the default: a hunk with no context at all (git diff
	// -U0) must match at the end of the file, and at its start too when it
	// begins at line 0 or 1, as git apply without --unidiff-zero requires;
	// without Git such a hunk goes where its line numbers say, the nearest
	// place that fits (git apply --unidiff-zero). Where git would take a
	// context-free insertion to the end of the file although its line
	// numbers name another line, Git refuses it: nothing in the hunk says
	// the end is its place. And a git diff that names /dev/null on its
	// ---/+++ lines without "new file mode" or "deleted file mode" is
	// refused (git apply reads it as a file named "dev/null").
	// A hunk does not match lines an earlier hunk of the file wrote, its
	// context included (git apply without --allow-overlap).
	// `apply --strict` sets it, and so does tolerant apply's first, strict
	// attempt.
	Git bool
}

// Errors that callers may test for with errors.Is.
var (
	// ErrContextMismatch: a hunk's old lines were found nowhere in the file.
	ErrContextMismatch = errors.New("context not found")
	// ErrFileExists: a created file, or a rename target, already exists.
	ErrFileExists = errors.New("file already exists")
	// ErrFileMissing: a modified, deleted or renamed file does not exist.
	ErrFileMissing = errors.New("file does not exist")
	// ErrNoPath: a file patch names no file and the caller gave none.
	ErrNoPath = errors.New("file patch names no file")
	// ErrAmbiguous: a hunk of a Lenient file patch fits more than one place.
	ErrAmbiguous = errors.New("ambiguous")
)

// HunkError reports a hunk that could not be placed.
type HunkError struct {
	File string
	Hunk int // 1-based
	// Line is the 1-based line within the hunk's old lines of the first one
	// that did not match at the closest place, FileLine the file line that
	// was compared with it (0 when the hunk ran past the end of the file).
	Line, FileLine int
	Want, Got      string
	Err            error
}

func (e *HunkError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apply: hunk %d of %s: %v", e.Hunk, e.File, e.Err)
	if e.Line > 0 {
		if e.FileLine > 0 {
			fmt.Fprintf(&b, "; first mismatch at hunk line %d, file line %d: want %q, have %q", e.Line, e.FileLine, e.Want, e.Got)
		} else {
			fmt.Fprintf(&b, "; hunk line %d (%q) runs past the end of the file", e.Line, e.Want)
		}
	}
	return b.String()
}

func (e *HunkError) Unwrap() error { return e.Err }

// Placement tells where a hunk was applied.
type Placement struct {
	// Line is the 1-based line of the (partly modified) file where the hunk's
	// old lines started; Offset is Line minus the hinted line, 0 without a
	// hint.
	Line, Offset int
	// Level is how loosely the hunk of a Lenient file patch matched: 0
	// exactly (line endings aside), 1 ignoring trailing whitespace, 2
	// ignoring surrounding whitespace, 3 with typographic punctuation made
	// ASCII.
	Level int
}

// ApplyFile applies the hunks of fp to content and returns the new content
// and where each hunk went. Hunks are applied one after the other; context
// must match exactly.
func ApplyFile(content string, fp *FilePatch, opts ApplyOptions) (string, []Placement, error) {
	if opts.Reverse {
		fp = fp.Reverse()
	}
	b, places, err := applyContent(content, fp, opts)
	return bytesString(b), places, err
}

// bytesString returns b as a string without a copy, for bytes made here
// and not changed afterwards.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// applyContent applies fp to content. The new content of a text file is
// made once, as bytes.
func applyContent(content string, fp *FilePatch, opts ApplyOptions) ([]byte, []Placement, error) {
	switch {
	case fp.Binary:
		out, err := applyBinary(content, fp)
		return []byte(out), nil, err
	case fp.Lenient:
		out, places, err := applyLenient(content, fp, opts.Unique)
		return []byte(out), places, err
	}
	lines, eol := SplitLines(content)
	grow := 0
	for _, h := range fp.Hunks {
		grow += len(h.Lines)
	}
	img := image{head: make([]string, 0, len(lines)+grow), tail: lines, eol: eol, git: opts.Git}
	places, err := eachHunk(fp, img.apply)
	if err != nil {
		return nil, nil, err
	}
	return AppendLines(nil, append(img.head, img.tail...), img.eol), places, nil
}

// eachHunk applies the hunks of fp in order with apply, which places one
// hunk at or after line after and returns where its new lines end.
func eachHunk(fp *FilePatch, apply func(h *Hunk, after int) (Placement, int, error)) ([]Placement, error) {
	places := make([]Placement, 0, len(fp.Hunks))
	after := 0 // where the search for a position-less hunk starts
	for i, h := range fp.Hunks {
		pl, end, err := apply(h, after)
		if err != nil {
			var he *HunkError
			if errors.As(err, &he) {
				he.File, he.Hunk = fp.Path(), i+1
			}
			return nil, err
		}
		after = end
		places = append(places, pl)
	}
	return places, nil
}

// image is a file being patched: head then tail. Hunks come in file order,
// so each is spliced in at the end of head, taking the lines before it from
// tail: the file is copied once, not once per hunk.
type image struct {
	head, tail []string
	eol        bool // the last line ends with a newline (true when empty)
	git        bool // ApplyOptions.Git
	// patched holds, with git, the lines earlier hunks wrote (their new
	// lines, context included), as [start, end) ranges in order: git apply
	// (without --allow-overlap) does not match a hunk against them.
	patched [][2]int
}

// len is the number of lines of the image.
func (img *image) len() int { return len(img.head) + len(img.tail) }

// line returns line k of the image.
func (img *image) line(k int) string {
	if k < len(img.head) {
		return img.head[k]
	}
	return img.tail[k-len(img.head)]
}

// splice replaces the n lines at pos with neu.
func (img *image) splice(pos, n int, neu []string) {
	if pos < len(img.head) {
		// A hunk before the last one placed: cut the image anew at pos.
		full := append(img.head, img.tail...)
		img.head, img.tail = slices.Clip(full[:pos]), full[pos:]
	}
	k := pos - len(img.head)
	img.head = append(img.head, img.tail[:k]...)
	img.head = append(img.head, neu...)
	img.tail = img.tail[k+n:]
}

// apply places one hunk and splices it in, returning the end of the new
// lines for the next position-less search.
func (img *image) apply(h *Hunk, after int) (Placement, int, error) {
	old, neu := h.Old(), h.New()
	leading, trailing := contextRuns(h)
	noContext := leading == 0 && trailing == 0
	// git's rules: a hunk that starts at line 0 or 1 must match at the start;
	// a hunk with no trailing context must match at the end. -U0 patches,
	// which have no context at all, are exempt unless opts.Git is set (git
	// apply without --unidiff-zero).
	zeroOK := noContext && !img.git
	begin := h.HasPos && !zeroOK && h.OldStart <= 1
	end := h.AtEnd || (h.HasPos && !zeroOK && trailing == 0)
	if h.OldNoEOL && !h.KeepEOL {
		end = true
	}

	// given is the line the patch gave, hint the place the search starts
	// from (no further than the end of the file); the offset is measured
	// from given, as git apply -v reports it.
	var pos, hint, given int
	found := false
	switch {
	case len(old) == 0 && !h.HasPos:
		// An insertion with nothing to anchor it appends (search-replace's
		// empty SEARCH).
		pos, found = img.len(), true
	case h.HasPos:
		hint = h.NewStart - 1
		if h.NewStart == 0 {
			hint = 0
		}
		given = hint
		if hint > img.len() {
			hint = img.len()
		}
		pos, found = img.searchOutward(old, hint, begin, end, h)
	default:
		start := after
		for _, a := range h.Anchors {
			k := img.findAnchor(a, start)
			if k < 0 {
				return Placement{}, 0, &HunkError{Err: fmt.Errorf("%w: anchor %q", ErrContextMismatch, a)}
			}
			start = k + 1
		}
		pos, found = img.searchForward(old, start, begin, end, h)
	}
	if !found {
		return Placement{}, 0, img.mismatch(old, h, hint)
	}
	if img.git && h.HasPos && noContext && len(old) == 0 && pos != h.NewStart-1 {
		// git apply would append the lines at the end of the file; the
		// hunk's line numbers put them elsewhere, and with no context
		// nothing says which is meant.
		return Placement{}, 0, &HunkError{Err: fmt.Errorf("%w: a hunk with no context (git diff -U0) inserts at line %d, where git apply (without --unidiff-zero) would append it at the end of the file, line %d; nothing in the hunk says which is meant", ErrContextMismatch, h.NewStart, pos+1)}
	}
	if img.git && h.HasPos && noContext && len(old) > 0 {
		// The same for a removal: git apply removes the lines where they
		// end the file ("-4 +3,0" deleting a "}" deletes the file's last
		// "}"); its line numbers say where they are.
		want := h.NewStart - 1
		if h.NewLines == 0 {
			want = h.NewStart // "+N,0": after new line N
		}
		if pos != want {
			return Placement{}, 0, &HunkError{Err: fmt.Errorf("%w: a hunk with no context (git diff -U0) removes lines at line %d, where git apply (without --unidiff-zero) would remove them at line %d, where they end the file; nothing in the hunk says which is meant", ErrContextMismatch, want+1, pos+1)}
		}
	}

	// The final-newline state after the splice.
	eol := img.eol
	if pos+len(old) == img.len() && !h.KeepEOL {
		eol = !h.NewNoEOL
	}
	img.splice(pos, len(old), neu)
	if img.git {
		img.markPatched(pos, len(old), len(neu))
	}
	img.eol = eol
	if img.len() == 0 {
		img.eol = true
	}
	pl := Placement{Line: pos + 1}
	if h.HasPos {
		pl.Offset = pos - given
	}
	return pl, pos + len(neu), nil
}

// markPatched records that n lines at pos became m patched lines, moving
// the ranges after them. The ranges are in order and disjoint, so the ones
// concerned are found by binary search; hunks in file order (the usual
// case) append, and the whole list is touched only by a hunk placed before
// earlier ones.
func (img *image) markPatched(pos, n, m int) {
	rs := img.patched
	// j: the first range starting at or after pos; k: the first starting
	// at or after the end of the old lines, where the moved ranges begin.
	j, _ := slices.BinarySearchFunc(rs, pos, func(r [2]int, p int) int { return cmp.Compare(r[0], p) })
	k := j
	for k < len(rs) && rs[k][0] < pos+n {
		k++
	}
	for i := k; i < len(rs); i++ {
		rs[i][0], rs[i][1] = rs[i][0]+m-n, rs[i][1]+m-n
	}
	if j > 0 && pos < rs[j-1][1] {
		// An insertion inside a patched range (it has no old lines to
		// refuse) grows it.
		rs[j-1][1] += m - n
	} else {
		rs = slices.Insert(rs, k, [2]int{pos, pos + m})
	}
	img.patched = rs
}

// overlaps reports whether lines [pos, pos+n) include a patched line.
func (img *image) overlaps(pos, n int) bool {
	// The first range that ends after pos is the only one that may start
	// before pos+n and overlap.
	i, _ := slices.BinarySearchFunc(img.patched, pos, func(r [2]int, p int) int {
		if r[1] <= p {
			return -1
		}
		return 1
	})
	return i < len(img.patched) && img.patched[i][0] < pos+n
}

// contextRuns counts the context lines before the first change and after the
// last one.
func contextRuns(h *Hunk) (leading, trailing int) {
	for _, l := range h.Lines {
		if l.Kind != LineContext {
			break
		}
		leading++
	}
	if leading == len(h.Lines) {
		return leading, 0
	}
	for i := len(h.Lines) - 1; i >= 0 && h.Lines[i].Kind == LineContext; i-- {
		trailing++
	}
	return leading, trailing
}

// matchAt reports whether old matches the image at pos under the anchoring
// rules.
func (img *image) matchAt(old []string, pos int, begin, end bool, h *Hunk) bool {
	if pos < 0 || pos+len(old) > img.len() {
		return false
	}
	if begin && pos != 0 {
		return false
	}
	atEnd := pos+len(old) == img.len()
	if end && !atEnd {
		return false
	}
	if len(img.patched) > 0 && img.overlaps(pos, len(old)) {
		return false
	}
	if atEnd && len(old) > 0 && !h.KeepEOL && h.OldNoEOL == img.eol {
		// The hunk's last old line and the file's last line disagree on the
		// final newline.
		return false
	}
	for i, l := range old {
		if img.line(pos+i) != l {
			return false
		}
	}
	return true
}

// searchOutward tries hint, then hint+1, hint-1, hint+2, ... as git does.
func (img *image) searchOutward(old []string, hint int, begin, end bool, h *Hunk) (int, bool) {
	if img.matchAt(old, hint, begin, end, h) {
		return hint, true
	}
	for d := 1; hint+d <= img.len() || hint-d >= 0; d++ {
		if img.matchAt(old, hint+d, begin, end, h) {
			return hint + d, true
		}
		if img.matchAt(old, hint-d, begin, end, h) {
			return hint - d, true
		}
	}
	return 0, false
}

func (img *image) searchForward(old []string, from int, begin, end bool, h *Hunk) (int, bool) {
	for pos := from; pos+len(old) <= img.len(); pos++ {
		if img.matchAt(old, pos, begin, end, h) {
			return pos, true
		}
	}
	return 0, false
}

func (img *image) findAnchor(a string, from int) int {
	a = strings.TrimSpace(a)
	for k := from; k < img.len(); k++ {
		if strings.TrimSpace(img.line(k)) == a {
			return k
		}
	}
	return -1
}

// mismatch builds the error for a hunk that matched nowhere, pointing at the
// first differing line at the place that matched longest (nearest the hint
// on ties).
func (img *image) mismatch(old []string, h *Hunk, hint int) error {
	e := &HunkError{Err: ErrContextMismatch}
	if len(old) == 0 {
		e.Err = fmt.Errorf("%w: the hunk's position does not fit the file", ErrContextMismatch)
		return e
	}
	best, bestLen := hint, -1
	for pos := 0; pos <= img.len(); pos++ {
		n := 0
		for n < len(old) && pos+n < img.len() && img.line(pos+n) == old[n] {
			n++
		}
		if n > bestLen || (n == bestLen && abs(pos-hint) < abs(best-hint)) {
			best, bestLen = pos, n
		}
	}
	e.Line = bestLen + 1
	if bestLen == len(old) {
		// Every line matched but an anchoring rule failed.
		e.Line = 0
		e.Err = fmt.Errorf("%w: the lines match at line %d but the hunk must be at the start or end of the file or agree on its final newline", ErrContextMismatch, best+1)
		return e
	}
	e.Want = old[bestLen]
	if best+bestLen < img.len() {
		e.FileLine = best + bestLen + 1
		e.Got = img.line(best + bestLen)
	}
	return e
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// FileSystem is what Apply reads from: ReadFile must return an error that
// wraps fs.ErrNotExist for missing files. The bytes it returns are the
// caller's: the file system does not change them afterwards.
type FileSystem interface {
	ReadFile(name string) ([]byte, error)
}

// ReadFileString reads name from fsys as a string. The string takes over
// the bytes ReadFile returned, which are the caller's: a large file is not
// copied.
func ReadFileString(fsys FileSystem, name string) (string, error) {
	b, err := fsys.ReadFile(name)
	return bytesString(b), err
}

// FileResult is the outcome for one file of a patch.
type FileResult struct {
	// OldPath is the file that was read (empty for a creation); Path is the
	// file to write (empty for a deletion).
	OldPath, Path string
	Op            Operation
	// Content is the new content; nil for a deletion.
	Content []byte
	// WriteContent, when set, writes the new content in place of Content
	// (then empty, not nil): a large result goes straight to its
	// temporary file instead of being held whole. An error from it fails
	// the write, which is then undone.
	WriteContent func(w io.Writer) error
	// Mode is the new file mode from the patch, 0 when unchanged or unknown;
	// OldMode is the old one when the patch changes the mode of a file.
	Mode, OldMode uint32
	Placements    []Placement
	// Binary: the content came from a binary patch.
	Binary bool
	// Replaced: a file existed at Path before a Create or Rename with
	// Overwrite, and the new content replaces it.
	Replaced bool
}

// Apply applies every file patch of p to files read from fsys and returns
// the new contents, one result per file patch. Later file patches see the
// results of earlier ones. Nothing is written: see [WriteResults]. Either
// every file patch applies or Apply returns an error.
func Apply(p *Patch, fsys FileSystem, opts ApplyOptions) ([]FileResult, error) {
	ov := overlay{fsys: fsys, files: map[string]*string{}, opts: opts}
	fps := p.Files
	if opts.Reverse {
		fps = make([]*FilePatch, len(p.Files))
		for i, fp := range p.Files {
			fps[i] = fp.Reverse()
		}
	}
	for _, fp := range fps {
		if fp.Op == Rename || fp.Op == Delete {
			ov.vac.Leaves(fp.OldPath)
		}
	}
	var out []FileResult
	for _, fp := range fps {
		res, err := ov.applyOne(fp)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// overlay is fsys plus the changes of the file patches applied so far.
type overlay struct {
	fsys  FileSystem
	files map[string]*string // nil: removed
	opts  ApplyOptions
	// vac: the paths file patches still to come vacate, which a rename
	// or creation may take (two files swapped in one patch, x and x/y).
	vac Vacancies
}

func (ov *overlay) read(name string) (string, bool, error) {
	if c, ok := ov.files[name]; ok {
		if c == nil {
			return "", false, nil
		}
		return *c, true, nil
	}
	// Under a file that the patch renames or deletes away (x renamed to
	// x/y): nothing there yet.
	if ov.vac.UnderLeaving(name, ov.removed) {
		return "", false, nil
	}
	c, ok, err := ov.readOrig(name)
	if errors.Is(err, syscall.EISDIR) && ov.vac.Below(name) {
		// A directory whose files the patch moves away (x/y renamed to
		// x): the write checks that nothing else is in it.
		return "", false, nil
	}
	return c, ok, err
}

// removed reports whether an earlier file patch removed name.
func (ov *overlay) removed(name string) bool {
	c, ok := ov.files[name]
	return ok && c == nil
}

// written reports whether an earlier file patch wrote name.
func (ov *overlay) written(name string) bool { return ov.files[name] != nil }

// readOrig reads name from the file system, as it was before the patch.
func (ov *overlay) readOrig(name string) (string, bool, error) {
	c, err := ReadFileString(ov.fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if errors.Is(err, ErrUnsafePath) {
		return "", false, fmt.Errorf("apply: %w", err) // the error names the path
	}
	if err != nil {
		return "", false, fmt.Errorf("apply: read %s: %w", name, err)
	}
	return c, true, nil
}

func (ov *overlay) applyOne(fp *FilePatch) (FileResult, error) {
	res := FileResult{OldPath: fp.OldPath, Path: fp.NewPath, Op: fp.Op}
	res.OldMode, res.Mode = ResultModes(fp.Op, fp.OldMode, fp.NewMode)
	if fp.Path() == "" {
		return res, fmt.Errorf("apply: %w", ErrNoPath)
	}
	res.Binary = fp.Binary
	if err := CheckModes(fp.Path(), fp.OldMode, fp.NewMode); err != nil {
		return res, fmt.Errorf("apply: %w", err)
	}
	if fp.gitDevNull && ov.opts.Git {
		return res, fmt.Errorf("apply: %s %s: the git diff names /dev/null without \"new file mode\" or \"deleted file mode\", which git apply reads as a file named dev/null", fp.Op, fp.Path())
	}
	var old string
	switch fp.Op {
	case Create:
		if _, ok, err := ov.read(fp.NewPath); err != nil {
			return res, err
		} else if ok && ov.vac.Take(fp.NewPath, ov.written(fp.NewPath)) {
			// A later file patch moves the file away: the path is free.
		} else if ok && !fp.Overwrite {
			return res, fmt.Errorf("apply: create %s: %w", fp.NewPath, ErrFileExists)
		} else if ok {
			res.Replaced = true
		}
	default:
		if fp.Op == Modify && fp.OldPath != fp.NewPath {
			// A traditional diff with two names ("--- a/x.orig" / "+++ b/x"):
			// one file is patched in place.
			// The patch's own order of names decides, in both
			// directions (GNU patch's rule): a reverse patches the file
			// the forward apply patched.
			o, n := fp.OldPath, fp.NewPath
			if ov.opts.Reverse {
				o, n = n, o
			}
			name := TraditionalTarget(o, n, func(n string) bool {
				_, ok, _ := ov.read(n)
				return ok
			})
			res.OldPath, res.Path = name, name
			c := *fp
			c.OldPath, c.NewPath = name, name
			fp = &c
		}
		read := ov.read
		if ov.vac.Taken(fp.OldPath) && (fp.Op == Rename || fp.Op == Delete) {
			read = ov.readOrig // its new content came from an earlier file patch
		}
		c, ok, err := read(fp.OldPath)
		if err != nil {
			return res, err
		}
		if !ok {
			if fp.Op != Modify || !onlyAppends(fp) {
				return res, fmt.Errorf("apply: %s %s: %w", fp.Op, fp.OldPath, ErrFileMissing)
			}
			// An empty SEARCH for a missing file creates it.
			res.Op, res.OldPath = Create, ""
		}
		old = c
		if fp.Op == Rename || fp.Op == Copy {
			if _, ok, err := ov.read(fp.NewPath); err != nil {
				return res, err
			} else if ok && fp.NewPath != fp.OldPath && ov.vac.Take(fp.NewPath, ov.written(fp.NewPath)) {
				// A later file patch moves the file away: the path is free.
			} else if ok && (!fp.Overwrite || fp.Op != Rename) {
				return res, fmt.Errorf("apply: %s %s to %s: %w", fp.Op, fp.OldPath, fp.NewPath, ErrFileExists)
			} else if ok {
				res.Replaced = fp.NewPath != fp.OldPath
			}
		}
	}
	var content []byte
	if !(fp.Op == Delete && len(fp.Hunks) == 0 && !fp.Binary) { // V4A's Delete File has no content to check
		var err error
		if content, res.Placements, err = applyContent(old, fp, ov.opts); err != nil {
			return res, err
		}
	}
	vacate := func() {
		if !ov.vac.Left(fp.OldPath) { // else the path holds the new file that took it
			ov.files[fp.OldPath] = nil
		}
	}
	if fp.Op == Delete {
		if len(content) > 0 {
			return res, fmt.Errorf("apply: delete %s: the file has lines the patch does not remove", fp.OldPath)
		}
		vacate()
		return res, nil
	}
	if content == nil {
		content = []byte{} // nil Content means a deletion
	}
	res.Content = content
	if fp.Op == Rename {
		vacate()
	}
	// Later file patches read the content as a string; it is not changed
	// while Apply runs.
	c := bytesString(content)
	ov.files[fp.NewPath] = &c
	return res, nil
}

// TraditionalTarget returns the file that a traditional diff (no "diff
// --git" line) naming two different files patches in place: the one that
// exists; when both or neither do, the shorter name ("x.c" of "x.c" and
// "x.c.orig", as GNU patch and git apply choose), and of two names as long
// the old one (as GNU patch does; git apply takes the new one). An empty
// name gives the other. A "diff --git" section with two names is a rename,
// not this (see [ParseUDiff]).
func TraditionalTarget(oldPath, newPath string, exists func(string) bool) string {
	switch {
	case oldPath == "" || oldPath == newPath:
		return newPath
	case newPath == "":
		return oldPath
	}
	if o, n := exists(oldPath), exists(newPath); o != n {
		if o {
			return oldPath
		}
		return newPath
	}
	if len(newPath) < len(oldPath) {
		return newPath
	}
	return oldPath
}

// CheckModes refuses a file patch that makes or edits a symbolic link
// (mode 120000): patchbench neither follows, edits nor creates links.
func CheckModes(name string, oldMode, newMode uint32) error {
	if oldMode&0o170000 == 0o120000 || newMode&0o170000 == 0o120000 {
		return fmt.Errorf("%w %q: the patch edits a symbolic link (mode 120000); symbolic links are not edited", ErrUnsafePath, name)
	}
	return nil
}

// ResultModes returns the modes of a [FileResult] for a file patch with
// operation op and modes oldMode and newMode: the new file's mode for a
// creation, both when the patch changes the mode ("old mode" / "new mode"),
// zeros otherwise (the file keeps its mode).
func ResultModes(op Operation, oldMode, newMode uint32) (resOld, resNew uint32) {
	switch {
	case op == Create:
		return 0, newMode
	case op != Delete && oldMode != 0 && newMode != 0 && oldMode != newMode:
		return oldMode, newMode
	}
	return 0, 0
}

// onlyAppends reports whether every hunk of fp is a position-less insertion.
func onlyAppends(fp *FilePatch) bool {
	if len(fp.Hunks) == 0 {
		return false
	}
	for _, h := range fp.Hunks {
		if h.HasPos || len(h.Old()) > 0 {
			return false
		}
	}
	return true
}
