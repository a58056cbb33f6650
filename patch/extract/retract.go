package extract

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// ErrRetracted is wrapped by the error returned when prose after an edit
// takes it back ("that's wrong, here is the corrected patch", "scratch
// that"): applying the answer's edits would apply the one it withdrew,
// and which part the correction replaces, if there is one, is not written
// down.
var ErrRetracted = errors.New("an edit the answer takes back")

// ErrAlternatives is wrapped by the error returned when prose between two
// edits offers the second as an alternative to the first ("Alternatively,
// ...", "A better fix:", "Or, simpler:", "Option 2:") and the answer does
// not say which one to use: two ways of making one change are not two
// changes.
var ErrAlternatives = errors.New("alternative edits for one change")

// How a line of prose after an edit bears on it.
type backing int

const (
	notBack backing = iota
	// A line that reads like a retraction without pointing at the edit
	// before ("Now make total use sum instead:", "the fixed version of
	// total", "the above ... incorrect ..."): it takes the edit back only
	// when the next edit changes the lines that one changed.
	looseBack
	// An apology ("Oops", "Sorry, ..."): it takes back the edit before
	// when the next edit is of the same file.
	sameFileBack
	// A line that points at the edit before and announces its
	// replacement ("use this instead", "here is the corrected patch",
	// "Correction:", "my previous patch had a bug"): it takes the edit
	// back when any edit follows.
	announceBack
	// A line that says the edit before is void ("scratch that", "that's
	// wrong", "ignore the above", "on second thought"): it takes the edit
	// back whatever follows, nothing included.
	voidBack
)

// Phrases of prose, as sequences of lower-case words.
var (
	voidRetractions = []string{
		"that's wrong", "that is wrong", "that was wrong", "this is wrong",
		"that's incorrect", "that is incorrect", "that was incorrect", "this is incorrect",
		"my mistake", "my bad", "i made a mistake", "i made an error",
		"ignore the previous", "ignore my previous", "ignore the above", "ignore that", "ignore the earlier", "ignore the first",
		"disregard the previous", "disregard my", "disregard the above", "disregard that", "disregard the earlier", "disregard the first",
		"scratch that", "on second thought", "on second thoughts",
	}
	announceRetractions = []string{
		"corrected patch", "corrected diff", "corrected edit", "fixed patch", "fixed diff", "revised patch", "revised diff",
		"use this instead", "use the following instead", "try this instead", "use this one instead",
		"replace the previous", "instead of the previous", "instead of the above", "in place of the previous",
	}
	// "The fixed version:" announces a replacement; "the fixed version
	// of total" names code.
	versionPhrases = []string{"corrected version", "corrected change", "fixed version", "revised version"}
	apologies      = []string{"oops", "whoops", "sorry", "apologies"}
	// Words after "ignore that" that make it the edit: a clause's end or
	// a name for an edit.
	editNouns = []string{"|", "patch", "diff", "edit", "change", "version", "one", "fix", "code", "answer", "suggestion"}
	// A reference to the edit before, and what is wrong with it.
	retractRefs = []string{
		"the above", "above patch", "above diff", "previous", "earlier", "that patch", "that diff",
		"that edit", "that change", "that version", "this patch", "the first patch", "the first diff",
		"the first edit", "my patch", "my diff", "my edit", "my change", "last patch", "last diff",
	}
	retractFaults = []string{
		"wrong", "incorrect", "had a bug", "has a bug", "buggy", "broken", "a mistake", "a typo",
		"won't compile", "will not compile", "doesn't compile", "does not compile", "didn't compile",
		"won't work", "will not work", "doesn't work", "does not work", "didn't work",
		"is not right", "isn't right", "not correct", "invalid",
	}
	// Words that may stand between a reference and its fault when the
	// fault is said of the edit ("that diff was wrong", "my previous
	// patch had a bug"); any other word makes the fault another thing's
	// ("the above handles the incorrect sign").
	faultGap = []string{
		"patch", "diff", "edit", "change", "version", "one", "fix", "code", "answer", "i", "sent", "posted",
		"gave", "wrote", "made", "is", "was", "are", "were", "has", "had", "still", "actually", "unfortunately",
		"definitely", "completely", "totally", "just", "clearly", "probably", "will", "would", "it", "that",
		"here", "again", "above",
	}
	// additions are the words of a line that adds an edit to the one
	// before: such a line takes nothing back but with a void or announcing
	// phrase.
	additions = []string{"also", "additionally", "in addition", "as well", "next", "another", "forgot", "furthermore", "moreover"}
	// Phrases that offer the next edit as another way of making the
	// change before it.
	alternativePhrases = []string{
		"alternatively", "an alternative", "another option", "another way", "another approach", "another solution",
		"alternative fix", "alternative approach", "alternative solution", "alternative way", "alternative version",
		"better fix", "better approach", "better solution", "better option", "better version",
		"simpler fix", "simpler approach", "simpler solution", "simpler option", "simpler version",
		"cleaner fix", "cleaner approach", "cleaner solution", "cleaner option", "cleaner version",
		"or simpler", "or simply", "or even simpler", "or more simply", "or you could", "or you can",
		"other option", "other approach", "second option", "second approach",
	}
	// Numbered options: "Option 2:", "Approach B".
	optionNouns = []string{"option", "approach", "solution", "alternative", "variant"}
	// choiceVerbs say which alternative to use; choiceNouns may follow an
	// ordinal that names one ("the second one", "the first approach").
	choiceVerbs = []string{"use", "apply", "prefer", "recommend", "pick", "choose", "take", "suggest", "with"}
	choiceNouns = []string{"one", "option", "approach", "fix", "version", "alternative", "solution", "patch", "diff", "edit", "change", "variant"}
	choiceGood  = []string{"better", "preferred", "recommended", "cleaner", "simpler", "safer", "best", "nicer", "preferable"}
)

