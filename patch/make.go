package patch

import (
	"github.com/patchbench/patchbench/diff"
)

// DefaultContext is the number of context lines around a change, as in
// diff -u and git diff.
const DefaultContext = 3

// MakeOptions controls [Make].
type MakeOptions struct {
	// Context is the number of unchanged lines kept around each change.
	Context   int
	Algorithm diff.Algorithm
	// Unique grows the context of each hunk until its old lines occur
	// nowhere else in the old file, and its new lines nowhere in it, so
	// that it can only land where it belongs even without line numbers
	// and hunk order, and a second apply finds it applied. Formats
	// without line numbers need it.
	Unique bool
}

// DefaultMakeOptions returns three lines of context and the histogram
// algorithm.
func DefaultMakeOptions() MakeOptions {
	return MakeOptions{Context: DefaultContext, Algorithm: diff.Histogram}
}

// Make returns the file patch that turns old into new. An empty oldPath
// makes a creation, an empty newPath a deletion, two different paths a
// rename. It returns a file patch without hunks when the contents are equal.
func Make(oldPath, newPath, old, new string, opts MakeOptions) *FilePatch {
	fp := newFilePatch(oldPath, newPath)
	var a, b []string
	var aEOL, bEOL bool
	if len(old)+len(new) > 1<<20 {
		// Splitting is a pass over every byte; on big inputs do both sides
		// at once.
		done := make(chan struct{})
		go func() {
			a, aEOL = SplitLines(old)
			close(done)
		}()
		b, bEOL = SplitLines(new)
		<-done
	} else {
		a, aEOL = SplitLines(old)
		b, bEOL = SplitLines(new)
	}
	edits := diff.Lines(compareKeys(a, aEOL), compareKeys(b, bEOL), opts.Algorithm)
	if len(edits) == 0 {
		return fp
	}
	m := maker{a: a, b: b, aEOL: aEOL, bEOL: bEOL, edits: edits, ctx: max(opts.Context, 0)}
	spans := m.group()
	if opts.Unique {
		spans = m.unique(spans)
	}
	for _, s := range spans {
		fp.Hunks = append(fp.Hunks, m.hunk(s))
	}
	return fp
}

// newFilePatch returns a file patch without changes between the paths: a
// creation when oldPath is empty, a deletion when newPath is, a rename when
// they differ.
func newFilePatch(oldPath, newPath string) *FilePatch {
	fp := &FilePatch{OldPath: oldPath, NewPath: newPath}
	switch {
	case oldPath == "":
		fp.Op = Create
	case newPath == "":
		fp.Op = Delete
	case oldPath != newPath:
		fp.Op = Rename
	}
	return fp
}

// compareKeys returns the lines to diff: a last line without a newline must
// differ from the same text with one, so it gets a "\n" that no line holds.
func compareKeys(lines []string, eol bool) []string {
	if eol || len(lines) == 0 {
		return lines
	}
	keys := make([]string, len(lines))
	copy(keys, lines)
	keys[len(keys)-1] += "\n"
	return keys
}

type maker struct {
	a, b       []string
	aEOL, bEOL bool
	edits      []diff.Edit
	ctx        int
}

// span is a hunk under construction: edits[e0:e1] with before and after
// lines of context.
type span struct {
	e0, e1        int
	before, after int
}

func (m *maker) oldLo(s span) int { return m.edits[s.e0].OldStart - s.before }
func (m *maker) oldHi(s span) int { return m.edits[s.e1-1].OldEnd + s.after }

// group joins edits whose gap is at most twice the context, as diff -u does.
func (m *maker) group() []span {
	var spans []span
	for i := 0; i < len(m.edits); {
		j := i + 1
		for j < len(m.edits) && m.edits[j].OldStart-m.edits[j-1].OldEnd <= 2*m.ctx {
			j++
		}
		spans = append(spans, span{
			e0: i, e1: j,
			before: min(m.ctx, m.edits[i].OldStart),
			after:  min(m.ctx, len(m.a)-m.edits[j-1].OldEnd),
		})
		i = j
	}
	return spans
}

