package extract

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// ErrEmpty is returned for input that is empty, blank, or only end-of-text
// tokens.
var ErrEmpty = errors.New("empty input")

// ErrNoEdit is wrapped by the error returned when the input holds no edit:
// prose only, or code without edit markers.
var ErrNoEdit = errors.New("no edit found")

// ErrMixed is wrapped by the error returned when the answer edits different
// files in different formats, which one Result cannot hold.
var ErrMixed = errors.New("edits in two formats")

// ErrSample is wrapped by the error returned when every edit the answer
// holds sits inside a file it shows whole (a test whose string holds a
// diff, a JSON fixture holding an envelope, a README whose text shows an
// example diff): those are strings and examples of that file, not edits,
// and the file shown whole is no edit either.
var ErrSample = errors.New("every edit is a sample in a file the answer shows")

// ErrPartSample is wrapped by the error returned when some of the answer's
// edits are samples in a file it shows whole and others are edits: the
// file shown is part of what the answer means, no format here writes it,
// and applying the rest alone would drop it without a word.
var ErrPartSample = errors.New("an edit is a sample in a file the answer shows beside its other edits")

// Result is the edit found in a model's output.
type Result struct {
	// Text is the edit, ready for a parser: the chosen candidates' texts,
	// merged, each line ending in "\n".
	Text string
	// Format is what patch.Detect finds in Text.
	Format patch.Format
	// Source says where Text came from, for people: for example
	// "2 ```diff fences (lines 3-40, 52-70), merged".
	Source string
	// Candidates is everything considered, in order of their first line,
	// outer before inner.
	Candidates []Candidate
}

// Candidate is one piece of the input that might hold the edit.
type Candidate struct {
	// Kind is "fence", "tag", "heredoc", "v4a", "search-replace" or "raw".
	Kind string
	// Lang is a fence's info word ("diff", "python"), a tag's name
	// ("patch"), a heredoc's delimiter ("EOF"), a search-replace block's
	// path, or "json" for a JSON-escaped V4A envelope.
	Lang string
	// StartLine and EndLine are the 1-based first and last input lines,
	// wrapper lines (fences, tags) included; a search-replace block starts
	// at its SEARCH marker, below its path line.
	StartLine, EndLine int
	// Text is the candidate without its wrapper lines.
	Text string
	// Format is what patch.Detect finds in Text, "" if nothing.
	Format patch.Format
	// IsEdit reports that Text has a format and at least one unit of change.
	IsEdit bool
	// Chosen reports that Text is part of Result.Text.
	Chosen bool
	// Reason says why the candidate was or was not chosen.
	Reason string
}

// cand is a Candidate under construction.
type cand struct {
	Candidate
	parent  *cand // the container it was found in, nil at the top level
	depth   int
	rank    int    // 0 explicit container, 1 other fence, 2 raw text
	noun    string // "fence", "tag", ... for Source
	adj     string // "```diff", "<patch>", ... for Source
	inner   *cand  // an edit inside this one, which wins over it
	inThink bool
	note    string // what the scanner had to assume, for Reason
	// sample says why an edit was set aside as a sample of a file the
	// answer shows (see dropEmbedded); sampleSelf, that the candidate is
	// that file.
	sample     string
	sampleSelf bool
	// shownDoc names the document a markup fence without edits shows
	// whole (see dropEmbedded).
	shownDoc string
	// shell and doc locate a heredoc's shell line (1-based) and its
	// place among the heredocs of that line.
	shell, doc int
}

func (c *cand) lines() string {
	if c.StartLine == c.EndLine {
		return fmt.Sprintf("line %d", c.StartLine)
	}
	return fmt.Sprintf("lines %d-%d", c.StartLine, c.EndLine)
}

// sharePath reports whether a and b edit a file in common (an edit that
// names no file may be of any).
func sharePath(a, b *cand) bool {
	pa := editPaths(a)
	for _, p := range editPaths(b) {
		for _, q := range pa {
			if p == q || p == "" || q == "" {
				return true
			}
		}
	}
	return false
}

func (c *cand) span() string {
	if c.StartLine == c.EndLine {
		return fmt.Sprint(c.StartLine)
	}
	return fmt.Sprintf("%d-%d", c.StartLine, c.EndLine)
}

func (c *cand) describe() string { return strings.TrimSpace(c.adj+" "+c.noun) + " (" + c.lines() + ")" }

