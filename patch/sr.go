package patch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/diff"
)

// ErrNotExpressible is wrapped by the errors of printers asked to write a
// change their format cannot express, such as a file deletion in
// search-replace.
var ErrNotExpressible = errors.New("cannot be expressed in this format")

// noEOLMarker is the unified-diff line that search-replace and V4A accept as
// an extension.
const noEOLMarker = `\ No newline at end of file`

// ParseSearchReplace parses Aider-style SEARCH/REPLACE blocks.
//
// The input is read line by line ("\n" ends a line; a "\r" before it stays
// part of the line). It holds one or more blocks:
//
//	<<<<<<< SEARCH
//	old lines
//	=======
//	new lines
//	>>>>>>> REPLACE
//
// The SEARCH marker is 5 to 9 '<', an optional space and "SEARCH"; the
// divider is exactly "======="; the REPLACE marker is 5 to 9 '>', an optional
// space and "REPLACE". Marker lines may carry trailing whitespace (so CRLF
// input works) but no leading whitespace. Old and new lines are taken as
// they are, and either section may be empty.
//
// A block's path is the nearest line before it, after the previous block,
// that is neither blank nor a fence line (three or more '`' or '~' after
// optional spaces, as in "```" or "```python"), with surrounding whitespace
// removed; it must not read as a marker once trimmed. A block with no such
// line keeps the path of the block before it; blocks before any path line
// have an empty path and the caller names the file. Every other line
// outside blocks is ignored.
//
// Blocks with the same path form one [FilePatch] (Op Modify), with hunks in
// block order; file patches are in order of first appearance. Each block is
// one [Hunk] without a position (HasPos false) and with KeepEOL set: it is
// searched for after the previous hunk and keeps the file's final newline.
// Its lines are a Myers diff of the old and new lines, so shared lines are
// context. An empty SEARCH section gives a hunk with no old lines, which
// apply appends to the file, creating it if it does not exist.
//
// Extension (not Aider's): a line "\ No newline at end of file" directly
// after the last line of the SEARCH (REPLACE) section says that line is the
// last of the old (new) file and has no final newline. It sets OldNoEOL
// (NewNoEOL) and clears KeepEOL for the hunk.
//
// Errors are *[ParseError] values naming the input line, for example
// "parse search-replace: line 12: missing ======= in block started at line 9".
// A divider or REPLACE marker outside a block is an error too.
func ParseSearchReplace(text string) (*Patch, error) {
	lines := splitInput(text)
	out := &Patch{}
	files := map[string]*FilePatch{}
	path := ""
	gap := 0 // first line after the previous block
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case isSearchMarker(l):
			for j := i - 1; j >= gap; j-- {
				if t := strings.TrimSpace(lines[j]); t != "" && !isFence(t) {
					if isSRMarker(t) {
						// An indented marker: no path, and a printer
						// could not write it back.
						return nil, srErrorf(j+1, "indented marker %q before a block", t)
					}
					path = t
					break
				}
			}
			h, next, err := parseSRBlock(lines, i)
			if err != nil {
				return nil, err
			}
			fp := files[path]
			if fp == nil {
				fp = &FilePatch{OldPath: path, NewPath: path}
				files[path] = fp
				out.Files = append(out.Files, fp)
			}
			fp.Hunks = append(fp.Hunks, h)
			i, gap = next, next
		case isDivider(l):
			return nil, srErrorf(i+1, "======= outside a block")
		case isReplaceMarker(l):
			return nil, srErrorf(i+1, "%s outside a block", strings.TrimSpace(l))
		default:
			i++
		}
	}
	if len(out.Files) == 0 {
		return nil, srErrorf(1, "no SEARCH/REPLACE blocks found")
	}
	return out, nil
}

