package repair_test

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

var heldoutOut = flag.String("heldout-out", "", "write the held-out cases of TestHeldOutCorpus to this JSONL file")

// heldoutPerFamily caps each family of the held-out corpus.
const heldoutPerFamily = 40

// TestHeldOutCorpus scores the applier on cases generated from
// ../shared/data/diffxyz-dev.jsonl.gz (584 single-file commits of six
// repositories in six languages, none of them click or cobra's history the
// fidelity corpus comes from): the 11 families of fidelityCases and the
// held-out families of heldoutFamilies, which stress the places where a
// tolerance decides between readings. Nothing may be misapplied or
// damaged, and every must-refuse case is refused. Skips without the data.
func TestHeldOutCorpus(t *testing.T) {
	src := filepath.Join(testdata.SharedDir(), "diffxyz-dev.jsonl.gz")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("held-out commits not found: %v", err)
	}
	rows, err := testdata.ReadJSONL[testdata.Triple](src)
	if err != nil {
		t.Fatal(err)
	}
	cases := heldoutCases(t, rows)
	if *heldoutOut != "" {
		writeCases(t, *heldoutOut, cases, strings.HasSuffix(*heldoutOut, ".gz"))
	}
	if n := scoreCorpus(t, cases); n < 25 {
		t.Errorf("%d families, want the 11 of fidelityCases and the held-out ones", n)
	}
}

// heldoutCases makes the cases from the dev commits, in a fixed shuffled
// order so that every family draws on every repository, at most
// heldoutPerFamily a family. Cases that strict mode (git's rules) applies
// with another result, or applies where they must be refused, are left
// out: the default mode applies what strict mode applies.
func heldoutCases(t *testing.T, rows []testdata.Triple) []applybench.Case {
	var files []fileDiff
	for _, r := range rows {
		if !strings.HasSuffix(r.OldCode, "\n") || !strings.HasSuffix(r.NewCode, "\n") {
			continue
		}
		head, hs := udiffHunks(r.UDiff)
		if len(hs) == 0 {
			continue
		}
		files = append(files, fileDiff{id: r.Repo + "@" + r.Commit[:12], path: r.Path, old: r.OldCode, new: r.NewCode, head: head, hunks: hs})
	}
	rng := rand.New(rand.NewSource(1))
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	cs := newCaseSet(heldoutPerFamily)
	for fi := range files {
		classicFamilies(files, fi, cs.add)
		heldoutFamilies(files[fi], cs.add)
		issue38Families(files[fi], cs.add)
		onceFamilies(files[fi], cs.addAny)
		twiceFamilies(files[fi], cs.addAny)
	}
	t.Logf("generated %d held-out cases; %d left out that git apply misapplies", len(cs.out), cs.gits)
	return cs.out
}