// Extract finds the edit in text. See the package documentation for the
// rules. When there is no edit the error wraps ErrNoEdit and the Result,
// without Text, still lists the candidates; empty input gives ErrEmpty and a
// nil Result.
func Extract(text string) (*Result, error) {
	text = stripEndTokens(strings.TrimPrefix(text, bom))
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("extract: %w", ErrEmpty)
	}
	lines, _ := patch.SplitLines(text)
	nums := make([]int, len(lines))
	for i := range nums {
		nums[i] = i + 1
	}
	s := &scanner{}
	s.scan(&region{lines: lines, nums: nums})

	// Pre-order from the scanner is not line order: raw candidates are
	// added after the structures that end their run.
	sort.SliceStable(s.cands, func(i, j int) bool {
		a, b := s.cands[i], s.cands[j]
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		return a.depth < b.depth
	})
	markThink(s.cands, lines)
	for _, c := range s.cands {
		evaluate(c)
	}
	dropEmbedded(s.cands, lines)
	return choose(s.cands, lines)
}

// endTokens are the end-of-text markers models and serving stacks leave
// behind.
var endTokens = []string{
	"</s>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>",
	"<|end_of_text|>", "<end_of_turn>", "<｜end▁of▁sentence｜>",
}

// stripEndTokens removes end-of-text tokens (and the whitespace after them)
// from the end of text, repeatedly. Tokens elsewhere are left alone: "</s>"
// is also HTML.
func stripEndTokens(text string) string {
	for {
		t := strings.TrimRight(text, " \t\r\n")
		found := false
		for _, tok := range endTokens {
			if strings.HasSuffix(t, tok) {
				text, found = t[:len(t)-len(tok)], true
				break
			}
		}
		if !found {
			return text
		}
	}
}

// markThink marks candidates that start inside <think>...</think> reasoning.
// A closing tag with no opening one covers everything before it, as some
// APIs drop the opening tag.
func markThink(cands []*cand, lines []string) {
	type span struct{ a, b int }
	var spans []span
	open := 0 // 1-based line of the open <think>, 0 if none
	for i, l := range lines {
		switch {
		case strings.Contains(l, "</think>") || strings.Contains(l, "</thinking>"):
			a := open
			if a == 0 {
				a = 1
				if len(spans) > 0 {
					a = spans[len(spans)-1].b + 1
				}
			}
			spans = append(spans, span{a, i + 1})
			open = 0
		case open == 0 && (strings.Contains(l, "<think>") || strings.Contains(l, "<thinking>")):
			open = i + 1
		}
	}
	// An unclosed <think> is left alone: a truncated answer's reasoning may
	// be all there is. Both lists are in line order.
	k := 0
	for _, c := range cands {
		for k < len(spans) && spans[k].b < c.StartLine {
			k++
		}
		c.inThink = k < len(spans) && c.StartLine >= spans[k].a
	}
}

// family groups formats that merge into one text.
func family(f patch.Format) string {
	if f == patch.UDiffH {
		return string(patch.UDiff)
	}
	return string(f)
}

// evaluate sets Format and IsEdit, and a Reason for candidates that are not
// edits.
func evaluate(c *cand) {
	defer func() {
		if c.note != "" {
			c.Reason += " (" + c.note + ")"
		}
	}()
	if strings.TrimSpace(c.Text) == "" {
		c.Reason = "empty"
		return
	}
	f, ok := patch.Detect(c.Text)
	if !ok {
		c.Reason = "no edit markers"
		if c.Kind == "fence" && c.Lang != "" && !diffLangs[strings.ToLower(c.Lang)] {
			c.Reason = "no edit markers: " + c.Lang + " code, not an edit"
		}
		return
	}
	c.Format = f
	n := units(c.Text, f)
	if n == 0 {
		c.Reason = fmt.Sprintf("%s markers but no unit of change (%s)", f, unitWord(f, 2))
		return
	}
	c.IsEdit = true
	c.Reason = fmt.Sprintf("%s edit, %d %s", f, n, unitWord(f, n))
}

func unitWord(f patch.Format, n int) string {
	var w string
	switch f {
	case patch.SearchReplace:
		w = "block"
	case patch.V4A:
		w = "file section"
	default:
		w = "hunk"
	}
	if n != 1 {
		w += "s"
	}
	return w
}

