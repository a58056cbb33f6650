package patch

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Applying a Lenient file patch: the matching rules of codex's apply_patch
// (seek_sequence.rs), with one difference: where only a loose level fits
// (whitespace or punctuation ignored), codex takes the first place and
// patchbench refuses a hunk that fits two.

// lenientLevels is the number of matching levels, loosest last.
const lenientLevels = 4

// endedLines is a file split into lines that remember their endings.
type endedLines struct {
	texts []string
	ends  []string // "\n", "\r\n", "\r", or "" for an unterminated last line
	pref  string   // the first line's ending, given to added lines
	norm  [lenientLevels][]string
	// atEnd: a hunk reached the end of the file, so the last line gets an
	// ending (codex's rule), unless noEOL: the hunk used the "\ No newline"
	// extension.
	atEnd, noEOL bool
	// unique: ApplyOptions.Unique.
	unique bool
}

func splitEndings(s string) *endedLines {
	f := &endedLines{}
	for s != "" {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			f.texts, f.ends = append(f.texts, s), append(f.ends, "")
			break
		}
		n := 1
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			n = 2
		}
		f.texts, f.ends = append(f.texts, s[:i]), append(f.ends, s[i:i+n])
		if f.pref == "" {
			f.pref = s[i : i+n]
		}
		s = s[i+n:]
	}
	if f.pref == "" {
		f.pref = "\n"
	}
	return f
}

// lenientNorm normalises a line for matching level lv.
func lenientNorm(lv int, s string) string {
	switch lv {
	case 0:
		return s
	case 1:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case 2:
		return strings.TrimSpace(s)
	}
	return strings.Map(asciiPunct, strings.TrimSpace(s))
}