// heldoutFamilies makes the held-out families from one commit's file. A
// "twin" is a copy of a hunk's old side appended to the file after a blank
// line, so that the hunk's lines are in the file twice; the expected
// content then has the twin too. Must-refuse families (expected null) are
// marked so:
//
//   - indent_twin_bare (null): the twin indented one level deeper, the
//     hunk alone with a bare header and every line two columns deeper than
//     the file: both places fit with a consistent shift.
//     indent_twin_numbered: the same with the hunk's own line numbers,
//     which name one place exactly.
//   - indent_one_ctx: the deeper twin, one context line of the hunk
//     written at the twin's indentation, the rest as in the file.
//   - numbers_twin_exact: an exact twin, the patch without context spaces
//     and with its own line numbers. numbers_twin_off (null): the hunk
//     alone, its line numbers two lines off (pointing at neither copy).
//   - ws_twin_exact: a twin whose indentation is written the other way
//     (tabs for spaces, or spaces for tabs), the patch with bare headers:
//     only the original fits exactly.
//   - hunk_dropped: one hunk of several left out, no context spaces;
//     expected: the other hunks applied.
//   - hunks_shuffled_bare: the hunks in reverse order with bare headers.
//   - truncated_last (null): the last hunk cut after the first line of a
//     change of several lines, with its header counts intact, where the
//     hunk does not reach the end of the file.
//   - already_elsewhere: the hunk's new side (context and added lines)
//     appended to the file while its old side is still in place; the hunk
//     alone without context spaces. already_elsewhere_stale (null): and
//     one of its removed lines stale. already_elsewhere_ctx_lost: and the
//     context line next to its removed block dropped.
//   - crlf_lf_patch: the file and the commit in CRLF, the patch in LF
//     without context spaces. crlf_stale (null): and a removed line stale.
//   - no_eol: the file and the commit without a final newline, git's
//     diff of them without its "\ No newline" markers and context spaces.
//     no_eol_stale (null): and a removed line stale.
//   - elision_merge: two neighbouring hunks written as one, the lines
//     between them replaced by "...", with a bare header.
//     elision_merge_stale (null): and a removed line of the second stale.
//   - mid_ctx_altered: a context line between two changes of a hunk
//     misremembered. mid_ctx_altered_stale (null): and a removed line
//     stale.
//   - dup_hunk: a hunk written twice, no context spaces.
//   - half_applied: the first of several hunks already in the file.
//   - drop_removed_edge (null): the first removed line after a hunk's
//     full leading context left out: a removal forgotten, or context lost.
//   - truncated_mid (null): the last hunk cut after the first context
//     line that follows its first change, where a change follows that
//     context, with its header counts intact (an answer that ran out of
//     room between two changes), where the hunk does not reach the end of
//     the file.
//   - trailing_ctx_lost: the last context line of a hunk left out, its
//     header counts intact (both sides one short: context lost).
//   - mid_ctx_lost: the last context line of a run between two changes
//     left out where the second change starts with a removed line, the
//     header counts intact (both sides one short: context lost).
//   - drop_removed_mid (null): the first of at least two removed lines
//     right after a run of context between two changes left out, the
//     header counts intact (the old side one short, the new side whole:
//     a removal forgotten, not context lost).
//   - indent_shift_py: a Python hunk written four columns shallower.
func heldoutFamilies(f fileDiff, add addFunc) {
	unit := "    "
	if usesTabs(f.old) {
		unit = "\t"
	}
	hs := f.hunks
	newCode := f.new
	withTwin := func(twin []string) (string, string) {
		tail := "\n" + strings.Join(twin, "\n") + "\n"
		return f.old + tail, f.new + tail
	}
	single := func(k int, h []string) string { return f.head + strings.Join(h, "\n") + "\n" }
	// expectOne is the file old with hunk k alone applied, as git applies it.
	expectOne := func(old string, k int) *string {
		res, err := strictApply(single(k, hs[k]), patch.MapFS{f.path: old}, f.path, false)
		if err != nil {
			return nil
		}
		s := string(res[0].Content)
		return &s
	}
	tk := twinHunk(hs)
	if tk >= 0 {
		h := hs[tk]
		old := oldSide(h)
		deeper := make([]string, len(old))
		for i, l := range old {
			if strings.TrimSpace(l) != "" {
				deeper[i] = unit + l
			}
		}
		fileT, newT := withTwin(deeper)
		if want := expectOne(fileT, tk); want != nil {
			body := shiftBody(h, "  ")
			add(f, "indent_twin_bare", fileT, f.head+"@@ @@\n"+strings.Join(body[1:], "\n")+"\n", nil, tk)
			add(f, "indent_twin_numbered", fileT, f.head+strings.Join(body, "\n")+"\n", want, tk)
		}
		if v := oneCtxDeeper(h, unit); v != nil {
			add(f, "indent_one_ctx", fileT, withHunk(f, tk, v), &newT, tk)
		}
		fileD, newD := withTwin(old)
		add(f, "numbers_twin_exact", fileD, f.head+noSpace(hs), &newD, tk)
		add(f, "numbers_twin_off", fileD, single(tk, offNumbers(noSpaceHunk(h), 2)), nil, tk)
		if other, changed := otherIndents(old); changed {
			fileW, newW := withTwin(other)
			add(f, "ws_twin_exact", fileW, f.head+bareHeaders(hs), &newW, tk)
		}
	}
	if len(hs) >= 2 {
		k := len(hs) / 2
		rest := append(append([][]string(nil), hs[:k]...), hs[k+1:]...)
		if res, err := strictApply(f.head+joinAll(rest), patch.MapFS{f.path: f.old}, f.path, false); err == nil {
			want := string(res[0].Content)
			add(f, "hunk_dropped", f.old, f.head+noSpace(rest), &want, k)
		}
		rev := make([][]string, len(hs))
		for i, h := range hs {
			rev[len(hs)-1-i] = h
		}
		add(f, "hunks_shuffled_bare", f.old, f.head+bareHeaders(rev), &newCode, 0)
		add(f, "dup_hunk", f.old, f.head+noSpace(append(append(append([][]string(nil), hs[:k+1]...), hs[k]), hs[k+1:]...)), &newCode, k)
		// Two neighbouring hunks as one, with "..." for the lines between.
		a, b := hs[k-1], hs[k]
		merged := append(append(append([]string{"@@ @@"}, a[1:]...), " ..."), b[1:]...)
		add(f, "elision_merge", f.old, joinHunks(f.head, without(hs, k), k-1, merged), &newCode, k-1)
		if sb := stale(b); sb != nil {
			ms := append(append(append([]string{"@@ @@"}, a[1:]...), " ..."), sb[1:]...)
			add(f, "elision_merge_stale", f.old, joinHunks(f.head, without(hs, k), k-1, ms), nil, k-1)
		}
	}
	last := len(hs) - 1
	lines, _ := patch.SplitLines(f.old)
	if v := truncate(hs[last]); v != nil && !eofHunk(hs[last], len(lines)) {
		add(f, "truncated_last", f.old, withHunk(f, last, v), nil, last)
	}
	for k, h := range hs {
		if !hasRemoved(h) || !addsSignificant(h) {
			continue
		}
		ns := newSide(h)
		fileN := f.old + "\n" + strings.Join(ns, "\n") + "\n"
		if want := expectOne(fileN, k); want != nil {
			add(f, "already_elsewhere", fileN, single(k, noSpaceHunk(h)), want, k)
			if v := dropBeside(h); v != nil {
				add(f, "already_elsewhere_ctx_lost", fileN, single(k, v), want, k)
			}
		}
		add(f, "already_elsewhere_stale", fileN, single(k, stale(h)), nil, k)
		break
	}
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	if !strings.Contains(f.old, "\r") && !strings.Contains(f.new, "\r") {
		oc, nc := crlf(f.old), crlf(f.new)
		add(f, "crlf_lf_patch", oc, f.head+noSpace(hs), &nc, 0)
		add(f, "crlf_stale", oc, withHunk(f, 0, noSpaceHunk(stale(hs[0]))), nil, 0)
	}
	{
		oe, ne := strings.TrimSuffix(f.old, "\n"), strings.TrimSuffix(f.new, "\n")
		fp := patch.Make(f.path, f.path, oe, ne, patch.DefaultMakeOptions())
		if text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff); err == nil {
			var keep []string
			for _, l := range strings.Split(text, "\n") {
				if !strings.HasPrefix(l, `\ `) {
					keep = append(keep, l)
				}
			}
			head, ehs := udiffHunks(strings.Join(keep, "\n"))
			if len(ehs) > 0 {
				add(f, "no_eol", oe, head+noSpace(ehs), &ne, 0)
				add(f, "no_eol_stale", oe, joinHunks(head, ehs, 0, noSpaceHunk(stale(ehs[0]))), nil, 0)
			}
		}
	}
	if len(hs) >= 2 {
		// The first hunk already applied, the rest not.
		if res, err := strictApply(single(0, hs[0]), patch.MapFS{f.path: f.old}, f.path, false); err == nil {
			add(f, "half_applied", string(res[0].Content), f.head+noSpace(hs), &newCode, 0)
		}
	}
	if v := truncateMid(hs[last]); v != nil && !eofHunk(hs[last], len(lines)) {
		add(f, "truncated_mid", f.old, withHunk(f, last, v), nil, last)
	}
	for k, h := range hs {
		if v := dropTrailingCtx(h); v != nil && !eofHunk(h, len(lines)) {
			add(f, "trailing_ctx_lost", f.old, withHunk(f, k, v), &newCode, k)
			break
		}
	}
	for k, h := range hs {
		if v, ok := dropMidCtx(h); ok {
			add(f, "mid_ctx_lost", f.old, withHunk(f, k, v), &newCode, k)
			break
		}
	}
	for k, h := range hs {
		if v, at := dropMidCtxBesideAdded(h); v != nil {
			// Every reading: the left-out line at each place among the
			// added lines next to it where a hunk of git's could have it.
			// One file for all of them, or refused.
			var want *string
			for _, r := range besideReadings(v, at, h[at], len(lines)) {
				res, err := strictApply(withHunk(f, k, r), patch.MapFS{f.path: f.old}, f.path, false)
				if err != nil {
					want = nil
					break
				}
				got := string(res[0].Content)
				if want == nil {
					want = &got
				} else if *want != got {
					want = nil
					break
				}
			}
			if want != nil && *want != newCode {
				break // a reading git applies apart from the commit: no case
			}
			add(f, "mid_ctx_lost_beside_added", f.old, withHunk(f, k, v), want, k)
			break
		}
	}
	for k, h := range hs {
		if v := dropRemovedMid(h); v != nil {
			add(f, "drop_removed_mid", f.old, withHunk(f, k, v), nil, k)
			break
		}
	}
	for k, h := range hs {
		if v := dropRemovedEdge(h); v != nil {
			add(f, "drop_removed_edge", f.old, withHunk(f, k, v), nil, k)
			break
		}
	}
	for k, h := range hs {
		if v := alterMidContext(h); v != nil {
			add(f, "mid_ctx_altered", f.old, withHunk(f, k, v), &newCode, k)
			if sv := stale(v); sv != nil {
				add(f, "mid_ctx_altered_stale", f.old, withHunk(f, k, sv), nil, k)
			}
			break
		}
	}
	if strings.HasSuffix(f.path, ".py") {
		for k, h := range hs {
			if v := shallower(h, 4); v != nil {
				add(f, "indent_shift_py", f.old, withHunk(f, k, v), &newCode, k)
				break
			}
		}
	}
}