// parseSRBlock parses the block whose SEARCH marker is lines[start] and
// returns the hunk and the index of the line after the block.
func parseSRBlock(lines []string, start int) (*Hunk, int, error) {
	startLine := start + 1
	i := start + 1
	for ; ; i++ {
		if i >= len(lines) {
			return nil, 0, srErrorf(len(lines), "missing ======= in block started at line %d", startLine)
		}
		if isDivider(lines[i]) {
			break
		}
		if isSearchMarker(lines[i]) || isReplaceMarker(lines[i]) {
			return nil, 0, srErrorf(i+1, "missing ======= in block started at line %d", startLine)
		}
	}
	div := i
	for i++; ; i++ {
		if i >= len(lines) {
			return nil, 0, srErrorf(len(lines), "missing >>>>>>> REPLACE in block started at line %d", startLine)
		}
		if isReplaceMarker(lines[i]) {
			break
		}
		if isDivider(lines[i]) {
			return nil, 0, srErrorf(i+1, "second ======= in block started at line %d", startLine)
		}
		if isSearchMarker(lines[i]) {
			return nil, 0, srErrorf(i+1, "missing >>>>>>> REPLACE in block started at line %d", startLine)
		}
	}
	end := i
	old, oldNoEOL, err := cutNoEOL(lines[start+1:div], div, "SEARCH")
	if err != nil {
		return nil, 0, err
	}
	neu, newNoEOL, err := cutNoEOL(lines[div+1:end], end, "REPLACE")
	if err != nil {
		return nil, 0, err
	}
	h := &Hunk{
		Lines:     diffLines(old, neu),
		OldNoEOL:  oldNoEOL,
		NewNoEOL:  newNoEOL,
		KeepEOL:   !oldNoEOL && !newNoEOL,
		PatchLine: startLine,
	}
	h.Lines = splitNoEOLContext(h.Lines, h.OldNoEOL, h.NewNoEOL)
	h.OldLines, h.NewLines = h.Counts()
	return h, end + 1, nil
}

// cutNoEOL removes the extension marker from the end of a section. markLine
// is the 1-based line number of the section's last line.
func cutNoEOL(section []string, markLine int, name string) ([]string, bool, error) {
	n := len(section)
	if n == 0 || !isNoEOLMarker(section[n-1]) {
		return section, false, nil
	}
	if n == 1 {
		return nil, false, srErrorf(markLine, "%q with no line before it in the %s section", noEOLMarker, name)
	}
	return section[:n-1], true, nil
}

