package repair

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// Apply once: an agent that retries sends the same patch again, and the
// second apply must change nothing. A hunk with line numbers is judged
// first at its own place, before any tolerant placement could find its
// context elsewhere (git apply, at an offset, does: a hunk that adds a
// test before a file's last "}" applies again at the next "}").

// ownState is what a hunk's own place holds.
type ownState int

const (
	ownUnknown ownState = iota // no line numbers, or neither side there
	ownOld                     // the old side, not the new: to apply
	ownNew                     // the new side, not the old: applied
	ownBoth                    // both: the change repeats the lines around it
	// ownElsewhere: the new side, whose added lines say little, and the
	// lines it removes are in the file elsewhere: applied, or a conflict.
	ownElsewhere
)

// ownStart is the 0-based line where the hunk's old side starts in the
// file its header describes, shifted by off lines; a hunk with no old lines
// inserts before that line.
func ownStart(h *looseHunk, off int) int {
	if !hasOld(h) {
		// "-N,0" inserts after line N.
		return h.oldStart + off
	}
	return h.oldStart - 1 + off
}

func hasOld(h *looseHunk) bool {
	for _, l := range h.lines {
		if l.kind != patch.LineInsert {
			return true
		}
	}
	return false
}

// sides returns the readings of the hunk's old and new lines, and false
// when a context line is an elision, which says nothing exact.
func sides(h *looseHunk) (old, neu [][]string, ok bool) {
	for _, l := range h.lines {
		if l.elision && l.kind == patch.LineContext {
			return nil, nil, false
		}
		if l.kind != patch.LineInsert {
			old = append(old, l.texts)
		}
		if l.kind != patch.LineDelete {
			neu = append(neu, l.texts)
		}
	}
	return old, neu, true
}

// sideAt reports whether one side of h (the old side when skip is
// patch.LineInsert, the new side when it is patch.LineDelete), each line
// by any of its readings, is the file's lines from line at on, line
// endings aside. It reads the hunk's lines in place, making no copy of
// a side: it runs for every hunk of a patch.
func sideAt(t *text, h *looseHunk, skip patch.LineKind, at int) bool {
	if at < 0 {
		return false
	}
	i := at
	for _, l := range h.lines {
		if l.kind == skip {
			continue
		}
		if i >= len(t.lines) {
			return false
		}
		f := strings.TrimSuffix(t.lines[i], "\r")
		found := false
		for _, r := range l.texts {
			if strings.TrimSuffix(r, "\r") == f {
				found = true
				break
			}
		}
		if !found {
			return false
		}
		i++
	}
	return true
}

// sideLens returns the number of old and new lines of h; ok is false
// when a context line is an elision, which says nothing exact (as
// sides).
func sideLens(h *looseHunk) (nOld, nNew int, ok bool) {
	for _, l := range h.lines {
		if l.elision && l.kind == patch.LineContext {
			return 0, 0, false
		}
		if l.kind != patch.LineInsert {
			nOld++
		}
		if l.kind != patch.LineDelete {
			nNew++
		}
	}
	return nOld, nNew, true
}

// sameRuns reports whether the hunk's old and new sides are the same
// lines (first readings): only the final newline may change.
func sameRuns(h *looseHunk) bool {
	i, j := 0, 0
	next := func(k int, skip patch.LineKind) int {
		for k < len(h.lines) && h.lines[k].kind == skip {
			k++
		}
		return k
	}
	for {
		i, j = next(i, patch.LineInsert), next(j, patch.LineDelete)
		if i == len(h.lines) || j == len(h.lines) {
			return i == len(h.lines) && j == len(h.lines)
		}
		if h.lines[i].texts[0] != h.lines[j].texts[0] {
			return false
		}
		i, j = i+1, j+1
	}
}

