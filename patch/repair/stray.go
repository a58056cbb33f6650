package repair

import "github.com/patchbench/patchbench/patch"

// joinStraySplits makes one hunk of two that a stray "@@" line split
// inside their added lines: the first ends with a line it adds and has
// context before its first change, the second starts with a line it adds
// and has context after its last change. Neither is a hunk git writes
// away from the ends of a file (a whole hunk has context at both ends;
// a -U0 hunk has none), and read apart the first would end with half a
// change. Read as one, the hunk is placed as any other, so its parts must
// fit next to each other in the file; where they do not, it is refused
// (see strayReason). A first part whose old side ends the file is git's
// hunk at the end of a file, and is left alone.
func joinStraySplits(t *text, hunks []*looseHunk) []*looseHunk {
	var out []*looseHunk
	for _, h := range hunks {
		if n := len(out); n > 0 && straySplit(out[n-1], h) && !atEnd(t, out[n-1]) {
			out[n-1] = joinHunk(out[n-1], h)
			continue
		}
		out = append(out, h)
	}
	return out
}

// atEnd reports whether the hunk's old side is the file's last lines
// (but for trailing whitespace): a hunk that ends with lines it adds is
// git's shape there, and stands alone.
func atEnd(t *text, h *looseHunk) bool {
	es := entries(h)
	n := len(t.lines) - len(es)
	if n < 0 {
		return false
	}
	for i := range es {
		if !es[i].matches(t, levelTrailing, n+i) {
			return false
		}
	}
	return true
}

// straySplit reports whether a and b read as one hunk split inside its
// added lines.
func straySplit(a, b *looseHunk) bool {
	if !a.unified || !b.unified || len(a.lines) == 0 || len(b.lines) == 0 || a.trailBlanks > 0 {
		return false
	}
	first, last := a.lines[0], b.lines[len(b.lines)-1]
	return first.kind == patch.LineContext && !first.elision && a.lines[len(a.lines)-1].kind == patch.LineInsert &&
		b.lines[0].kind == patch.LineInsert && last.kind == patch.LineContext && !last.elision &&
		anchoredOld(a) && anchoredOld(b)
}

// anchoredOld reports whether the hunk has a significant line on its old
// side: a part whose old side is only blank lines or punctuation (two
// insertions, each beside a blank line, say) says nothing about where it
// stands, and joined it would move the other part's added lines to it.
func anchoredOld(h *looseHunk) bool {
	for _, l := range h.lines {
		if l.kind != patch.LineInsert && !l.elision && significant(l.texts[0]) {
			return true
		}
	}
	return false
}

// joinHunk returns a and b as one hunk with a's header. Its counts are
// a's where they count the whole body (the stray line split a hunk git
// counted), else both headers' counts summed.
func joinHunk(a, b *looseHunk) *looseHunk {
	j := *a
	j.lines = append(append([]looseLine(nil), a.lines...), b.lines...)
	j.trailBlanks = b.trailBlanks
	j.atEnd, j.newNoEOL, j.oldNoEOL, j.markers = b.atEnd, b.newNoEOL, b.oldNoEOL, a.markers || b.markers
	j.diags = appendOnce(append([]string(nil), a.diags...), "stray-hunk-header")
	for _, d := range b.diags {
		j.diags = appendOnce(j.diags, d)
	}
	o, w, _, _, _ := bodyCounts(&j, false)
	if j.oldCount != o || j.newCount != w {
		j.oldCount += b.oldCount
		j.newCount += b.newCount
	}
	j.stray = true
	j.followed = b.followed
	return &j
}

// strayReason says why a joined hunk was refused.
func strayReason(reason string) string {
	return "the hunk is split by a stray @@ line inside its added lines, and its two parts do not fit together: " + reason
}