func usesTabs(s string) bool {
	tabs, spaces := 0, 0
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "\t"):
			tabs++
		case strings.HasPrefix(l, " "):
			spaces++
		}
	}
	return tabs > spaces
}

// otherIndents returns ls with their indentation written the other way
// (tabs for spaces, spaces for tabs), and whether any line changed.
func otherIndents(ls []string) ([]string, bool) {
	other := make([]string, len(ls))
	changed := false
	for i, l := range ls {
		other[i] = otherIndent(l)
		changed = changed || other[i] != l
	}
	return other, changed
}

// twinHunk returns the first hunk whose old side says enough to anchor a
// twin (three significant lines), -1 if none.
func twinHunk(hs [][]string) int {
	for k, h := range hs {
		if signifOld(h) >= 3 {
			return k
		}
	}
	return -1
}

// oldSide returns the texts of h's context and removed lines.
func oldSide(h []string) []string {
	var out []string
	for _, l := range h[1:] {
		if !strings.HasPrefix(l, "+") {
			out = append(out, l[min(1, len(l)):])
		}
	}
	return out
}

// newSide returns the texts of h's context and added lines.
func newSide(h []string) []string {
	var out []string
	for _, l := range h[1:] {
		if !strings.HasPrefix(l, "-") {
			out = append(out, l[min(1, len(l)):])
		}
	}
	return out
}

