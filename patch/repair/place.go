package repair

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// placed is a hunk with its chosen place.
type placed struct {
	idx   int // index in the file section
	h     *looseHunk
	es    []entry
	p     place
	cands []place
	// already: the hunk's new side is in the file, at line alreadyAt.
	already   bool
	alreadyAt int
	repairs   []string // what locate assumed about the hunk
}

// placeHunks places every hunk of a file section in t and splices them in,
// returning the new content.
func placeHunks(t *text, hunks []*looseHunk, width int, name string) ([]byte, []HunkReport, error) {
	reports := make([]HunkReport, len(hunks))
	ps := make([]*placed, 0, len(hunks))
	// Each hunk is judged at its own place first (apply once).
	own, ownAt := ownPlaces(t, hunks)
	var firstErr error
	refuse := func(i int, reason string, kind Kind) {
		if hunks[i].stray {
			reason = strayReason(reason)
		}
		reports[i].Status, reports[i].Reason, reports[i].Kind = StatusRefused, reason, kind
		if firstErr == nil {
			firstErr = &Error{File: name, Hunk: i + 1, Reason: reason, Err: ErrRefused, Kind: kind}
		}
	}
	for i, h := range hunks {
		reports[i] = HunkReport{Hunk: i + 1, Repairs: dedupe(h.diags)}
		pl := &placed{idx: i, h: h, es: entries(h)}
		switch {
		case own[i] == ownNew:
			reports[i].Status, reports[i].Line = StatusAlreadyApplied, ownAt[i]+1
			continue
		case own[i] == ownBoth:
			refuse(i, ownBothReason(ownAt[i]), KindUncertain)
			continue
		case own[i] == ownElsewhere:
			at, _ := littleElsewhere(t, h)
			refuse(i, ownElsewhereReason(ownAt[i], at), KindUncertain)
			continue
		case own[i] != ownOld && noContext(h):
			refuse(i, fmt.Sprintf("the hunk has no context and the lines it removes are not at its line %d: placed only by its line number", ownAt[i]+1), KindContextNotFound)
			continue
		}
		err := locate(t, pl)
		if err == "" && own[i] == ownOld && len(pl.cands) > 1 && pl.p.tier == TierExact {
			// Its old side is at its own place: there, as git applies it.
			if keep := startingAt(pl.cands, ownAt[i]); len(keep) == 1 {
				pl.cands, pl.p = keep, keep[0]
			}
		}
		// Readings tried only when the hunk as written fits nowhere: prose
		// after a bare diff (read as context lines without their space), and
		// line-number prefixes copied from a numbered view of the file.
		for _, alt := range []struct {
			make   func(*looseHunk) *looseHunk
			repair string
		}{{trailingText, "trailing-text-dropped"}, {withoutLineNumbers, "line-number-prefix"}} {
			if err == "" || pl.already {
				break
			}
			ah := alt.make(h)
			if ah == nil {
				continue
			}
			a := &placed{idx: i, h: ah, es: entries(ah)}
			if locate(t, a) == "" {
				pl, err = a, ""
				reports[i].Repairs = appendOnce(reports[i].Repairs, alt.repair)
			}
		}
		for _, x := range pl.repairs {
			reports[i].Repairs = appendOnce(reports[i].Repairs, x)
		}
		if pl.already {
			// A success that changes nothing: the file stays as it is here.
			reports[i].Status, reports[i].Line = StatusAlreadyApplied, pl.alreadyAt+1
			continue
		}
		if err == "" {
			err = newSideToo(t, pl)
		}
		if err == "" {
			err = reverseFits(t, pl, ownAt[i])
		}
		if err != "" {
			reports[i].Candidates = listPlaces(pl.cands)
			refuse(i, err, hunkKind(err))
			continue
		}
		ps = append(ps, pl)
	}
	if firstErr == nil {
		ps = repeated(ps, reports)
		disambiguate(t, ps)
		for _, pl := range ps {
			if len(pl.cands) > 1 {
				reports[pl.idx].Candidates = listPlaces(pl.cands)
				var lines []string
				for _, c := range reports[pl.idx].Candidates {
					lines = append(lines, fmt.Sprint(c))
				}
				more := ""
				if n := len(pl.cands) - len(lines); n > 0 {
					more = fmt.Sprintf(" and %d more places", n)
				}
				refuse(pl.idx, fmt.Sprintf("ambiguous: fits at lines %s%s", strings.Join(lines, " and "), more), KindAmbiguous)
			}
		}
	}
	if firstErr != nil {
		return nil, reports, firstErr
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].p.start < ps[b].p.start })
	for k := 1; k < len(ps); k++ {
		if ps[k].p.start < ps[k-1].p.end {
			refuse(ps[k].idx, fmt.Sprintf("overlaps hunk %d at line %d", ps[k-1].idx+1, ps[k].p.start+1), KindOverlap)
			return nil, reports, firstErr
		}
	}
	// The new content is written once, as bytes: no slice of new lines.
	out := make([]byte, 0, t.size+t.size/16)
	eol := t.eol
	cursor := 0
	for _, pl := range ps {
		r := &reports[pl.idx]
		out = patch.AppendLines(out, t.lines[cursor:pl.p.start], true)
		spliced, err := splice(t, pl, width, r)
		if err == "" {
			err = checkSplice(t, pl, spliced)
		}
		if err == "" {
			err = refits(t, pl, spliced)
		}
		if err != "" {
			refuse(pl.idx, err, hunkKind(err))
			return nil, reports, firstErr
		}
		out = patch.AppendLines(out, spliced, true)
		cursor = pl.p.end
		endEOL := eol
		if pl.p.end == len(t.lines) && pl.h.markers {
			eol = !pl.h.newNoEOL
		}
		if slices.Equal(spliced, t.lines[pl.p.start:pl.p.end]) && (pl.p.end < len(t.lines) || eol == endEOL) {
			// Placed there, the hunk changes nothing: its new side is
			// there already (a change of whitespace its old side was
			// found loosely across, say). Never "applied" for that.
			r.Status, r.Line = StatusAlreadyApplied, pl.p.start+1
			continue
		}
		r.Status = StatusApplied
		r.Tier = pl.p.tier
		r.Line = pl.p.start + 1
		if pl.h.hasPos {
			// "@@ -N,M" starts at line N; with no old lines ("-N,0") it
			// inserts after line N, git's reading of a new file's "-0,0".
			want := pl.h.oldStart - 1
			if len(pl.es) == 0 {
				want = pl.h.oldStart
			}
			r.Offset = pl.p.start - want
			if r.Offset != 0 {
				r.Repairs = appendOnce(r.Repairs, "line-numbers")
			}
		} else {
			r.Repairs = appendOnce(r.Repairs, "no-line-numbers")
		}
		if eolMarkerOff(t, pl) {
			r.Repairs = appendOnce(r.Repairs, "no-newline-marker")
		}
		if r.Tier == TierWhitespace {
			r.Repairs = appendOnce(r.Repairs, "whitespace")
		}
		if r.Tier == TierIndentation {
			r.Repairs = appendOnce(r.Repairs, "indentation")
		}
	}
	out = patch.AppendLines(out, t.lines[cursor:], true)
	if !eol && len(out) > 0 {
		out = out[:len(out)-1]
	}
	return out, reports, nil
}

