package repair

import (
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// Indentation. A hunk placed by ignoring whitespace may be indented
// differently from its file: tabs written as spaces, or every line a few
// columns shallower. Its added lines must then move with it, or an `elif`
// written under its `if` lands one block out. And a hunk placed loosely
// must not put its added lines in another block than the one its author
// saw: indentation is the one sign of a block every language shares.

// shift is one consistent difference between a hunk's indentation and its
// file's: with tabs of tab columns, each file line is cols columns deeper
// than the hunk line matched with it.
type shift struct{ tab, cols int }

// indentPair is a matched old-side line: its entry, the hunk's readings
// of it and the file line's leading whitespace.
type indentPair struct {
	entry int
	hunk  []string
	file  string
}

// indentPairs lists the matched, non-blank old-side lines of a place.
func indentPairs(t *text, es []entry, p place) []indentPair {
	var pairs []indentPair
	for i, at := range p.at {
		if at < 0 || es[i].elision || strings.TrimSpace(t.lines[at]) == "" {
			continue
		}
		pairs = append(pairs, indentPair{i, es[i].raw, leading(t.lines[at])})
	}
	return pairs
}

// shifts returns every shift that one reading of each pair agrees on, for
// tabs of 4, 8 and 2 columns; with primary, only each line's most likely
// reading counts.
func shifts(pairs []indentPair, primary bool) []shift {
	var out []shift
	if len(pairs) == 0 {
		return nil
	}
	readings := func(pr indentPair) []string {
		if primary {
			return pr.hunk[:1]
		}
		return pr.hunk
	}
	for _, tab := range []int{4, 8, 2} {
		for _, h0 := range readings(pairs[0]) {
			s := shift{tab, width(pairs[0].file, tab) - width(leading(h0), tab)}
			ok := true
			for _, pr := range pairs[1:] {
				found := false
				for _, h := range readings(pr) {
					found = found || s.fits(h, pr.file)
				}
				if !found {
					ok = false
					break
				}
			}
			if ok && !hasShift(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// fits reports whether the hunk line h and the file indentation ws differ
// by s.
func (s shift) fits(h, ws string) bool {
	return width(ws, s.tab)-width(leading(h), s.tab) == s.cols
}

func hasShift(list []shift, s shift) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// indenter re-indents a placed hunk's added lines into the file's
// indentation.
type indenter struct {
	same  bool    // the file has the hunk's indentation: added lines stay as written
	opts  []shift // the shifts that explain the matched lines
	pairs []indentPair
	tabs  bool // the file indents with tabs, where the matched lines do not say
}

// newIndenter learns how the hunk's indentation maps to the file's at its
// place. It returns a reason when no single mapping explains the matched
// lines.
func newIndenter(t *text, pl *placed) (*indenter, string) {
	pairs := indentPairs(t, pl.es, pl.p)
	in := &indenter{same: true, pairs: pairs}
	for _, pr := range pairs {
		found := false
		for _, h := range pr.hunk {
			found = found || leading(h) == pr.file
		}
		in.same = in.same && found
	}
	if in.same {
		return in, ""
	}
	opts := shifts(pairs, true)
	if len(opts) == 0 {
		opts = shifts(pairs, false)
	}
	if len(opts) == 0 {
		return nil, "the hunk's indentation differs from the file's by different amounts on different lines: its added lines cannot be indented with certainty"
	}
	// A model that turned tabs into spaces (or back) kept every level:
	// when some tab width explains the lines without a shift, it is that.
	var conv []shift
	for _, s := range opts {
		if s.cols == 0 {
			conv = append(conv, s)
		}
	}
	if len(conv) > 0 {
		opts = conv
	}
	in.opts = opts
	in.tabs = fileUsesTabs(t)
	return in, ""
}

// fileUsesTabs tells whether most indented lines of the file start with a
// tab.
func fileUsesTabs(t *text) bool {
	tabs, spaces := 0, 0
	for _, l := range t.lines {
		switch {
		case strings.HasPrefix(l, "\t"):
			tabs++
		case strings.HasPrefix(l, " "):
			spaces++
		}
	}
	return tabs > spaces
}

// byDistance returns the pairs nearest first to the place between entries
// before and before+1, the earlier one first on a tie.
func (in *indenter) byDistance(before int) []indentPair {
	var out []indentPair
	lo := len(in.pairs) - 1
	for lo >= 0 && in.pairs[lo].entry > before {
		lo--
	}
	hi := lo + 1
	for lo >= 0 || hi < len(in.pairs) {
		if lo >= 0 && (hi >= len(in.pairs) || before-in.pairs[lo].entry <= in.pairs[hi].entry-before-1) {
			out = append(out, in.pairs[lo])
			lo--
		} else {
			out = append(out, in.pairs[hi])
			hi++
		}
	}
	return out
}

// indent returns the added line s, which follows the hunk's entry before,
// as the file would have it: with the file indentation of the nearest
// matched line that the hunk indented as s, else shifted as the hunk is,
// in the tabs or spaces of the nearest indented matched line. Every
// explaining shift must give the same line, or the result is uncertain.
func (in *indenter) indent(s string, before int) (string, string) {
	if in.same || strings.TrimSpace(s) == "" {
		return s, ""
	}
	ws := leading(s)
	near := in.byDistance(before)
	for _, pr := range near {
		for _, h := range pr.hunk {
			if leading(h) != ws {
				continue
			}
			for _, sh := range in.opts {
				if sh.fits(h, pr.file) {
					return pr.file + s[len(ws):], ""
				}
			}
		}
	}
	tabs := in.tabs
	for _, pr := range near {
		if pr.file != "" {
			tabs = pr.file[0] == '\t'
			break
		}
	}
	got := ""
	for k, sh := range in.opts {
		w := width(ws, sh.tab) + sh.cols
		if w < 0 {
			return "", fmt.Sprintf("the added line %q would start left of the first column once shifted by %d columns as the rest of the hunk is", strings.TrimSpace(s), sh.cols)
		}
		r := strings.Repeat(" ", w)
		if tabs {
			r = strings.Repeat("\t", w/sh.tab) + strings.Repeat(" ", w%sh.tab)
		}
		if k > 0 && r != got {
			return "", fmt.Sprintf("uncertain: the hunk is indented differently from the file, and its matched lines do not tell the file's tab width, so the indentation of the added line %q is unknown", strings.TrimSpace(s))
		}
		got = r
	}
	return got + s[len(ws):], ""
}

// looseInserts marks the added lines of a fuzzy place whose run of added
// lines is next to a dropped context line or to file lines the hunk left
// out, looking as far as the nearest significant matched line on each
// side: blank lines and braces alone do not pin a block.
func looseInserts(pl *placed) []bool {
	lines := pl.h.lines
	out := make([]bool, len(lines))
	if pl.p.tier != TierFuzzy {
		return out
	}
	entryOf := make([]int, len(lines)) // line index → entry index, -1 for added lines
	ei := 0
	for i, l := range lines {
		entryOf[i] = -1
		if l.kind != patch.LineInsert {
			entryOf[i] = ei
			ei++
		}
	}
	// walk visits the old-side lines from i by step up to the first
	// significant matched one; it reports a dropped line or a gap between
	// matched ones.
	walk := func(i, step int) (loose bool, edge int) {
		edge = -1
		last := -1
		for ; i >= 0 && i < len(lines); i += step {
			k := entryOf[i]
			if k < 0 {
				continue
			}
			e, at := &pl.es[k], pl.p.at[k]
			if e.elision {
				return false, -1
			}
			if at < 0 {
				return true, -1
			}
			if last >= 0 && (at-last)*step != 1 {
				return true, -1
			}
			if last < 0 {
				edge = at // the matched line nearest the run
			}
			last = at
			if e.signif {
				break
			}
		}
		return false, edge
	}
	for i := 0; i < len(lines); {
		if lines[i].kind != patch.LineInsert {
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].kind == patch.LineInsert {
			j++
		}
		lb, before := walk(i-1, -1)
		la, after := walk(j, 1)
		// File lines between the matched lines on either side of the run.
		gap := before >= 0 && after >= 0 && after-before > 1
		for k := i; k < j; k++ {
			out[k] = lb || la || gap
		}
		i = j
	}
	return out
}

// blockFit checks that added lines placed between the file lines prev and
// next (either "" at the ends of the file) stay in the block around them:
// they may not start deeper than prev unless prev opens a block, and next
// may not be deeper than the shallowest added line unless the last added
// line opens a block that next is in. It returns why they do not fit.
func blockFit(prev, next string, added []string, tab int) string {
	var code []string
	for _, l := range added {
		if !remark(l) {
			code = append(code, l)
		}
	}
	if len(code) == 0 {
		return ""
	}
	ind := func(s string) int { return width(leading(s), tab) }
	first, last := code[0], code[len(code)-1]
	base := ind(first)
	for _, l := range code {
		base = min(base, ind(l))
	}
	if prev != "" && ind(first) > ind(prev) && !opens(prev) && !continues(first) {
		return fmt.Sprintf("the added lines start at column %d, deeper than the file line before them (%q, column %d), which opens no block", ind(first), strings.TrimSpace(prev), ind(prev))
	}
	if next != "" && ind(next) > base && !(opens(last) && ind(next) > ind(last)) && !continues(next) {
		return fmt.Sprintf("the file line after the added lines (%q, column %d) is deeper than the added lines (column %d): it would fall into their block", strings.TrimSpace(next), ind(next), base)
	}
	return ""
}

// remark reports whether a line is blank, a comment or a preprocessor
// line: such lines say nothing about the block they are in.
func remark(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"#", "//", "/*", "*", "<!--", "--"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return s == ""
}

// opens reports whether a line ends in a way that continues on a deeper
// line: a block opener (`:`, `{`), an open bracket, or an operator or
// comma of an unfinished expression. A trailing comment is looked past.
func opens(s string) bool {
	s = strings.TrimSpace(s)
	for _, c := range []string{" #", " //"} {
		if i := strings.Index(s, c); i > 0 && opens(s[:i]) {
			return true
		}
	}
	if s == "" {
		return false
	}
	if strings.ContainsRune(":{([,\\=+-*/%|&<>.?", rune(s[len(s)-1])) {
		return true
	}
	// Keywords that open a block in shell, Ruby, Lua and Pascal.
	f := strings.Fields(s)
	switch f[len(f)-1] {
	case "do", "then", "else", "begin", "in":
		return true
	}
	// A control statement without braces governs the next line.
	if strings.HasSuffix(s, ")") {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "}"), " ")
		for _, kw := range []string{"if", "else if", "for", "foreach", "while"} {
			if rest, ok := strings.CutPrefix(s, kw); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "(")) {
				return true
			}
		}
	}
	return false
}

// continues reports whether a line goes on with the statement before it:
// it starts with an operator, a dot or a closing bracket.
func continues(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.ContainsRune("|&.?:+-*/%=<>,)]^", rune(s[0]))
}

// nearCode returns the nearest line in lines, scanning from i by step,
// that is neither blank nor a remark; "" if none.
func nearCode(lines []string, i, step int) (string, bool) {
	for ; i >= 0 && i < len(lines); i += step {
		if !remark(lines[i]) {
			return lines[i], true
		}
	}
	return "", false
}
