package repair_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// issue38Families makes the held-out families of issue 38 from one
// commit's file: each recovery of that issue with the shapes it must
// refuse. Must-refuse families (expected null) are marked so:
//
//   - miscount_followed: a hunk that another hunk follows, its trailing
//     context cut to one line and its header counting one old and two new
//     lines more than its body. cut_last_of_several (null): the same
//     patch with its last hunk cut after the first line of a change, its
//     counts intact: only the last hunk of an answer can be cut.
//   - miscount_one_side: the last hunk, its trailing context cut to one
//     line and its header's counts fitting its body on one side, one line
//     more on the other. cut_eof_removal (null): a hunk that removes the
//     file's last three lines after three lines of context, cut after the
//     first removed line, its counts intact (a cut of a hunk that reaches
//     the end of the file shortens the old side alone).
//   - uneven_ctx_miscount: the first hunk written with two more lines of
//     leading context (five before, three after), the last hunk's header
//     counting one old and two new lines more than its body.
//     uneven_ctx_cut (null): the same first hunk, the last hunk cut.
//   - blank_sep_miscount: a hunk followed by a blank file line written
//     with that line as context (four after), the last hunk miscounted as
//     above. blank_sep_cut (null): the same, the last hunk cut.
//   - edge_reindent_shallow: a hunk's first context line written four
//     columns (or one tab) shallower than the file. edge_reindent_lead:
//     its whole leading run (three lines or more) so written.
//     edge_reindent_twice (null): the first with a bare header, and the
//     hunk's old side copied after the file with its first line eight
//     columns shallower than the file's: the hunk's line is as far from
//     either.
//   - edge_misremembered_3: a hunk's three leading context lines and its
//     last one misremembered (each with a word appended).
//     edge_misremembered_elsewhere (null): the three leading lines
//     written as three lines the file has elsewhere (its first three
//     significant lines): the hunk may be meant there.
//     edge_misremembered_twice (null): the lines the first keeps copied
//     after the file: the rest fits twice.
//   - stray_header_split: a hunk split in two by a "@@ @@" line between
//     two of its added lines. stray_header_apart (null): a hunk cut after
//     the first of two added lines, then "@@ @@" and the next hunk from
//     its first added line on (its leading context left out): the parts
//     are not adjacent in the file.
func issue38Families(f fileDiff, add addFunc) {
	hs := f.hunks
	lines, _ := patch.SplitLines(f.old)
	newCode := f.new
	last := len(hs) - 1
	notEOF := func(h []string) bool { return !eofHunk(h, len(lines)) }
	if len(hs) >= 2 {
		for k := 0; k < last; k++ {
			v := trimTrailing(hs[k], 1)
			if v == nil {
				continue
			}
			v = recount(v, 1, 2)
			add(f, "miscount_followed", f.old, withHunk(f, k, v), &newCode, k)
			if c := truncate(hs[last]); c != nil && notEOF(hs[last]) {
				mod := append([][]string(nil), hs...)
				mod[k] = v
				add(f, "cut_last_of_several", f.old, joinHunks(f.head, mod, last, c), nil, last)
			}
			break
		}
	}
	if v := trimTrailing(hs[last], 1); v != nil && notEOF(hs[last]) {
		do, dn := 0, 1
		if len(f.path)%2 == 0 {
			do, dn = 1, 0
		}
		add(f, "miscount_one_side", f.old, withHunk(f, last, recount(v, do, dn)), &newCode, last)
	}
	if c := cutEOFRemoval(lines); c != "" {
		add(f, "cut_eof_removal", f.old, f.head+c, nil, last)
	}
	if len(hs) >= 2 && notEOF(hs[last]) {
		miss := recount(hs[last], 1, 2)
		if v := widerLead(hs[0], lines, 2); v != nil {
			mod := append([][]string(nil), hs...)
			mod[0] = v
			add(f, "uneven_ctx_miscount", f.old, joinHunks(f.head, mod, last, miss), &newCode, last)
			if c := truncate(hs[last]); c != nil {
				add(f, "uneven_ctx_cut", f.old, joinHunks(f.head, mod, last, c), nil, last)
			}
		}
		for k := 0; k < last; k++ {
			v := blankAfter(hs[k], lines)
			if v == nil {
				continue
			}
			mod := append([][]string(nil), hs...)
			mod[k] = v
			add(f, "blank_sep_miscount", f.old, joinHunks(f.head, mod, last, miss), &newCode, last)
			if c := truncate(hs[last]); c != nil {
				add(f, "blank_sep_cut", f.old, joinHunks(f.head, mod, last, c), nil, last)
			}
			break
		}
	}
	for k, h := range hs {
		if s := shallowLead(h, 1); s != nil {
			add(f, "edge_reindent_shallow", f.old, withHunk(f, k, s), &newCode, k)
			if tw := twinShallower(h); tw != nil {
				bare := f.head + "@@ @@\n" + strings.Join(s[1:], "\n") + "\n"
				add(f, "edge_reindent_twice", f.old+"\n"+strings.Join(tw, "\n")+"\n", bare, nil, k)
			}
			break
		}
	}
	for k, h := range hs {
		if s := shallowLead(h, 0); s != nil {
			add(f, "edge_reindent_lead", f.old, withHunk(f, k, s), &newCode, k)
			break
		}
	}
	for k, h := range hs {
		v := misremember(h, 3, 1)
		if v == nil {
			continue
		}
		add(f, "edge_misremembered_3", f.old, withHunk(f, k, v), &newCode, k)
		if e := elsewhereLead(h, lines); e != nil {
			add(f, "edge_misremembered_elsewhere", f.old, withHunk(f, k, e), nil, k)
		}
		// The old side but its three leading lines and its last, copied
		// after the file: the rest fits twice.
		old := oldSide(h)
		tail := "\n" + strings.Join(old[3:len(old)-1], "\n") + "\n"
		add(f, "edge_misremembered_twice", f.old+tail, withHunk(f, k, v), nil, k)
		break
	}
	for k, h := range hs {
		if v := strayHeader(h); v != nil {
			add(f, "stray_header_split", f.old, withHunk(f, k, v), &newCode, k)
			break
		}
	}
	for k := 0; k+1 < len(hs); k++ {
		if v := strayApart(hs[k], hs[k+1]); v != nil && !fitsTogether(v, lines) {
			mod := append(append(append([][]string(nil), hs[:k]...), v), hs[k+2:]...)
			add(f, "stray_header_apart", f.old, f.head+joinAll(mod), nil, k)
			break
		}
	}
}