// ownPlace judges the hunk at its own place, at.
func ownPlace(t *text, h *looseHunk, at int) ownState {
	if !h.hasPos {
		return ownUnknown
	}
	nOld, nNew, ok := sideLens(h)
	if !ok {
		return ownUnknown
	}
	if sameRuns(h) {
		// Only the final newline changes: the file's end says which.
		if !h.markers || h.oldNoEOL == h.newNoEOL || !sideAt(t, h, patch.LineInsert, at) || at+nOld != len(t.lines) {
			return ownUnknown
		}
		if t.eol == !h.newNoEOL {
			return ownNew
		}
		return ownOld
	}
	// An empty side is no evidence: a hunk without context that only
	// removes is judged by its old side alone (placed by its line number,
	// as one that only adds is), one that only adds is both.
	o, n := sideAt(t, h, patch.LineInsert, at), nNew > 0 && sideAt(t, h, patch.LineDelete, at)
	if h.unified && hasContext(h) {
		// A unified diff's hunk with context on one side only reaches the
		// end (or the start) of the file on the other, as git reads it:
		// either side is there only where the file ends (or starts).
		first, last := h.lines[0].kind, h.lines[len(h.lines)-1].kind
		o = o && (last == patch.LineContext || at+nOld == len(t.lines)) && (first == patch.LineContext || at == 0)
		n = n && (last == patch.LineContext || at+nNew == len(t.lines)) && (first == patch.LineContext || at == 0)
	}
	if n && h.markers && h.oldNoEOL != h.newNoEOL {
		// The change includes the final newline: the file must end there
		// as the new side says.
		n = at+nNew == len(t.lines) && t.eol == !h.newNoEOL
	}
	if n && !ownEvidence(h, h.unified && hasContext(h)) {
		// Its added lines say little (a brace, a blank line, lines it also
		// removes). Where a run of the lines it removes, with the context
		// next to it, is still in the file, the change may be meant there:
		// to call it applied would hide it, to apply it there would apply
		// it twice. Otherwise, where its old side is at its place too, or
		// the change is only trailing whitespace (its old side is there
		// but for it), the old side decides; else the new side at its own
		// place is the change made, as GNU patch reads it ("previously
		// applied").
		if _, found := littleElsewhere(t, h); found && !o {
			return ownElsewhere
		}
		if o || !changesAt(h, levelTrailing) {
			n = false
		}
	}
	switch {
	case o && n:
		return ownBoth
	case o:
		return ownOld
	case n:
		return ownNew
	}
	return ownUnknown
}

// delta is the number of lines the hunk adds minus those it removes.
func delta(h *looseHunk) int {
	d := 0
	for _, l := range h.lines {
		switch l.kind {
		case patch.LineInsert:
			d++
		case patch.LineDelete:
			d--
		}
	}
	return d
}

// ownPlaces judges every hunk of a file section at its own place, the
// header's line after the offsets of the hunks before it (an applied hunk
// shifts the ones after it by the lines it adds), and returns the states
// and the places. A hunk found at neither side leaves the offset as it
// was.
//
// A hunk whose change repeats the lines around it (a blank line added
// next to a blank line, a block added before a copy of itself, any hunk
// without context that only adds lines equal to the ones after them) has
// both sides at its own place. The other hunks of the section decide, as
// GNU patch decides for a whole file by the first hunk that does not fit:
// when one reading (every hunk applied, or none) fits every hunk, one
// hunk says it alone and the other reading fits not, that reading
// stands. Otherwise the longer side decides (see below); such a hunk
// applied once holds both sides at its place exactly as its reverse, not
// yet applied, does (the same file, the same lines, the sides swapped),
// so nothing but likelihood tells. A hunk without context that only adds
// stays ownBoth, refused.
func ownPlaces(t *text, hunks []*looseHunk) ([]ownState, []int) {
	return ownPlacesOf(t, len(hunks), func(i int) *looseHunk { return hunks[i] })
}

// ownPlacesOf is ownPlaces over n hunks that hunk(i) gives, each asked
// for once: a strictly parsed patch of many hunks is never converted
// whole.
func ownPlacesOf(t *text, n int, hunk func(i int) *looseHunk) ([]ownState, []int) {
	// The offset after a hunk with both sides at its place depends on
	// which it is: reading A takes every such hunk as not applied,
	// reading B as applied. Both are made in one pass.
	stA, atsA := make([]ownState, n), make([]int, n)
	stB, atsB := make([]ownState, n), make([]int, n)
	longer := make([]ownState, n) // what the longer side says of a hunk with both sides
	offA, offB := 0, 0
	for i := range n {
		h := hunk(i)
		atsA[i] = ownStart(h, offA)
		stA[i] = ownPlace(t, h, atsA[i])
		atsB[i], stB[i] = atsA[i], stA[i]
		if offB != offA {
			atsB[i] = ownStart(h, offB)
			stB[i] = ownPlace(t, h, atsB[i])
		}
		d := delta(h)
		if stA[i] == ownNew {
			offA += d
		}
		if stB[i] == ownNew || stB[i] == ownBoth {
			offB += d
		}
		if stA[i] == ownBoth {
			// An empty old side (a hunk without context that only adds)
			// says nothing: it stays ownBoth.
			longer[i] = ownBoth
			if nOld, nNew, ok := sideLens(h); ok && nOld > 0 {
				longer[i] = ownOld
				if nNew > nOld {
					longer[i] = ownNew
				}
			}
		}
	}
	// fits reports whether no hunk contradicts the reading that every
	// hunk is at side s (or both), and whether one says it alone.
	fits := func(st []ownState, s ownState) (consistent, decisive bool) {
		consistent = true
		for _, x := range st {
			decisive = decisive || x == s
			consistent = consistent && (x == s || x == ownBoth || x == ownUnknown)
		}
		return consistent, decisive
	}
	resolve := func(st []ownState, s ownState) {
		for i := range st {
			if st[i] == ownBoth {
				st[i] = s
			}
		}
	}
	cA, dA := fits(stA, ownOld)
	cB, dB := fits(stB, ownNew)
	switch {
	case cB && dB && !cA:
		resolve(stB, ownNew)
		return stB, atsB
	case cA && dA && !cB:
		resolve(stA, ownOld)
		return stA, atsA
	}
	// Nothing else tells: the longer side decides. A hunk whose sides
	// both fit holds its shorter side inside its longer one, so where the
	// longer side is the file, the shorter one fits too, always; where
	// the shorter one is, the longer one fits only if the file goes on
	// with the very lines the longer side adds. A hunk without context
	// that only adds has an empty old side, which says nothing: refused.
	for i, x := range stA {
		if x == ownBoth {
			stA[i] = longer[i]
		}
	}
	return stA, atsA
}

