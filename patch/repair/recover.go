package repair

import "github.com/patchbench/patchbench/patch"

// A reading of a hunk that fits nowhere as written, tried only at the
// exact tiers and kept only where it fits exactly once: what it assumes is
// then the only way the hunk fits the file.

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

// trimmedEdge places a hunk whose context at one end, or at both, (up to
// maxEdgeTrim lines each) is invented or misremembered, when the rest of
// it, removed lines included, fits exactly once and says enough to anchor
// it. Trims are tried fewest lines first; at the first count where some
// trim fits, exactly one trim may fit, at one place. Trimming both ends
// also needs a removed line, every significant removed line exact and
// nowhere else in the file. The lines left out are dropped context: the
// file keeps its own lines there.
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
	lead, trail = min(lead, maxEdgeTrim), min(trail, maxEdgeTrim)
	for total := 1; total <= lead+trail; total++ {
		var got []place
		fits := false
		for front := max(0, total-trail); front <= min(total, lead); front++ {
			back := total - front
			sub := es[front : len(es)-back]
			if len(sub) < total || !anchored(sub) || (front > 0 && back > 0 && !uniqueRemoved(t, sub)) {
				continue
			}
			c, ok := exactlyOnce(t, sub)
			if c.at == nil {
				continue // fits nowhere yet: one more line may be invented
			}
			fits = true
			if ok {
				p := place{start: c.start, end: c.end, at: make([]int, len(es)), tier: TierFuzzy, level: c.level, cost: total}
				for i := range p.at {
					p.at[i] = -1
				}
				copy(p.at[front:], c.at)
				got = append(got, p)
			}
		}
		if fits {
			// Found, or ambiguous: more trimming only adds places.
			if len(got) != 1 {
				return place{}, false
			}
			return got[0], true
		}
	}
	return place{}, false
}

// uniqueRemoved reports whether the entries remove a line and every
// significant line they remove is in the file exactly once, as written.
func uniqueRemoved(t *text, es []entry) bool {
	n := 0
	ix := t.indexLevel(levelExact)
	for i := range es {
		e := &es[i]
		if e.kind != patch.LineDelete || e.elision {
			continue
		}
		n++
		if !e.signif {
			continue
		}
		c := ix.find(e.normAt(levelExact)[0])
		if c < 0 || len(ix.at(c)) != 1 {
			return false
		}
	}
	return n > 0
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