// words is a line of prose as lower-case words, each clause's end a "|"
// word: "that's wrong | use this instead |".
type words []string

func wordsOf(line string) words {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.ReplaceAll(line, "’", "'")) {
		switch {
		case strings.ContainsRune(".,;:!?()—–", r):
			b.WriteString(" | ")
		case r == '\'' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

// find returns the index of the first word of the first place phrase p
// (words separated by spaces) is in w, or -1. A clause's end is a word,
// so no phrase spans two clauses.
func (w words) find(p string) int {
	ps := strings.Fields(p)
	for i := 0; i+len(ps) <= len(w); i++ {
		if slices.Equal(w[i:i+len(ps)], ps) {
			return i
		}
	}
	return -1
}

// first returns where the earliest of phrases is in w, the phrase's
// length in words, or -1.
func (w words) first(phrases []string) (at, n int) {
	at = -1
	for _, p := range phrases {
		if i := w.find(p); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(strings.Fields(p))
		}
	}
	return at, n
}

func (w words) has(phrases []string) bool { at, _ := w.first(phrases); return at >= 0 }

// at reports word i, or "|" past the end.
func (w words) at(i int) string {
	if i < 0 || i >= len(w) {
		return "|"
	}
	return w[i]
}

// backingOf says how a line of prose bears on the edit before it, and
// whether its phrase opens the line (within its first four words:
// "Wait, scratch that", "Hmm, actually, on second thought").
func backingOf(line string) (backing, bool) {
	w := wordsOf(line)
	opening := func(at int) bool {
		n := 0
		for _, x := range w[:at] {
			if x != "|" {
				n++
			}
		}
		return n <= 3
	}
	for _, p := range voidRetractions {
		at := w.find(p)
		// "Ignore that." and "ignore that diff" take back; "ignore that
		// warning" does not.
		if at >= 0 && (!strings.HasSuffix(p, " that") || slices.Contains(editNouns, w.at(at+len(strings.Fields(p))))) {
			return voidBack, opening(at)
		}
	}
	if w.has(announceRetractions) {
		return announceBack, false
	}
	loose := false
	if at, n := w.first(versionPhrases); at >= 0 {
		if w.at(at+n) != "of" {
			return announceBack, false
		}
		loose = true
	}
	if w.has(additions) {
		return notBack, false
	}
	switch {
	case w.at(0) == "correction":
		return announceBack, false
	case faultOfEdit(w):
		return announceBack, false
	case w.has(apologies):
		return sameFileBack, false
	}
	// "Use this instead" replaces; "instead of X" says what an edit does.
	for i, x := range w {
		if x == "instead" && w.at(i+1) != "of" {
			loose = true
		}
	}
	if loose || w.has(retractRefs) && w.has(retractFaults) {
		return looseBack, false
	}
	return notBack, false
}

// faultOfEdit reports a reference to the edit before followed by a fault
// said of it, only faultGap words between: "the earlier patch doesn't
// work", "that diff was wrong".
func faultOfEdit(w words) bool {
	for _, r := range retractRefs {
		rs := strings.Fields(r)
		for i := 0; i+len(rs) <= len(w); i++ {
			if !slices.Equal(w[i:i+len(rs)], rs) {
				continue
			}
			for j := i + len(rs); j <= i+len(rs)+3 && j < len(w); j++ {
				for _, f := range retractFaults {
					fs := strings.Fields(f)
					if j+len(fs) <= len(w) && slices.Equal(w[j:j+len(fs)], fs) {
						return true
					}
				}
				if !slices.Contains(faultGap, w[j]) {
					break
				}
			}
		}
	}
	return false
}

// offersAlternative reports a line that offers what follows as another
// way of making the change before: "Alternatively, ...", "Or, simpler:",
// "A better fix:", "Option 2:".
func offersAlternative(line string) bool {
	w := wordsOf(line)
	if w.at(0) == "or" || w.at(0) == "alternatively" || w.has(alternativePhrases) {
		return true
	}
	for i, x := range w {
		if slices.Contains(optionNouns, x) && ordinal(w.at(i+1), 3, true) >= 1 {
			return true
		}
	}
	return false
}

// ordinal returns the 0-based index an ordinal word names among n
// alternatives ("second": 1, "last": n-1, "latter" of two: 1), or -1;
// numbers and letters ("2", "b") only when numbered (after "option").
func ordinal(x string, n int, numbered bool) int {
	switch x {
	case "first", "1st", "former":
		return 0
	case "second", "2nd":
		return 1
	case "third", "3rd":
		return 2
	case "last":
		return n - 1
	case "latter":
		if n == 2 {
			return 1
		}
		return -1
	}
	if numbered {
		for i, names := range [][]string{{"1", "a", "one"}, {"2", "b", "two"}, {"3", "c", "three"}, {"4", "d", "four"}} {
			if slices.Contains(names, x) {
				return i
			}
		}
	}
	return -1
}

// choicesIn returns the alternatives (0-based, of n) a line of prose
// says to use: "Use the second one.", "I recommend option 1", "The former
// is better.".
func choicesIn(line string, n int) []int {
	var out []int
	found := func(k int) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	w := wordsOf(line)
	// named reads an alternative named at w[i:]: an ordinal that ends its
	// clause or goes on with a choice noun, or a numbered option. It
	// returns the index and the words it took.
	named := func(i int) (int, int) {
		if slices.Contains(optionNouns, w.at(i)) {
			if k := ordinal(w.at(i+1), n, true); k >= 0 {
				return k, 2
			}
		}
		if k := ordinal(w.at(i), n, false); k >= 0 {
			if w.at(i+1) == "|" {
				return k, 1
			}
			if slices.Contains(choiceNouns, w.at(i+1)) {
				return k, 2
			}
		}
		return -1, 0
	}
	for i, x := range w {
		if slices.Contains(choiceVerbs, x) {
			// "use the second", "go with option 2", "I'd pick the latter one".
			for j := i + 1; j <= i+3 && w.at(j) != "|"; j++ {
				if k, _ := named(j); k >= 0 && k < n {
					found(k)
					break
				}
				if w.at(j) != "the" && w.at(j) != "a" {
					break
				}
			}
		}
		// "the second one is better", "the former is better".
		k, m := named(i)
		if k < 0 {
			k, m = ordinal(x, n, false), 1
		}
		if k >= 0 && k < n {
			j := i + m
			if w.at(j) == "is" || w.at(j) == "would" && w.at(j+1) == "be" {
				for _, g := range w[j+1 : min(j+4, len(w))] {
					if slices.Contains(choiceGood, g) {
						found(k)
					}
				}
			}
		}
	}
	return out
}

// changes returns each hunk of an edit as the old lines it changes and
// the new lines it puts there, without the context its sides share at
// both ends, and the old lines beside an insertion; nil when the text does
// not parse.
func changes(c *cand) [][3][]string {
	p, err := patch.Parse(c.Text, c.Format, patch.DefaultParseOptions)
	if err != nil {
		return nil
	}
	var out [][3][]string
	for _, fp := range p.Files {
		for _, h := range fp.Hunks {
			old, neu := h.Old(), h.New()
			pre := 0
			for pre < len(old) && pre < len(neu) && old[pre] == neu[pre] {
				pre++
			}
			suf := 0
			for suf < len(old)-pre && suf < len(neu)-pre && old[len(old)-1-suf] == neu[len(neu)-1-suf] {
				suf++
			}
			out = append(out, [3][]string{old[pre : len(old)-suf], neu[pre : len(neu)-suf], old[max(pre-1, 0):min(pre+1, len(old))]})
		}
	}
	return out
}

// sameChange reports whether b is a's edit again: the same text, or the
// same changes written in another format or with other context ("Or, as
// a search/replace block:").
func sameChange(a, b []*cand) bool {
	text := func(cs []*cand) string {
		var t strings.Builder
		for _, c := range cs {
			t.WriteString(c.Text)
		}
		return normalize(t.String())
	}
	if text(a) == text(b) {
		return true
	}
	all := func(cs []*cand) [][3][]string {
		var out [][3][]string
		for _, c := range cs {
			ch := changes(c)
			if ch == nil {
				return nil
			}
			out = append(out, ch...)
		}
		return out
	}
	ca, cb := all(a), all(b)
	if ca == nil || len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if !slices.Equal(ca[i][0], cb[i][0]) || !slices.Equal(ca[i][1], cb[i][1]) {
			return false
		}
	}
	return true
}