func srErrorf(line int, format string, args ...any) error {
	return &ParseError{Format: SearchReplace, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// splitInput splits patch text into lines, dropping the empty string after a
// final "\n".
func splitInput(text string) []string {
	lines := strings.Split(text, "\n")
	if n := len(lines); lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// trimEnd removes trailing whitespace, which marker lines may carry.
func trimEnd(s string) string { return strings.TrimRight(s, " \t\r\f\v") }

// cutRun removes a run of 5 to 9 c from the start of s.
func cutRun(s string, c byte) (string, bool) {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return s[n:], n >= 5 && n <= 9
}

func isSearchMarker(s string) bool {
	rest, ok := cutRun(trimEnd(s), '<')
	return ok && (rest == "SEARCH" || rest == " SEARCH")
}

func isReplaceMarker(s string) bool {
	rest, ok := cutRun(trimEnd(s), '>')
	return ok && (rest == "REPLACE" || rest == " REPLACE")
}

func isDivider(s string) bool { return trimEnd(s) == "=======" }

func isSRMarker(s string) bool { return isSearchMarker(s) || isDivider(s) || isReplaceMarker(s) }

func isNoEOLMarker(s string) bool { return trimEnd(s) == noEOLMarker }

// isFence reports whether the trimmed line t opens or closes a Markdown code
// block.
func isFence(t string) bool {
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// diffLines turns old and new lines into hunk lines: common lines are
// context, the rest deletions and insertions.
func diffLines(old, neu []string) []Line {
	out := make([]Line, 0, len(old)+len(neu))
	i := 0
	for _, e := range diff.Lines(old, neu, diff.Myers) {
		for ; i < e.OldStart; i++ {
			out = append(out, Line{Kind: LineContext, Text: old[i]})
		}
		for _, t := range old[e.OldStart:e.OldEnd] {
			out = append(out, Line{Kind: LineDelete, Text: t})
		}
		for _, t := range neu[e.NewStart:e.NewEnd] {
			out = append(out, Line{Kind: LineInsert, Text: t})
		}
		i = e.OldEnd
	}
	for ; i < len(old); i++ {
		out = append(out, Line{Kind: LineContext, Text: old[i]})
	}
	return out
}

// lastLines returns the indexes of the last old and the last new line of ls,
// -1 for an empty side.
func lastLines(ls []Line) (lastOld, lastNew int) {
	lastOld, lastNew = -1, -1
	for i, l := range ls {
		if l.Kind != LineInsert {
			lastOld = i
		}
		if l.Kind != LineDelete {
			lastNew = i
		}
	}
	return lastOld, lastNew
}

// splitNoEOLContext rewrites the context line that carries a no-newline flag
// as a deletion and an insertion when the flag is not true of both sides at
// that line. A unified diff can put "\ No newline at end of file" after a
// context line only when the line ends both sides without a newline, so a
// change of the final newline, or an old side that ends before insertions,
// must show the line as removed and added, as git does.
func splitNoEOLContext(ls []Line, oldNoEOL, newNoEOL bool) []Line {
	lastOld, lastNew := lastLines(ls)
	c := -1
	switch {
	case lastOld >= 0 && lastOld == lastNew: // necessarily a context line
		if oldNoEOL != newNoEOL {
			c = lastOld
		}
	case oldNoEOL && lastOld >= 0 && ls[lastOld].Kind == LineContext:
		c = lastOld
	case newNoEOL && lastNew >= 0 && ls[lastNew].Kind == LineContext:
		c = lastNew
	}
	if c < 0 {
		return ls
	}
	out := make([]Line, 0, len(ls)+1)
	out = append(out, ls[:c]...)
	out = append(out, Line{Kind: LineDelete, Text: ls[c].Text}, Line{Kind: LineInsert, Text: ls[c].Text})
	out = append(out, ls[c+1:]...)
	normalizeRuns(out)
	return out
}

// printSearchReplace writes p as search-replace blocks: for each hunk, the
// file's path on its own line, then the block. A created file is one block
// with an empty SEARCH section. The "\ No newline at end of file" extension
// is written after a section whose last line ends its file without a newline
// (OldNoEOL or NewNoEOL, unless KeepEOL): with both flags set the marker is
// still needed, because it is what ties the hunk to the end of the file.
//
// Deletions, renames, copies, mode changes, binary changes, modifications
// whose old and new names differ (apply patches whichever file exists), V4A
// anchors and AtEnd, insertions at a line number, file patches without a
// path after the first, and lines that read as block markers cannot be
// expressed: the error wraps [ErrNotExpressible].
func printSearchReplace(b *strings.Builder, p *Patch) error {
	for fi, fp := range p.Files {
		path, err := srPath(fp, fi)
		if err != nil {
			return fmt.Errorf("print search-replace: %w", err)
		}
		if fp.Op == Create {
			var neu []string
			noEOL := false
			for hi, h := range fp.Hunks {
				if len(h.Old()) > 0 {
					return fmt.Errorf("print search-replace: create %s: hunk %d has old lines", path, hi+1)
				}
				if n := h.New(); len(n) > 0 {
					neu = append(neu, n...)
					noEOL = h.NewNoEOL && !h.KeepEOL
				}
			}
			if err := writeSRBlock(b, path, nil, neu, false, noEOL); err != nil {
				return fmt.Errorf("print search-replace: create %s: %w", path, err)
			}
			continue
		}
		for hi, h := range fp.Hunks {
			old, neu := h.Old(), h.New()
			oldNoEOL := h.OldNoEOL && !h.KeepEOL && len(old) > 0
			newNoEOL := h.NewNoEOL && !h.KeepEOL && len(neu) > 0
			var err error
			switch {
			case len(h.Anchors) > 0:
				err = fmt.Errorf("anchors: %w", ErrNotExpressible)
			case h.AtEnd && !oldNoEOL && len(old) > 0:
				// A marker ties the hunk to the end of the file only by also
				// saying the file has no final newline.
				err = fmt.Errorf("a hunk that must end at the end of the file: %w", ErrNotExpressible)
			case h.HasPos && len(old) == 0:
				// Without old lines to search for, a search-replace block
				// appends to the file.
				err = fmt.Errorf("an insertion at line %d with no context: %w", h.OldStart, ErrNotExpressible)
			default:
				err = writeSRBlock(b, path, old, neu, oldNoEOL, newNoEOL)
			}
			if err != nil {
				return fmt.Errorf("print search-replace: hunk %d of %s: %w", hi+1, path, err)
			}
		}
	}
	return nil
}

// srPath returns the path line for the fi'th file patch, or an error if the
// file patch cannot be expressed.
func srPath(fp *FilePatch, fi int) (string, error) {
	path := fp.Path()
	switch {
	case fp.Binary:
		return "", fmt.Errorf("binary change of %s: %w", path, ErrNotExpressible)
	case fp.Op == Delete:
		return "", fmt.Errorf("delete %s: %w", path, ErrNotExpressible)
	case fp.Op == Copy:
		return "", fmt.Errorf("copy %s to %s: %w", fp.OldPath, fp.NewPath, ErrNotExpressible)
	case fp.Op == Rename:
		return "", fmt.Errorf("rename %s to %s: %w", fp.OldPath, fp.NewPath, ErrNotExpressible)
	case differentNames(fp):
		return "", fmt.Errorf("modify %s or %s (whichever exists): %w", fp.OldPath, fp.NewPath, ErrNotExpressible)
	case fp.OldMode != 0 && fp.NewMode != 0 && fp.OldMode != fp.NewMode:
		return "", fmt.Errorf("mode change of %s: %w", path, ErrNotExpressible)
	case path == "" && fi > 0:
		// The parser would give its blocks the path of the file before.
		return "", fmt.Errorf("file %d has no path: %w", fi+1, ErrNotExpressible)
	case path != "" && (path != strings.TrimSpace(path) || strings.Contains(path, "\n") || isFence(path) || isSRMarker(path)):
		return "", fmt.Errorf("path %q does not fit on a path line: %w", path, ErrNotExpressible)
	}
	return path, nil
}

// differentNames reports a modification whose old and new names differ
// without a rename, as in "--- a/x.orig" / "+++ b/x": apply patches
// whichever file exists, which neither search-replace nor V4A can say.
func differentNames(fp *FilePatch) bool {
	return fp.Op == Modify && fp.OldPath != "" && fp.NewPath != "" && fp.OldPath != fp.NewPath
}

// writeSRBlock writes one block, preceded by its path line unless path is
// empty.
func writeSRBlock(b *strings.Builder, path string, old, neu []string, oldNoEOL, newNoEOL bool) error {
	if err := checkSRSection(old, oldNoEOL, "SEARCH"); err != nil {
		return err
	}
	if err := checkSRSection(neu, newNoEOL, "REPLACE"); err != nil {
		return err
	}
	if path != "" {
		b.WriteString(path)
		b.WriteByte('\n')
	}
	b.WriteString("<<<<<<< SEARCH\n")
	writeSRSection(b, old, oldNoEOL)
	b.WriteString("=======\n")
	writeSRSection(b, neu, newNoEOL)
	b.WriteString(">>>>>>> REPLACE\n")
	return nil
}

func checkSRSection(ls []string, noEOL bool, name string) error {
	for i, l := range ls {
		if isSRMarker(l) {
			return fmt.Errorf("%s line %d %q reads as a block marker: %w", name, i+1, l, ErrNotExpressible)
		}
	}
	// Without a marker after it, a last line that looks like the marker
	// would be taken for one.
	if n := len(ls); n > 0 && !noEOL && isNoEOLMarker(ls[n-1]) {
		return fmt.Errorf("%s line %d %q reads as the no-newline marker: %w", name, n, ls[n-1], ErrNotExpressible)
	}
	return nil
}

func writeSRSection(b *strings.Builder, ls []string, noEOL bool) {
	for _, l := range ls {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if noEOL {
		b.WriteString(noEOLMarker)
		b.WriteByte('\n')
	}
}