// choose picks the edits to use and merges them.
func choose(cands []*cand, lines []string) (*Result, error) {
	nLines := len(lines)
	// An edit inside a container that is an edit itself wins over it.
	for _, c := range cands {
		if !c.IsEdit {
			continue
		}
		for p := c.parent; p != nil; p = p.parent {
			if p.IsEdit && p.inner == nil {
				p.inner = c
			}
		}
	}
	var leaves []*cand
	for _, c := range cands {
		if c.IsEdit && c.inner == nil {
			leaves = append(leaves, c)
		}
	}
	// Reasoning drafts count only when the answer has no edit.
	var answer []*cand
	for _, c := range leaves {
		if !c.inThink {
			answer = append(answer, c)
		}
	}
	if len(answer) > 0 {
		leaves = answer
	}

	res := &Result{}
	if len(leaves) == 0 {
		res.Candidates = public(cands)
		if why := sampleDetail(cands); why != "" {
			return res, fmt.Errorf("extract: %w: %s", ErrSample, why)
		}
		return res, fmt.Errorf("extract: %w: %s", ErrNoEdit, noEditDetail(cands, nLines))
	}

	if why := sampleDetail(cands); why != "" {
		res.Candidates = public(cands)
		return res, fmt.Errorf("extract: %w: %s; the other edits are not applied without it", ErrPartSample, why)
	}
	if d := unwrittenDoc(cands, leaves); d != nil {
		res.Candidates = public(cands)
		return res, fmt.Errorf("extract: %w: the document %s (%s fence, %s) is shown whole beside edits that do not change it: no format here writes a file shown whole, and the other edits are not applied without it", ErrPartSample, d.shownDoc, d.adj, d.lines())
	}

	// Prose between and after the edits may take one back, or offer one
	// as an alternative to another.
	leaves, err := judgeProse(leaves, cands, lines)
	if err != nil {
		res.Candidates = public(cands)
		return res, err
	}

	best := leaves[0]
	for _, c := range leaves[1:] {
		if c.rank < best.rank {
			best = c
		}
	}
	fam := family(best.Format)

	var chosen, dups []*cand
	seen := map[string]*cand{}
	for _, c := range leaves {
		if family(c.Format) != fam {
			continue
		}
		key := normalize(c.Text)
		// Search-replace blocks apply one after another: the same block
		// twice edits two places, so repeats are kept and left to the
		// applier, which knows how many places fit.
		if first, ok := seen[key]; ok && c.Kind != "search-replace" {
			c.Reason += "; repeats the edit at " + first.lines() + ", dropped"
			dups = append(dups, c)
			continue
		}
		seen[key] = c
		c.Chosen = true
		chosen = append(chosen, c)
	}

	// An edit of another format for a file no chosen edit names is part of
	// the answer that one result cannot carry: taking the rest alone would
	// apply half of it.
	names := map[string]bool{}
	for _, c := range chosen {
		for _, p := range editPaths(c) {
			names[p] = true
		}
	}
	for _, c := range leaves {
		if family(c.Format) == fam {
			continue
		}
		for _, p := range editPaths(c) {
			if p != "" && !names[p] && !names[""] {
				res.Candidates = public(cands)
				return res, fmt.Errorf("extract: %w: the %s edit at %s changes %s, which the %s edit at %s does not: one result has one format, and applying only one would apply half the answer", ErrMixed, c.Format, c.lines(), p, best.Format, best.lines())
			}
		}
	}

	// Reasons for what was left out.
	for _, c := range cands {
		switch {
		case c.Chosen:
			if len(chosen) > 1 {
				c.Reason += fmt.Sprintf("; chosen, merged with %d other %s", len(chosen)-1, plural("edit", len(chosen)-1))
			} else {
				c.Reason += "; chosen"
			}
		case c.inner != nil:
			c.Reason += "; holds the edit at " + c.inner.lines() + ", which is used instead"
		case c.IsEdit && c.inThink && !best.inThink:
			c.Reason += "; inside <think> reasoning, and the answer has an edit"
		case c.IsEdit && family(c.Format) != fam:
			c.Reason += fmt.Sprintf("; not chosen: the %s edit at %s is preferred and one result has one format", best.Format, best.lines())
		case !c.IsEdit && c.Kind == "fence":
			c.Reason += "; not chosen: the edit is at " + chosen[0].lines()
		}
	}

	res.Text = merge(chosen, fam)
	res.Format, _ = patch.Detect(res.Text)
	res.Source = source(chosen, len(dups))
	res.Candidates = public(cands)
	return res, nil
}