// eolMarkerOff reports whether a unified diff's hunk, placed at pl, says
// otherwise than the file of how the file ends: a "\ No newline at end of
// file" marker after its old side where the file's last line ends with a
// newline (or the old side does not reach the end), or no marker where its
// old side reaches a last line without one. git apply refuses both; the
// file's own ending is kept (changed only as the markers' difference says),
// and the report says so.
func eolMarkerOff(t *text, pl *placed) bool {
	h := pl.h
	if !h.unified || len(t.lines) == 0 {
		return false
	}
	atEnd := pl.p.end == len(t.lines) && pl.p.end > pl.p.start
	if h.oldNoEOL {
		return !atEnd || t.eol
	}
	return atEnd && !t.eol
}

// checkSplice holds the engine to its promise for one placed hunk: every
// file line of its span that it does not remove is in the new lines, in
// order, and every other new line is one of its added lines (each used
// once; whitespace and line endings aside, which re-indenting changes).
// No file line disappears unless the hunk removes it, and nothing appears
// that the hunk does not add.
func checkSplice(t *text, pl *placed, out []string) string {
	removed := map[int]bool{}
	for i, at := range pl.p.at {
		if at >= 0 && pl.es[i].kind == patch.LineDelete {
			removed[at] = true
		}
	}
	added := map[string]int{}
	for _, l := range pl.h.lines {
		if l.kind == patch.LineInsert {
			added[collapseSpace(l.texts[0])]++
		}
	}
	k := pl.p.start
	next := func() {
		for k < pl.p.end && removed[k] {
			k++
		}
	}
	next()
	for _, o := range out {
		if k < pl.p.end && o == t.lines[k] {
			k++
			next()
			continue
		}
		n := collapseSpace(o)
		if added[n] == 0 {
			return fmt.Sprintf("internal check: the result would hold %q, which is neither a file line kept nor a line the hunk adds", strings.TrimSpace(o))
		}
		added[n]--
	}
	if k < pl.p.end {
		return fmt.Sprintf("internal check: file line %d would disappear although the hunk does not remove it", k+1)
	}
	return ""
}

// maxListed is the most places a refusal lists: a hunk in a file of
// repeated lines may fit thousands.
const maxListed = 10

// listPlaces returns the 1-based first lines of the first maxListed places.
func listPlaces(cs []place) []int {
	out := make([]int, 0, min(len(cs), maxListed))
	for _, c := range cs[:min(len(cs), maxListed)] {
		out = append(out, c.start+1)
	}
	return out
}

// repeated handles hunks that are the same change. If they fit as many
// places as there are copies, the patch means each place once, in order; if
// they fit one place, the model repeated itself and one copy is kept.
func repeated(ps []*placed, reports []HunkReport) []*placed {
	if len(ps) < 2 {
		return ps
	}
	groups := map[string][]*placed{}
	var order []string
	for _, pl := range ps {
		k := bodyKey(pl.h)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], pl)
	}
	drop := map[*placed]bool{}
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		same := true
		for _, pl := range g[1:] {
			same = same && samePlaces(pl.cands, g[0].cands)
		}
		if !same {
			continue
		}
		switch cands := g[0].cands; {
		case len(cands) == len(g):
			for i, pl := range g {
				pl.cands, pl.p = []place{cands[i]}, cands[i]
			}
		case len(cands) == 1:
			for _, pl := range g[1:] {
				drop[pl] = true
				reports[pl.idx].Status = StatusDuplicate
				reports[pl.idx].Reason = fmt.Sprintf("repeats hunk %d", g[0].idx+1)
			}
		}
	}
	out := ps[:0]
	for _, pl := range ps {
		if !drop[pl] {
			out = append(out, pl)
		}
	}
	return out
}

// trailingText returns h without the unmarked lines after its last change,
// when there are such lines after a blank one; nil otherwise.
func trailingText(h *looseHunk) *looseHunk {
	last := -1
	for i, l := range h.lines {
		if l.kind != patch.LineContext {
			last = i
		}
	}
	cut := -1
	for i := len(h.lines) - 1; i > last; i-- {
		l := h.lines[i]
		if l.texts[0] == "" {
			cut = i
			continue
		}
		if !l.bare {
			break
		}
	}
	if cut < 0 || last < 0 {
		return nil
	}
	for _, l := range h.lines[cut:] {
		if l.texts[0] != "" && !l.bare {
			return nil
		}
	}
	c := *h
	c.lines = h.lines[:cut]
	return &c
}

// locate finds the places a hunk fits, tier by tier. It returns a reason
// when the hunk cannot be placed.
func locate(t *text, pl *placed) string {
	es := pl.es
	if len(es) == 0 {
		// Only added lines: without context the patch must say where.
		switch {
		case len(t.lines) == 0:
			pl.p = place{tier: TierExact}
		case !pl.h.hasPos && pl.h.appends:
			if why := restates(t, pl.h); why != "" {
				return why
			}
			pl.p = place{start: len(t.lines), end: len(t.lines), tier: TierExact}
		case !pl.h.hasPos:
			return "the hunk only adds lines and has neither context nor a line number: nowhere to put them"
		case pl.h.oldStart <= len(t.lines):
			// "@@ -N,0 +M,K @@" inserts after line N.
			pl.p = place{start: pl.h.oldStart, end: pl.h.oldStart, tier: TierExact}
		default:
			return fmt.Sprintf("the hunk adds lines after line %d but the file has %d", pl.h.oldStart, len(t.lines))
		}
		pl.cands = []place{pl.p}
		return ""
	}
	// reindented: the hunk fits somewhere only if its lines are indented
	// by different amounts, which leaves its added lines' indentation open.
	reindented := -1
	for lv := 0; lv < numLevels; lv++ {
		// A line's literal reading before the one that assumes it lost its
		// context space: the extra readings must not create extra places.
		for _, alt := range []bool{false, true} {
			cs := contiguous(t, es, lv, alt)
			if lv == levelSpace {
				if len(cs) > 0 && reindented < 0 {
					reindented = cs[0].start
				}
				cs = filter(cs, func(c place) bool { return indentConsistent(t, es, c) })
			}
			if len(cs) > 0 {
				if lv == levelSpace && !anySignificant(es) {
					return "the hunk's context is only blank lines and punctuation, which match the file only loosely"
				}
				pl.cands = cs
				pl.p = cs[0]
				return ""
			}
		}
	}
	// Before loosening further: is the change already there?
	if at, ok := newSideAt(t, pl.h); ok {
		pl.already, pl.alreadyAt = true, at
		return ""
	}
	at, elsewhere, newThere := newSideElsewhere(t, pl.h)
	if newThere && elsewhere == "" {
		pl.already, pl.alreadyAt = true, at
		return ""
	}
	if missingRemoved(t, es) {
		return "a line the hunk removes is not in the file"
	}
	if newThere {
		return elsewhere
	}
	if echoes(pl.h) {
		return "ambiguous: the lines the hunk adds repeat the lines next to them (blank lines, braces), and its context does not fit the file exactly: they may stand on either side of their twin"
	}
	if pl.h.stray {
		// Joined parts fit only together, context and all: loosening
		// would let them fit apart.
		return "its lines do not fit the file together"
	}
	budget := max(1, len(es)/6)
	// Fuzzy matching keeps indentation first; ignoring it, a place counts
	// only where the indentation differs consistently.
	for _, lv := range []int{levelTrailing, levelSpace} {
		cs := fuzzy(t, es, min(budget, 3), lv)
		if lv == levelSpace {
			cs = filter(cs, func(c place) bool { return indentConsistent(t, es, c) })
		}
		if slices.ContainsFunc(cs, func(c place) bool { return dropsRemoved(es, c) }) {
			return "context not found: the hunk fits only with a context line left out that it removes there: that line stays by the hunk's context"
		}
		if len(cs) > 0 {
			pl.cands = cs
			pl.p = cs[0]
			return ""
		}
	}
	if p, ok := trimmedEdge(t, pl.h, es); ok {
		pl.p, pl.cands = p, []place{p}
		pl.repairs = append(pl.repairs, "edge-context-dropped")
		return ""
	}
	if p, ok := exactMiddle(t, pl.h, es); ok {
		pl.p, pl.cands = p, []place{p}
		pl.repairs = append(pl.repairs, "edge-context-dropped")
		return ""
	}
	if reindented >= 0 {
		return fmt.Sprintf("context not found: the hunk's lines fit the file (at line %d) only with their indentation changed by different amounts on different lines, which leaves the added lines' indentation unknown", reindented+1)
	}
	return "context not found: the hunk's lines do not fit the file anywhere"
}

