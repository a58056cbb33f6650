package repair_test

// The generator of the red-team corpus for the formats other than plain
// unified diffs (search-replace, V4A, udiff-h, udiff-l): each case is a real
// commit of diffxyz-dev, its edit written in one format and damaged the way
// models damage it. A case's expected content is the one result every
// reading of the damaged edit gives, or null when two readings give
// different files (the applier must refuse).

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// change replaces the old lines [s, e) by add.
type change struct {
	s, e int
	add  []string
}

// changes returns the commit's changes, hunks of a diff without context.
func changes(old, neu string) []change {
	fp := patch.Make("f", "f", old, neu, patch.MakeOptions{Context: 0})
	var out []change
	for _, h := range fp.Hunks {
		s := h.OldStart - 1
		if h.OldLines == 0 {
			s = h.OldStart // an insertion after line OldStart
		}
		out = append(out, change{s: s, e: s + h.OldLines, add: h.New()})
	}
	return out
}

// splitLF splits s into lines without their "\n".
func splitLF(s string) []string {
	ls, _ := patch.SplitLines(s)
	return ls
}

// joinLF joins lines with "\n", ending with one when eol.
func joinLF(ls []string, eol bool) string { return patch.JoinLines(ls, eol) }

// applyAt applies cs (sorted, disjoint) to ls.
func applyAt(ls []string, cs ...change) []string {
	out := []string{}
	at := 0
	for _, c := range cs {
		out = append(out, ls[at:c.s]...)
		out = append(out, c.add...)
		at = c.e
	}
	return append(out, ls[at:]...)
}

// fits lists the positions where win occurs in ls, lines compared after
// norm.
func fits(ls, win []string, norm func(string) string) []int {
	var out []int
	if len(win) == 0 {
		return nil
	}
	for p := 0; p+len(win) <= len(ls); p++ {
		ok := true
		for i, w := range win {
			if norm(ls[p+i]) != norm(w) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

func same(s string) string { return s }

// wsNorm reads a line with every whitespace run as one space, none at the
// ends.
func wsNorm(s string) string { return strings.Join(strings.Fields(s), " ") }

// block is one located edit: the file lines [lo, hi) are replaced by neu.
// Its old side is ls[lo:hi].
type block struct {
	lo, hi int
	neu    []string
}

func (b block) old(ls []string) []string { return ls[b.lo:b.hi] }

// widen returns change c with a lines of context before and b after.
func widen(ls []string, c change, a, b int) (block, bool) {
	if c.s-a < 0 || c.e+b > len(ls) {
		return block{}, false
	}
	neu := append(append(slices.Clone(ls[c.s-a:c.s]), c.add...), ls[c.e:c.e+b]...)
	return block{lo: c.s - a, hi: c.e + b, neu: neu}, true
}

// resultAt is the file with block bl's old side replaced at position p.
func resultAt(ls []string, bl block, p int) []string {
	return applyAt(ls, change{s: p, e: p + bl.hi - bl.lo, add: bl.neu})
}

// readings returns the distinct results of placing bl at each of ps.
func readings(ls []string, bl block, ps []int) [][]string {
	var out [][]string
	for _, p := range ps {
		r := resultAt(ls, bl, p)
		if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, r) }) {
			out = append(out, r)
		}
	}
	return out
}

// uniqueBlock widens c by the least context, alternately after and before,
// with which its old side fits once; from (a, b).
func uniqueBlock(ls []string, c change, a, b int) (block, bool) {
	for step := 0; step < 12; step++ {
		bl, ok := widen(ls, c, a, b)
		if ok && len(bl.old(ls)) > 0 && len(fits(ls, bl.old(ls), same)) == 1 {
			return bl, true
		}
		if step%2 == 0 && c.e+b < len(ls) {
			b++
		} else if c.s-a > 0 {
			a++
		} else if c.e+b < len(ls) {
			b++
		} else {
			return block{}, false
		}
	}
	return block{}, false
}

