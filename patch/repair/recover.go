package repair

import (
	"slices"

	"github.com/patchbench/patchbench/patch"
)

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
// file keeps its own lines there. A line left out that the rest removes
// is not invented: the hunk keeps it and removes it, and the rest fits
// only where the line it kept is gone (a search-replace block that removes
// the second of two copies, sent again, removed the one left).
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
	return trimFit(t, es, lead, trail, func(sub []entry, total int) bool { return len(sub) >= total }, func(_ place, front, back int) bool {
		return !keptAndRemoved(es[:front], es[front:len(es)-back]) && !keptAndRemoved(es[len(es)-back:], es[front:len(es)-back])
	})
}

// dropsRemoved reports whether place c leaves out a significant context
// line of es that one of the lines it removes reads as: the hunk says the
// line stays and, placed there, removes it (the context is found again
// after the lines a first apply removed).
func dropsRemoved(es []entry, c place) bool {
	if c.at == nil {
		return false
	}
	var dropped, removed []entry
	for i := range es {
		switch {
		case c.at[i] < 0 && es[i].kind == patch.LineContext:
			dropped = append(dropped, es[i])
		case c.at[i] >= 0 && es[i].kind == patch.LineDelete:
			removed = append(removed, es[i])
		}
	}
	return keptAndRemoved(dropped, removed)
}

// keptAndRemoved reports whether a significant context line of dropped is
// a line that rest removes (trailing whitespace aside).
func keptAndRemoved(dropped, rest []entry) bool {
	for i := range dropped {
		d := &dropped[i]
		if d.kind != patch.LineContext || !d.signif || d.elision {
			continue
		}
		for j := range rest {
			r := &rest[j]
			if r.kind == patch.LineDelete && !r.elision && slices.Contains(r.normAt(levelTrailing), d.normAt(levelTrailing)[0]) {
				return true
			}
		}
	}
	return false
}

// trimFit leaves out total = 1, 2, ... entries at the ends of es (at
// most maxFront at the front and maxBack at the back) and returns the
// place where the rest fits exactly once, with the entries left out
// dropped. A rest must pass keep, hold two significant lines and, when
// both ends were trimmed, have every significant removed line exactly
// once in the file. At the first total where some rest fits, exactly one
// may fit, at one place, and that place must pass accept (nil: any);
// otherwise the hunk is not placed. Fewest lines first: more trimming
// only adds places.
func trimFit(t *text, es []entry, maxFront, maxBack int, keep func(sub []entry, total int) bool, accept func(c place, front, back int) bool) (place, bool) {
	for total := 1; total <= maxFront+maxBack; total++ {
		var got []place
		fits := false
		for front := max(0, total-maxBack); front <= min(total, maxFront); front++ {
			back := total - front
			sub := es[front : len(es)-back]
			if !keep(sub, total) || !anchored(sub) || (front > 0 && back > 0 && !uniqueRemoved(t, sub)) {
				continue
			}
			c, ok := exactlyOnce(t, sub)
			if c.at == nil {
				continue // fits nowhere yet: one more line may be invented
			}
			fits = true
			if !ok {
				continue
			}
			if accept != nil && !accept(c, front, back) {
				return place{}, false
			}
			p := place{start: c.start, end: c.end, at: make([]int, len(es)), tier: TierFuzzy, level: c.level, cost: total}
			for i := range p.at {
				p.at[i] = -1
			}
			copy(p.at[front:], c.at)
			got = append(got, p)
		}
		if fits {
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

// exactMiddle places a hunk whose context is misremembered at its edges
// (lines invented, altered or re-indented, more than trimmedEdge takes):
// the fewest edge lines are left out, any number at either end, such that
// the rest fits exactly once, holding every change of the hunk. The rest
// must say enough to anchor it and, when both ends were trimmed, have
// every significant removed line in the file exactly once as written (as
// trimmedEdge asks). Where it keeps no context line next to a run of
// added lines at its edge, that run must remove a line too (the added
// lines then take the removed ones' place; with neither, their place
// would rest on context the hunk lacks). A significant line left
// out must be the file's line at its place but for whitespace
// (re-indented) or in the file nowhere (invented): one that is elsewhere
// in the file says the hunk may be meant there, and two trims that fit
// different places leave the hunk ambiguous; both are refused. The lines
// left out are dropped context: the file keeps its own lines there.
func exactMiddle(t *text, h *looseHunk, es []entry) (place, bool) {
	// The runs of changes in h.lines, and each line's entry index (for an
	// added line, that of the next old-side line).
	var runs [][2]int
	idx := make([]int, len(h.lines)+1)
	ei := 0
	for i, l := range h.lines {
		if l.elision {
			return place{}, false
		}
		idx[i] = ei
		if l.kind != patch.LineInsert {
			ei++
		}
		if l.kind == patch.LineContext {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1][1] == i {
			runs[n-1][1] = i + 1
		} else {
			runs = append(runs, [2]int{i, i + 1})
		}
	}
	idx[len(h.lines)] = ei
	if len(runs) == 0 {
		return place{}, false
	}
	removes := func(r [2]int) bool {
		for _, l := range h.lines[r[0]:r[1]] {
			if l.kind == patch.LineDelete {
				return true
			}
		}
		return false
	}
	first, last := runs[0], runs[len(runs)-1]
	maxFront, maxBack := idx[first[0]], len(es)-idx[last[1]]
	if !removes(first) {
		maxFront--
	}
	if !removes(last) {
		maxBack--
	}
	if maxFront < 0 || maxBack < 0 {
		return place{}, false
	}
	ix := t.indexLevel(levelSpace)
	sp := t.normLevel(levelSpace)
	// elsewhere: a significant entry left out is in the file, but not at
	// its place (at) but for whitespace.
	elsewhere := func(e *entry, at int) bool {
		if !e.signif {
			return false
		}
		r := e.normAt(levelSpace)
		if at >= 0 && at < len(sp) && slices.Contains(r, sp[at]) {
			return false
		}
		for _, x := range r {
			if ix.find(x) >= 0 {
				return true
			}
		}
		return false
	}
	return trimFit(t, es, maxFront, maxBack, func([]entry, int) bool { return true }, func(c place, front, back int) bool {
		for i := 0; i < front; i++ {
			if elsewhere(&es[i], c.start-(front-i)) {
				return false
			}
		}
		for i := len(es) - back; i < len(es); i++ {
			if elsewhere(&es[i], c.end+(i-(len(es)-back))) {
				return false
			}
		}
		return true
	})
}