func signifOld(h []string) int {
	n := 0
	for _, l := range oldSide(h) {
		if len(strings.Fields(l)) > 0 && len(strings.TrimSpace(l)) > 6 {
			n++
		}
	}
	return n
}

func hasRemoved(h []string) bool {
	for _, l := range h[1:] {
		if strings.HasPrefix(l, "-") {
			return true
		}
	}
	return false
}

func addsSignificant(h []string) bool {
	for _, l := range h[1:] {
		if strings.HasPrefix(l, "+") && len(strings.TrimSpace(l[1:])) > 6 {
			return true
		}
	}
	return false
}

// shiftBody writes every non-blank body line of h with prefix after its
// marker.
func shiftBody(h []string, prefix string) []string {
	out := []string{h[0]}
	for _, l := range h[1:] {
		if len(l) > 1 && strings.TrimSpace(l[1:]) != "" {
			l = l[:1] + prefix + l[1:]
		}
		out = append(out, l)
	}
	return out
}

// oneCtxDeeper indents the first significant context line of h one unit
// deeper.
func oneCtxDeeper(h []string, unit string) []string {
	for i, l := range h[1:] {
		if strings.HasPrefix(l, " ") && len(strings.TrimSpace(l)) > 6 {
			v := append([]string(nil), h...)
			v[i+1] = " " + unit + l[1:]
			return v
		}
	}
	return nil
}