// ownEvidence reports whether a hunk's new side, found at its own place,
// says the change was made: the hunk only adds lines (its place and all
// its lines say it), or adds a significant line that differs from every
// line it removes, or only removes lines with context on both sides of
// each block (the block is gone from between them), or, when edge is
// set (a unified diff's hunk, whose place then reaches the end or the
// start of the file as git reads it), at an end of the hunk. A hunk that
// turns "} stale" into "}" says little when the file has "}": ownPlace
// then asks where the lines it removes are.
func ownEvidence(h *looseHunk, edge bool) bool {
	removed := map[string]bool{}
	for _, l := range h.lines {
		if l.kind == patch.LineDelete {
			removed[normalize(levelTrailing, l.texts[0])] = true
		}
	}
	if len(removed) == 0 {
		return true
	}
	if !hasInsert(h) {
		if edge && (h.lines[0].kind == patch.LineDelete || h.lines[len(h.lines)-1].kind == patch.LineDelete) {
			return true
		}
		return blocksFramed(h)
	}
	for _, l := range h.lines {
		if l.kind == patch.LineInsert && significant(l.texts[0]) && !removed[normalize(levelTrailing, l.texts[0])] {
			return true
		}
	}
	return false
}

func hasContext(h *looseHunk) bool {
	return slices.ContainsFunc(h.lines, func(l looseLine) bool { return l.kind == patch.LineContext })
}

// noContext reports whether a hunk with line numbers has no context line
// and removes lines: placed only by its line number.
func noContext(h *looseHunk) bool {
	removes := false
	for _, l := range h.lines {
		switch l.kind {
		case patch.LineContext:
			return false
		case patch.LineDelete:
			removes = true
		}
	}
	return removes && h.hasPos
}

// strictOnce reports whether the strict apply of p (git apply's rules)
// may stand in the default mode: no hunk of it is applied already at its
// own place, or repeats the lines around it there, and none without
// context removes lines (git places such a hunk at the end of the file,
// the default mode by its line number). Otherwise the pipeline decides.
func strictOnce(p *patch.Patch, fsys patch.FileSystem, reverse bool) bool {
	for _, fp := range p.Files {
		name, op := fp.OldPath, fp.Op
		if reverse {
			name = fp.NewPath
			switch op {
			case patch.Create:
				op = patch.Delete
			case patch.Delete:
				op = patch.Create
			}
		}
		if op == patch.Modify {
			want := fp.NewMode
			if reverse {
				want = fp.OldMode
			}
			if _, m := patch.ResultModes(op, fp.OldMode, fp.NewMode); m != 0 && hasMode(fsys, name, want) {
				// The mode change is made already: the pipeline says
				// whether the hunks are too.
				return false
			}
		}
		if len(fp.Hunks) == 0 || op == patch.Create {
			continue
		}
		c, err := patch.ReadFileString(fsys, name)
		if err != nil {
			return false
		}
		// Each hunk is converted when judged, not the patch whole.
		noCtx := false
		hunk := func(i int) *looseHunk {
			h := looseOf(fp.Hunks[i])
			if reverse {
				h.reverse()
			}
			noCtx = noCtx || noContext(h)
			return h
		}
		t := newText(c)
		st, _ := ownPlacesOf(t, len(fp.Hunks), hunk)
		if noCtx {
			return false
		}
		for i, s := range st {
			if s == ownNew || s == ownBoth || s == ownElsewhere {
				return false
			}
			if s == ownUnknown && newSideFits(t, hunk(i)) {
				// git would search for its old side away from its line,
				// and may find a second copy of it there, the change
				// made already at another place (a test added after a
				// test like it): the pipeline judges it.
				return false
			}
		}
	}
	return true
}

