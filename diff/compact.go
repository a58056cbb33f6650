package diff

import "bytes"

// Change compaction, after git's xdl_change_compact with the indent
// heuristic (git's default since 2.14). A group is a maximal run of changed
// lines on one side. If its first line equals the line after it, the group
// can slide down by one without changing what the script does; likewise up.
// Sliding into a neighbouring group merges the two. Each group is slid to
// line up with a change on the other side when it can, and otherwise to the
// position that git's indentation scoring likes best.

// group is ch[start:end], a run of changed lines (marked 1); an empty group
// sits above the unchanged line at start.
type group struct{ start, end int }

// firstGroup returns the (possibly empty) group at the top of ch.
func firstGroup(ch []byte) group {
	g := group{}
	for g.end < len(ch) && ch[g.end] != 0 {
		g.end++
	}
	return g
}

// next moves g to the following group; it reports false at the end.
func (g *group) next(ch []byte) bool {
	if g.end == len(ch) {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for g.end < len(ch) && ch[g.end] != 0 {
		g.end++
	}
	return true
}

// prev moves g to the preceding group; it reports false at the top.
func (g *group) prev(ch []byte) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for g.start > 0 && ch[g.start-1] != 0 {
		g.start--
	}
	return true
}

// slideDown moves g down one line, absorbing a group it runs into.
func (g *group) slideDown(lines []string, ch []byte) bool {
	if g.end >= len(ch) || lines[g.start] != lines[g.end] {
		return false
	}
	ch[g.start] = 0
	ch[g.end] = 1
	g.start++
	g.end++
	for g.end < len(ch) && ch[g.end] != 0 {
		g.end++
	}
	return true
}

// slideUp moves g up one line, absorbing a group it runs into.
func (g *group) slideUp(lines []string, ch []byte) bool {
	if g.start == 0 || lines[g.start-1] != lines[g.end-1] {
		return false
	}
	g.start--
	g.end--
	ch[g.start] = 1
	ch[g.end] = 0
	for g.start > 0 && ch[g.start-1] != 0 {
		g.start--
	}
	return true
}