func noSpaceHunk(h []string) []string {
	if h == nil {
		return nil
	}
	v := append([]string(nil), h...)
	for i, l := range v[1:] {
		if strings.HasPrefix(l, " ") {
			v[i+1] = l[1:]
		}
	}
	return v
}

// offNumbers moves h's header d lines down.
func offNumbers(h []string, d int) []string {
	var a, b, c, e int
	if _, err := fmt.Sscanf(h[0], "@@ -%d,%d +%d,%d @@", &a, &b, &c, &e); err != nil {
		return nil
	}
	v := append([]string(nil), h...)
	v[0] = fmt.Sprintf("@@ -%d,%d +%d,%d @@", a+d, b, c+d, e)
	return v
}

// otherIndent writes a line's indentation the other way: four spaces as a
// tab, a tab as four spaces.
func otherIndent(l string) string {
	ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	if ws == "" {
		return l
	}
	var nw string
	if strings.Contains(ws, "\t") {
		nw = strings.ReplaceAll(ws, "\t", "    ")
	} else {
		nw = strings.Repeat("\t", len(ws)/4) + strings.Repeat(" ", len(ws)%4)
	}
	return nw + l[len(ws):]
}

func without(hs [][]string, k int) [][]string {
	return append(append([][]string(nil), hs[:k]...), hs[k+1:]...)
}

// truncate cuts h after the first line of its first change of at least
// three lines; nil when it has none.
func truncate(h []string) []string {
	for i := 1; i < len(h); i++ {
		if strings.HasPrefix(h[i], " ") || h[i] == "" {
			continue
		}
		j := i
		for j < len(h) && (strings.HasPrefix(h[j], "-") || strings.HasPrefix(h[j], "+")) {
			j++
		}
		if j-i >= 3 && i > 1 {
			return append([]string(nil), h[:i+1]...)
		}
		i = j
	}
	return nil
}

// alterMidContext changes a significant context line that has a change on
// each side of it in h.
func alterMidContext(h []string) []string {
	first, last := -1, -1
	for i, l := range h[1:] {
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			if first < 0 {
				first = i + 1
			}
			last = i + 1
		}
	}
	for i := first + 1; i < last; i++ {
		if strings.HasPrefix(h[i], " ") && len(strings.TrimSpace(h[i])) > 6 {
			v := append([]string(nil), h...)
			v[i] = h[i] + " misremembered"
			return v
		}
	}
	return nil
}

