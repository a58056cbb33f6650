package patch

import (
	"fmt"
	"strings"
)

// The V4A envelope and section markers.
const (
	v4aBegin     = "*** Begin Patch"
	v4aEnd       = "*** End Patch"
	v4aAdd       = "*** Add File:"
	v4aDelete    = "*** Delete File:"
	v4aUpdate    = "*** Update File:"
	v4aMove      = "*** Move to:"
	v4aEndOfFile = "*** End of File"
)

// ParseV4A parses the V4A patch format of OpenAI's apply_patch tool, with
// the rules of codex's apply_patch (codex-rs/apply-patch; see docs/formats.md).
//
// The input is read line by line; a line ends at "\n" or "\r\n" (the
// patch's own line endings do not reach the hunks). The envelope markers may
// carry surrounding whitespace, and so may a section header line ("*** Add
// File:", ...) where a section may start; paths are trimmed of surrounding
// whitespace. The grammar:
//
//	patch   = "*** Begin Patch" { section } "*** End Patch"
//	section = add | delete | update
//	add     = "*** Add File: " path { "+" line } [ noeol ]
//	delete  = "*** Delete File: " path
//	update  = "*** Update File: " path [ "*** Move to: " path ] [ body ] { chunk }
//	chunk   = ( "@@" | "@@ " anchor ) { "@@" | "@@ " anchor } body
//	body    = change { change } [ "*** End of File" ]
//	change  = ( " " line | "-" line | "+" line | "" ) [ noeol ]
//	noeol   = "\" text
//
// Blank lines may come before "*** Begin Patch" and after "*** End Patch";
// the envelope may also sit in a heredoc ("<<EOF", "<<'EOF'" or "<<\"EOF\""
// first, a line ending with "EOF" last), as codex accepts. Any other text
// outside the envelope is an error (finding a patch inside prose is the job
// of package extract). An empty line in a chunk is an empty context line;
// blank lines where a chunk may start (after the Update File line, after
// "*** End of File") are skipped, and a blank line that does not start with
// a space ends its chunk, as in codex.
//
// Each section is one [FilePatch] with Lenient set: apply matches its lines
// as apply_patch does (see [FilePatch]). Add File is Op Create with one hunk
// of inserted lines (none for an empty file) with KeepEOL false: the new
// file ends with a newline. Delete File is Op Delete with no hunks: apply
// deletes the file whatever it holds. Update File is Op Modify, or Op Rename
// with NewPath from "*** Move to:", with one hunk per chunk; an update must
// have a chunk or a Move to. Changes right after the Update File (or Move to)
// line form a first chunk with no "@@" line. Add File and Move to set
// Overwrite: like codex, they replace a file that exists.
//
// Chunk hunks have no position (HasPos false): apply searches for the old
// lines after the previous hunk. Each "@@ anchor" line appends anchor to
// Hunk.Anchors (a blank anchor counts as none): apply first seeks forward to
// each anchor line in turn and searches after it. "*** End of File" sets
// AtEnd: the old lines must end at the end of the file. Hunks have KeepEOL
// set unless the extension below is used.
//
// Extensions (not OpenAI's): several "@@ anchor" lines may open one chunk;
// an update may be a Move to alone; and a line starting with '\', such as
// "\ No newline at end of file", after a change line says, as in a unified
// diff, that the line is the last of its side(s) and has no final newline:
// after a context line both OldNoEOL and NewNoEOL are set, after a deleted
// line OldNoEOL, after an inserted line NewNoEOL, and KeepEOL is cleared.
// The line must be the last old (new) line of its chunk.
//
// Errors are *[ParseError] values naming the input line.
func ParseV4A(text string) (*Patch, error) {
	lines := splitInput(text)
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	p := &v4aParser{lines: lines}
	return p.parse()
}

type v4aParser struct {
	lines []string
	i     int // index of the next line
}