// significant reports a line with some code on it.
func significantLine(s string) bool {
	t := strings.TrimSpace(s)
	return len(t) > 3 && strings.ContainsFunc(t, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
}

func anySignificant(ls []string) bool { return slices.ContainsFunc(ls, significantLine) }

// Printers of located blocks, one file, in each format.

func srText(path string, ls []string, bls ...block) string {
	var b strings.Builder
	for _, bl := range bls {
		b.WriteString(path + "\n<<<<<<< SEARCH\n")
		for _, l := range bl.old(ls) {
			b.WriteString(l + "\n")
		}
		b.WriteString("=======\n")
		for _, l := range bl.neu {
			b.WriteString(l + "\n")
		}
		b.WriteString(">>>>>>> REPLACE\n")
	}
	return b.String()
}

// hunkLines is the diff of a block's old and new side, as hunk lines.
func hunkLines(ls []string, bl block) []patch.Line {
	fp := patch.Make("f", "f", joinLF(bl.old(ls), true), joinLF(bl.neu, true), patch.MakeOptions{Context: 1 << 20})
	if len(fp.Hunks) == 0 {
		return nil
	}
	return fp.Hunks[0].Lines
}

func bodyText(b *strings.Builder, ls []string, bl block) {
	for _, l := range hunkLines(ls, bl) {
		b.WriteString(string(l.Kind) + l.Text + "\n")
	}
}

func v4aText(path string, ls []string, anchor string, bls ...block) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: " + path + "\n")
	for _, bl := range bls {
		b.WriteString("@@")
		if anchor != "" {
			b.WriteString(" " + anchor)
		}
		b.WriteString("\n")
		bodyText(&b, ls, bl)
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

func udiffHText(path string, ls []string, bls ...block) string {
	var b strings.Builder
	b.WriteString("--- a/" + path + "\n+++ b/" + path + "\n")
	for _, bl := range bls {
		b.WriteString("@@ ... @@\n")
		bodyText(&b, ls, bl)
	}
	return b.String()
}

func udiffLText(path string, ls []string, start int, bls ...block) string {
	var b strings.Builder
	b.WriteString("--- a/" + path + "\n+++ b/" + path + "\n")
	for _, bl := range bls {
		s := start
		if s < 0 {
			s = bl.lo + 1
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", s, bl.hi-bl.lo, s, len(bl.neu))
		for _, l := range hunkLines(ls, bl) {
			w := map[patch.LineKind]string{patch.LineContext: "CON", patch.LineDelete: "DEL", patch.LineInsert: "ADD"}[l.Kind]
			b.WriteString(w + " " + l.Text + "\n")
		}
	}
	return b.String()
}

// answerPerFamily caps the answer families: what they test is the
// reading of the answer's text, the same in every commit.
const answerPerFamily = 20

// answerFamilies makes the families of answers that hold an edit the
// answer does not mean (must refuse, expected null), each beside the
// answer that looks like it and means its edit (expected: the new
// content), for each format's printed edit p:
//
//   - *_doc_example: p as a ```diff example in the text of a README the
//     answer shows whole in a ````markdown fence, named above it.
//     *_md_wrapped: p in a ```diff fence inside a ````markdown fence
//     with a heading and a sentence, the whole answer (nested-fence).
//   - *_unlabelled_sample: p in a string of a Python file shown in an
//     unlabelled fence. *_unlabelled: p alone in an unlabelled fence.
//   - *_heredoc_file (not sr): p in a heredoc the shell saves as a test
//     fixture, which nothing applies. *_heredoc_applied: saved to a file
//     that the next line applies.
//   - v4a_json_fixture: the envelope in a JSON test fixture beside its
//     expected output. v4a_json_call: in an apply_patch tool call.
//   - *_retracted: an edit of the file (a line added at its end), then
//     "Oops, the above won't compile. Use this instead:" and p: the
//     first is taken back. *_retracted_also: the same two edits, the
//     prose between them adding ("We also need the fix itself:"); both
//     apply where the two edits do not touch the same lines (the file's
//     last 4 lines untouched by p), and the expected content is p's with
//     the line added.
//   - *_alternative: the same two edits, the prose between them offering
//     the second as an alternative ("A better fix:", "Or, simpler:",
//     "Alternatively, ..."). *_alternative_chosen: and "Use the second
//     one." after them: p alone applies.
//   - *_retracted_other_format: the withdrawn edit, "Scratch that, this
//     is clearer:", and p in another format (search-replace, or udiff-h
//     for sr). *_retracted_alone: p, then "Scratch that — no change is
//     needed." and no edit. *_instead_sequential: the two edits of
//     *_retracted_also with "Now make `file` use the new code instead:"
//     between them, which points at no edit: both apply.
func answerFamilies(r testdata.Triple, printed map[patch.Format]string, newCode string, add func(fam, old, text string, want *string)) {
	short := map[patch.Format]string{patch.SearchReplace: "sr", patch.V4A: "v4a", patch.UDiffH: "udh", patch.UDiffL: "udl"}
	fence := func(f patch.Format, p string) string {
		if f == patch.SearchReplace {
			return r.Path + "\n```" + r.Lang + "\n" + strings.TrimPrefix(p, r.Path+"\n") + "```\n"
		}
		return "```diff\n" + p + "```\n"
	}
	// The withdrawn edit: a comment line added at the end of the file.
	tail := "// patchbench: withdrawn\n"
	if r.Lang == "python" {
		tail = "# patchbench: withdrawn\n"
	}
	oldLines := splitLF(r.OldCode)
	newLines := splitLF(newCode)
	untouchedEnd := len(oldLines) >= 8 && len(newLines) >= 8 && slices.Equal(oldLines[len(oldLines)-8:], newLines[len(newLines)-8:])
	withdrawn := patch.Make(r.Path, r.Path, r.OldCode, r.OldCode+tail, patch.MakeOptions{Context: 3, Unique: true})
	both := newCode + tail
	for _, f := range []patch.Format{patch.SearchReplace, patch.V4A, patch.UDiffH, patch.UDiffL} {
		p, ok := printed[f]
		if !ok {
			continue
		}
		fs := short[f]
		add(fs+"_doc_example", r.OldCode, "Here is the updated README.md:\n\n````markdown\n# Project\n\nTo make the change to `"+r.Path+"` by hand:\n\n"+fence(f, p)+"\nThen run the tests.\n````\n", nil)
		add(fs+"_md_wrapped", r.OldCode, "````markdown\n### The fix\n\n"+fence(f, p)+"\nNothing else changes.\n````\n", &newCode)
		add(fs+"_unlabelled_sample", r.OldCode, "Here is `tests/test_patch.py`:\n\n```\nfrom tool import apply\n\nPATCH = '''\\\n"+p+"'''\n\napply(PATCH)\n```\n", nil)
		if f != patch.SearchReplace { // a block needs its path line above the fence
			add(fs+"_unlabelled", r.OldCode, "The change:\n\n```\n"+p+"```\n", &newCode)
		}
		if f != patch.SearchReplace {
			apply := "git apply fix.patch"
			if f == patch.V4A {
				apply = "apply_patch < fix.patch"
			}
			add(fs+"_heredoc_file", r.OldCode, "Save it for the test:\n\n```bash\ncat > tests/fixtures/change.patch <<'EOF'\n"+p+"EOF\n```\n", nil)
			add(fs+"_heredoc_applied", r.OldCode, "```bash\ncat > fix.patch <<'EOF'\n"+p+"EOF\n"+apply+"\n```\n", &newCode)
		}
		if w, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{withdrawn}}, f); err == nil && untouchedEnd {
			add(fs+"_retracted", r.OldCode, fence(f, w)+"\nOops, the above won't compile. Use this instead:\n\n"+fence(f, p), nil)
			add(fs+"_retracted_also", r.OldCode, fence(f, w)+"\nWe also need the fix itself:\n\n"+fence(f, p), &both)
			// Alternatives, a retraction whose correction is in another
			// format or missing, and "instead" before a second change.
			alt := []string{"Alternatively, you can fix it in the code itself:", "A better fix:", "Or, simpler:"}[len(r.ID)%3]
			add(fs+"_alternative", r.OldCode, fence(f, w)+"\n"+alt+"\n\n"+fence(f, p), nil)
			add(fs+"_alternative_chosen", r.OldCode, fence(f, w)+"\n"+alt+"\n\n"+fence(f, p)+"\nUse the second one.\n", &newCode)
			g := patch.SearchReplace
			if f == patch.SearchReplace {
				g = patch.UDiffH
			}
			if q, ok := printed[g]; ok {
				add(fs+"_retracted_other_format", r.OldCode, fence(f, w)+"\nScratch that, this is clearer:\n\n"+fence(g, q), nil)
			}
			add(fs+"_retracted_alone", r.OldCode, fence(f, p)+"\nScratch that — no change is needed.\n", nil)
			add(fs+"_instead_sequential", r.OldCode, fence(f, w)+"\nNow make `"+path.Base(r.Path)+"` use the new code instead:\n\n"+fence(f, p), &both)
		}
	}
	if p, ok := printed[patch.V4A]; ok {
		b, _ := json.Marshal(p)
		q := string(b)
		add("v4a_json_fixture", r.OldCode, "Here is the new fixture `testdata/case.json`:\n\n```json\n{\n  \"name\": \"edit "+r.Path+"\",\n  \"patch\": "+q+",\n  \"expected\": \"ok\"\n}\n```\n", nil)
		add("v4a_json_call", r.OldCode, "```json\n{\n  \"name\": \"apply_patch\",\n  \"arguments\": {\"input\": "+q+"}\n}\n```\n", &newCode)
	}
}

// formatsCases makes the red-team cases from the dev commits; per caps the
// cases of each family.
func formatsCases(rows []testdata.Triple, per int) []applybench.Case {
	var out []applybench.Case
	n := map[string]int{}
	seen := map[string]int{}
	add := func(r testdata.Triple, fam, variant, old, text string, want *string) {
		if n[fam] >= per {
			return
		}
		n[fam]++
		id := fmt.Sprintf("%s/%s", r.ID, fam)
		if variant != "" {
			id += "/" + variant
		}
		if seen[id]++; seen[id] > 1 {
			id += fmt.Sprintf("/%d", seen[id])
		}
		out = append(out, applybench.Case{ID: id, Family: fam, Path: r.Path, Lang: r.Lang, OldCode: old, Patch: text, Expected: want})
	}
	str := func(ls []string) *string { s := joinLF(ls, true); return &s }
	// only returns the one result of rs, or nil.
	only := func(rs [][]string) *string {
		if len(rs) != 1 {
			return nil
		}
		return str(rs[0])
	}
	comment := func(lang string) string {
		if lang == "python" {
			return "  # checked"
		}
		return " // checked"
	}
	for _, r := range rows {
		if strings.Contains(r.OldCode, "\r") || !strings.HasSuffix(r.OldCode, "\n") || !strings.HasSuffix(r.NewCode, "\n") {
			continue
		}
		ls := splitLF(r.OldCode)
		cs := changes(r.OldCode, r.NewCode)
		fpU := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, patch.MakeOptions{Context: 3, Unique: true})
		fpN := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, patch.DefaultMakeOptions())
		newCode := r.NewCode
		printed := map[patch.Format]string{}
		for _, f := range []patch.Format{patch.SearchReplace, patch.V4A, patch.UDiffH} {
			if s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fpU}}, f); err == nil {
				printed[f] = s
			}
		}
		if s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fpN}}, patch.UDiffL); err == nil {
			printed[patch.UDiffL] = s
		}
		short := map[patch.Format]string{patch.SearchReplace: "sr", patch.V4A: "v4a", patch.UDiffH: "udh", patch.UDiffL: "udl"}
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		for _, f := range []patch.Format{patch.SearchReplace, patch.V4A, patch.UDiffH, patch.UDiffL} {
			p, ok := printed[f]
			if !ok {
				continue
			}
			fs := short[f]
			add(r, fs+"_clean", "", r.OldCode, p, &newCode)
			// CRLF file, the edit written with LF (as a model writes it) and
			// with CRLF.
			want := crlf(newCode)
			add(r, fs+"_crlf_file", "", crlf(r.OldCode), p, &want)
			add(r, fs+"_crlf_both", "", crlf(r.OldCode), crlf(p), &want)
			// Fences and prose around the edit.
			fence := "```diff\n" + p + "```\n"
			if f == patch.SearchReplace {
				fence = r.Path + "\n```" + r.Lang + "\n" + strings.TrimPrefix(p, r.Path+"\n") + "```\n"
			}
			add(r, fs+"_fenced", "", r.OldCode, "Here is the change to `"+r.Path+"`:\n\n"+fence+"\nThis keeps the old behaviour for callers that pass nothing.\n", &newCode)
			// No final newline in either version; the edit printed from
			// them, and without the "\ No newline" lines a model forgets.
			o1, n1 := strings.TrimSuffix(r.OldCode, "\n"), strings.TrimSuffix(newCode, "\n")
			fp1 := patch.Make(r.Path, r.Path, o1, n1, patch.MakeOptions{Context: 3, Unique: f != patch.UDiffL})
			if p1, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp1}}, f); err == nil {
				add(r, fs+"_noeol", "printed", o1, p1, &n1)
				if f == patch.SearchReplace || f == patch.V4A {
					stripped := strings.ReplaceAll(p1, "\\ No newline at end of file\n", "")
					if stripped != p1 {
						add(r, fs+"_noeol_unmarked", "", o1, stripped, &n1)
					}
				}
			}
		}
		answerFamilies(r, printed, newCode, func(fam, old, text string, want *string) {
			if n[fam] < min(per, answerPerFamily) {
				add(r, fam, "", old, text, want)
			}
		})
		shellFamilies(r, printed, newCode, func(fam, old, text string, want *string) {
			if n[fam] < min(per, shellPerFamily) {
				add(r, fam, "", old, text, want)
			}
		})
		// A mail of git format-patch ends with "-- " and git's version
		// after the diff: a signature, not the removal of a line "- ".
		for _, f := range []patch.Format{patch.UDiffH, patch.UDiffL} {
			fam := map[patch.Format]string{patch.UDiffH: "udh", patch.UDiffL: "udl"}[f] + "_mail_signature"
			if p, ok := printed[f]; ok && n[fam] < min(per, shellPerFamily) {
				add(r, fam, "", r.OldCode, p+"-- \n2.39.2\n\n", &newCode)
			}
		}
		// V4A's codex rules: Add of an existing file replaces it; an update
		// whose change is in the file already; a patch without its end.
		add(r, "v4a_add_existing", "", r.OldCode, "*** Begin Patch\n*** Add File: "+r.Path+"\n+"+strings.ReplaceAll(strings.TrimSuffix(newCode, "\n"), "\n", "\n+")+"\n*** End Patch\n", &newCode)
		if p, ok := printed[patch.V4A]; ok {
			add(r, "v4a_already_applied", "", newCode, p, &newCode)
			add(r, "v4a_no_end", "", r.OldCode, strings.TrimSuffix(p, "*** End Patch\n"), &newCode)
		}
		if p, ok := printed[patch.SearchReplace]; ok {
			add(r, "sr_already_applied", "", newCode, p, &newCode)
		}
		// Apply once (issue 33): the edit sent again to the file it made
		// changes nothing; the edit that undoes it, printed from the new
		// content to the old, restores the old file, and sent again
		// changes nothing.
		for _, f := range []patch.Format{patch.UDiffH, patch.UDiffL} {
			if p, ok := printed[f]; ok {
				add(r, short[f]+"_applied_twice", "", newCode, p, &newCode)
			}
		}
		oldCode := r.OldCode
		for _, f := range []patch.Format{patch.SearchReplace, patch.V4A, patch.UDiffH, patch.UDiffL} {
			fr := patch.Make(r.Path, r.Path, r.NewCode, r.OldCode, patch.MakeOptions{Context: 3, Unique: f != patch.UDiffL})
			if p, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fr}}, f); err == nil {
				add(r, short[f]+"_reversed", "", newCode, p, &oldCode)
				add(r, short[f]+"_reversed_twice", "", oldCode, p, &oldCode)
			}
		}

		// A blank line added after a closing line (a brace, a parenthesis),
		// the block's search text the three lines that end with it: where
		// it applied, the search text is in the file again, and a second
		// apply added another blank line (little_echo_twice: the file the
		// first apply made, the edit again; nothing to change).
		for i := 2; i+1 < len(ls); i++ {
			if significantLine(ls[i]) || strings.TrimSpace(ls[i]) == "" || strings.TrimSpace(ls[i+1]) == "" || !significantLine(ls[i-1]) {
				continue
			}
			bl := block{lo: i - 2, hi: i + 1, neu: append(slices.Clone(ls[i-2:i+1]), "")}
			if len(fits(ls, bl.old(ls), same)) != 1 {
				continue
			}
			once := str(resultAt(ls, bl, bl.lo))
			add(r, "sr_little_echo", "", r.OldCode, srText(r.Path, ls, bl), once)
			add(r, "v4a_little_echo", "", r.OldCode, v4aText(r.Path, ls, "", bl), once)
			add(r, "sr_little_echo_twice", "", *once, srText(r.Path, ls, bl), once)
			add(r, "v4a_little_echo_twice", "", *once, v4aText(r.Path, ls, "", bl), once)
			break
		}

		// Families built from each change of the commit.
		var uniq []block
		allUnique := true
		for _, c := range cs {
			// A deletion framed by context: with context on one side only,
			// a file that had the line twice and lost one copy fits it still.
			a, b := 0, 0
			if len(c.add) == 0 {
				a, b = 1, 1
			}
			bl, ok := uniqueBlock(ls, c, a, b)
			if !ok {
				allUnique = false
				break
			}
			uniq = append(uniq, bl)
		}
		if allUnique && len(uniq) >= 2 && !overlapping(uniq) {
			// Blocks in the reverse order.
			rev := slices.Clone(uniq)
			slices.Reverse(rev)
			add(r, "sr_wrong_order", "", r.OldCode, srText(r.Path, ls, rev...), &newCode)
			add(r, "udh_wrong_order", "", r.OldCode, udiffHText(r.Path, ls, rev...), &newCode)
			// The first change already made, the second not.
			part := joinLF(applyAt(ls, cs[0]), true)
			add(r, "sr_half_applied", "", part, srText(r.Path, ls, uniq...), &newCode)
			add(r, "v4a_half_applied", "", part, v4aText(r.Path, ls, "", uniq...), &newCode)
			add(r, "udh_half_applied", "", part, udiffHText(r.Path, ls, uniq...), &newCode)
		}
		for ci, c := range cs {
			// The least block that holds the change: its removed lines, or
			// the line before an insertion.
			a := 0
			if c.s == c.e {
				a = 1
			}
			bl, ok := widen(ls, c, a, 0)
			if !ok || len(bl.old(ls)) == 0 {
				continue
			}
			ps := fits(ls, bl.old(ls), same)
			if len(ps) >= 2 {
				rs := readings(ls, bl, ps)
				want := only(rs)
				add(r, "sr_dup_exact", "", r.OldCode, srText(r.Path, ls, bl), want)
				add(r, "v4a_ctx_twice", "", r.OldCode, v4aText(r.Path, ls, "", bl), want)
				add(r, "udh_ctx_twice", "", r.OldCode, udiffHText(r.Path, ls, bl), want)
				add(r, "udl_ctx_twice_bare", "", r.OldCode, strings.Replace(udiffLText(r.Path, ls, -1, bl), fmt.Sprintf("@@ -%d,%d +%d,%d @@", bl.lo+1, bl.hi-bl.lo, bl.lo+1, len(bl.neu)), "@@ @@", 1), want)
				// Line numbers that point at neither place.
				off := bl.lo + 1 + 7
				if !slices.ContainsFunc(ps, func(p int) bool { return p+1 == off || p+1 == off-14 }) {
					add(r, "udl_ctx_twice_badnum", "", r.OldCode, udiffLText(r.Path, ls, off, bl), want)
				}
				// Blocks in the wrong order, the ambiguous one first.
				if len(cs) >= 2 && ci == len(cs)-1 {
					if first, ok := uniqueBlock(ls, cs[0], 0, 0); ok && first.hi <= bl.lo {
						add(r, "sr_dup_wrong_order", "", r.OldCode, srText(r.Path, ls, bl, first), want)
						add(r, "v4a_ctx_twice_wrong_order", "", r.OldCode, v4aText(r.Path, ls, "", bl, first), want)
						add(r, "udh_ctx_twice_wrong_order", "", r.OldCode, udiffHText(r.Path, ls, bl, first), want)
					}
				}
				// With enough lines around it, one place.
				if u, ok := uniqueBlock(ls, c, a, 0); ok {
					w := str(resultAt(ls, u, u.lo))
					add(r, "sr_dup_decided", "", r.OldCode, srText(r.Path, ls, u), w)
					add(r, "v4a_ctx_decided", "", r.OldCode, v4aText(r.Path, ls, "", u), w)
					add(r, "udh_ctx_decided", "", r.OldCode, udiffHText(r.Path, ls, u), w)
				}
				// A V4A anchor: a significant line before the change that is in
				// the file twice.
				for k := bl.lo - 1; k >= 0 && k >= bl.lo-60; k-- {
					if !significantLine(ls[k]) {
						continue
					}
					as := fits(ls, ls[k:k+1], same)
					if len(as) < 2 {
						continue
					}
					// Each reading: the first fit after an anchor's place.
					var at []int
					for _, a := range as {
						for _, p := range ps {
							if p > a {
								if !slices.Contains(at, p) {
									at = append(at, p)
								}
								break
							}
						}
					}
					add(r, "v4a_anchor_twice", "", r.OldCode, v4aText(r.Path, ls, strings.TrimSpace(ls[k]), bl), only(readings(ls, bl, at)))
					break
				}
			}
			// An added line that is in the file elsewhere, then changed by a
			// second block: after the first block (Aider applies blocks in
			// turn) or where the file has it?
			if bl2, ok := uniqueBlock(ls, c, 0, 0); ok {
				for _, x := range c.add {
					if !significantLine(x) || strings.Contains(x, "\r") {
						continue
					}
					xs := fits(ls, []string{x}, same)
					if len(xs) != 1 {
						continue
					}
					second := "<<<<<<< SEARCH\n" + x + "\n=======\n" + x + comment(r.Lang) + "\n>>>>>>> REPLACE\n"
					add(r, "sr_replace_is_search", "", r.OldCode, srText(r.Path, ls, bl2)+second, nil)
					break
				}
			}
		}
		// Whitespace twins: a window of the file that fits once exactly and
		// at least twice with whitespace ignored.
		twins(r, ls, add, comment(r.Lang), str, only)
		// Empty SEARCH: creation, append, or the whole file again.
		if last := cs[len(cs)-1]; last.s == len(ls) && last.e == len(ls) && len(cs) == 1 {
			w := joinLF(append(slices.Clone(ls), last.add...), true)
			add(r, "sr_empty_search_append", "", r.OldCode, r.Path+"\n<<<<<<< SEARCH\n=======\n"+joinLF(last.add, true)+">>>>>>> REPLACE\n", &w)
		}
		add(r, "sr_empty_search_whole", "", r.OldCode, r.Path+"\n<<<<<<< SEARCH\n=======\n"+newCode+">>>>>>> REPLACE\n", nil)
	}
	return out
}