// restates refuses a search-replace block with an empty SEARCH for a file
// that has lines, whose REPLACE text restates the file: it holds the
// file's first significant line, or half of its significant lines are in
// the file. Aider appends such a block; its author may as well have meant
// the file's whole new content. A file that ends with the block's lines
// may hold them appended already, whatever they say: refused too.
func restates(t *text, h *looseHunk) string {
	if n := len(h.lines); n <= len(t.lines) {
		end := true
		for i, l := range h.lines {
			if normalize(levelTrailing, l.texts[0]) != t.normLevel(levelTrailing)[len(t.lines)-n+i] {
				end = false
				break
			}
		}
		if end {
			return fmt.Sprintf("uncertain: the block has no SEARCH text and the file ends with its REPLACE text (line %d): appended already, or to be appended again?", len(t.lines)-n+1)
		}
	}
	first := ""
	for _, l := range t.lines {
		if significant(l) {
			first = normalize(levelTrailing, l)
			break
		}
	}
	ix := t.indexLevel(levelTrailing)
	n, in := 0, 0
	for _, l := range h.lines {
		s := normalize(levelTrailing, l.texts[0])
		if !significant(s) {
			continue
		}
		if s == first {
			return "uncertain: the block has no SEARCH text and its REPLACE text holds the file's first line: append to the file, or replace it?"
		}
		n++
		if ix.find(s) >= 0 {
			in++
		}
	}
	if n > 0 && 2*in >= n {
		return fmt.Sprintf("uncertain: the block has no SEARCH text and %d of its %d lines are in the file: append to the file, or replace it?", in, n)
	}
	return ""
}

// newSideToo refuses a hunk placed by its old side whose new side is in
// the file too, over the lines its old side fits: where the new side holds
// the old one (an insertion with context on one side, a block that ends as
// its context begins), the file may have the change already, and applying
// it again would repeat the added lines. The new side must fit exactly or
// but for trailing whitespace, and hold a significant added line that
// differs from every removed line, or be longer than the old side: a hunk
// that adds a brace or a blank line next to the same line leaves its old
// side in the file where it applied, and a second apply would add another.
func newSideToo(t *text, pl *placed) string {
	h := pl.h
	removed := map[string]bool{}
	for _, l := range h.lines {
		if l.kind == patch.LineDelete {
			removed[normalize(levelTrailing, l.texts[0])] = true
		}
	}
	var ns []entry
	evidence := false
	for _, l := range h.lines {
		if l.kind == patch.LineDelete {
			continue
		}
		if l.kind == patch.LineInsert && significant(l.texts[0]) && !removed[normalize(levelTrailing, l.texts[0])] {
			evidence = true
		}
		ns = append(ns, entry{kind: patch.LineContext, raw: l.texts, signif: significant(l.texts[0])})
	}
	if nOld, nNew, ok := sideLens(h); !evidence && (!ok || nNew <= nOld) {
		return ""
	}
	for lv := levelExact; lv <= levelTrailing; lv++ {
		if !changesAt(h, lv) {
			return ""
		}
		for _, c := range contiguous(t, ns, lv, true) {
			if c.start < pl.p.end && pl.p.start < c.end || c.start == pl.p.start {
				return fmt.Sprintf("uncertain: the hunk's new side is in the file already at line %d, around the lines its old side fits (line %d): applied already, or to be applied again?", c.start+1, pl.p.start+1)
			}
		}
	}
	return ""
}

// refits refuses a hunk that adds nothing of its own (it removes lines,
// or adds only lines it removes) whose result, the lines spliced in at its
// place, holds its old side again across the lines it edited: one of two
// blank lines removed before a line leaves the other and that line, its
// old side once more (a search-replace block; a hunk whose context line
// next to the removed one was lost, placed without it). Applied twice it
// removes the other one, and newSideToo has no added line to tell
// "applied already" by, so the first apply is refused.
func refits(t *text, pl *placed, spliced []string) string {
	h := pl.h
	trim := func(s string) string { return strings.TrimRight(s, " \t\r") }
	var old []string
	removed := map[string]bool{}
	dels, ins := 0, 0
	for _, l := range h.lines {
		if l.elision {
			return ""
		}
		switch l.kind {
		case patch.LineDelete:
			dels++
			removed[trim(l.texts[0])] = true
		case patch.LineInsert:
			ins++
		}
		if l.kind != patch.LineInsert {
			old = append(old, trim(l.texts[0]))
		}
	}
	for _, l := range h.lines {
		if l.kind == patch.LineInsert && significant(l.texts[0]) && !removed[trim(l.texts[0])] {
			return ""
		}
	}
	n := len(old)
	if n == 0 || ins >= dels {
		return ""
	}
	lo := max(0, pl.p.start-n)
	hi := min(len(t.lines), pl.p.end+n)
	var w []string
	for _, s := range t.lines[lo:pl.p.start] {
		w = append(w, trim(s))
	}
	a := len(w)
	for _, s := range spliced {
		w = append(w, trim(s))
	}
	b := len(w)
	for _, s := range t.lines[pl.p.end:hi] {
		w = append(w, trim(s))
	}
	for q := 0; q+n <= len(w); q++ {
		if q+n <= a || q >= max(b, a+1) {
			continue
		}
		if slices.Equal(w[q:q+n], old) {
			return fmt.Sprintf("ambiguous: the file the hunk makes holds its old side again at line %d: applied a second time it would change the file again", lo+q+1)
		}
	}
	return ""
}

func anySignificant(es []entry) bool {
	for _, e := range es {
		if e.signif && !e.elision {
			return true
		}
	}
	return false
}