func (p *v4aParser) errf(line int, format string, args ...any) error {
	return &ParseError{Format: V4A, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// lastLine is the number of the last input line, for errors at the end.
func (p *v4aParser) lastLine() int { return max(len(p.lines), 1) }

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// cutMarker reports whether l starts with marker m and returns the rest,
// trimmed.
func cutMarker(l, m string) (string, bool) {
	rest, ok := strings.CutPrefix(l, m)
	return strings.TrimSpace(rest), ok
}

func (p *v4aParser) parse() (*Patch, error) {
	for p.i < len(p.lines) && isBlank(p.lines[p.i]) {
		p.i++
	}
	if p.i >= len(p.lines) {
		return nil, p.errf(p.lastLine(), "no %q found", v4aBegin)
	}
	heredoc := false
	if isHeredocStart(p.lines[p.i]) {
		heredoc = true
		p.i++
	}
	if p.i >= len(p.lines) || strings.TrimSpace(p.lines[p.i]) != v4aBegin {
		line := min(p.i, len(p.lines)-1)
		return nil, p.errf(line+1, "expected %q, found %q", v4aBegin, p.lines[line])
	}
	p.i++
	// The envelope ends at its last line (codex reads the end marker first,
	// so a padded one is never taken for a context line).
	end := len(p.lines) - 1
	for end >= p.i && isBlank(p.lines[end]) {
		end--
	}
	if heredoc && end >= p.i && strings.HasSuffix(strings.TrimSpace(p.lines[end]), "EOF") && strings.TrimSpace(p.lines[end]) != v4aEnd {
		for end--; end >= p.i && isBlank(p.lines[end]); end-- {
		}
	}
	if end < p.i || strings.TrimSpace(p.lines[end]) != v4aEnd {
		for k := p.i; k <= end; k++ {
			if strings.TrimSpace(p.lines[k]) == v4aEnd {
				for k++; isBlank(p.lines[k]); k++ {
				}
				return nil, p.errf(k+1, "text after %q", v4aEnd)
			}
		}
		return nil, p.errf(p.lastLine(), "missing %q", v4aEnd)
	}
	p.lines = p.lines[:end]
	out := &Patch{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		var fp *FilePatch
		var err error
		t := strings.TrimSpace(l)
		if path, ok := cutMarker(t, v4aAdd); ok {
			fp, err = p.add(path)
		} else if path, ok := cutMarker(t, v4aDelete); ok {
			fp, err = p.delete(path)
		} else if path, ok := cutMarker(t, v4aUpdate); ok {
			fp, err = p.update(path)
		} else {
			err = p.errf(p.i+1, "expected a file section (%q, %q or %q) or %q, found %q", v4aAdd, v4aDelete, v4aUpdate, v4aEnd, l)
		}
		if err != nil {
			return nil, err
		}
		fp.Lenient = true
		out.Files = append(out.Files, fp)
	}
	if len(out.Files) == 0 {
		return nil, p.errf(p.i+1, "no file sections")
	}
	return out, nil
}

// isHeredocStart reports whether l opens a heredoc around the envelope, as
// a model calling apply_patch through a shell writes it.
func isHeredocStart(l string) bool {
	switch strings.TrimSpace(l) {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
		return true
	}
	return false
}

// sectionPath checks the path of the section header at p.i.
func (p *v4aParser) sectionPath(path string) error {
	if path == "" {
		return p.errf(p.i+1, "missing path in %q", p.lines[p.i])
	}
	return nil
}

func (p *v4aParser) add(path string) (*FilePatch, error) {
	if err := p.sectionPath(path); err != nil {
		return nil, err
	}
	fp := &FilePatch{NewPath: path, Op: Create, Overwrite: true}
	h := &Hunk{PatchLine: p.i + 1}
	var marks []v4aMark
	for p.i++; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		if strings.HasPrefix(l, "+") {
			h.Lines = append(h.Lines, Line{Kind: LineInsert, Text: l[1:]})
			continue
		}
		if strings.HasPrefix(l, `\`) {
			m, err := p.mark(h)
			if err != nil {
				return nil, err
			}
			marks = append(marks, m)
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "***") {
			break
		}
		return nil, p.errf(p.i+1, "line in an Add File section does not start with '+': %q", l)
	}
	if err := p.finish(h, marks); err != nil {
		return nil, err
	}
	h.KeepEOL = false // an added file ends with a newline unless marked
	if len(h.Lines) > 0 {
		fp.Hunks = []*Hunk{h}
	}
	return fp, nil
}

func (p *v4aParser) delete(path string) (*FilePatch, error) {
	if err := p.sectionPath(path); err != nil {
		return nil, err
	}
	p.i++
	return &FilePatch{OldPath: path, Op: Delete}, nil
}

func (p *v4aParser) update(path string) (*FilePatch, error) {
	if err := p.sectionPath(path); err != nil {
		return nil, err
	}
	header := p.i + 1
	fp := &FilePatch{OldPath: path, NewPath: path, Op: Modify}
	p.i++
	if p.i < len(p.lines) {
		if to, ok := cutMarker(strings.TrimSpace(p.lines[p.i]), v4aMove); ok {
			if err := p.sectionPath(to); err != nil {
				return nil, err
			}
			fp.NewPath, fp.Op, fp.Overwrite = to, Rename, true
			p.i++
		}
	}
	var h *Hunk // the chunk being read
	var marks []v4aMark
	done := func() error {
		if h == nil {
			return nil
		}
		if len(h.Lines) == 0 {
			return p.errf(h.PatchLine, "chunk has no change lines")
		}
		if err := p.finish(h, marks); err != nil {
			return err
		}
		fp.Hunks = append(fp.Hunks, h)
		h, marks = nil, nil
		return nil
	}
	// ended: a chunk just ended with "*** End of File" or a blank line, so
	// the next change line needs a new "@@".
	ended := false
loop:
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		switch {
		case h == nil && isBlank(l):
			// Between chunks, as codex skips them.
		case isBlank(l) && l != "" && l[0] != ' ':
			// A blank line that is no context line ends the chunk (codex).
			if len(h.Lines) == 0 {
				return nil, p.errf(p.i+1, "blank line before any change line of its chunk")
			}
			if err := done(); err != nil {
				return nil, err
			}
			ended = true
		case strings.HasPrefix(l, "@@"):
			if h != nil && len(h.Lines) > 0 {
				if err := done(); err != nil {
					return nil, err
				}
			}
			if h == nil {
				h = &Hunk{PatchLine: p.i + 1}
			}
			rest := l[2:]
			if isBlank(rest) {
				continue
			}
			if rest[0] != ' ' {
				return nil, p.errf(p.i+1, "malformed chunk header %q: want \"@@\" or \"@@ text\"", l)
			}
			h.Anchors = append(h.Anchors, rest[1:])
		case trimEnd(l) == v4aEndOfFile:
			if h == nil || len(h.Lines) == 0 {
				return nil, p.errf(p.i+1, "%q before any change line of its chunk", v4aEndOfFile)
			}
			h.AtEnd = true
			if err := done(); err != nil {
				return nil, err
			}
			ended = true
		case strings.HasPrefix(l, "***"):
			break loop
		case strings.HasPrefix(l, `\`):
			if h == nil {
				return nil, p.errf(p.i+1, "%q before any change line of its chunk", l)
			}
			m, err := p.mark(h)
			if err != nil {
				return nil, err
			}
			marks = append(marks, m)
		case l == "" || l[0] == ' ' || l[0] == '-' || l[0] == '+':
			if h == nil {
				if ended || len(fp.Hunks) > 0 {
					return nil, p.errf(p.i+1, "change line after the end of a chunk: start a new chunk with \"@@\"")
				}
				h = &Hunk{PatchLine: p.i + 1}
			}
			k, text := LineContext, ""
			if l != "" {
				k, text = LineKind(l[0]), l[1:]
			}
			h.Lines = append(h.Lines, Line{Kind: k, Text: text})
		default:
			return nil, p.errf(p.i+1, "change line does not start with ' ', '-' or '+': %q", l)
		}
	}
	if err := done(); err != nil {
		return nil, err
	}
	if len(fp.Hunks) == 0 && fp.Op != Rename {
		return nil, p.errf(header, "update of %s has no changes", path)
	}
	return fp, nil
}

// v4aMark is a "\ No newline" line: the index of the hunk line it follows
// and its own input line.
type v4aMark struct{ at, line int }

// mark applies the no-newline marker at p.i to the last line of h.
func (p *v4aParser) mark(h *Hunk) (v4aMark, error) {
	if len(h.Lines) == 0 {
		return v4aMark{}, p.errf(p.i+1, "%q before any change line of its chunk", p.lines[p.i])
	}
	at := len(h.Lines) - 1
	switch h.Lines[at].Kind {
	case LineContext:
		h.OldNoEOL, h.NewNoEOL = true, true
	case LineDelete:
		h.OldNoEOL = true
	case LineInsert:
		h.NewNoEOL = true
	}
	return v4aMark{at: at, line: p.i + 1}, nil
}

// finish checks that every no-newline marker follows the last line of its
// side, and sets the hunk's EOL handling and counts.
func (p *v4aParser) finish(h *Hunk, marks []v4aMark) error {
	lastOld, lastNew := lastLines(h.Lines)
	for _, m := range marks {
		k := h.Lines[m.at].Kind
		if (k != LineInsert && m.at != lastOld) || (k != LineDelete && m.at != lastNew) {
			return p.errf(m.line, "%q must follow the last old or new line of its chunk", p.lines[m.line-1])
		}
	}
	h.KeepEOL = len(marks) == 0
	h.OldLines, h.NewLines = h.Counts()
	return nil
}

// printV4A writes p as a V4A patch. A created file becomes an Add File
// section, a deleted one a Delete File section (without its old content,
// which V4A does not carry), a renamed one an Update File with a Move to.
// Every hunk of an update starts with one "@@" line per anchor, or a bare
// "@@"; positions and unified-diff section text are dropped. AtEnd prints
// "*** End of File". The "\ No newline at end of file" extension is written
// after the last old (new) line of a hunk with OldNoEOL (NewNoEOL) unless
// KeepEOL is set.
//
// Copies, mode changes, binary changes, modifications whose old and new
// names differ (apply patches whichever file exists), file patches without a
// path, empty hunks, insertions at a line number, and updates with no hunks
// cannot be expressed: the error wraps [ErrNotExpressible].
func printV4A(b *strings.Builder, p *Patch) error {
	b.WriteString(v4aBegin + "\n")
	for _, fp := range p.Files {
		if err := writeV4AFile(b, fp); err != nil {
			return fmt.Errorf("print v4a: %w", err)
		}
	}
	b.WriteString(v4aEnd + "\n")
	return nil
}

func writeV4AFile(b *strings.Builder, fp *FilePatch) error {
	path := fp.Path()
	switch {
	case fp.Binary:
		return fmt.Errorf("binary change of %s: %w", path, ErrNotExpressible)
	case fp.Op == Copy:
		return fmt.Errorf("copy %s to %s: %w", fp.OldPath, fp.NewPath, ErrNotExpressible)
	case fp.OldMode != 0 && fp.NewMode != 0 && fp.OldMode != fp.NewMode:
		return fmt.Errorf("mode change of %s: %w", path, ErrNotExpressible)
	case differentNames(fp):
		return fmt.Errorf("modify %s or %s (whichever exists): %w", fp.OldPath, fp.NewPath, ErrNotExpressible)
	}
	for _, s := range []string{fp.OldPath, fp.NewPath} {
		if s != strings.TrimSpace(s) || strings.Contains(s, "\n") {
			return fmt.Errorf("path %q does not fit on a section line: %w", s, ErrNotExpressible)
		}
	}
	if path == "" {
		return fmt.Errorf("file patch with no path: %w", ErrNotExpressible)
	}
	switch fp.Op {
	case Create:
		fmt.Fprintf(b, "%s %s\n", v4aAdd, fp.NewPath)
		var last *Hunk // the last hunk with lines, whose flags count
		for hi, h := range fp.Hunks {
			for _, l := range h.Lines {
				if l.Kind != LineInsert {
					return fmt.Errorf("create %s: hunk %d has old lines", path, hi+1)
				}
				b.WriteString("+" + l.Text + "\n")
				last = h
			}
		}
		if last != nil && last.NewNoEOL && !last.KeepEOL {
			b.WriteString(noEOLMarker + "\n")
		}
		return nil
	case Delete:
		fmt.Fprintf(b, "%s %s\n", v4aDelete, fp.OldPath)
		return nil
	}
	oldPath, newPath := fp.OldPath, fp.NewPath
	if oldPath == "" {
		oldPath = newPath
	}
	if newPath == "" {
		newPath = oldPath
	}
	fmt.Fprintf(b, "%s %s\n", v4aUpdate, oldPath)
	if fp.Op == Rename || newPath != oldPath {
		fmt.Fprintf(b, "%s %s\n", v4aMove, newPath)
	} else if len(fp.Hunks) == 0 {
		return fmt.Errorf("update of %s with no hunks: %w", path, ErrNotExpressible)
	}
	for hi, h := range fp.Hunks {
		if err := writeV4AHunk(b, h); err != nil {
			return fmt.Errorf("hunk %d of %s: %w", hi+1, path, err)
		}
	}
	return nil
}

func writeV4AHunk(b *strings.Builder, h *Hunk) error {
	if len(h.Lines) == 0 {
		return fmt.Errorf("empty hunk: %w", ErrNotExpressible)
	}
	if old, _ := h.Counts(); old == 0 && h.HasPos {
		// Without old lines to search for, V4A appends to the file.
		return fmt.Errorf("an insertion at line %d with no context: %w", h.OldStart, ErrNotExpressible)
	}
	for _, a := range h.Anchors {
		if isBlank(a) || strings.Contains(a, "\n") {
			return fmt.Errorf("anchor %q does not fit on a @@ line: %w", a, ErrNotExpressible)
		}
	}
	if len(h.Anchors) == 0 {
		b.WriteString("@@\n")
	}
	for _, a := range h.Anchors {
		b.WriteString("@@ " + a + "\n")
	}
	ls := h.Lines
	oldNoEOL, newNoEOL := h.OldNoEOL && !h.KeepEOL, h.NewNoEOL && !h.KeepEOL
	if oldNoEOL || newNoEOL {
		ls = splitNoEOLContext(ls, oldNoEOL, newNoEOL)
	}
	lastOld, lastNew := lastLines(ls)
	for i, l := range ls {
		b.WriteString(string(l.Kind) + l.Text + "\n")
		if (i == lastOld && oldNoEOL) || (i == lastNew && newNoEOL) {
			b.WriteString(noEOLMarker + "\n")
		}
	}
	if h.AtEnd {
		b.WriteString(v4aEndOfFile + "\n")
	}
	return nil
}
