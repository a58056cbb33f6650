package repair

import (
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// markCutEvidence records on each hunk what the patch says about whether
// it may have been cut off (see cutAfterContext): whether another hunk
// follows it in the patch text (an answer that goes on was not cut
// there), and the context width a whole hunk of this patch ends with.
//
// The width is read from the other hunks, each giving the shorter of its
// two edge runs: a hunk written with uneven context (five lines before,
// three after) says its author ends hunks with three, not five. Blank
// lines at the outer end of a run are not counted: a blank line before
// the next header may be a separator. The hunk judged gives its leading
// run only when no other hunk gives a width. Each choice reads the width
// short, the reading that refuses less.
func markCutEvidence(files []*looseFile) {
	var all []*looseHunk
	var file []int
	for fi, f := range files {
		all = append(all, f.hunks...)
		for range f.hunks {
			file = append(file, fi)
		}
	}
	for i, h := range all {
		// A hunk that ends with a change, followed in its file by one that
		// starts with a change, may be one hunk that lost lines at a stray
		// header (see joinStraySplits): the hunk after it vouches for
		// nothing then.
		h.followed = i < len(all)-1 && !(file[i+1] == file[i] && edgeChange(h, true) && edgeChange(all[i+1], false))
		w := 0
		for j, o := range all {
			if j == i {
				continue
			}
			lead, trail := edgeRunsSolid(o)
			if lead == len(o.lines) {
				continue
			}
			w = max(w, min(lead, trail))
		}
		if w == 0 {
			w, _ = edgeRunsSolid(h)
			if w == len(h.lines) {
				w = 0
			}
		}
		h.cutWidth = w
	}
}

// edgeChange reports whether the hunk's last (or first) line is a change.
func edgeChange(h *looseHunk, last bool) bool {
	if len(h.lines) == 0 {
		return false
	}
	l := h.lines[0]
	if last {
		l = h.lines[len(h.lines)-1]
	}
	return l.kind != patch.LineContext
}

// edgeRunsSolid returns the hunk's leading and trailing runs of context,
// blank lines at the outer end of each left out.
func edgeRunsSolid(h *looseHunk) (lead, trail int) {
	n := len(h.lines)
	for lead < n && h.lines[lead].kind == patch.LineContext {
		lead++
	}
	if lead == n {
		return n, n
	}
	for trail < n && h.lines[n-1-trail].kind == patch.LineContext {
		trail++
	}
	blank := func(l looseLine) bool { return strings.TrimSpace(l.texts[0]) == "" }
	bl, bt := 0, 0
	for bl < lead && blank(h.lines[bl]) {
		bl++
	}
	for bt < trail && blank(h.lines[n-1-bt]) {
		bt++
	}
	return lead - bl, trail - bt
}