// compact slides the groups of lines (marked in ch) against the other
// side's marks och. Unchanged lines pair up one to one, so the two sides'
// groups advance in step.
func compact(lines []string, ch, och []byte) {
	g, og := firstGroup(ch), firstGroup(och)
	for {
		if g.end != g.start {
			// Slide up and then down as far as possible; a merge with a
			// neighbouring group may allow more, so repeat until none.
			var earliestEnd, endMatchingOther int
			for {
				size := g.end - g.start
				// endMatchingOther is the last end position at which the
				// group faced a change on the other side, -1 for none.
				endMatchingOther = -1
				for g.slideUp(lines, ch) {
					mustStep(og.prev(och))
				}
				earliestEnd = g.end
				if og.end > og.start {
					endMatchingOther = g.end
				}
				for g.slideDown(lines, ch) {
					mustStep(og.next(och))
					if og.end > og.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			// The group now sits as low as it can.
			switch {
			case g.end == earliestEnd:
				// It cannot move.
			case endMatchingOther != -1:
				// Line up with the last change on the other side that
				// the group can face.
				for og.end == og.start {
					mustStep(g.slideUp(lines, ch))
					mustStep(og.prev(och))
				}
			default:
				best := bestShift(lines, g, earliestEnd, g.end-g.start)
				for g.end > best {
					mustStep(g.slideUp(lines, ch))
					mustStep(og.prev(och))
				}
			}
		}
		if g.start == g.end && og.start == og.end && g.end < len(ch) && og.end < len(och) {
			// Unchanged line pairs between empty groups need no work:
			// jump to the last empty group before a change on either
			// side.
			i := bytes.IndexByte(ch[g.end+1:], 1)
			if i < 0 {
				i = len(ch) - g.end
			}
			j := bytes.IndexByte(och[og.end+1:], 1)
			if j < 0 {
				j = len(och) - og.end
			}
			if k := min(i, j) - 1; k > 0 {
				g.start += k
				g.end += k
				og.start += k
				og.end += k
			}
		}
		if !g.next(ch) {
			break
		}
		mustStep(og.next(och))
	}
}

// mustStep panics when a group move that the marks guarantee fails.
func mustStep(ok bool) {
	if !ok {
		panic("diff: internal error: change groups out of step")
	}
}

// Weights of git's indent heuristic, found empirically by Michael Haggerty
// (github.com/mhagger/diff-slider-tools). Scores are only compared with
// each other; smaller is better.
const (
	maxIndent  = 200 // indentation counted at most this far
	maxBlanks  = 20  // blank lines counted at most this far
	maxSliding = 100 // positions tried at most per group

	startOfFilePenalty              = 1
	endOfFilePenalty                = 21
	totalBlankWeight                = -30
	postBlankWeight                 = 6
	relativeIndentPenalty           = -4
	relativeIndentWithBlankPenalty  = 10
	relativeOutdentPenalty          = 24
	relativeOutdentWithBlankPenalty = 17
	relativeDedentPenalty           = 23
	relativeDedentWithBlankPenalty  = 17
	indentWeight                    = 60
)

// bestShift returns the end position, between earliestEnd and g.end, at
// which the group of size n reads best: each position defines two splits
// (above and below the group), scored by blank lines and indentation
// around them. Ties go to the lowest position, as in git.
func bestShift(lines []string, g group, earliestEnd, n int) int {
	shift := max(earliestEnd, g.end-n-1, g.end-maxSliding)
	best := -1
	var bestScore splitScore
	for ; shift <= g.end; shift++ {
		var s splitScore
		s.add(measureSplit(lines, shift))
		s.add(measureSplit(lines, shift-n))
		if best == -1 || s.cmp(bestScore) <= 0 {
			best, bestScore = shift, s
		}
	}
	return best
}

// indent returns the indentation of line, tabs counting to the next
// multiple of 8, or -1 for a blank line.
func indent(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		case '\n', '\v', '\f', '\r':
		default:
			return n
		}
		if n >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// split describes the surroundings of a split above line i.
type split struct {
	endOfFile  bool
	indent     int // of line i, -1 if blank
	preBlank   int // blank lines right above
	preIndent  int // of the nearest non-blank line above, -1 if none
	postBlank  int // blank lines right after line i
	postIndent int // of the nearest non-blank line after line i, -1 if none
}

func measureSplit(lines []string, i int) split {
	var m split
	if i >= len(lines) {
		m.endOfFile = true
		m.indent = -1
	} else {
		m.indent = indent(lines[i])
	}
	m.preIndent = -1
	for j := i - 1; j >= 0; j-- {
		m.preIndent = indent(lines[j])
		if m.preIndent != -1 {
			break
		}
		m.preBlank++
		if m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for j := i + 1; j < len(lines); j++ {
		m.postIndent = indent(lines[j])
		if m.postIndent != -1 {
			break
		}
		m.postBlank++
		if m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

type splitScore struct {
	effectiveIndent int
	penalty         int
}

// add scores split m: splits next to blank lines and at the start of a
// less-indented line are favoured, so hunks end between blocks.
func (s *splitScore) add(m split) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight * totalBlank
	s.penalty += postBlankWeight * postBlank

	ind := m.indent
	if ind == -1 {
		ind = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += ind
	switch {
	case ind == -1 || m.preIndent == -1:
	case ind > m.preIndent:
		s.penalty += pick(anyBlanks, relativeIndentWithBlankPenalty, relativeIndentPenalty)
	case ind == m.preIndent:
	case m.postIndent != -1 && m.postIndent > ind:
		// Less indented than the line above but more than the one
		// below: probably the start of a block.
		s.penalty += pick(anyBlanks, relativeOutdentWithBlankPenalty, relativeOutdentPenalty)
	default:
		// Probably the end of a block.
		s.penalty += pick(anyBlanks, relativeDedentWithBlankPenalty, relativeDedentPenalty)
	}
}

func (s splitScore) cmp(t splitScore) int {
	c := 0
	switch {
	case s.effectiveIndent > t.effectiveIndent:
		c = 1
	case s.effectiveIndent < t.effectiveIndent:
		c = -1
	}
	return indentWeight*c + s.penalty - t.penalty
}

func pick(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}
