package repair

import (
	"strings"
	"unicode"

	"github.com/patchbench/patchbench/patch"
)

// Tier names say how loosely a hunk had to be matched to be placed.
const (
	TierExact       = "exact"       // byte for byte (a CR before the newline aside)
	TierWhitespace  = "whitespace"  // trailing whitespace ignored
	TierIndentation = "indentation" // all whitespace runs ignored
	TierFuzzy       = "fuzzy"       // context lines missing or invented
)

// Normalisation levels used by the tiers.
const (
	levelExact = iota
	levelTrailing
	levelSpace
	numLevels
)

var tierOfLevel = [numLevels]string{TierExact, TierWhitespace, TierIndentation}

func normalize(level int, s string) string {
	switch level {
	case levelExact:
		return strings.TrimSuffix(s, "\r")
	case levelTrailing:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	default:
		return collapseSpace(s)
	}
}

// collapseSpace trims s and turns every run of whitespace into one space,
// without allocating when s already has single spaces only, as most
// indented lines do.
func collapseSpace(s string) string {
	t := strings.TrimSpace(s)
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == ' ' && t[i+1] != ' ' && t[i+1] != '\t' && t[i+1] != '\r' {
			continue
		}
		if c == '\t' || c == ' ' || c == '\r' || c == '\n' || c == '\v' || c == '\f' || c >= 0x80 {
			return strings.Join(strings.Fields(t), " ")
		}
	}
	return t
}

// text is a file being repaired against, with its lines normalised at every
// level.
type text struct {
	lines []string
	eol   bool
	crlf  bool
	norm  [numLevels][]string
	// index maps a normalised line to the file lines that have it.
	index [numLevels]map[string][]int
}

func newText(content string) *text {
	t := &text{}
	t.lines, t.eol = patch.SplitLines(content)
	cr := 0
	for _, l := range t.lines {
		if strings.HasSuffix(l, "\r") {
			cr++
		}
	}
	t.crlf = len(t.lines) > 0 && cr*2 > len(t.lines)
	return t
}

// normLevel returns the file's lines normalised at level lv, computing them
// the first time: most hunks never need the looser levels.
func (t *text) normLevel(lv int) []string {
	if t.norm[lv] == nil && lv == levelExact && !t.crlf && !anyCR(t.lines) {
		t.norm[lv] = t.lines
	}
	if t.norm[lv] == nil {
		n := make([]string, len(t.lines))
		for i, l := range t.lines {
			n[i] = normalize(lv, l)
		}
		t.norm[lv] = n
	}
	return t.norm[lv]
}

func anyCR(lines []string) bool {
	for _, l := range lines {
		if strings.HasSuffix(l, "\r") {
			return true
		}
	}
	return false
}

// indexLevel maps each normalised line at level lv to where it occurs.
func (t *text) indexLevel(lv int) map[string][]int {
	if t.index[lv] == nil {
		n := t.normLevel(lv)
		idx := make(map[string][]int, len(n))
		for i, l := range n {
			idx[l] = append(idx[l], i)
		}
		t.index[lv] = idx
	}
	return t.index[lv]
}

// entry is one old-side line of a hunk (context or deleted).
type entry struct {
	kind    patch.LineKind
	norm    [numLevels][]string // readings, normalised per level
	raw     []string
	elision bool
	signif  bool // carries enough text to anchor a match
}

func (e *entry) matches(t *text, lv, j int) bool {
	return e.matchesAlt(t, lv, j, true)
}

// matchesAlt is matches, using only the most likely reading unless alt.
func (e *entry) matchesAlt(t *text, lv, j int, alt bool) bool {
	rs := e.normAt(lv)
	if !alt && len(rs) > 1 {
		rs = rs[:1]
	}
	f := t.normLevel(lv)[j]
	for _, r := range rs {
		if f == r {
			return true
		}
	}
	return false
}

// normAt returns the entry's readings normalised at level lv, computed the
// first time they are needed; equal readings are kept once.
func (e *entry) normAt(lv int) []string {
	if e.norm[lv] == nil {
		rs := make([]string, 0, len(e.raw))
		for _, r := range e.raw {
			n := normalize(lv, r)
			if len(rs) == 0 || rs[len(rs)-1] != n {
				rs = append(rs, n)
			}
		}
		e.norm[lv] = rs
	}
	return e.norm[lv]
}

// reading returns which reading of e matched file line j at level lv.
func (e *entry) reading(t *text, lv, j int) int {
	for k, r := range e.normAt(lv) {
		if t.normLevel(lv)[j] == r {
			return k
		}
	}
	return -1
}

func entries(h *looseHunk) []entry {
	var es []entry
	for _, l := range h.lines {
		if l.kind == patch.LineInsert {
			continue
		}
		e := entry{kind: l.kind, raw: l.texts, elision: l.elision}
		e.signif = significant(l.texts[0])
		es = append(es, e)
	}
	return es
}

// significant reports whether a line says enough to anchor a match: not
// blank, and more than punctuation.
func significant(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n >= 2
}

// place is one way a hunk fits the file.
type place struct {
	start, end int   // file span [start, end)
	at         []int // entry index → file line, -1 when dropped
	// elided[i] is the file span an elision entry absorbed.
	elided map[int][2]int
	tier   string
	level  int
	cost   int
}

// contiguous finds every position where the entries match consecutive file
// lines at level lv, with every reading of each line when alt is set and
// with only the most likely one otherwise.
func contiguous(t *text, es []entry, lv int, alt bool) []place {
	m := len(es)
	var out []place
	if m == 0 {
		return nil
	}
	fl := t.normLevel(lv)
	for j := 0; j+m <= len(fl); j++ {
		ok := true
		for i := 0; i < m && ok; i++ {
			ok = es[i].matchesAlt(t, lv, j+i, alt)
		}
		if ok {
			at := make([]int, m)
			for i := range at {
				at[i] = j + i
			}
			out = append(out, place{start: j, end: j + m, at: at, tier: tierOfLevel[lv], level: lv})
		}
	}
	sortPlaces(out)
	return out
}