func plural(w string, n int) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// normalize makes texts that differ only in trailing whitespace or line
// endings equal, to find repeated edits.
func normalize(text string) string {
	lines, _ := patch.SplitLines(text)
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// merge joins the chosen texts. V4A envelopes become one envelope, since the
// V4A grammar allows only one.
func merge(chosen []*cand, fam string) string {
	if fam != string(patch.V4A) || len(chosen) == 1 {
		var b strings.Builder
		for _, c := range chosen {
			b.WriteString(c.Text)
		}
		return b.String()
	}
	cr := ""
	if strings.HasPrefix(chosen[0].Text, v4aBegin+"\r\n") {
		cr = "\r"
	}
	var b strings.Builder
	b.WriteString(v4aBegin + cr + "\n")
	for _, c := range chosen {
		lines, _ := patch.SplitLines(c.Text)
		// Every V4A candidate text is a whole envelope (see v4aText).
		b.WriteString(patch.JoinLines(lines[1:len(lines)-1], true))
	}
	b.WriteString(v4aEnd + cr + "\n")
	return b.String()
}

// source describes the chosen candidates for people.
func source(chosen []*cand, dups int) string {
	var s string
	if len(chosen) == 1 {
		c := chosen[0]
		s = c.describe()
		for p := c.parent; p != nil; p = p.parent {
			s += " in " + p.describe()
		}
	} else {
		// Group by description, in order of first appearance.
		type group struct {
			adj, noun string
			spans     []string
		}
		var groups []*group
		byName := map[string]*group{}
		for _, c := range chosen {
			g := byName[c.adj+" "+c.noun]
			if g == nil {
				g = &group{adj: c.adj, noun: c.noun}
				byName[c.adj+" "+c.noun] = g
				groups = append(groups, g)
			}
			g.spans = append(g.spans, c.span())
		}
		var parts []string
		for _, g := range groups {
			if len(g.spans) == 1 {
				parts = append(parts, fmt.Sprintf("%s %s (line%s %s)", g.adj, g.noun, pluralS(g.spans[0]), g.spans[0]))
				continue
			}
			parts = append(parts, fmt.Sprintf("%d %s %ss (lines %s)", len(g.spans), g.adj, g.noun, strings.Join(g.spans, ", ")))
		}
		s = strings.Join(parts, " and ") + ", merged"
	}
	if dups > 0 {
		w := "copy"
		if dups > 1 {
			w = "copies"
		}
		s += fmt.Sprintf("; %d repeated %s dropped", dups, w)
	}
	return s
}

func pluralS(span string) string {
	if strings.Contains(span, "-") {
		return "s"
	}
	return ""
}

func public(cands []*cand) []Candidate {
	out := make([]Candidate, len(cands))
	for i, c := range cands {
		out[i] = c.Candidate
	}
	return out
}

// sampleDetail says why the first edit set aside as a sample was, an edit
// inside the file shown before the file itself; "" when none was.
func sampleDetail(cands []*cand) string {
	why := ""
	for _, c := range cands {
		switch {
		case c.sample == "" || c.inThink:
		case !c.sampleSelf:
			return c.sample
		case why == "":
			why = c.sample
		}
	}
	return why
}

// unwrittenDoc returns the first document shown whole (a markup fence
// named as a file, without edits) that no edit of leaves changes, or nil:
// the answer means it as much as its edits, as a sample beside edits.
func unwrittenDoc(cands, leaves []*cand) *cand {
	for _, d := range cands {
		if d.shownDoc == "" || d.inThink {
			continue
		}
		changed := false
		for _, c := range leaves {
			changed = changed || slices.ContainsFunc(editPaths(c), func(p string) bool { return sameDoc(p, d.shownDoc) })
		}
		if !changed {
			return d
		}
	}
	return nil
}

// noEditDetail says why nothing was an edit, naming a few candidates.
func noEditDetail(cands []*cand, nLines int) string {
	if len(cands) == 0 {
		return fmt.Sprintf("%d %s of prose, without fences, tags or diff markers", nLines, plural("line", nLines))
	}
	var parts []string
	for i, c := range cands {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(cands)-3))
			break
		}
		parts = append(parts, c.describe()+": "+c.Reason)
	}
	return strings.Join(parts, "; ")
}
