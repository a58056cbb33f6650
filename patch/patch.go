// Package patch holds patchbench's edit model, a parser and a printer for
// every edit format it supports, and strict apply and reverse apply.
//
// # The edit model
//
// A [Patch] is a list of [FilePatch] values. A FilePatch names the old and the
// new path, the operation (modify, create, delete, rename, copy), the file
// modes, and a list of [Hunk] values. A Hunk is a run of [Line] values, each a
// context line (in both versions), a deleted line (old version only) or an
// inserted line (new version only), plus an optional position hint and flags
// for a missing newline at the end of either version.
//
// Line text never holds the terminating "\n". A carriage return before it is
// kept as part of the text, so CRLF files round-trip byte for byte.
//
// # Formats
//
// Every format is a parser and a printer to and from this model:
//
//   - udiff: unified diff as git and GNU diff write it.
//   - udiff-h: unified diff whose hunk headers carry no line numbers.
//   - udiff-l: unified diff with ADD / DEL / CON line markers.
//   - search-replace: Aider-style SEARCH/REPLACE blocks.
//   - v4a: OpenAI's apply_patch envelope.
//
// The grammar each parser accepts is given on its Parse function.
//
// # Applying
//
// [ApplyFile] applies the hunks of one file to its content; [Apply] applies a
// whole patch to a [FileSystem], all or nothing. Context must match exactly;
// line numbers are only hints: the search starts at the hinted line and moves
// outward, nearest first, as git apply does. Hunks without a position are
// searched for after the end of the previous hunk.
//
// A binary file in a git diff --binary patch ([BinaryBlock]) is applied as
// git apply does: the file must be the blob the index line names, and the
// literal or delta block must make the blob it names for the result.
package patch

import (
	"fmt"
	"slices"
	"strings"
)

// Format names an edit format.
type Format string

// The supported formats.
const (
	UDiff         Format = "udiff"
	UDiffH        Format = "udiff-h"
	UDiffL        Format = "udiff-l"
	SearchReplace Format = "search-replace"
	V4A           Format = "v4a"
)

// Formats lists every supported format in a stable order.
var Formats = []Format{UDiff, UDiffH, UDiffL, SearchReplace, V4A}

// ParseFormat returns the Format named s, accepting a few common aliases.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "udiff", "unified", "diff", "patch":
		return UDiff, nil
	case "udiff-h", "udiffh":
		return UDiffH, nil
	case "udiff-l", "udiffl":
		return UDiffL, nil
	case "search-replace", "searchreplace", "sr", "search_replace":
		return SearchReplace, nil
	case "v4a", "apply_patch":
		return V4A, nil
	}
	return "", fmt.Errorf("unknown format %q (want one of udiff, udiff-h, udiff-l, search-replace, v4a)", s)
}

// HasPositions reports whether the format carries line numbers.
func (f Format) HasPositions() bool { return f == UDiff || f == UDiffL }

// Operation is what a FilePatch does to its file.
type Operation int

// The file operations.
const (
	Modify Operation = iota
	Create
	Delete
	Rename
	Copy
)

func (o Operation) String() string {
	switch o {
	case Modify:
		return "modify"
	case Create:
		return "create"
	case Delete:
		return "delete"
	case Rename:
		return "rename"
	case Copy:
		return "copy"
	}
	return fmt.Sprintf("Operation(%d)", int(o))
}

// LineKind says which versions of a file a Line belongs to.
type LineKind byte

// The line kinds, spelled as their unified-diff prefixes.
const (
	LineContext LineKind = ' '
	LineDelete  LineKind = '-'
	LineInsert  LineKind = '+'
)

// Line is one line of a hunk, without its terminating newline.
type Line struct {
	Kind LineKind
	Text string
}