func sortPlaces(ps []place) {
	for i := 1; i < len(ps); i++ {
		for k := i; k > 0 && ps[k].start < ps[k-1].start; k-- {
			ps[k], ps[k-1] = ps[k-1], ps[k]
		}
	}
}

// Moves of the fuzzy alignment.
const (
	mvNone = iota
	mvMatch
	mvDrop
	mvGap
	mvElide
)

// fuzzy aligns the entries with the file allowing file lines the hunk lacks
// (gaps, kept) and context lines the file lacks (dropped), each at cost 1.
// Deleted lines must all match. It returns the distinct places whose cost is
// within budget.
func fuzzy(t *text, es []entry, budget, lv int) []place {
	m, n := len(es), len(t.lines)
	if m == 0 || n == 0 {
		return nil
	}
	const inf = 1 << 30
	w := n + 1
	cost := make([]int32, (m+1)*w)
	move := make([]uint8, (m+1)*w)
	for i := 1; i <= m; i++ {
		for j := 0; j <= n; j++ {
			best, mv := int32(inf), uint8(mvNone)
			e := &es[i-1]
			if j > 0 && e.matches(t, lv, j-1) {
				if c := cost[(i-1)*w+j-1]; c < best {
					best, mv = c, mvMatch
				}
			}
			if e.kind == patch.LineContext || e.elision {
				dc := int32(1)
				if e.elision {
					dc = 0
				}
				if c := cost[(i-1)*w+j] + dc; c < best {
					best, mv = c, mvDrop
				}
			}
			if j > 0 && e.elision {
				if c := cost[i*w+j-1]; c < best {
					best, mv = c, mvElide
				}
			}
			if j > 0 && i < m {
				if c := cost[i*w+j-1] + 1; c < best {
					best, mv = c, mvGap
				}
			}
			cost[i*w+j], move[i*w+j] = best, mv
		}
	}
	var out []place
	for j := 1; j <= n; j++ {
		c := cost[m*w+j]
		if int(c) > budget || move[m*w+j] == mvDrop || move[m*w+j] == mvNone {
			continue
		}
		p := trace(es, move, w, m, j)
		p.level = lv
		p.cost = int(c)
		if !acceptable(es, p) {
			continue
		}
		// Alignments that share file lines describe the same place: keep the
		// cheaper one.
		if k := len(out) - 1; k >= 0 && out[k].end > p.start {
			if p.cost < out[k].cost {
				out[k] = p
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

func trace(es []entry, move []uint8, w, m, j int) place {
	p := place{at: make([]int, m), end: j, tier: TierFuzzy, level: levelSpace}
	for k := range p.at {
		p.at[k] = -1
	}
	for i := m; i > 0; {
		switch move[i*w+j] {
		case mvMatch:
			p.at[i-1] = j - 1
			i, j = i-1, j-1
		case mvDrop:
			i--
		case mvElide:
			if p.elided == nil {
				p.elided = map[int][2]int{}
			}
			r, ok := p.elided[i-1]
			if !ok {
				r[1] = j
			}
			r[0] = j - 1
			p.elided[i-1] = r
			j--
		case mvGap:
			j--
		default:
			i = 0
		}
	}
	p.start = p.end
	for k, a := range p.at {
		if a >= 0 && a < p.start {
			p.start = a
		}
		if r, ok := p.elided[k]; ok && r[0] < p.start {
			p.start = r[0]
		}
	}
	return p
}

// acceptable applies the limits that keep a fuzzy place trustworthy: most
// context must be found, and enough of it must say something.
func acceptable(es []entry, p place) bool {
	matched, signif := 0, 0
	for i, e := range es {
		if e.elision {
			continue
		}
		if p.at[i] >= 0 {
			matched++
			if e.signif {
				signif++
			}
		}
	}
	if signif < 2 {
		return false
	}
	// Invented or missing lines may not outweigh a third of what matched.
	return p.cost*3 <= matched
}

// indentConsistent reports whether the indentation of the hunk's lines and
// of the file lines they were matched with differ in one consistent way:
// not at all, tabs of one width written as spaces (or back), or a constant
// shift. A model that re-indents does so consistently; a match that pairs
// a brace with a brace one level deeper does not.
func indentConsistent(t *text, es []entry, p place) bool {
	type pair struct {
		hunk []string
		file string
	}
	var pairs []pair
	for i, at := range p.at {
		if at < 0 || es[i].elision || strings.TrimSpace(t.lines[at]) == "" {
			continue
		}
		pairs = append(pairs, pair{es[i].raw, leading(t.lines[at])})
	}
	if len(pairs) == 0 {
		return true
	}
	for _, tab := range []int{2, 4, 8} {
		// Every reading of the first line proposes a shift; one must fit
		// every line.
		for _, h0 := range pairs[0].hunk {
			shift := width(leading(h0), tab) - width(pairs[0].file, tab)
			ok := true
			for _, pr := range pairs[1:] {
				found := false
				for _, h := range pr.hunk {
					if width(leading(h), tab)-width(pr.file, tab) == shift {
						found = true
						break
					}
				}
				if !found {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// width is the display width of leading whitespace with tabs of tab columns.
func width(ws string, tab int) int {
	n := 0
	for _, c := range ws {
		if c == '\t' {
			n += tab - n%tab
		} else {
			n++
		}
	}
	return n
}
