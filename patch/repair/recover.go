package repair

import "github.com/patchbench/patchbench/patch"

// Two readings of a hunk that fits nowhere as written, each tried only at
// the exact tiers and kept only where it fits exactly once: what they
// assume is then the only way the hunk fits the file.

// skippedLine reads the first (or last) line of a run of added lines as
// context: a model that skipped a file line and then wrote it back as an
// added line meant to keep it. It returns the reading that fits, when
// exactly one of them does.
func skippedLine(t *text, h *looseHunk) (*looseHunk, []entry, place, bool) {
	var (
		found *looseHunk
		fes   []entry
		fp    place
		n     int
	)
	tried := map[int]bool{}
	for i := 0; i < len(h.lines); i++ {
		if h.lines[i].kind != patch.LineInsert || (i > 0 && h.lines[i-1].kind == patch.LineInsert) {
			continue
		}
		j := i
		for j+1 < len(h.lines) && h.lines[j+1].kind == patch.LineInsert {
			j++
		}
		for _, k := range []int{i, j} {
			if tried[k] {
				continue
			}
			tried[k] = true
			c := *h
			c.lines = append([]looseLine(nil), h.lines...)
			c.lines[k].kind = patch.LineContext
			es := entries(&c)
			if p, ok := exactlyOnce(t, es); ok {
				found, fes, fp = &c, es, p
				n++
			}
		}
	}
	return found, fes, fp, n == 1
}

// exactlyOnce returns the one place where the entries match consecutive
// file lines exactly or but for trailing whitespace; false when they fit
// nowhere or several places.
func exactlyOnce(t *text, es []entry) (place, bool) {
	for _, lv := range []int{levelExact, levelTrailing} {
		for _, alt := range []bool{false, true} {
			if cs := contiguous(t, es, lv, alt); len(cs) > 0 {
				return cs[0], len(cs) == 1
			}
		}
	}
	return place{}, false
}

// maxEdgeTrim is the most context lines at one end of a hunk that may be
// invented or misremembered.
const maxEdgeTrim = 2

// trimmedEdge places a hunk whose context at one end (up to maxEdgeTrim
// lines) is invented or misremembered, when the rest of it, removed lines
// included, fits exactly once and says enough to anchor it. The lines left
// out are dropped context: the file keeps its own lines there.
func trimmedEdge(t *text, h *looseHunk, es []entry) (place, bool) {
	lead, trail := 0, 0
	for _, l := range h.lines {
		if l.kind != patch.LineContext || l.elision {
			break
		}
		lead++
	}
	for i := len(h.lines) - 1; i >= 0 && h.lines[i].kind == patch.LineContext && !h.lines[i].elision; i-- {
		trail++
	}
	if lead == len(h.lines) {
		return place{}, false // no change at all
	}
	var got []place
	for _, front := range []bool{true, false} {
		edge := trail
		if front {
			edge = lead
		}
		for k := 1; k <= min(maxEdgeTrim, edge); k++ {
			sub := es[:len(es)-k]
			if front {
				sub = es[k:]
			}
			if len(sub) <= k || !anchored(sub) {
				break
			}
			c, ok := exactlyOnce(t, sub)
			if c.at == nil {
				continue // fits nowhere yet: one more line may be invented
			}
			if ok {
				p := place{start: c.start, end: c.end, at: make([]int, len(es)), tier: TierFuzzy, level: c.level, cost: k}
				off := 0
				if front {
					off = k
				}
				for i := range p.at {
					p.at[i] = -1
				}
				copy(p.at[off:], c.at)
				got = append(got, p)
			}
			break // found, or ambiguous: more trimming only adds places
		}
	}
	if len(got) != 1 {
		return place{}, false
	}
	return got[0], true
}

// anchored reports whether the entries hold at least two significant
// lines.
func anchored(es []entry) bool {
	n := 0
	for _, e := range es {
		if e.signif && !e.elision {
			n++
		}
	}
	return n >= 2
}