// littleElsewhere returns where a run of the lines a hunk removes, with
// the context next to it, is in the file: exactly, when the hunk changes
// only trailing whitespace (at its own place the run fits but for it),
// else but for trailing whitespace.
func littleElsewhere(t *text, h *looseHunk) (int, bool) {
	if !changesAt(h, levelTrailing) {
		return removedAt(t, h, levelExact)
	}
	return removedAt(t, h, levelTrailing)
}

// ownElsewhereReason is the refusal of a hunk whose own place holds its new
// side, whose added lines say little, and whose removed lines are in the
// file at line at.
func ownElsewhereReason(own, at int) string {
	return fmt.Sprintf("uncertain: the hunk's new side is at its place (line %d), but its added lines say little and the lines it removes are in the file at line %d: applied already, or to be applied there?", own+1, at+1)
}

// ownBothReason is the refusal of a hunk whose own place holds both sides.
func ownBothReason(at int) string {
	return fmt.Sprintf("uncertain: the hunk's change repeats the lines around it, and its place (line %d) holds both its old and its new side: applied already, or to be applied again?", at+1)
}

// newSideElsewhere judges a hunk whose old side fits the file nowhere
// exactly (nor but for whitespace) and whose new side is in it: applied
// already, when the new side is there exactly once, no run of its
// removed lines is left between its neighbours or next to it, and its old
// side is framed nowhere else (a search-replace block whose replacement
// is there and whose search is gone); otherwise refused. Either way it
// is never placed by fuzzy matching, which would find its context again
// next to the lines it added and add them twice. ok is false when the
// new side is not in the file.
func newSideElsewhere(t *text, h *looseHunk) (at int, why string, ok bool) {
	_, neu, sok := sides(h)
	if !sok || len(neu) == 0 || !changesAt(h, levelTrailing) || !ownEvidence(h, false) {
		return 0, "", false
	}
	var ns []entry
	for _, rs := range neu {
		ns = append(ns, entry{kind: patch.LineContext, raw: rs, signif: significant(rs[0])})
	}
	if !anchored(ns) && !anySignificant(ns) {
		// Blank lines and punctuation are in every file.
		return 0, "", false
	}
	for lv := levelExact; lv <= levelTrailing; lv++ {
		cs := contiguous(t, ns, lv, true)
		if len(cs) == 0 {
			continue
		}
		eolOK := !h.markers || h.oldNoEOL == h.newNoEOL || cs[0].end == len(t.lines) && t.eol == !h.newNoEOL
		if lv == levelExact && len(cs) == 1 && eolOK && removedGone(t, h) && !removedNear(t, h, cs[0], true) && !oldFramed(t, h, cs[0]) {
			return cs[0].start, "", true
		}
		return 0, fmt.Sprintf("uncertain: the hunk's old side is not in the file and its new side is (at line %d): applied already, or to be applied elsewhere?", cs[0].start+1), true
	}
	return 0, "", false
}

// echoes reports whether a hunk only adds lines, and some run of them
// starts or ends like the hunk line next to it, or is only blank lines: a
// blank line next to a blank line, a "}" before a "}". Such a run may
// stand on either side of its twin, so the hunk is placed only where its
// old side fits exactly.
func echoes(h *looseHunk) bool {
	if !hasInsert(h) {
		return false
	}
	for i, l := range h.lines {
		if l.kind == patch.LineDelete {
			return false
		}
		if l.kind != patch.LineInsert || (i > 0 && h.lines[i-1].kind == patch.LineInsert) {
			continue
		}
		j := i
		blank := true
		for j < len(h.lines) && h.lines[j].kind == patch.LineInsert {
			blank = blank && strings.TrimSpace(h.lines[j].texts[0]) == ""
			j++
		}
		if blank {
			return true
		}
		if i > 0 && normalize(levelTrailing, h.lines[i-1].texts[0]) == normalize(levelTrailing, l.texts[0]) {
			return true
		}
		if j < len(h.lines) && normalize(levelTrailing, h.lines[j].texts[0]) == normalize(levelTrailing, h.lines[j-1].texts[0]) {
			return true
		}
	}
	return false
}

// newSideFits reports whether a hunk's new side, with a significant line
// and differing from its old side, is in the file exactly (any reading
// of each line).
func newSideFits(t *text, h *looseHunk) bool {
	if !changesAt(h, levelExact) {
		return false
	}
	var ns []entry
	for _, l := range h.lines {
		if l.kind != patch.LineDelete {
			ns = append(ns, entry{kind: patch.LineContext, raw: l.texts, signif: significant(l.texts[0])})
		}
	}
	return anySignificant(ns) && len(contiguous(t, ns, levelExact, true)) > 0
}