func overlapping(bls []block) bool {
	for i := 1; i < len(bls); i++ {
		if bls[i].lo < bls[i-1].hi {
			return true
		}
	}
	return false
}

// twins adds the whitespace families: a window W of two or three lines,
// one of them significant, that fits once as written and at least twice
// with whitespace ignored (in Python, most often a block at another
// depth). Its edit appends a comment to W's first significant line. Written
// exactly, one place; re-indented so that it fits nowhere exactly, every
// twin is a reading.
func twins(r testdata.Triple, ls []string, add func(testdata.Triple, string, string, string, string, *string), comment string, str func([]string) *string, only func([][]string) *string) {
	done := 0
	for w := 2; w <= 3 && done < 2; w++ {
		for p := 0; p+w <= len(ls) && done < 2; p++ {
			win := ls[p : p+w]
			if !anySignificant(win) || len(fits(ls, win, same)) != 1 {
				continue
			}
			ps := fits(ls, win, wsNorm)
			if len(ps) < 2 {
				continue
			}
			k := slices.IndexFunc(win, significantLine)
			neu := slices.Clone(win)
			neu[k] += comment
			bl := block{lo: p, hi: p + w, neu: neu}
			exact := str(resultAt(ls, bl, p))
			add(r, "sr_ws_twin_exact", "", r.OldCode, srText(r.Path, ls, bl), exact)
			add(r, "v4a_ws_twin_exact", "", r.OldCode, v4aText(r.Path, ls, "", bl), exact)
			add(r, "udh_ws_twin_exact", "", r.OldCode, udiffHText(r.Path, ls, bl), exact)
			// Re-indented: every line one level deeper (4 spaces), which fits
			// no twin exactly.
			deeper := func(xs []string) []string {
				out := make([]string, len(xs))
				for i, x := range xs {
					if strings.TrimSpace(x) != "" {
						x = "    " + x
					}
					out[i] = x
				}
				return out
			}
			dw, dn := deeper(win), deeper(neu)
			if len(fits(ls, dw, same)) > 0 {
				continue
			}
			// The readings: at each twin, the block shifted to its depth.
			var rs [][]string
			for _, q := range ps {
				tw := ls[q : q+w]
				if !sameShift(dw, tw) {
					continue // not a reading: its lines move by different depths
				}
				shifted := slices.Clone(tw)
				shifted[k] += comment
				res := applyAt(ls, change{s: q, e: q + w, add: shifted})
				if !slices.ContainsFunc(rs, func(o []string) bool { return slices.Equal(o, res) }) {
					rs = append(rs, res)
				}
			}
			fake := []string{}
			fake = append(fake, ls[:p]...)
			fake = append(fake, dw...)
			fake = append(fake, ls[p+w:]...)
			dbl := block{lo: p, hi: p + w, neu: dn}
			want := only(rs)
			family := "ws_twin_reindented"
			if r.Lang == "python" {
				family = "py_indent_twin"
			}
			add(r, "sr_"+family, "", r.OldCode, srText(r.Path, fake, dbl), want)
			add(r, "v4a_"+family, "", r.OldCode, v4aText(r.Path, fake, "", dbl), want)
			add(r, "udh_"+family, "", r.OldCode, udiffHText(r.Path, fake, dbl), want)
			done++
			p += w
		}
	}
}

// sameShift reports whether every non-blank line of b is indented by the
// same amount more (or less) than the same line of a, a tab counting 4.
func sameShift(a, b []string) bool {
	width := func(s string) int {
		n := 0
		for _, r := range s[:len(s)-len(strings.TrimLeft(s, " \t"))] {
			if r == '\t' {
				n += 4
			} else {
				n++
			}
		}
		return n
	}
	d, set := 0, false
	for i := range a {
		if strings.TrimSpace(a[i]) == "" {
			continue
		}
		k := width(a[i]) - width(b[i])
		if set && k != d {
			return false
		}
		d, set = k, true
	}
	return true
}