// Hunk is one contiguous change: the old lines (context and deleted) are
// replaced by the new lines (context and inserted).
type Hunk struct {
	// OldStart and NewStart are 1-based line numbers of the first old and new
	// line, as a unified-diff header gives them (0 for an empty side at the
	// start of the file). They are meaningful only when HasPos is set.
	OldStart, OldLines int
	NewStart, NewLines int
	HasPos             bool

	// Section is the text after the closing "@@" of a unified-diff header,
	// usually the enclosing function.
	Section string
	// Anchors are V4A "@@ text" lines: lines of the old file, in order, that
	// the hunk comes after.
	Anchors []string

	Lines []Line

	// OldNoEOL and NewNoEOL report that the last old (new) line of the hunk is
	// the last line of its file and has no terminating newline.
	OldNoEOL, NewNoEOL bool
	// KeepEOL is set by parsers of formats that cannot say whether the last
	// line has a newline (search-replace and V4A without the "\ No newline"
	// extension): a hunk that reaches the end of the file then keeps the
	// file's final newline, or its absence, and OldNoEOL and NewNoEOL are
	// ignored.
	KeepEOL bool

	// AtEnd requires the hunk's old lines to end at the end of the file, as
	// V4A's "*** End of File" marker does.
	AtEnd bool

	// PatchLine is the 1-based line of the patch text where the hunk starts,
	// 0 when the hunk was not parsed from text.
	PatchLine int
}

// Old returns the hunk's old lines: context and deleted, in order.
func (h *Hunk) Old() []string { return h.side(LineDelete) }

// New returns the hunk's new lines: context and inserted, in order.
func (h *Hunk) New() []string { return h.side(LineInsert) }

func (h *Hunk) side(k LineKind) []string {
	out := make([]string, 0, len(h.Lines))
	for _, l := range h.Lines {
		if l.Kind == LineContext || l.Kind == k {
			out = append(out, l.Text)
		}
	}
	return out
}

// Counts returns the number of old and new lines in the hunk.
func (h *Hunk) Counts() (old, new int) {
	for _, l := range h.Lines {
		switch l.Kind {
		case LineContext:
			old++
			new++
		case LineDelete:
			old++
		case LineInsert:
			new++
		}
	}
	return old, new
}

// Changed returns the number of deleted plus inserted lines.
func (h *Hunk) Changed() int {
	n := 0
	for _, l := range h.Lines {
		if l.Kind != LineContext {
			n++
		}
	}
	return n
}

// Reverse returns a copy of the hunk that undoes it.
func (h *Hunk) Reverse() *Hunk {
	r := *h
	r.OldStart, r.NewStart = h.NewStart, h.OldStart
	r.OldLines, r.NewLines = h.NewLines, h.OldLines
	r.OldNoEOL, r.NewNoEOL = h.NewNoEOL, h.OldNoEOL
	r.Lines = make([]Line, len(h.Lines))
	for i, l := range h.Lines {
		switch l.Kind {
		case LineDelete:
			l.Kind = LineInsert
		case LineInsert:
			l.Kind = LineDelete
		}
		r.Lines[i] = l
	}
	// A reversed block of "-a +b" must read "-b +a": within each run of
	// changes, deletions come first.
	normalizeRuns(r.Lines)
	return &r
}

// normalizeRuns orders every run of changed lines as deletions then
// insertions, keeping the relative order within each kind.
func normalizeRuns(ls []Line) {
	for i := 0; i < len(ls); {
		if ls[i].Kind == LineContext {
			i++
			continue
		}
		j := i
		for j < len(ls) && ls[j].Kind != LineContext {
			j++
		}
		run := make([]Line, 0, j-i)
		for _, l := range ls[i:j] {
			if l.Kind == LineDelete {
				run = append(run, l)
			}
		}
		for _, l := range ls[i:j] {
			if l.Kind == LineInsert {
				run = append(run, l)
			}
		}
		copy(ls[i:j], run)
		i = j
	}
}

// FilePatch is the change to one file.
type FilePatch struct {
	// OldPath and NewPath are the paths after prefix stripping. OldPath is
	// empty for a created file and NewPath is empty for a deleted one.
	OldPath, NewPath string
	Op               Operation
	// OldMode and NewMode are octal file modes such as 0100644, 0 if unknown.
	OldMode, NewMode uint32
	// Similarity is the similarity index of a rename or copy, in percent.
	Similarity int
	// Binary reports a binary change: a GIT binary patch, or "Binary files
	// ... differ", which carries no data and cannot be applied.
	Binary bool
	// BinaryForward and BinaryReverse are the blocks of a GIT binary patch:
	// the first makes the new content, the second (optional) the old one.
	// Both are nil for "Binary files ... differ".
	BinaryForward, BinaryReverse *BinaryBlock
	// OldHash and NewHash are the blob names of the "index OLD..NEW" line,
	// full or abbreviated, empty without one. Applying a binary change
	// checks the content against them.
	OldHash, NewHash string
	Hunks            []*Hunk
	// Overwrite lets a Create, or a Rename, replace a file that exists at
	// NewPath, as V4A's Add File and Move to do.
	Overwrite bool
	// Lenient applies the hunks by the rules of OpenAI's apply_patch (V4A):
	// a file line ends at "\n", "\r\n" or a lone "\r", and lines compare
	// without their endings, first exactly, then ignoring trailing
	// whitespace, then surrounding whitespace, then also with typographic
	// dashes, quotes and spaces made ASCII. A hunk goes to the first place
	// after the previous hunk (and its anchors) that fits exactly; at the
	// looser levels the place must be the only one. A hunk with no old
	// lines and no anchor appends. Context lines keep the file's text and
	// ending, added lines take the ending of the file's first line, and a
	// hunk that reaches the end of the file leaves it with a final line
	// ending (unless its NewNoEOL, with KeepEOL clear, says otherwise).
	Lenient bool

	// gitDevNull: a "diff --git" section whose ---/+++ lines name
	// /dev/null without "new file mode" or "deleted file mode", which git
	// apply reads as a file named "dev/null" (see ApplyOptions.Git).
	gitDevNull bool
}