// hunkCounts parses a hunk header's start and counts.
func hunkCounts(hdr string) (a, b, c, d int, ok bool) {
	_, err := fmt.Sscanf(hdr, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &d)
	return a, b, c, d, err == nil
}

// recount gives h a header that counts its body's old and new lines plus
// do and dn.
func recount(h []string, do, dn int) []string {
	a, _, c, _, ok := hunkCounts(h[0])
	if !ok {
		return nil
	}
	o, n := 0, 0
	for _, l := range h[1:] {
		if !strings.HasPrefix(l, "+") {
			o++
		}
		if !strings.HasPrefix(l, "-") {
			n++
		}
	}
	v := append([]string(nil), h...)
	v[0] = fmt.Sprintf("@@ -%d,%d +%d,%d @@", a, o+do, c, n+dn)
	return v
}

// trimTrailing cuts h's trailing context to keep lines, when it has more
// and a change before it.
func trimTrailing(h []string, keep int) []string {
	rs := changeRuns(h)
	if len(rs) == 0 || len(h)-rs[len(rs)-1][1] <= keep {
		return nil
	}
	return append([]string(nil), h[:rs[len(rs)-1][1]+keep]...)
}

// cutEOFRemoval is a hunk that removes the last three lines of a file
// after three lines of context, cut after its first removed line, with
// its header's counts intact; "" when the file is short or those lines
// are blank or its first four lines are elsewhere too.
func cutEOFRemoval(lines []string) string {
	n := len(lines)
	if n < 12 {
		return ""
	}
	for _, l := range lines[n-3:] {
		if strings.TrimSpace(l) == "" {
			return ""
		}
	}
	block := lines[n-6 : n-2]
	for i := 0; i+4 <= n-6; i++ {
		if slices.Equal(lines[i:i+4], block) {
			return ""
		}
	}
	h := []string{fmt.Sprintf("@@ -%d,6 +%d,3 @@", n-5, n-5)}
	for _, l := range lines[n-6 : n-3] {
		h = append(h, " "+l)
	}
	h = append(h, "-"+lines[n-3])
	return strings.Join(h, "\n") + "\n"
}

// widerLead writes h with extra more file lines of leading context, its
// header moved and counted to fit; nil when h's leading run is not full
// (three lines) or the file has no room before it.
func widerLead(h []string, lines []string, extra int) []string {
	a, b, c, d, ok := hunkCounts(h[0])
	if !ok || a-1 < 3+extra {
		return nil
	}
	for i := 1; i <= 3; i++ {
		if i >= len(h) || !strings.HasPrefix(h[i], " ") {
			return nil
		}
	}
	v := []string{fmt.Sprintf("@@ -%d,%d +%d,%d @@", a-extra, b+extra, c-extra, d+extra)}
	for _, l := range lines[a-1-extra : a-1] {
		v = append(v, " "+l)
	}
	return append(v, h[1:]...)
}

// blankAfter writes h with the blank file line that follows its trailing
// context as one more context line; nil when that line is not blank or h
// does not end with three context lines.
func blankAfter(h []string, lines []string) []string {
	a, b, c, d, ok := hunkCounts(h[0])
	if !ok || len(h) < 4 {
		return nil
	}
	for _, l := range h[len(h)-3:] {
		if !strings.HasPrefix(l, " ") {
			return nil
		}
	}
	next := a - 1 + b
	if next >= len(lines) || strings.TrimSpace(lines[next]) != "" {
		return nil
	}
	v := append([]string{fmt.Sprintf("@@ -%d,%d +%d,%d @@", a, b+1, c, d+1)}, h[1:]...)
	return append(v, " "+lines[next])
}