// unique grows or merges spans until each hunk's old lines occur only where
// the hunk belongs.
func (m *maker) unique(spans []span) []span {
	img := image{tail: m.a, eol: m.aEOL}
	for k := 0; k < len(spans); {
		prevEnd := 0
		if k > 0 {
			prevEnd = m.oldHi(spans[k-1])
		}
		s := spans[k]
		h := m.hunk(s)
		h.HasPos, h.KeepEOL = false, true
		old := h.Old()
		var pos int
		found, alone := true, true
		if len(old) == 0 {
			pos = len(m.a) // applied as an append
		} else {
			pos, found = img.searchForward(old, 0, false, false, h)
			if found && pos == m.oldLo(s) {
				_, again := img.searchForward(old, pos+1, false, false, h)
				alone = !again
			}
		}
		if found && alone && pos == m.oldLo(s) && !m.newElsewhere(img, h) {
			k++
			continue
		}
		nextLo := len(m.a)
		if k+1 < len(spans) {
			nextLo = m.oldLo(spans[k+1])
		}
		grew := false
		if m.oldLo(s) > prevEnd {
			s.before++
			grew = true
		}
		if m.oldHi(s) < nextLo {
			s.after++
			grew = true
		}
		switch {
		case grew:
			spans[k] = s
		case k+1 < len(spans):
			spans[k] = span{e0: s.e0, e1: spans[k+1].e1, before: s.before, after: spans[k+1].after}
			spans = append(spans[:k+1], spans[k+2:]...)
		case k > 0:
			spans[k-1] = span{e0: spans[k-1].e0, e1: s.e1, before: spans[k-1].before, after: s.after}
			spans = append(spans[:k], spans[k+1:]...)
			k--
		default:
			// The hunk covers the whole file; it cannot be misplaced.
			k++
		}
	}
	return spans
}

// newElsewhere reports whether h's new side, which adds or changes lines,
// is in the old file already: a hunk without line numbers whose new side
// is there cannot say whether it is applied, and the engine refuses it
// (repair's reverseFits), so it gets context until its new side is not.
func (m *maker) newElsewhere(img image, h *Hunk) bool {
	nw := h.New()
	if len(nw) == 0 || len(nw) > len(m.a) {
		return false
	}
	_, found := img.searchForward(nw, 0, false, false, h)
	return found
}

// hunk builds the Hunk for a span.
func (m *maker) hunk(s span) *Hunk {
	h := &Hunk{HasPos: true}
	first := m.edits[s.e0]
	ai := first.OldStart - s.before
	bi := first.NewStart - s.before
	oldLo, newLo := ai, bi
	for k := s.e0; k < s.e1; k++ {
		e := m.edits[k]
		for ; ai < e.OldStart; ai, bi = ai+1, bi+1 {
			h.Lines = append(h.Lines, Line{LineContext, m.a[ai]})
		}
		for ; ai < e.OldEnd; ai++ {
			h.Lines = append(h.Lines, Line{LineDelete, m.a[ai]})
		}
		for ; bi < e.NewEnd; bi++ {
			h.Lines = append(h.Lines, Line{LineInsert, m.b[bi]})
		}
	}
	for end := m.oldHi(s); ai < end; ai, bi = ai+1, bi+1 {
		h.Lines = append(h.Lines, Line{LineContext, m.a[ai]})
	}
	h.OldLines, h.NewLines = ai-oldLo, bi-newLo
	h.OldStart, h.NewStart = oldLo, newLo
	if h.OldLines > 0 {
		h.OldStart++
	}
	if h.NewLines > 0 {
		h.NewStart++
	}
	h.OldNoEOL = !m.aEOL && ai == len(m.a) && len(m.a) > 0
	h.NewNoEOL = !m.bEOL && bi == len(m.b) && len(m.b) > 0
	return h
}