// Path returns the path the file patch is about: the new path, or the old one
// for a deletion.
func (fp *FilePatch) Path() string {
	if fp.NewPath != "" {
		return fp.NewPath
	}
	return fp.OldPath
}

// Reverse returns a file patch that undoes fp.
func (fp *FilePatch) Reverse() *FilePatch {
	r := *fp
	r.OldPath, r.NewPath = fp.NewPath, fp.OldPath
	r.OldMode, r.NewMode = fp.NewMode, fp.OldMode
	r.OldHash, r.NewHash = fp.NewHash, fp.OldHash
	r.BinaryForward, r.BinaryReverse = fp.BinaryReverse, fp.BinaryForward
	switch fp.Op {
	case Create:
		r.Op = Delete
	case Delete:
		r.Op = Create
	}
	r.Hunks = make([]*Hunk, len(fp.Hunks))
	for i, h := range fp.Hunks {
		r.Hunks[i] = h.Reverse()
	}
	return &r
}

// Patch is a set of file changes, plus what the parser had to assume.
type Patch struct {
	Files       []*FilePatch
	Diagnostics []Diagnostic
}

// Reverse returns a patch that undoes p.
func (p *Patch) Reverse() *Patch {
	r := &Patch{Files: make([]*FilePatch, len(p.Files)), Diagnostics: p.Diagnostics}
	for i, f := range p.Files {
		r.Files[i] = f.Reverse()
	}
	return r
}

// Diagnostic records something a parser or repairer had to assume. A strict
// parse produces none.
type Diagnostic struct {
	// Line is the 1-based line of the input the diagnostic is about, 0 if none.
	Line int `json:"line,omitempty"`
	// File and Hunk (1-based, 0 if none) locate the diagnostic in the patch.
	File string `json:"file,omitempty"`
	Hunk int    `json:"hunk,omitempty"`
	// Code is a short stable identifier such as "recount".
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		b.WriteString(": ")
	}
	if d.Hunk > 0 {
		fmt.Fprintf(&b, "hunk %d: ", d.Hunk)
	}
	if d.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", d.Line)
	}
	b.WriteString(d.Code)
	if d.Message != "" {
		b.WriteString(": ")
		b.WriteString(d.Message)
	}
	return b.String()
}

// SplitLines splits s into lines without their "\n" terminators and reports
// whether the last line was terminated. An empty string has no lines and
// counts as terminated.
func SplitLines(s string) (lines []string, eol bool) {
	if s == "" {
		return nil, true
	}
	eol = strings.HasSuffix(s, "\n")
	if eol {
		s = s[:len(s)-1]
	}
	n := strings.Count(s, "\n") + 1
	lines = make([]string, 0, n)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		s = s[i+1:]
	}
	return lines, eol
}

// JoinLines is the inverse of SplitLines.
func JoinLines(lines []string, eol bool) string {
	return bytesString(AppendLines(nil, lines, eol))
}

// AppendLines appends lines to dst as JoinLines joins them, growing dst
// once.
func AppendLines(dst []byte, lines []string, eol bool) []byte {
	if len(lines) == 0 {
		return dst
	}
	n := len(lines)
	for _, l := range lines {
		n += len(l)
	}
	dst = slices.Grow(dst, n)
	for i, l := range lines {
		dst = append(dst, l...)
		if i < len(lines)-1 || eol {
			dst = append(dst, '\n')
		}
	}
	return dst
}