// shallowLead writes h's first n leading context lines (0: its whole
// leading run, of at least three) four columns (or one tab) shallower,
// when each is indented so and the first is significant; the leading run
// must have three lines and the hunk remove a line.
func shallowLead(h []string, n int) []string {
	lead := 0
	for lead+1 < len(h) && strings.HasPrefix(h[lead+1], " ") {
		lead++
	}
	if lead < 3 || len(strings.TrimSpace(h[1])) < 6 || !hasRemoved(h) {
		return nil
	}
	if n == 0 {
		n = lead
	}
	v := append([]string(nil), h...)
	for i := 1; i <= n; i++ {
		l := h[i][1:]
		switch {
		case strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, "    "):
			v[i] = " " + l[4:]
		case strings.HasPrefix(l, "\t"):
			v[i] = " " + l[1:]
		default:
			return nil
		}
	}
	return v
}

// twinShallower is h's old side with its first line eight columns (or
// two tabs) shallower than the file: as far from the hunk's first line,
// written four shallower, as the file's own line is.
func twinShallower(h []string) []string {
	old := oldSide(h)
	l := old[0]
	switch {
	case strings.HasPrefix(l, "        "):
		old[0] = l[8:]
	case strings.HasPrefix(l, "\t\t"):
		old[0] = l[2:]
	default:
		return nil
	}
	return old
}

// fitsTogether reports whether the old side of the hunk h (its header
// and any "@@" line inside skipped) is consecutive lines of the file.
func fitsTogether(h []string, lines []string) bool {
	var old []string
	for _, l := range h[1:] {
		if !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "@@") {
			old = append(old, l[min(1, len(l)):])
		}
	}
	for i := 0; i+len(old) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(old)], old) {
			return true
		}
	}
	return false
}

// middleOld returns the old side of h from its first change to its last.
func middleOld(h []string) []string {
	rs := changeRuns(h)
	if len(rs) == 0 {
		return nil
	}
	var out []string
	for _, l := range h[rs[0][0]:rs[len(rs)-1][1]] {
		if !strings.HasPrefix(l, "+") {
			out = append(out, l[1:])
		}
	}
	return out
}

// misremember appends a word to h's first lead and last trail context
// lines, when its edge runs are that long, it removes a line, and its
// middle holds two significant lines.
func misremember(h []string, lead, trail int) []string {
	rs := changeRuns(h)
	if len(rs) == 0 || rs[0][0]-1 < lead || len(h)-rs[len(rs)-1][1] < trail || !hasRemoved(h) {
		return nil
	}
	sig := 0
	for _, l := range middleOld(h) {
		if len(strings.TrimSpace(l)) > 6 {
			sig++
		}
	}
	if sig < 2 {
		return nil
	}
	v := append([]string(nil), h...)
	for i := 1; i <= lead; i++ {
		v[i] += " misremembered"
	}
	for i := len(v) - trail; i < len(v); i++ {
		v[i] += " misremembered"
	}
	return v
}

// elsewhereLead writes h's three leading context lines as the file's
// first three significant lines (when they are not h's own) and its last
// context line misremembered.
func elsewhereLead(h []string, lines []string) []string {
	v := misremember(h, 3, 1)
	if v == nil {
		return nil
	}
	var first []string
	for _, l := range lines {
		if len(strings.TrimSpace(l)) > 6 {
			first = append(first, l)
			if len(first) == 3 {
				break
			}
		}
	}
	if len(first) < 3 || " "+first[0] == h[1] {
		return nil
	}
	for i := range first {
		v[i+1] = " " + first[i]
	}
	return v
}

// strayHeader puts a "@@ @@" line between the first two consecutive
// added lines of h that have context before the hunk's first change and
// after its last.
func strayHeader(h []string) []string {
	rs := changeRuns(h)
	if len(rs) == 0 || rs[0][0] < 2 || rs[len(rs)-1][1] >= len(h) {
		return nil
	}
	for i := 2; i < len(h); i++ {
		if strings.HasPrefix(h[i-1], "+") && strings.HasPrefix(h[i], "+") {
			return append(append(append([]string(nil), h[:i]...), "@@ @@"), h[i:]...)
		}
	}
	return nil
}

// strayApart joins a, cut after the first of two consecutive added lines,
// and b from its first added line on, with a "@@ @@" line between them;
// nil when either has no such place or a and b are one hunk's parts.
func strayApart(a, b []string) []string {
	cut := -1
	for i := 2; i < len(a); i++ {
		if strings.HasPrefix(a[i-1], "+") && strings.HasPrefix(a[i], "+") && strings.HasPrefix(a[1], " ") {
			cut = i
			break
		}
	}
	from := -1
	for i := 1; i < len(b); i++ {
		if strings.HasPrefix(b[i], "+") {
			from = i
			break
		}
	}
	if cut < 0 || from < 2 || !strings.HasPrefix(b[len(b)-1], " ") {
		return nil
	}
	return append(append(append([]string(nil), a[:cut]...), "@@ @@"), b[from:]...)
}