// touched returns the significant old lines an edit changes, trimmed:
// each hunk's old side without the context its new side keeps at both
// ends, or, for an insertion, the old lines beside it. ok is false when
// the text does not parse.
func touched(c *cand) (map[string]bool, bool) {
	cs := changes(c)
	if cs == nil {
		return nil, false
	}
	out := map[string]bool{}
	for _, ch := range cs {
		mid := ch[0]
		if len(mid) == 0 {
			mid = ch[2] // an insertion: the lines it goes between
		}
		for _, l := range mid {
			l = strings.TrimSpace(l)
			if len(l) >= 4 && strings.ContainsFunc(l, func(r rune) bool {
				return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
			}) {
				out[l] = true
			}
		}
	}
	return out, true
}

// overlap reports whether b changes a line a changes: b is another way
// of making a's change, not a change after it. Unsure (a text that does
// not parse) is an overlap.
func overlap(a, b []*cand) bool {
	ta := map[string]bool{}
	for _, c := range a {
		t, ok := touched(c)
		if !ok {
			return true
		}
		maps.Copy(ta, t)
	}
	for _, c := range b {
		t, ok := touched(c)
		if !ok {
			return true
		}
		for l := range t {
			if ta[l] {
				return true
			}
		}
	}
	return false
}

// shareFile reports whether two runs of edits edit a file in common.
func shareFile(a, b []*cand) bool {
	for _, x := range a {
		for _, y := range b {
			if sharePath(x, y) {
				return true
			}
		}
	}
	return false
}