// shallower writes h n columns shallower, when every non-blank line has n
// leading spaces.
func shallower(h []string, n int) []string {
	pad := strings.Repeat(" ", n)
	v := []string{h[0]}
	for _, l := range h[1:] {
		if len(l) <= 1 || strings.TrimSpace(l[1:]) == "" {
			v = append(v, l)
			continue
		}
		if !strings.HasPrefix(l[1:], pad) {
			return nil
		}
		v = append(v, l[:1]+l[1+n:])
	}
	return v
}

// dropRemovedEdge leaves out the first of a run of at least two removed
// lines that follows the hunk's leading context: the line it left out may
// be context it lost or a removal it forgot, and only a leading run as
// long as the patch's context width says which (see removalGap).
func dropRemovedEdge(h []string) []string {
	for i := 2; i+1 < len(h); i++ {
		if !strings.HasPrefix(h[i-1], " ") {
			return nil // only after the hunk's leading context
		}
		if strings.HasPrefix(h[i], "-") && strings.HasPrefix(h[i+1], "-") && len(strings.TrimSpace(h[i])) > 6 {
			return append(append([]string(nil), h[:i]...), h[i+1:]...)
		}
	}
	return nil
}

// changeRuns returns the [start, end) indexes in h of its runs of removed
// and added lines.
func changeRuns(h []string) [][2]int {
	var out [][2]int
	for i := 1; i < len(h); i++ {
		if !strings.HasPrefix(h[i], "-") && !strings.HasPrefix(h[i], "+") {
			continue
		}
		j := i
		for j < len(h) && (strings.HasPrefix(h[j], "-") || strings.HasPrefix(h[j], "+")) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// truncateMid cuts h after the first context line between its first two
// changes; nil when it has one change only.
func truncateMid(h []string) []string {
	rs := changeRuns(h)
	if len(rs) < 2 || rs[0][0] < 2 {
		return nil
	}
	return append([]string(nil), h[:rs[0][1]+1]...)
}

// dropTrailingCtx leaves out the last line of h, when it is context after
// a full run of at least three context lines after the last change.
func dropTrailingCtx(h []string) []string {
	rs := changeRuns(h)
	if len(rs) == 0 || len(h)-rs[len(rs)-1][1] < 3 || !strings.HasPrefix(h[len(h)-1], " ") {
		return nil
	}
	return append([]string(nil), h[:len(h)-1]...)
}

// dropMidCtx leaves out the last context line of a run between two
// changes where the second starts with a removed line: the twin of
// dropRemovedMid, the left-out line is context and the counts say so. (A
// line left out right next to added lines is not made: which side of them
// it stood on is a known limit, see docs/repair.md.)
func dropMidCtx(h []string) ([]string, bool) {
	rs := changeRuns(h)
	for _, r := range rs[min(1, len(rs)):] {
		i := r[0] - 1
		if strings.HasPrefix(h[r[0]], "-") && strings.HasPrefix(h[i], " ") && strings.HasPrefix(h[i-1], " ") && len(strings.TrimSpace(h[i])) > 6 {
			return append(append([]string(nil), h[:i]...), h[i+1:]...), true
		}
	}
	return nil, false
}

// dropRemovedMid leaves out the first removed line of a change that
// follows a run of context between two changes, when the change removes
// at least two lines.
func dropRemovedMid(h []string) []string {
	rs := changeRuns(h)
	for _, r := range rs[min(1, len(rs)):] {
		if r[1]-r[0] >= 2 && strings.HasPrefix(h[r[0]], "-") && strings.HasPrefix(h[r[0]+1], "-") && len(strings.TrimSpace(h[r[0]])) > 6 {
			return append(append([]string(nil), h[:r[0]]...), h[r[0]+1:]...)
		}
	}
	return nil
}

// dropMidCtxBesideAdded leaves out the first significant context line
// between the first two changes of h, when an added line stands right
// before or after it: the line may have stood on either side of the added
// lines next to it, or among them. It returns the hunk and the index the
// line had; nil when h has no such line.
func dropMidCtxBesideAdded(h []string) ([]string, int) {
	rs := changeRuns(h)
	if len(rs) < 2 {
		return nil, 0
	}
	for i := rs[0][1]; i < rs[1][0]; i++ {
		if len(strings.TrimSpace(h[i])) <= 6 {
			continue
		}
		if strings.HasPrefix(h[i-1], "+") || strings.HasPrefix(h[i+1], "+") {
			return append(append([]string(nil), h[:i]...), h[i+1:]...), i
		}
		return nil, 0 // the first significant one is not beside added lines
	}
	return nil, 0
}

// besideReadings returns v with the context line x put back at each place
// of the run of added lines around index at, the readings of a hunk that
// lost x there, except those git would not write: some width w, no less
// than either edge run of v, must give both edge runs of the reading
// exactly w lines, fewer only at the start or the end of the file (n
// lines).
func besideReadings(v []string, at int, x string, n int) [][]string {
	lo, hi := at, at
	for lo > 1 && strings.HasPrefix(v[lo-1], "+") {
		lo--
	}
	for hi < len(v) && strings.HasPrefix(v[hi], "+") {
		hi++
	}
	var out [][]string
	for i := lo; i <= hi; i++ {
		r := append(append(append([]string(nil), v[:i]...), x), v[i:]...)
		if gitShaped(r, edgeRuns(v), n) {
			out = append(out, r)
		}
	}
	return out
}

// edgeRuns returns the longer of the leading and trailing context runs of
// the hunk h (header first).
func edgeRuns(h []string) int {
	lead, trail := 0, 0
	for lead+1 < len(h) && strings.HasPrefix(h[lead+1], " ") {
		lead++
	}
	for trail+1 < len(h) && strings.HasPrefix(h[len(h)-1-trail], " ") {
		trail++
	}
	return max(lead, trail)
}

// gitShaped reports whether some context width w >= min could have made
// the hunk r of a file of n lines: both edge runs w lines, fewer only at
// the start or the end of the file.
func gitShaped(r []string, min, n int) bool {
	var start, count int
	if _, err := fmt.Sscanf(r[0], "@@ -%d,%d", &start, &count); err != nil {
		return true
	}
	lead, trail := 0, 0
	for lead+1 < len(r) && strings.HasPrefix(r[lead+1], " ") {
		lead++
	}
	for trail+1 < len(r) && strings.HasPrefix(r[len(r)-1-trail], " ") {
		trail++
	}
	for w := min; w <= 50; w++ {
		if (lead == w || lead < w && start == 1) && (trail == w || trail < w && start+count-1 == n) {
			return true
		}
	}
	return false
}

// onceFamilies makes the apply-once families (issue 33) from one commit's
// file. They are kept where git apply would apply them again (addAny):
// that is what they test.
//
//   - applied_twice, applied_twice_u0, applied_twice_u1: git's diff, and
//     the commit's diff at 0 and 1 lines of context, applied to the new
//     file: nothing to do (expected: the new file, unchanged).
//   - reversed: git's diff reversed, applied to the new file (expected:
//     the old one); reversed_twice: applied to the old one.
//   - echo_ctx_altered (null): a hunk that only adds blank lines or lines
//     equal to the hunk line next to them, with a context line
//     misremembered: the added lines may stand on either side of their
//     twin, so the hunk is placed only where its context fits exactly.
//   - applied_twice_little: git's diff of a file with a hunk whose added
//     lines say little (each has fewer than two letters or digits, or is
//     a line the hunk removes: a brace, a blank line, a moved line),
//     applied to the new file: nothing to do. little_old_elsewhere
//     (null): the new file with that hunk's old side appended after a
//     blank line: its new side is at its place, and the lines it removes
//     with their context are in the file again, where it may be meant.
//   - applied_twice_short: one hunk of the commit alone, the file only
//     its lines (the hunk's new side is the whole file, "@@ -1,N +1,M
//     @@"), applied to the short new file: nothing to do.
func onceFamilies(f fileDiff, add addFunc) {
	newCode, oldCode := f.new, f.old
	text := f.head + joinAll(f.hunks)
	add(f, "applied_twice", newCode, text, &newCode, 0)
	for _, u := range []int{0, 1} {
		fp := patch.Make(f.path, f.path, f.old, f.new, patch.MakeOptions{Context: u})
		if s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff); err == nil {
			add(f, fmt.Sprintf("applied_twice_u%d", u), newCode, s, &newCode, 0)
		}
	}
	if p, err := patch.Parse(text, patch.UDiff, patch.ParseOptions{Strip: 1}); err == nil && len(p.Files) == 1 {
		p.Files[0] = p.Files[0].Reverse()
		if s, err := patch.Print(p, patch.UDiff); err == nil {
			add(f, "reversed", newCode, s, &oldCode, 0)
			add(f, "reversed_twice", oldCode, s, &oldCode, 0)
		}
	}
	for k, h := range f.hunks {
		if saysLittle(h) {
			add(f, "applied_twice_little", newCode, text, &newCode, k)
			if old := sideOf(h, '-'); strings.HasSuffix(newCode, "\n") {
				add(f, "little_old_elsewhere", newCode+"\n"+old, text, nil, k)
			}
		}
		if !slices.ContainsFunc(h, func(l string) bool { return strings.HasPrefix(l, "\\") }) {
			o, n := sideOf(h, '-'), sideOf(h, '+')
			if o != "" && n != "" {
				short := fmt.Sprintf("%s@@ -1,%d +1,%d @@\n%s\n", f.head, strings.Count(o, "\n"), strings.Count(n, "\n"), strings.Join(h[1:], "\n"))
				add(f, "applied_twice_short", n, short, &n, k)
			}
		}
		if !echoHunk(h) {
			continue
		}
		for i := 1; i < len(h); i++ {
			if strings.HasPrefix(h[i], " ") && strings.TrimSpace(h[i]) != "" {
				v := append([]string(nil), h...)
				v[i] = " " + strings.TrimRight(h[i][1:], " ") + " // was"
				add(f, "echo_ctx_altered", oldCode, withHunk(f, k, v), nil, k)
				break
			}
		}
	}
}

// echoHunk reports whether a hunk only adds lines, and they are blank or
// the first or last of them equals the hunk line next to it.
func echoHunk(h []string) bool {
	first, last := -1, -1
	for i, l := range h[1:] {
		switch {
		case strings.HasPrefix(l, "-"):
			return false
		case strings.HasPrefix(l, "+"):
			if first < 0 {
				first = i + 1
			}
			last = i + 1
		}
	}
	if first < 0 {
		return false
	}
	blank := true
	for _, l := range h[first : last+1] {
		blank = blank && strings.TrimSpace(l[1:]) == ""
	}
	same := func(a, b string) bool { return strings.TrimRight(a[1:], " \t") == strings.TrimRight(b[1:], " \t") }
	return blank || first > 1 && same(h[first-1], h[first]) || last+1 < len(h) && same(h[last+1], h[last])
}

// saysLittle reports whether a hunk removes lines and adds lines, and
// each added line has fewer than two letters or digits or is one of the
// lines it removes (but for trailing whitespace).
func saysLittle(h []string) bool {
	removed := map[string]bool{}
	added := false
	for _, l := range h[1:] {
		if strings.HasPrefix(l, "-") {
			removed[strings.TrimRight(l[1:], " \t")] = true
		}
	}
	for _, l := range h[1:] {
		if !strings.HasPrefix(l, "+") {
			continue
		}
		added = true
		n := 0
		for _, r := range l[1:] {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				n++
			}
		}
		if n >= 2 && !removed[strings.TrimRight(l[1:], " \t")] {
			return false
		}
	}
	return added && len(removed) > 0
}

// sideOf returns a hunk's old side (side '-') or new side ('+'): its
// context lines and those lines, each ending in a newline.
func sideOf(h []string, side byte) string {
	var b strings.Builder
	for _, l := range h[1:] {
		if l == "" || l[0] == ' ' || l[0] == side {
			if l != "" {
				l = l[1:]
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