// asciiPunct maps the typographic dashes, quotes and spaces codex
// normalises to their ASCII forms.
func asciiPunct(r rune) rune {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"'
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007',
		'\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

func (f *endedLines) level(lv int) []string {
	if f.norm[lv] == nil {
		n := make([]string, len(f.texts))
		for i, t := range f.texts {
			n[i] = lenientNorm(lv, t)
		}
		f.norm[lv] = n
	}
	return f.norm[lv]
}

// seek returns every place at or after from where pat fits, at the first
// level where it fits anywhere, and that level. With atEnd only a place that
// ends at the end of the file counts.
func (f *endedLines) seek(pat []string, from int, atEnd bool) ([]int, int) {
	last := len(f.texts) - len(pat)
	first := from
	if atEnd {
		first = max(from, last)
	}
	if len(pat) == 0 || last < first {
		return nil, 0
	}
	for lv := range lenientLevels {
		lines := f.level(lv)
		want := make([]string, len(pat))
		for i, p := range pat {
			want[i] = lenientNorm(lv, p)
		}
		var found []int
		for pos := first; pos <= last; pos++ {
			ok := true
			for i, w := range want {
				if lines[pos+i] != w {
					ok = false
					break
				}
			}
			if ok {
				found = append(found, pos)
			}
		}
		if len(found) > 0 {
			return found, lv
		}
	}
	return nil, 0
}

// applyLenient applies the hunks of a Lenient file patch to content.
func applyLenient(content string, fp *FilePatch, unique bool) (string, []Placement, error) {
	if len(fp.Hunks) == 0 {
		return content, nil, nil // a Move to alone keeps the content as is
	}
	f := splitEndings(content)
	f.unique = unique
	places, err := eachHunk(fp, f.apply)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	for i, t := range f.texts {
		b.WriteString(t)
		e := f.ends[i]
		last := i == len(f.texts)-1
		switch {
		case last && f.noEOL:
			e = ""
		case e == "" && (!last || f.atEnd):
			// A chunk that reaches the end leaves a final line ending, as
			// codex does; a line an append moved inward needs one too. An
			// end no chunk reached stays as it was.
			e = f.pref
		}
		b.WriteString(e)
	}
	return b.String(), places, nil
}

// apply places one hunk at or after line after and splices it in. It
// returns where the hunk's new lines end.
func (f *endedLines) apply(h *Hunk, after int) (Placement, int, error) {
	start := after
	anchorFrom := -1 // where the last anchor was sought
	for _, a := range h.Anchors {
		anchorFrom = start
		at, _ := f.seek([]string{a}, start, false)
		if len(at) == 0 {
			return Placement{}, 0, &HunkError{Err: fmt.Errorf("%w: anchor %q", ErrContextMismatch, a)}
		}
		start = at[0] + 1 // the first one, as codex does: the anchor names where to look
	}
	lines := h.Lines
	old := h.Old()
	if len(old) == 0 {
		if len(h.Anchors) > 0 {
			// codex appends such a chunk at the end of the file, far from the
			// anchor it names.
			return Placement{}, 0, &HunkError{Err: fmt.Errorf("%w: the chunk only adds lines, after anchor %q: after the anchor or at the end of the file?", ErrAmbiguous, h.Anchors[len(h.Anchors)-1])}
		}
		pos := len(f.texts)
		if pos > 0 && f.texts[pos-1] == "" {
			pos-- // before a final blank line, as codex does
		}
		if pos == len(f.texts) {
			f.atEnd, f.noEOL = true, !h.KeepEOL && h.NewNoEOL
		}
		return f.splice(h, lines, pos, 0), pos + len(lines), nil
	}
	// The "\ No newline" extension on the old side ties the hunk to the end.
	atEnd := h.AtEnd || (!h.KeepEOL && h.OldNoEOL)
	found, lv := f.seek(old, start, atEnd)
	if len(found) == 0 {
		// Blank lines that end a chunk are often separators, not context:
		// codex retries without them.
		n := len(lines)
		for n > 0 && lines[n-1].Kind == LineContext && lines[n-1].Text == "" {
			n--
		}
		if n < len(lines) && n > 0 {
			trimmed := &Hunk{Lines: lines[:n]}
			if found, lv = f.seek(trimmed.Old(), start, atEnd); len(found) > 0 {
				lines, old = trimmed.Lines, trimmed.Old()
			}
		}
	}
	switch {
	case len(found) == 0:
		img := image{tail: f.texts, eol: true}
		return Placement{}, 0, img.mismatch(old, h, start)
	case len(found) > 1 && lv > 0:
		// At the exact level V4A's own rule, the first place after the
		// previous chunk, decides (patchbench's printer relies on it); a
		// loose match that fits twice is a guess codex would make.
		at := make([]string, len(found))
		for i, p := range found {
			at[i] = fmt.Sprint(p + 1)
		}
		return Placement{}, 0, &HunkError{Err: fmt.Errorf("%w: the hunk fits at lines %s", ErrAmbiguous, strings.Join(at, ", "))}
	}
	pos := found[0]
	if f.unique {
		if err := f.oneReading(old, found, lv, anchorFrom, h, atEnd); err != nil {
			return Placement{}, 0, err
		}
	}
	if pos+len(old) == len(f.texts) {
		f.atEnd, f.noEOL = true, !h.KeepEOL && h.NewNoEOL
	}
	pl := f.splice(h, lines, pos, len(old))
	pl.Level = lv
	_, n := (&Hunk{Lines: lines}).Counts()
	return pl, pos + n, nil
}

// oneReading refuses a hunk placed at found[0] (at level lv) when another
// reading places it elsewhere: without anchors, a second place after the
// previous hunk; with anchors, another line that the last anchor names
// (sought from anchorFrom), after which the hunk's first place differs.
func (f *endedLines) oneReading(old []string, found []int, lv, anchorFrom int, h *Hunk, atEnd bool) error {
	places := []int{found[0]}
	if len(h.Anchors) == 0 {
		places = found
	} else {
		a := h.Anchors[len(h.Anchors)-1]
		at, _ := f.seek([]string{a}, anchorFrom, false)
		for _, s := range at[1:] {
			more, mlv := f.seek(old, s+1, atEnd)
			if len(more) > 0 && mlv == lv && !slices.Contains(places, more[0]) {
				places = append(places, more[0])
			}
		}
	}
	if len(places) < 2 {
		return nil
	}
	at := make([]string, len(places))
	for i, p := range places {
		at[i] = fmt.Sprint(p + 1)
	}
	why := "the hunk fits at lines " + strings.Join(at, ", ")
	if len(h.Anchors) > 0 {
		why += fmt.Sprintf(", each after a line %q", h.Anchors[len(h.Anchors)-1])
	}
	return &HunkError{Err: fmt.Errorf("%w: %s", ErrAmbiguous, why)}
}

// splice replaces the n old lines at pos with the new side of lines:
// context lines stay as the file has them, added lines take the file's
// first line ending.
func (f *endedLines) splice(h *Hunk, lines []Line, pos, n int) Placement {
	texts := make([]string, 0, len(f.texts)-n+len(lines))
	ends := make([]string, 0, cap(texts))
	texts, ends = append(texts, f.texts[:pos]...), append(ends, f.ends[:pos]...)
	oi := pos
	for _, l := range lines {
		switch l.Kind {
		case LineContext:
			texts, ends = append(texts, f.texts[oi]), append(ends, f.ends[oi])
			oi++
		case LineDelete:
			oi++
		case LineInsert:
			texts, ends = append(texts, l.Text), append(ends, f.pref)
		}
	}
	texts, ends = append(texts, f.texts[pos+n:]...), append(ends, f.ends[pos+n:]...)
	f.texts, f.ends = texts, ends
	f.norm = [lenientLevels][]string{}
	return Placement{Line: pos + 1}
}