// spanOf names the lines of a run of edits.
func spanOf(seg []*cand) string {
	a, b := seg[0].StartLine, seg[len(seg)-1].EndLine
	if a == b {
		return fmt.Sprintf("line %d", a)
	}
	return fmt.Sprintf("lines %d-%d", a, b)
}

// judgeProse reads the prose after each of the answer's edits (leaves,
// in line order, of any format and file), a run of edits with no prose
// between them (the blocks of one fence, a diff's fences one after
// another) read as one: a line that takes the run before back refuses
// the answer (ErrRetracted); a line that offers the next run as an
// alternative to the one before refuses it too (ErrAlternatives), unless
// the alternatives are the whole answer and a line of prose says which
// to use, and then the others are left out. Only lines outside every
// candidate count, so a comment in code never does. It returns the edits
// to use.
func judgeProse(leaves, cands []*cand, lines []string) ([]*cand, error) {
	inside := make([]bool, len(lines)+2)
	for _, c := range cands {
		for l := max(c.StartLine, 0); l <= c.EndLine && l < len(inside); l++ {
			inside[l] = true
		}
	}
	prose := func(l int) bool { return !inside[l] && strings.TrimSpace(lines[l-1]) != "" }
	var segs [][]*cand
	for i, c := range leaves {
		joined := false
		if i > 0 {
			joined = true
			for l := leaves[i-1].EndLine + 1; l < c.StartLine && l <= len(lines); l++ {
				if prose(l) {
					joined = false
					break
				}
			}
		}
		if joined {
			segs[len(segs)-1] = append(segs[len(segs)-1], c)
		} else {
			segs = append(segs, []*cand{c})
		}
	}
	quote := func(l int) string { return strings.TrimSpace(lines[l-1]) }
	// alt[i] is the line that offers segs[i+1] as an alternative to
	// segs[i], or 0.
	alt := make([]int, len(segs))
	for i, p := range segs {
		var n []*cand
		end := len(lines)
		if i+1 < len(segs) {
			n = segs[i+1]
			end = n[0].StartLine - 1
			if sameChange(p, n) {
				continue // the same edit again: nothing to choose between
			}
		}
		for l := p[len(p)-1].EndLine + 1; l <= end && l <= len(lines); l++ {
			if !prose(l) {
				continue
			}
			if n != nil && offersAlternative(lines[l-1]) {
				if alt[i] == 0 {
					alt[i] = l
				}
				continue
			}
			k, opening := backingOf(lines[l-1])
			switch {
			case k == voidBack && n == nil && opening:
				return nil, fmt.Errorf("extract: %w: line %d (%q) takes back the edit at %s, and no edit follows it: applying it would apply the withdrawn one", ErrRetracted, l, quote(l), spanOf(p))
			case n == nil:
			case k == voidBack || k == announceBack || (k == sameFileBack || k == looseBack && overlap(p, n)) && shareFile(p, n):
				if shareFile(p, n) {
					return nil, fmt.Errorf("extract: %w: line %d (%q) takes back the edit at %s before the edit at %s of the same file: applying both would apply the withdrawn one", ErrRetracted, l, quote(l), spanOf(p), spanOf(n))
				}
				return nil, fmt.Errorf("extract: %w: line %d (%q) takes back the edit at %s before the edit at %s of another file: applying the answer would apply the withdrawn one", ErrRetracted, l, quote(l), spanOf(p), spanOf(n))
			}
		}
	}
	// Runs of alternatives.
	var groups [][]int
	for i := 0; i+1 < len(segs); i++ {
		if alt[i] == 0 {
			continue
		}
		if len(groups) > 0 && slices.Contains(groups[len(groups)-1], i) {
			groups[len(groups)-1] = append(groups[len(groups)-1], i+1)
		} else {
			groups = append(groups, []int{i, i + 1})
		}
	}
	if len(groups) == 0 {
		return leaves, nil
	}
	g := groups[0]
	first := alt[g[0]]
	refuse := func(why string) error {
		return fmt.Errorf("extract: %w: line %d (%q) offers the edit at %s as an alternative to the edit at %s: %s", ErrAlternatives, first, quote(first), spanOf(segs[g[1]]), spanOf(segs[g[0]]), why)
	}
	choice, at := -1, 0
	for l := 1; l <= len(lines); l++ {
		if !prose(l) {
			continue
		}
		for _, k := range choicesIn(lines[l-1], len(g)) {
			if choice >= 0 && k != choice && at == l {
				return nil, refuse(fmt.Sprintf("line %d names two of them to use", l))
			}
			if choice >= 0 && k != choice {
				return nil, refuse(fmt.Sprintf("lines %d and %d name different ones to use", at, l))
			}
			choice, at = k, l
		}
	}
	switch {
	case choice < 0:
		return nil, refuse("applying both would make one change twice, and the answer does not say which to use")
	case len(groups) > 1 || len(g) < len(segs):
		return nil, refuse(fmt.Sprintf("line %d says which to use, but the answer has other edits beside the alternatives, which may belong to one of them", at))
	}
	use := segs[g[choice]]
	for _, c := range leaves {
		if !slices.Contains(use, c) {
			c.Reason += fmt.Sprintf("; an alternative to the edit at %s, which line %d (%q) says to use, left out", spanOf(use), at, quote(at))
		}
	}
	return use, nil
}