// missingRemoved reports whether some removed line is nowhere in the file.
func missingRemoved(t *text, es []entry) bool {
	for i := range es {
		e := &es[i]
		if e.kind != patch.LineDelete || e.elision {
			continue
		}
		found := false
		for _, r := range e.normAt(levelSpace) {
			if t.indexLevel(levelSpace).find(r) >= 0 {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// newSideAt returns where the hunk's new side (context and added lines) is
// in the file, when the hunk changes something and is already applied
// there with certainty. Reported as a success that changes nothing, it
// must not be a hunk whose old side was merely damaged, so the new side
// must carry evidence beyond context:
//
//   - a hunk that adds a significant line (see addedEvidence): its new
//     side is in the file exactly once and says enough to anchor it (at
//     the indentation tier only with a consistent indentation), and no run
//     of removed lines is in the file with the hunk lines around it;
//   - a hunk that only removes lines: the context before and after each
//     removed block is in the file, contiguous, at exactly one place (but
//     for trailing whitespace), so the block is gone from between them.
//
// Either way the removed lines must not be next to that place: a hunk
// whose context lost a line fits its new side right before the lines it
// still has to remove.
func newSideAt(t *text, h *looseHunk) (int, bool) {
	var ns []entry
	var ins []int // indexes in ns of the added lines that say something
	added, removed := false, false
	for _, l := range h.lines {
		switch l.kind {
		case patch.LineDelete:
			removed = true
			continue
		case patch.LineInsert:
			if significant(l.texts[0]) {
				added = true
				ins = append(ins, len(ns))
			}
		}
		ns = append(ns, entry{kind: patch.LineContext, raw: l.texts, signif: significant(l.texts[0]), elision: l.elision})
	}
	if !anchored(ns) {
		return 0, false
	}
	levels := numLevels
	if !added {
		if !removed || hasInsert(h) || !blocksFramed(h) {
			return 0, false
		}
		levels = levelSpace // context alone is evidence only when exact
	}
	for lv := 0; lv < levels; lv++ {
		if !changesAt(h, lv) {
			// The change is only whitespace this level ignores: the old
			// side would fit as well as the new one.
			return 0, false
		}
		cs := contiguous(t, ns, lv, true)
		if lv == levelSpace {
			cs = filter(cs, func(c place) bool { return indentConsistent(t, ns, c) })
		}
		if len(cs) > 0 {
			ok := len(cs) == 1 && removedGone(t, h) && !removedNear(t, h, cs[0], !added) && !oldFramed(t, h, cs[0])
			if h.markers && h.oldNoEOL != h.newNoEOL {
				// The change includes the final newline: the file must
				// end there as the new side says.
				ok = ok && cs[0].end == len(t.lines) && t.eol == !h.newNoEOL
			}
			return cs[0].start, ok && (!added || addedEvidence(t, h, ns, ins, cs[0], lv))
		}
	}
	return 0, false
}

// addedEvidence reports whether an added line found at place c says the
// change was made: it differs at level lv from every removed line (else the
// old line would fit there as well), and, at a level looser than exact, one
// such line is in the file exactly as added.
func addedEvidence(t *text, h *looseHunk, ns []entry, ins []int, c place, lv int) bool {
	var removed []string
	for _, l := range h.lines {
		if l.kind == patch.LineDelete {
			removed = append(removed, normalize(lv, l.texts[0]))
		}
	}
	found := false
	for _, i := range ins {
		if slices.Contains(removed, normalize(lv, ns[i].raw[0])) {
			continue
		}
		if lv == levelExact || ns[i].matches(t, levelExact, c.start+i) {
			return true
		}
		found = true
	}
	return found && lv == levelExact
}

// changesAt reports whether the hunk's old and new sides still differ
// once normalised at level lv.
func changesAt(h *looseHunk, lv int) bool {
	var old, neu []string
	for _, l := range h.lines {
		n := normalize(lv, l.texts[0])
		if l.kind != patch.LineInsert {
			old = append(old, n)
		}
		if l.kind != patch.LineDelete {
			neu = append(neu, n)
		}
	}
	return !slices.Equal(old, neu)
}

func hasInsert(h *looseHunk) bool {
	for _, l := range h.lines {
		if l.kind == patch.LineInsert {
			return true
		}
	}
	return false
}

// blocksFramed reports whether every block of removed lines has a context
// line (not an elision) right before and right after it in the hunk.
func blocksFramed(h *looseHunk) bool {
	for i, l := range h.lines {
		if l.kind != patch.LineDelete {
			continue
		}
		if i == 0 || (h.lines[i-1].kind != patch.LineDelete && (h.lines[i-1].kind != patch.LineContext || h.lines[i-1].elision)) {
			return false
		}
		if i+1 == len(h.lines) || (h.lines[i+1].kind != patch.LineDelete && (h.lines[i+1].kind != patch.LineContext || h.lines[i+1].elision)) {
			return false
		}
	}
	return true
}

// removedNear reports whether a block of the hunk's removed lines is in
// the file right before or right after the place c, or one line away (a
// context line the hunk lost between them). With any, it also reports
// whether a significant removed line is within a block's length plus
// three lines of c: a deletion-only hunk whose removed block ends as its
// context begins fits its new side at the end of that block, and a stale
// line in the block hides the block as a whole.
func removedNear(t *text, h *looseHunk, c place, any bool) bool {
	for i := 0; i < len(h.lines); i++ {
		if h.lines[i].kind != patch.LineDelete || (i > 0 && h.lines[i-1].kind == patch.LineDelete) {
			continue
		}
		var block []entry
		for k := i; k < len(h.lines) && h.lines[k].kind == patch.LineDelete; k++ {
			l := h.lines[k]
			block = append(block, entry{kind: patch.LineContext, raw: l.texts, signif: significant(l.texts[0])})
		}
		for _, at := range []int{c.start - len(block), c.start - len(block) - 1, c.end, c.end + 1} {
			if at < 0 || at+len(block) > len(t.lines) {
				continue
			}
			all := true
			for bi := range block {
				all = all && block[bi].matches(t, levelTrailing, at+bi)
			}
			if all {
				return true
			}
		}
		if !any {
			continue
		}
		reach := len(block) + 3
		for j := max(0, c.start-reach); j < min(len(t.lines), c.end+reach); j++ {
			for bi := range block {
				if block[bi].signif && block[bi].matches(t, levelTrailing, j) {
					return true
				}
			}
		}
	}
	return false
}

// oldFramed reports whether the hunk's old side is still in the file
// somewhere other than the place c of its new side: its leading context
// (the lines before its first change) is in the file with, within the
// length of the hunk's middle and two lines more, a significant removed
// line that is none of its new side's lines, or its trailing context (the
// lines after its last change) framing another block of about the
// middle's length. A hunk whose removed lines are stale, or that was
// meant for the other of two similar blocks, fits its new side where the
// change was made (or copied) and its old side where it is still to be
// made; which one it is nothing says.
func oldFramed(t *text, h *looseHunk, c place) bool {
	n := len(h.lines)
	lead, trail := 0, 0
	for lead < n && h.lines[lead].kind == patch.LineContext && !h.lines[lead].elision {
		lead++
	}
	for trail < n-lead && h.lines[n-1-trail].kind == patch.LineContext && !h.lines[n-1-trail].elision {
		trail++
	}
	if lead == 0 && trail == 0 {
		return false
	}
	var leadEs, trailEs []entry
	for _, l := range h.lines[:lead] {
		leadEs = append(leadEs, entry{kind: patch.LineContext, raw: l.texts, signif: significant(l.texts[0])})
	}
	for _, l := range h.lines[n-trail:] {
		trailEs = append(trailEs, entry{kind: patch.LineContext, raw: l.texts, signif: significant(l.texts[0])})
	}
	mid := 0 // old-side lines between the edges
	newSide := map[string]bool{}
	for _, l := range h.lines {
		if l.kind != patch.LineInsert {
			mid++
		}
		if l.kind != patch.LineDelete {
			newSide[normalize(levelTrailing, l.texts[0])] = true
		}
	}
	mid -= lead + trail
	var removed []string
	for _, l := range h.lines[lead : n-trail] {
		if l.kind == patch.LineDelete && significant(l.texts[0]) && !newSide[normalize(levelTrailing, l.texts[0])] {
			removed = append(removed, normalize(levelTrailing, l.texts[0]))
		}
	}
	inNew := func(i int) bool { return i >= c.start && i < c.end }
	norm := t.normLevel(levelTrailing)
	var leads []place
	if anySignificant(leadEs) {
		leads = contiguous(t, leadEs, levelTrailing, true)
	}
	for _, p := range leads {
		if inNew(p.start) {
			continue
		}
		for j := p.end; j < min(len(t.lines), p.end+mid+2); j++ {
			if !inNew(j) && slices.Contains(removed, norm[j]) {
				return true
			}
		}
	}
	if !anySignificant(append(append([]entry(nil), leadEs...), trailEs...)) || lead == 0 || trail == 0 {
		return false
	}
	for _, p := range leads {
		if inNew(p.start) {
			continue
		}
		for _, q := range contiguous(t, trailEs, levelTrailing, true) {
			if q.start >= p.end && q.start <= p.end+mid+2 {
				return true
			}
		}
	}
	return false
}

// removedGone reports whether no run of the hunk's removed lines, with the
// hunk line on each side of it, is in the file.
func removedGone(t *text, h *looseHunk) bool {
	_, found := removedAt(t, h, levelTrailing)
	return !found
}

// removedAt returns the first line of a place where a run of the hunk's
// removed lines, with the context line on each side of it, is in the file
// at level lv.
func removedAt(t *text, h *looseHunk, lv int) (int, bool) {
	for i := 0; i < len(h.lines); i++ {
		if h.lines[i].kind != patch.LineDelete || (i > 0 && h.lines[i-1].kind == patch.LineDelete) {
			continue
		}
		lo, hi := i, i+1
		for hi < len(h.lines) && h.lines[hi].kind == patch.LineDelete {
			hi++
		}
		if lo > 0 && h.lines[lo-1].kind == patch.LineContext {
			lo--
		}
		if hi < len(h.lines) && h.lines[hi].kind == patch.LineContext {
			hi++
		}
		var block []entry
		for _, l := range h.lines[lo:hi] {
			block = append(block, entry{kind: patch.LineContext, raw: l.texts})
		}
		if cs := contiguous(t, block, lv, true); len(cs) > 0 {
			return cs[0].start, true
		}
	}
	return 0, false
}

// disambiguate narrows the candidates of hunks that fit several places: by
// the order of the hunks that fit one place (when at least two do, in
// patch order), by V4A anchors, then by an exact line-number hint.
func disambiguate(t *text, ps []*placed) {
	// next[k] is the start of the first hunk after k with one place, as it
	// stands when the pass reaches k (later hunks are not narrowed yet).
	next := make([]int, len(ps)+1)
	// The order of the hunks is evidence only where the patch shows that it
	// keeps the file's order: two hunks or more that fit one place each,
	// in patch order. Models also write hunks in reverse order, so with one
	// such hunk an ambiguous hunk before it could as well belong after it.
	ordered, single, last := true, 0, -1
	for _, pl := range ps {
		if len(pl.cands) == 1 {
			single++
			ordered = ordered && pl.p.start >= last
			last = pl.p.start
		}
	}
	ordered = ordered && single >= 2
	for pass := 0; pass < 2; pass++ {
		next[len(ps)] = len(t.lines)
		for k := len(ps) - 1; k >= 0; k-- {
			next[k] = next[k+1]
			if len(ps[k].cands) == 1 {
				next[k] = ps[k].p.start
			}
		}
		lo := 0 // the end of the last hunk before k with one place
		for k, pl := range ps {
			if len(pl.cands) < 2 {
				if len(pl.cands) == 1 {
					lo = pl.p.end
				}
				continue
			}
			if keep := within(pl.cands, lo, next[k+1]); len(keep) > 0 && ordered {
				pl.cands = keep
			}
			if len(pl.cands) > 1 && len(pl.h.anchors) > 0 {
				a := pl.h.anchors[len(pl.h.anchors)-1]
				if at := anchorLines(t, a); len(at) == 1 {
					if keep := filter(pl.cands, func(c place) bool { return c.start > at[0] }); len(keep) > 0 {
						pl.cands = keep[:1]
					}
				}
			}
			if len(pl.cands) > 1 && pl.h.hasPos {
				if keep := startingAt(pl.cands, pl.h.oldStart-1); len(keep) == 1 && !edgeReading(t, pl.h, pl.cands, keep[0]) {
					pl.cands = keep
				}
			}
			pl.p = pl.cands[0]
			if len(pl.cands) == 1 {
				lo = pl.p.end
			}
		}
	}
}

// edgeReading reports whether a unified hunk with context on one side
// only fits, besides at its line number (own), where the file ends (or
// starts) on the other side, as git reads such a hunk: the line number and
// git's reading disagree. Chosen by its line number, the second apply
// found the old side again at the end of the file (a file that holds two
// copies of itself, the first's last lines removed) and removed those
// too; both readings stand, so it stays ambiguous.
func edgeReading(t *text, h *looseHunk, cs []place, own place) bool {
	if !h.unified || !hasContext(h) {
		return false
	}
	first, last := h.lines[0].kind, h.lines[len(h.lines)-1].kind
	for _, c := range cs {
		if c.start == own.start {
			continue
		}
		if last == patch.LineDelete && c.end == len(t.lines) && own.end != len(t.lines) || first == patch.LineDelete && c.start == 0 && own.start != 0 {
			return true
		}
	}
	return false
}

// startingAt returns the places that start at line i (0-based), by binary
// search where within can use one.
func startingAt(cs []place, i int) []place {
	if cs[0].tier == TierFuzzy {
		return filter(cs, func(c place) bool { return c.start == i })
	}
	k := sort.Search(len(cs), func(k int) bool { return cs[k].start >= i })
	if k < len(cs) && cs[k].start == i {
		return cs[k : k+1]
	}
	return nil
}

// within returns the places that lie in [lo, hi). Places found at an
// exact, whitespace or indentation tier (by contiguous) have one length and
// come in the order of their start: they give a part of cs, found by
// binary search, not a copy. A hunk in a file of repeated lines has a place
// on nearly every line, and every hunk of the patch narrows its own.
func within(cs []place, lo, hi int) []place {
	if cs[0].tier == TierFuzzy {
		return filter(cs, func(c place) bool { return c.start >= lo && c.end <= hi })
	}
	i := sort.Search(len(cs), func(k int) bool { return cs[k].start >= lo })
	j := sort.Search(len(cs), func(k int) bool { return cs[k].end > hi })
	return cs[i:max(i, j)]
}

func bodyKey(h *looseHunk) string {
	var b strings.Builder
	for _, l := range h.lines {
		b.WriteByte(byte(l.kind))
		b.WriteString(l.texts[0])
		b.WriteByte('\n')
	}
	return b.String()
}

func samePlaces(a, b []place) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].start != b[i].start || a[i].end != b[i].end {
			return false
		}
	}
	return true
}

func filter(cs []place, keep func(place) bool) []place {
	var out []place
	for _, c := range cs {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// anchorLines returns the lines equal to a but for leading and trailing
// whitespace: among those whose whitespace-collapsed form is a's.
func anchorLines(t *text, a string) []int {
	a = strings.TrimSpace(a)
	ix := t.indexLevel(levelSpace)
	c := ix.find(collapseSpace(a))
	if c < 0 {
		return nil
	}
	var out []int
	for _, i := range ix.at(c) {
		if strings.TrimSpace(t.lines[i]) == a {
			out = append(out, int(i))
		}
	}
	return out
}

// splice builds the new lines for a placed hunk: context and removed lines
// come from the file, added lines from the hunk, file lines the hunk left
// out are kept.
func splice(t *text, pl *placed, width int, r *HunkReport) ([]string, string) {
	var out []string
	cursor := pl.p.start
	var pending []string // added lines not yet written
	// repl: the pending lines replace removed lines, which fix their place.
	// prevDeleted: the last old-side line was a removed one. loose: the
	// pending lines have dropped context or left-out file lines next to them.
	repl, prevDeleted, loose := false, false, false
	looseAt := looseInserts(pl)
	type run struct {
		lo, hi      int // span of out
		repl, loose bool
	}
	var runs []run
	emit := func(lines []string) {
		if len(lines) == 0 {
			return
		}
		if n := len(runs); n > 0 && runs[n-1].hi == len(out) {
			runs[n-1].hi += len(lines)
			runs[n-1].repl = runs[n-1].repl || repl
			runs[n-1].loose = runs[n-1].loose || loose
		} else {
			runs = append(runs, run{len(out), len(out) + len(lines), repl, loose})
		}
		out = append(out, lines...)
	}
	ei := 0 // index into the entries
	usedSpaceReading := false
	// runBefore counts matched context entries since the last change.
	runBefore, sawChange := 0, false
	skipped := 0 // file lines of the span that no hunk line stands for
	curLine := 0 // the hunk line whose old-side place flushGap is reaching
	flushGap := func(to int) string {
		gap := t.lines[cursor:to]
		skipped += len(gap)
		if len(gap) > 0 {
			r.ContextRestored += len(gap)
		}
		if len(gap) == 1 && len(pending) > 0 && (sameLine(gap[0], pending[0]) || sameLine(gap[0], pending[len(pending)-1])) {
			// The hunk skipped a file line that one end of its added lines
			// repeats: the model wrote the file's line back (keep it once),
			// or adds a block that starts or ends like the file's own, as a
			// doc comment before the file's doc comment (keep both). Real
			// commits show both; either guess can lose or add a line.
			return fmt.Sprintf("uncertain: the hunk leaves out file line %d, which one of its added lines repeats: the file's line written back, or a block of its own", to)
		}
		if len(pending) > 0 && len(gap) > 0 {
			// The hunk lacks file lines right next to its added lines: they
			// stood before them, after them or among them, and each reading
			// is a patch of its own. Where every reading gives the same
			// file, any will do; otherwise only the shape of git's hunks
			// may rule all readings but one out (see sideByShape).
			switch k := sideByShape(t, pl, curLine-len(pending), curLine); {
			case allSame(gap, pending):
				out = append(out, gap...)
				emit(pending)
			case k >= 0:
				emit(pending[:k])
				out = append(out, gap...)
				emit(pending[k:])
			default:
				return lostBesideAdded(cursor, to, len(pending))
			}
			pending = nil
		} else {
			emit(pending)
			out = append(out, gap...)
			pending = nil
		}
		cursor = to
		return ""
	}
	ind, why := newIndenter(t, pl)
	if why != "" {
		return nil, why
	}
	if pl.h.unified && endsInserting(pl.h) && pl.p.end < len(t.lines) {
		// Added lines last, after context and with none after them: git
		// and GNU patch read such a hunk as the end of the file. Elsewhere
		// the file's next lines may belong before the added ones (a
		// closing brace the diff showed as context, say). Added lines
		// that replace removed ones take their place, which is certain,
		// and a search-replace or V4A block ends where its text does.
		return nil, fmt.Sprintf("uncertain: the hunk ends with added lines and no context after them, but its place (line %d) is not the end of the file", pl.p.start+1)
	}
	// The patch may have been cut off (a model's answer that ran out of
	// room): what the hunk holds is the start of a change, and applying it
	// would make half of it. Where the hunk ends at the end of the file it
	// lacks nothing.
	if pl.h.unified && pl.p.end < len(t.lines) {
		if why := cutAfterContext(pl.h, pl.p.start+pl.h.oldCount >= len(t.lines)); why != "" {
			return nil, why
		}
	}
	lastDeleted := false // the last placed old-side line is one the hunk removes
	for li, l := range pl.h.lines {
		if l.kind == patch.LineInsert {
			text, why := ind.indent(l.texts[0], ei-1)
			if why != "" {
				return nil, why
			}
			if text != l.texts[0] {
				r.Repairs = appendOnce(r.Repairs, "reindent")
			}
			if len(pending) == 0 {
				repl, loose = prevDeleted, false
			}
			loose = loose || looseAt[li]
			pending = append(pending, fixEOL(t, text))
			continue
		}
		prevDeleted = l.kind == patch.LineDelete
		repl = repl || prevDeleted
		e := &pl.es[ei]
		at := pl.p.at[ei]
		ei++
		if rg, ok := pl.p.elided[ei-1]; ok {
			curLine = li
			if err := flushGap(rg[0]); err != "" {
				return nil, err
			}
			out = append(out, t.lines[rg[0]:rg[1]]...)
			cursor = rg[1]
			r.Repairs = appendOnce(r.Repairs, "elision")
			continue
		}
		if at < 0 {
			if e.elision {
				r.Repairs = appendOnce(r.Repairs, "elision")
				continue
			}
			r.ContextDropped++
			r.Unmatched = append(r.Unmatched, l.texts[0])
			// A context line not in the file, with a file line missing
			// from the hunk right where it stands, is that line altered:
			// it keeps its place among the added lines.
			next := pl.p.end
			for _, a := range pl.p.at[ei:] {
				if a >= 0 {
					next = a
					break
				}
			}
			if l.kind == patch.LineContext && next > cursor {
				emit(pending)
				pending = nil
				out = append(out, t.lines[cursor])
				cursor++
				r.ContextRestored++
			}
			continue
		}
		if l.kind == patch.LineDelete && lastDeleted && at > cursor {
			// The hunk removes a block that the file splits: whether the
			// lines in between should go too is anyone's guess.
			return nil, fmt.Sprintf("uncertain: the lines the hunk removes are not together in the file (lines %d-%d sit between them)", cursor+1, at)
		}
		restLines := pl.h.lines[li+1:]
		if why := removalGap(at-cursor, cursor, l, restLines, lastDeleted, len(pending) > 0, sawChange, runBefore, width); why != "" {
			return nil, why
		}
		lastDeleted = l.kind == patch.LineDelete
		curLine = li
		if err := flushGap(at); err != "" {
			return nil, err
		}
		k := e.reading(t, pl.p.level, at)
		if k > 0 {
			usedSpaceReading = true
		}
		if k >= 0 && pl.p.level == levelExact && e.raw[k] != t.lines[at] {
			// Equal but for a carriage return.
			r.Repairs = appendOnce(r.Repairs, "line-endings")
		}
		if l.kind == patch.LineContext {
			out = append(out, t.lines[at])
			runBefore++
		} else {
			sawChange = true
			runBefore = 0
		}
		cursor = at + 1
	}
	if cursor < pl.p.end {
		skipped += pl.p.end - cursor
	}
	if why := skippedRemovals(pl.h, skipped); why != "" {
		return nil, why
	}
	if cursor < pl.p.end {
		emit(pending)
		pending = nil
		out = append(out, t.lines[cursor:pl.p.end]...)
	}
	emit(pending)
	if pl.p.tier == TierFuzzy {
		// Context was dropped or file lines kept next to lines the hunk
		// only adds: they must still sit in the block its context put them
		// in. (Lines that replace removed ones take their place, which is
		// certain.)
		tab := 4
		if ind.opts != nil {
			tab = ind.opts[0].tab
		}
		for _, rn := range runs {
			if rn.repl || !rn.loose {
				continue
			}
			prev, ok := nearCode(out, rn.lo-1, -1)
			if !ok {
				prev, _ = nearCode(t.lines[:pl.p.start], pl.p.start-1, -1)
			}
			next, ok := nearCode(out, rn.hi, 1)
			if !ok {
				next, _ = nearCode(t.lines, pl.p.end, 1)
			}
			if why := blockFit(prev, next, out[rn.lo:rn.hi], tab); why != "" {
				return nil, "uncertain: placed without some of its context, and " + why
			}
		}
	}
	if usedSpaceReading {
		r.Repairs = appendOnce(r.Repairs, "context-space")
	}
	if r.ContextRestored > 0 {
		r.Repairs = appendOnce(r.Repairs, "context-restored")
	}
	if r.ContextDropped > 0 {
		r.Repairs = appendOnce(r.Repairs, "context-dropped")
	}
	return out, ""
}

// removalGap judges n file lines (from line cursor, 0-based) that the
// hunk leaves out between a context line and a line it removes, before
// the old-side line l: context the hunk lost, to keep, or a removal it
// forgot, to make. Real commits give both shapes alike (a context line
// dropped before a removed block; the first removed line of a block
// dropped after full context). Only an edge run of context can tell: a
// hunk written with width lines of context has edge runs of at most width
// lines, so the left-out lines are lost context only when the run with
// them is no longer than that; with them it is longer, the hunk is
// refused.
func removalGap(n, cursor int, l looseLine, rest []looseLine, lastDeleted, pending, sawChange bool, runBefore, width int) string {
	if n <= 0 || pending {
		return ""
	}
	var run int
	var edge bool
	switch {
	case l.kind == patch.LineDelete && !lastDeleted && runBefore > 0:
		run, edge = runBefore, !sawChange
	case lastDeleted && l.kind == patch.LineContext:
		run, edge = ctxRunAfter(l, rest)
	default:
		return ""
	}
	// A hunk that reaches an end of the file has a short run there, and
	// the width read from a patch of one such hunk is short too: git's
	// default of three lines is the least taken.
	if !edge || run+n <= max(width, 3) {
		// Between two changes a run of context may be of any length up
		// to twice the width: nothing tells, and the lines are kept (a
		// known limit: a removal forgotten there is not made).
		return ""
	}
	return fmt.Sprintf("uncertain: the hunk leaves out file lines %d-%d between its context and a line it removes: context it lost, or lines it forgot to remove", cursor+1, cursor+n)
}

// bodyCounts returns the hunk's old and new line counts as its body has
// them, and the counts its header claims beyond them (missingOld,
// missingNew); ok is false when the header gives no counts. The blank
// lines left out at the end of the body count as context when blanks is
// set.
func bodyCounts(h *looseHunk, blanks bool) (o, w, missingOld, missingNew int, ok bool) {
	if blanks {
		o, w = h.trailBlanks, h.trailBlanks
	}
	for _, l := range h.lines {
		if l.kind != patch.LineInsert {
			o++
		}
		if l.kind != patch.LineDelete {
			w++
		}
	}
	ok = h.unified && h.hasPos && (h.oldCount > 0 || h.newCount > 0)
	return o, w, h.oldCount - o, h.newCount - w, ok
}

// cutAfterContext refuses a hunk that may have been cut off: after a
// change, or after a context line between two changes, where an answer
// that ran out of room stops. A complete hunk of git's that does not reach
// the end of the file (the caller checks) ends with exactly width context
// lines after its last change (at least 3, git's default; h.cutWidth
// reads it from the patch). When it ends with fewer (t) and its body is
// short of its header's counts, the lines it lacks can be only trailing
// context it lost, which is as many on both sides and at most width-t;
// any other shortfall is a change cut off.
//
// Three things say a hunk was not cut: another hunk follows it (the
// answer went on); counts the body exceeds on either side (they are not
// the hunk's own); and one side's count matching the body exactly while
// only the other is short, since a cut loses the trailing context and so
// shortens both sides, unless the header's old lines reach the end of
// the file (countedToEOF), where a hunk has no trailing context and a
// cut among its removed lines shortens the old side alone. Blank lines
// after the body, left out as separators, are read as context that lost
// its space: the reading that refuses less (it adds as many lines to t
// as to both sides of the body).
func cutAfterContext(h *looseHunk, countedToEOF bool) string {
	o, w, mo, mn, ok := bodyCounts(h, true)
	if !ok || h.followed || mo < 0 || mn < 0 || mo+mn == 0 {
		return ""
	}
	if (mo == 0 || mn == 0) && !countedToEOF {
		return ""
	}
	t, change := h.trailBlanks, false
	for i := len(h.lines) - 1; i >= 0; i-- {
		if h.lines[i].kind != patch.LineContext {
			change = true
			break
		}
		t++
	}
	width := max(h.cutWidth, 3)
	if !change || t >= width || (mo == mn && mo <= width-t) {
		return ""
	}
	return fmt.Sprintf("uncertain: the hunk may have been cut off: its header counts %d old and %d new lines, its body has %d and %d and ends with %d context lines where a whole hunk has %d", h.oldCount, h.newCount, o, w, t, width)
}

// skippedRemovals judges the file lines a placed hunk skipped between its
// lines (kept as context the hunk lost) by the header's counts: a lost
// context line leaves both sides short, a removal the hunk forgot leaves
// the old side short and the new side whole. When the counts say the
// skipped lines were removals, keeping them would make half the change,
// and the hunk is refused. Counts the body exceeds, or that fall short of
// the skipped lines, say nothing, and the lines are kept as before.
func skippedRemovals(h *looseHunk, skipped int) string {
	if skipped == 0 {
		return ""
	}
	for _, blanks := range []bool{false, true} {
		_, _, mo, mn, ok := bodyCounts(h, blanks)
		if ok && mn == 0 && mo >= skipped {
			return fmt.Sprintf("uncertain: the hunk leaves out %d file lines of its place, and its header counts %d old lines more than its body and no new ones: lines it forgot to remove, not context it lost", skipped, mo)
		}
	}
	return ""
}

// endsInserting reports whether the hunk ends with a run of added lines
// that follows a context line.
func endsInserting(h *looseHunk) bool {
	i := len(h.lines) - 1
	if i < 0 || h.lines[i].kind != patch.LineInsert {
		return false
	}
	for i >= 0 && h.lines[i].kind == patch.LineInsert {
		i--
	}
	return i >= 0 && h.lines[i].kind == patch.LineContext
}

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// sameLine compares a file line and an added line, trailing whitespace and
// line endings aside.
func sameLine(a, b string) bool {
	return normalize(levelTrailing, a) == normalize(levelTrailing, b) && strings.TrimSpace(a) != ""
}

// ctxRunAfter counts the context lines from l on (l included when it is
// context) up to the next change, and reports whether the run reaches the
// end of the hunk.
func ctxRunAfter(l looseLine, rest []looseLine) (int, bool) {
	if l.kind != patch.LineContext {
		return 0, false
	}
	n := 1
	for _, x := range rest {
		if x.kind != patch.LineContext {
			return n, false
		}
		n++
	}
	return n, true
}

// fixEOL gives an added line the file's line ending.
func fixEOL(t *text, s string) string {
	if t.crlf && !strings.HasSuffix(s, "\r") {
		return s + "\r"
	}
	if !t.crlf && len(t.lines) > 0 {
		return strings.TrimSuffix(s, "\r")
	}
	return s
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		out = appendOnce(out, s)
	}
	return out
}

// sideByShape returns the one place among the added lines h.lines[lo:hi]
// (they come right before the old-side line hi) where a file line the hunk
// left out can have stood in a hunk git wrote, as an index into them; -1
// when there is none or more than one. It decides only what is certain
// under two premises the hunk itself must confirm:
//
//   - its header counts one old and one new line more than its body, and
//     the placement skipped exactly one file line with every hunk line in
//     the file: the hunk is whole but for that one context line;
//   - a hunk of git's has as many context lines before its first change
//     as after its last (its width, at least the longer of the two runs
//     the hunk has), fewer only at an end of the file.
//
// A reading that leaves an edge run shorter than that, away from the end
// of the file, or the two edge runs unequal with neither at an end, is no
// hunk of git's. Runs between two changes may have any length, so a line
// left out there, away from the edges, leaves two readings or more.
func sideByShape(t *text, pl *placed, lo, hi int) int {
	h := pl.h
	if _, _, mo, mn, ok := bodyCounts(h, false); !ok || mo != 1 || mn != 1 || h.trailBlanks > 0 || len(pl.p.elided) > 0 {
		return -1
	}
	for _, at := range pl.p.at {
		if at < 0 {
			return -1
		}
	}
	if pl.p.end-pl.p.start != len(pl.p.at)+1 {
		return -1
	}
	ctx := make([]bool, len(h.lines))
	for i, l := range h.lines {
		ctx[i] = l.kind == patch.LineContext
	}
	edges := func(c []bool) (lead, trail int) {
		for lead < len(c) && c[lead] {
			lead++
		}
		for trail < len(c) && c[len(c)-1-trail] {
			trail++
		}
		return lead, trail
	}
	lead, trail := edges(ctx)
	if lead == len(ctx) {
		return -1
	}
	width := max(lead, trail)
	atStart, atEnd := pl.p.start == 0, pl.p.end == len(t.lines)
	// shaped: some width w, no less than the hunk's, gives a hunk with
	// edge runs a and b.
	shaped := func(a, b int) bool {
		for w := width; w <= max(a, b); w++ {
			if (a == w || atStart && a < w) && (b == w || atEnd && b < w) {
				return true
			}
		}
		return false
	}
	found := -1
	for j := lo; j <= hi; j++ {
		c := append(append(append([]bool(nil), ctx[:j]...), true), ctx[j:]...)
		if !shaped(edges(c)) {
			continue
		}
		if found >= 0 {
			return -1
		}
		found = j - lo
	}
	return found
}

// allSame reports whether every line of a and b is the same line, so that
// any order of them gives the same file.
func allSame(a, b []string) bool {
	for _, x := range append(append([]string(nil), a...), b...) {
		if x != a[0] {
			return false
		}
	}
	return true
}

func lostBesideAdded(cursor, to, added int) string {
	where := "before or after them"
	if added > 1 {
		where = "before, after or among them"
	}
	if to-cursor == 1 {
		return fmt.Sprintf("uncertain: file line %d is not in the hunk and stands next to its added lines: %s gives different files", to, where)
	}
	return fmt.Sprintf("uncertain: file lines %d-%d are not in the hunk and stand next to its added lines: %s gives different files", cursor+1, to, where)
}

// tierRank orders the tiers from the strictest.
func tierRank(tier string) int {
	switch tier {
	case TierExact:
		return 0
	case TierWhitespace:
		return 1
	case TierIndentation:
		return 2
	}
	return 3
}

// reverseFits refuses a hunk placed by its old side whose reverse places
// too, elsewhere, no more loosely: the file holds its new side there, so
// the change may be made already (a patch applied a second time finds a
// second copy of its old side: a twin block, a test added after a test
// like it), or be meant where its old side is. Only its line number says
// which: where it names the old side (within 3 lines, and nearer than the
// new side), the hunk is applied there. The hunk must add a significant line that differs from every line it
// removes, or remove a block framed by context: else its new side says
// nothing.
func reverseFits(t *text, pl *placed, own int) string {
	if len(pl.es) == 0 || !ownEvidence(pl.h, false) {
		// Placed by its line number alone, or its new side says nothing.
		return ""
	}
	dist := func(at int) int { return max(at-own, own-at) }
	rh := *pl.h
	rh.lines = slices.Clone(pl.h.lines)
	rh.reverse()
	rp := &placed{idx: pl.idx, h: &rh, es: entries(&rh)}
	if locate(t, rp) != "" || rp.already {
		return ""
	}
	if rp.p.start < pl.p.end && pl.p.start < rp.p.end || rp.p.start == pl.p.start {
		// The same lines: newSideToo judges those it places exactly or
		// but for trailing whitespace. Placed more loosely (context
		// dropped), a hunk that adds lines whose reverse finds them
		// there, where they would go, has its change in the file (an
		// insertion, --reverse of a deletion not made); the reverse of a
		// hunk that only removes lines fits wherever its context does,
		// which says nothing. A hunk whose old side is exactly at its
		// own line (a -U0 hunk, whose reverse places only loosely) is
		// placed there.
		// A hunk whose old side is exactly there and whose reverse fits
		// only loosely changes whitespace alone (gofmt's realignment): its
		// new side is not in the file, and it is applied.
		exactOwn := pl.h.hasPos && pl.p.start == own && pl.p.tier == TierExact
		onlyWS := pl.p.tier == TierExact && rp.p.tier == TierIndentation
		if hasInsert(pl.h) && !exactOwn && !onlyWS && max(tierRank(pl.p.tier), tierRank(rp.p.tier)) >= tierRank(TierIndentation) {
			return fmt.Sprintf("uncertain: the lines the hunk adds are in the file already at line %d, where its old side fits (line %d, %s): applied already, or to be applied again?", rp.p.start+1, pl.p.start+1, pl.p.tier)
		}
		return ""
	}
	if tierRank(rp.p.tier) > tierRank(pl.p.tier) {
		return ""
	}
	if pl.h.hasPos && dist(pl.p.start) <= 3 && dist(pl.p.start) < dist(rp.p.start) {
		// Its line number says which: the old side, at or next to it.
		return ""
	}
	return fmt.Sprintf("uncertain: the hunk's new side is in the file at line %d (%s) and its old side at line %d (%s): applied already, or to be applied there?", rp.p.start+1, rp.p.tier, pl.p.start+1, pl.p.tier)
}
