package repair

import (
	"slices"
	"sort"
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
	// TierPunctuation: typographic dashes, quotes and spaces made ASCII, a
	// level of V4A's matching (see patch.FilePatch.Lenient).
	TierPunctuation = "punctuation"
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
	size  int // bytes
	eol   bool
	crlf  bool
	norm  [numLevels][]string
	// index finds the normalised lines at each level.
	index [numLevels]*lineIndex
	// places holds what contiguous found, by its arguments.
	places map[string][]place
}

func newText(content string) *text {
	t := &text{size: len(content)}
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

// indexLevel returns the index of the file's lines normalised at level lv,
// built the first time it is needed.
func (t *text) indexLevel(lv int) *lineIndex {
	if t.index[lv] == nil {
		t.index[lv] = newLineIndex(t.normLevel(lv))
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

// matches reports whether file line j equals a reading of e at level lv.
func (e *entry) matches(t *text, lv, j int) bool {
	f := t.normLevel(lv)[j]
	for _, r := range e.normAt(lv) {
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
// with only the most likely one otherwise. The candidates are the places
// of the entry whose line is rarest in the file, each then checked whole:
// every place that fits holds that line, so none is missed.
//
// The places are kept by the text for the entries' readings, level and alt:
// the hunks of a patch for a file of repeated lines share their old side,
// and each would find the same thousands of places again. Callers do not
// change the places or their at.
func contiguous(t *text, es []entry, lv int, alt bool) []place {
	m := len(es)
	if m == 0 || m > len(t.lines) {
		return nil
	}
	var kb strings.Builder
	kb.WriteByte(byte('0' + lv))
	if alt {
		kb.WriteByte('a')
	}
	for i := range es {
		for _, r := range es[i].raw {
			kb.WriteString(r)
			kb.WriteByte(0)
		}
		kb.WriteByte(1)
	}
	key := kb.String()
	if cs, ok := t.places[key]; ok {
		return cs
	}
	cs := findContiguous(t, es, lv, alt)
	if t.places == nil {
		t.places = map[string][]place{}
	}
	t.places[key] = cs
	return cs
}

func findContiguous(t *text, es []entry, lv int, alt bool) []place {
	m := len(es)
	ix := t.indexLevel(lv)
	want := make([][]int32, m) // entry → the classes of its readings
	rare, rareN := 0, -1
	for i := range es {
		rs := es[i].normAt(lv)
		if !alt && len(rs) > 1 {
			rs = rs[:1]
		}
		n := 0
		for _, r := range rs {
			if c := ix.find(r); c >= 0 {
				want[i] = append(want[i], c)
				n += len(ix.at(c))
			}
		}
		if n == 0 {
			return nil
		}
		if rareN < 0 || n < rareN {
			rare, rareN = i, n
		}
	}
	starts := make([]int, 0, rareN)
	for _, c := range want[rare] {
		for _, p := range ix.at(c) {
			if j := int(p) - rare; j >= 0 && j+m <= len(t.lines) {
				starts = append(starts, j)
			}
		}
	}
	if len(want[rare]) > 1 {
		sort.Ints(starts)
	}
	var out []place
	for _, j := range starts {
		ok := true
		for i := 0; i < m && ok; i++ {
			ok = slices.Contains(want[i], ix.class[j+i])
		}
		if ok {
			at := make([]int, m)
			for i := range at {
				at[i] = j + i
			}
			out = append(out, place{start: j, end: j + m, at: at, tier: tierOfLevel[lv], level: lv})
		}
	}
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
//
// Only stretches of the file near a significant line of the hunk are
// aligned, with the same result as aligning the whole file: an acceptable
// place matches at least two significant entries (so at least one that is
// not the most frequent, which is left out), and without an elision an
// alignment within budget spans at most r = the hunk's length plus the
// budget. So every place lies within r of an anchor, and every alignment
// within budget that the place's moves compare ends within r of it and
// starts within 2r: a stretch of 2r+2 each side sees them all.
func fuzzy(t *text, es []entry, budget, lv int) []place {
	m, n := len(es), len(t.lines)
	if m == 0 || n == 0 {
		return nil
	}
	var anchors [][]int32 // per significant entry, the lines it matches
	for i := range es {
		e := &es[i]
		if e.elision {
			// An elision absorbs any number of lines: align the whole file.
			return fuzzySpan(t, es, budget, lv, 0, n, nil)
		}
		if !e.signif {
			continue
		}
		var at []int32
		for _, r := range e.normAt(lv) {
			if c := t.indexLevel(lv).find(r); c >= 0 {
				at = append(at, t.indexLevel(lv).at(c)...)
			}
		}
		if len(at) > 0 {
			anchors = append(anchors, at)
		}
	}
	if len(anchors) < 2 {
		return nil
	}
	most := 0
	for k := range anchors {
		if len(anchors[k]) > len(anchors[most]) {
			most = k
		}
	}
	var near []int
	for k, at := range anchors {
		if k != most {
			for _, p := range at {
				near = append(near, int(p))
			}
		}
	}
	sort.Ints(near)
	reach := 2*(m+budget) + 2
	var out []place
	for k := 0; k < len(near); {
		lo, hi := max(near[k]-reach, 0), min(near[k]+reach+1, n)
		for k++; k < len(near) && near[k]-reach <= hi; k++ {
			hi = min(near[k]+reach+1, n)
		}
		out = fuzzySpan(t, es, budget, lv, lo, hi, out)
	}
	return out
}

// fuzzySpan runs the alignment of fuzzy over file lines [lo, hi) and
// appends the places it finds to out.
func fuzzySpan(t *text, es []entry, budget, lv, lo, hi int, out []place) []place {
	m, n := len(es), hi-lo
	const inf = 1 << 30
	w := n + 1
	cost := make([]int32, (m+1)*w)
	move := make([]uint8, (m+1)*w)
	for i := 1; i <= m; i++ {
		for j := 0; j <= n; j++ {
			best, mv := int32(inf), uint8(mvNone)
			e := &es[i-1]
			if j > 0 && e.matches(t, lv, lo+j-1) {
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
	first := len(out)
	for j := 1; j <= n; j++ {
		c := cost[m*w+j]
		if int(c) > budget || move[m*w+j] == mvDrop || move[m*w+j] == mvNone {
			continue
		}
		p := trace(es, move, w, m, j, lo)
		p.level = lv
		p.cost = int(c)
		if !acceptable(es, p) {
			continue
		}
		// Alignments that share file lines describe the same place: keep the
		// cheaper one.
		if k := len(out) - 1; k >= first && out[k].end > p.start {
			if p.cost < out[k].cost {
				out[k] = p
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

// trace follows the moves back from column j; lo is the file line of
// column 1.
func trace(es []entry, move []uint8, w, m, j, lo int) place {
	p := place{at: make([]int, m), end: lo + j, tier: TierFuzzy, level: levelSpace}
	for k := range p.at {
		p.at[k] = -1
	}
	for i := m; i > 0; {
		switch move[i*w+j] {
		case mvMatch:
			p.at[i-1] = lo + j - 1
			i, j = i-1, j-1
		case mvDrop:
			i--
		case mvElide:
			if p.elided == nil {
				p.elided = map[int][2]int{}
			}
			r, ok := p.elided[i-1]
			if !ok {
				r[1] = lo + j
			}
			r[0] = lo + j - 1
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
// context must be found, enough of it must say something, and no context
// line left out may be the twin of a removed line beside it.
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
	// A context line left out next to a removed line that reads the same:
	// the file may as well have lost that line already (the change made),
	// and the removal would take its twin.
	for i, e := range es {
		if p.at[i] >= 0 || e.kind != patch.LineContext || e.elision {
			continue
		}
		for _, k := range []int{i - 1, i + 1} {
			if k >= 0 && k < len(es) && es[k].kind == patch.LineDelete && normalize(levelTrailing, es[k].raw[0]) == normalize(levelTrailing, e.raw[0]) {
				return false
			}
		}
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
	pairs := indentPairs(t, es, p)
	return len(pairs) == 0 || len(shifts(pairs, false)) > 0
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
