package extract

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/patch"
)

// The V4A envelope markers.
const (
	v4aBegin = "*** Begin Patch"
	v4aEnd   = "*** End Patch"
)

// maxDepth bounds container nesting, so that adversarial input cannot make
// the scan quadratic in depth.
const maxDepth = 8

var (
	// The search-replace markers, as loose as patch.Detect: 5 to 9 marker
	// characters, an optional space, trailing whitespace.
	reSearch  = lazyRegexp(`^<{5,9} ?SEARCH\s*$`)
	reDivider = lazyRegexp(`^={5,9}\s*$`)
	reReplace = lazyRegexp(`^>{5,9} ?REPLACE\s*$`)

	reTagOpen  = lazyRegexp(`(?i)^[ \t]*<(patch|diff)(?:\s[^>]*)?>`)
	reTagClose = sync.OnceValue(func() map[string]*regexp.Regexp {
		return map[string]*regexp.Regexp{
			"patch": regexp.MustCompile(`(?i)</patch>`),
			"diff":  regexp.MustCompile(`(?i)</diff>`),
		}
	})

	// A shell command with a heredoc: a command word (not a diff line, not a
	// marker), then <<, <<-, and a delimiter, quoted or an upper-case word
	// (EOF, PATCH): that keeps C++'s "cout << endl" out. "<<<" is a
	// here-string and does not match.
	reHeredoc = lazyRegexp(`^[ \t]*[^\s+\-<>@#*=~` + "`" + `][^<]*<<-?[ \t]*(?:'([A-Za-z_][\w.-]*)'|"([A-Za-z_][\w.-]*)"|([A-Z_][A-Z0-9_]*)\b)`)
)

// diffLangs are fence info words that announce an edit.
var diffLangs = map[string]bool{
	"diff": true, "patch": true, "udiff": true, "git": true, "gitdiff": true,
	"git-diff": true, "unidiff": true, "unified-diff": true, "v4a": true,
	"apply_patch": true, "search-replace": true,
}

// region is a run of lines to scan: the whole input, or a container's
// content.
type region struct {
	lines []string
	nums  []int // 1-based input line of each line
	depth int
	owner *cand // the container whose content this is, nil at the top
	// parent and at locate the container's opening line, so that a
	// search-replace block at the top of a fence finds its path above it.
	parent *region
	at     int

	// trimmed maps each line, trimmed of spaces, to the indexes where it
	// occurs, built on first use so that heredoc delimiters are found in
	// one pass over the region.
	trimmed map[string][]int

	// hunk marks the lines of unified-diff hunks (see inHunk), built on
	// first use.
	hunk []bool
}

// inHunk reports whether line i is a line of a unified diff's hunk: a
// context, added or removed line under a hunk header with only hunk lines
// between. Such a line is a line of the file the diff edits (an example
// fence, envelope or heredoc in a document, a Go string holding an
// envelope), never a structure of its own: git apply and GNU patch read
// the diff around it.
func (r *region) inHunk(i int) bool {
	if r.hunk == nil {
		r.hunk = make([]bool, len(r.lines))
		in := false
		for k, l := range r.lines {
			l = bare(l)
			switch {
			case strings.HasPrefix(l, "@@"):
				in = true
				continue
			case l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\':
			default:
				in = false
			}
			r.hunk[k] = in
		}
	}
	l := r.lines[i]
	return r.hunk[i] && l != "" && (l[0] == ' ' || l[0] == '+' || l[0] == '-')
}

// find returns the first index after i of a line that is text once
// trimmed, or -1.
func (r *region) find(text string, i int) int {
	if r.trimmed == nil {
		r.trimmed = map[string][]int{}
		for k, l := range r.lines {
			t := strings.TrimSpace(l)
			r.trimmed[t] = append(r.trimmed[t], k)
		}
	}
	idx := r.trimmed[text]
	if k := sort.SearchInts(idx, i+1); k < len(idx) {
		return idx[k]
	}
	return -1
}

type scanner struct {
	cands []*cand
}

func (s *scanner) add(r *region, c *cand) {
	c.parent = r.owner
	c.depth = r.depth
	s.cands = append(s.cands, c)
}

// scan finds the structures in r. Top-level lines outside every structure
// are searched for raw diffs.
func (s *scanner) scan(r *region) {
	run := -1 // first line of the current run of loose lines
	for i := 0; i < len(r.lines); {
		if next := s.structure(r, i); next > i {
			if run >= 0 {
				s.raw(r, run, i)
				run = -1
			}
			i = next
			continue
		}
		if run < 0 {
			run = i
		}
		i++
	}
	if run >= 0 {
		s.raw(r, run, len(r.lines))
	}
}

// structure adds the structure starting at line i of r, if any, and returns
// the index after it; it returns i when none starts there.
func (s *scanner) structure(r *region, i int) int {
	l := bare(r.lines[i])
	top := r.depth == 0
	nest := r.depth < maxDepth
	if top && r.inHunk(i) {
		return i
	}
	if f, ok := parseFence(l); ok && nest && (top || f.indent == "") {
		return s.fence(r, i, f)
	}
	if isV4ABegin(l, top) {
		return s.v4a(r, i)
	}
	if reSearch().MatchString(l) {
		return s.searchReplace(r, i)
	}
	if m := reTagOpen().FindStringSubmatchIndex(l); m != nil && nest && (top || l[0] == '<') {
		return s.tag(r, i, strings.ToLower(l[m[2]:m[3]]), m[1])
	}
	if next := s.jsonV4A(r, i); next > i {
		return next
	}
	if nest && l != "" {
		if next := s.heredoc(r, i); next > i {
			return next
		}
	}
	return i
}

// bare drops the "\r" of a CRLF line, for recognising markers.
func bare(l string) string { return strings.TrimSuffix(l, "\r") }

func crOf(l string) string {
	if strings.HasSuffix(l, "\r") {
		return "\r"
	}
	return ""
}

func joinLines(lines []string) string { return patch.JoinLines(lines, true) }

// fenceLine is a parsed fence opening or closing line.
type fenceLine struct {
	indent string
	ch     byte
	n      int
	info   string
}

func parseFence(l string) (fenceLine, bool) {
	t := strings.TrimLeft(l, " \t")
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return fenceLine{}, false
	}
	ch := t[0]
	n := 0
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 {
		return fenceLine{}, false
	}
	info := strings.TrimSpace(t[n:])
	if ch == '`' && strings.Contains(info, "`") {
		// Inline code such as ```x```, not a fence.
		return fenceLine{}, false
	}
	return fenceLine{indent: l[:len(l)-len(t)], ch: ch, n: n, info: info}, true
}

// closedBy reports whether g closes the fence f opened.
func (f fenceLine) closedBy(g fenceLine) bool {
	return g.info == "" && g.ch == f.ch && g.n >= f.n && len(g.indent) <= len(f.indent)
}

func (s *scanner) fence(r *region, i int, f fenceLine) int {
	end := -1
	for j := i + 1; j < len(r.lines); j++ {
		l := bare(r.lines[j])
		if reSearch().MatchString(l) {
			// The SEARCH text of a markdown file may hold fence lines.
			if k := srEnd(r.lines, j); k >= 0 {
				j = k
				continue
			}
		}
		if g, ok := parseFence(l); ok && f.closedBy(g) {
			end = j
			break
		}
	}
	last, contentEnd := end, end
	if end < 0 {
		last, contentEnd = len(r.lines)-1, len(r.lines)
	}
	content := r.lines[i+1 : contentEnd]
	if f.indent != "" && allIndented(content, f.indent) {
		stripped := make([]string, len(content))
		for k, l := range content {
			stripped[k] = strings.TrimPrefix(l, f.indent)
		}
		content = stripped
	}
	lang, _, _ := strings.Cut(f.info, " ")
	marker := strings.Repeat(string(f.ch), f.n)
	c := &cand{Candidate: Candidate{Kind: "fence", Lang: lang, StartLine: r.nums[i], EndLine: r.nums[last]}, noun: "fence", rank: 1}
	if lang == "" {
		c.adj = "unlabelled " + marker
	} else {
		c.adj = marker + lang
	}
	if diffLangs[strings.ToLower(lang)] {
		c.rank = 0
	}
	if end < 0 {
		c.note = "unterminated fence, runs to the end"
	}
	s.add(r, c)
	s.scan(&region{lines: content, nums: r.nums[i+1 : contentEnd], depth: r.depth + 1, owner: c, parent: r, at: i})
	c.Text = containerText(content)
	return last + 1
}

// allIndented reports whether every non-blank line starts with indent.
func allIndented(lines []string, indent string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, indent) {
			return false
		}
	}
	return true
}

// containerText is the text of a container's content. Prose before the
// first header of a unified diff is dropped; parsers skip it anyway, and
// without it the candidate says what it holds.
func containerText(lines []string) string {
	text := joinLines(lines)
	if f, ok := patch.Detect(text); ok && f != patch.V4A && f != patch.SearchReplace {
		for k := range lines {
			if isHeaderStart(lines, k, len(lines), false) {
				return joinLines(lines[k:])
			}
		}
	}
	return text
}

// tag adds a <patch> or <diff> tag opened on line i; rest is where the
// content starts on that line.
func (s *scanner) tag(r *region, i int, name string, rest int) int {
	closeRe := reTagClose()[name]
	var content []string
	var nums []int
	keep := func(l string, n int) {
		if strings.TrimSpace(l) != "" {
			content = append(content, l)
			nums = append(nums, n)
		}
	}
	last := -1
	first := r.lines[i][rest:]
	if loc := closeRe.FindStringIndex(first); loc != nil {
		keep(first[:loc[0]], r.nums[i])
		last = i
	} else {
		keep(first, r.nums[i])
		for j := i + 1; j < len(r.lines); j++ {
			if loc := closeRe.FindStringIndex(r.lines[j]); loc != nil {
				keep(r.lines[j][:loc[0]], r.nums[j])
				last = j
				break
			}
			content = append(content, r.lines[j])
			nums = append(nums, r.nums[j])
		}
	}
	c := &cand{Candidate: Candidate{Kind: "tag", Lang: name, StartLine: r.nums[i]}, adj: "<" + name + ">", noun: "tag"}
	if last < 0 {
		last = len(r.lines) - 1
		c.note = "unterminated tag, runs to the end"
	}
	c.EndLine = r.nums[last]
	s.add(r, c)
	s.scan(&region{lines: content, nums: nums, depth: r.depth + 1, owner: c, parent: r, at: i})
	c.Text = containerText(content)
	return last + 1
}

// heredoc adds the heredocs a shell line opens on line i, each whose
// delimiter line follows, their bodies one after another as the shell
// reads them ("cat <<A > a; cat <<B > b").
func (s *scanner) heredoc(r *region, i int) int {
	l := bare(r.lines[i])
	if !strings.Contains(l, "<<") {
		return i
	}
	sl := parseShell(l)
	if len(sl.docs) == 0 {
		return i
	}
	// The delimiter is quoted or an upper-case word, which keeps C++'s
	// "cout << x" out, or the line is a command known to take a heredoc
	// ("apply_patch <<eof", "  git apply <<patch" in a fence).
	indented := l[0] == ' ' || l[0] == '\t'
	if (r.depth > 0 && indented || !reHeredoc().MatchString(l)) && !(knownShell(sl) && !r.inHunk(i)) {
		return i
	}
	cmd, _, _ := strings.Cut(strings.TrimSpace(l), " ")
	at, next := i, i
	for k, d := range sl.docs {
		end := r.find(d.delim, at)
		if end < 0 {
			break
		}
		start := at
		if k > 0 {
			start = at + 1 // the body after the previous delimiter line
		}
		c := &cand{Candidate: Candidate{Kind: "heredoc", Lang: d.delim, StartLine: r.nums[min(start, end)], EndLine: r.nums[end]},
			adj: cmd, noun: "heredoc", shell: r.nums[i], doc: k}
		s.add(r, c)
		content := r.lines[at+1 : end]
		s.scan(&region{lines: content, nums: r.nums[at+1 : end], depth: r.depth + 1, owner: c, parent: r, at: i})
		c.Text = containerText(content)
		at, next = end, end+1
	}
	return next
}

// knownShell reports whether the first command of sl is one that takes a
// heredoc as a patch or a file: an applier, cat or tee.
func knownShell(sl shLine) bool {
	if len(sl.cmds) == 0 {
		return false
	}
	if _, ok := applier(sl.cmds[0].argv, 0); ok {
		return true
	}
	argv := sl.cmds[0].argv
	return len(argv) > 0 && (argv[0] == "cat" || argv[0] == "tee")
}

// isV4ABegin reports whether l opens a V4A envelope: the marker alone, or
// after an opening quote as in apply_patch "*** Begin Patch. Nested
// envelopes start in column 0.
func isV4ABegin(l string, top bool) bool {
	k := strings.Index(l, v4aBegin)
	if k < 0 || strings.TrimSpace(l[k+len(v4aBegin):]) != "" {
		return false
	}
	pre := l[:k]
	if pre == "" {
		return true
	}
	if c := pre[0]; c == '+' || c == '-' || (!top && (c == ' ' || c == '\t')) {
		return false
	}
	if strings.TrimSpace(pre) == "" {
		return true
	}
	q := pre[len(pre)-1]
	return q == '"' || q == '\''
}

// isV4AEnd reports whether l closes a V4A envelope, allowing a closing
// quote or parenthesis after the marker.
func isV4AEnd(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, v4aEnd) && strings.Trim(t[len(v4aEnd):], "\"'`); \t") == ""
}

func (s *scanner) v4a(r *region, i int) int {
	end := -1
	for j := i + 1; j < len(r.lines); j++ {
		l := bare(r.lines[j])
		if isV4AEnd(l) {
			end = j
			break
		}
		if isV4ABegin(l, r.depth == 0) {
			break
		}
	}
	c := &cand{Candidate: Candidate{Kind: "v4a", StartLine: r.nums[i]}, adj: "v4a", noun: "envelope"}
	var body []string
	last := end
	if end >= 0 {
		body = r.lines[i+1 : end]
	} else {
		stop := diffEnd(r.lines, i+1, len(r.lines), true)
		body = r.lines[i+1 : stop]
		last = max(stop-1, i)
		c.note = `no "*** End Patch": added`
	}
	c.EndLine = r.nums[last]
	// The markers are written bare: what surrounded them (a quote, a
	// closing parenthesis) belongs to the wrapper.
	cr := crOf(r.lines[i])
	c.Text = v4aBegin + cr + "\n" + joinLines(body) + v4aEnd + cr + "\n"
	s.add(r, c)
	return last + 1
}

// jsonV4A adds a V4A envelope written as a JSON string on line i, as in
// {"input": "*** Begin Patch\n*** Update File: a.py\n..."}. Strings escaped
// twice (a JSON string inside a JSON string) are unescaped twice.
func (s *scanner) jsonV4A(r *region, i int) int {
	l := r.lines[i]
	a := strings.Index(l, v4aBegin+`\`)
	if a < 0 || r.inHunk(i) {
		return i
	}
	b := strings.Index(l[a:], v4aEnd)
	if b < 0 {
		return i
	}
	text := l[a : a+b+len(v4aEnd)]
	for k := 0; k < 3 && !strings.Contains(text, "\n"); k++ {
		var out string
		if json.Unmarshal([]byte(`"`+text+`"`), &out) != nil {
			return i
		}
		text = out
	}
	if !strings.HasPrefix(text, v4aBegin+"\n") && !strings.HasPrefix(text, v4aBegin+"\r\n") {
		return i
	}
	c := &cand{Candidate: Candidate{Kind: "v4a", Lang: "json", StartLine: r.nums[i], EndLine: r.nums[i], Text: text + "\n"},
		adj: "JSON-escaped v4a", noun: "envelope"}
	s.add(r, c)
	return i + 1
}

// srEnd returns the index of the REPLACE marker of the block whose SEARCH
// marker is at i, or -1 if another block starts first or there is none.
func srEnd(lines []string, i int) int {
	for j := i + 1; j < len(lines); j++ {
		l := bare(lines[j])
		if reReplace().MatchString(l) {
			return j
		}
		if reSearch().MatchString(l) {
			return -1
		}
	}
	return -1
}

func (s *scanner) searchReplace(r *region, i int) int {
	c := &cand{Candidate: Candidate{Kind: "search-replace", StartLine: r.nums[i]}, adj: "search-replace", noun: "block"}
	last := srEnd(r.lines, i)
	if last < 0 {
		// A truncated block runs to the next block or the end.
		c.note = "no REPLACE marker"
		last = len(r.lines) - 1
		for j := i + 1; j < len(r.lines); j++ {
			if reSearch().MatchString(bare(r.lines[j])) {
				last = j - 1
				break
			}
		}
	}
	c.EndLine = r.nums[last]
	text := joinLines(r.lines[i : last+1])
	if p := pathAbove(r, i); p != "" {
		text = p + crOf(r.lines[i]) + "\n" + text
		c.Lang = p
	}
	c.Text = text
	s.add(r, c)
	return last + 1
}

// pathAbove finds the path of the search-replace block at line i: the
// nearest line above that is neither blank nor a fence line, looking out of
// the containers the block is in, if it looks like a path. A fence info
// string such as "python:src/a.py" names the path too.
func pathAbove(r *region, i int) string {
	k := i - 1
	for {
		for ; k >= 0; k-- {
			l := strings.TrimSpace(r.lines[k])
			if l == "" {
				continue
			}
			if f, ok := parseFence(l); ok {
				if p := fenceInfoPath(f.info); p != "" {
					return p
				}
				continue
			}
			return pathFrom(l)
		}
		if r.parent == nil {
			return ""
		}
		k, r = r.at, r.parent
	}
}

func fenceInfoPath(info string) string {
	w, _, _ := strings.Cut(info, " ")
	if k := strings.LastIndexByte(w, ':'); k >= 0 {
		w = w[k+1:]
	}
	if strings.Contains(w, "/") || strings.LastIndexByte(w, '.') > 0 {
		if isPath(w) {
			return w
		}
	}
	return ""
}

// pathFrom returns the path that line names, or "". Markdown headings
// ("### a.py"), bold ("**a.py**"), "File: a.py" labels and backticks are
// removed; under a heading or label, a single backticked path in prose
// ("### Changes to `a.py`") counts too.
func pathFrom(line string) string {
	l := strings.TrimSpace(line)
	explicit := false
	if t := strings.TrimLeft(l, "#"); len(t) < len(l) && (t == "" || t[0] == ' ') {
		l, explicit = strings.TrimSpace(t), true
	}
	if b := strings.TrimSuffix(l, ":"); len(b) > 4 && strings.HasPrefix(b, "**") && strings.HasSuffix(b, "**") {
		l, explicit = strings.TrimSpace(b[2:len(b)-2]), true
	}
	for _, p := range []string{"file:", "filename:", "path:", "file path:"} {
		if len(l) > len(p) && strings.EqualFold(l[:len(p)], p) {
			l, explicit = strings.TrimSpace(l[len(p):]), true
			break
		}
	}
	if explicit {
		l = strings.TrimSuffix(l, ":")
	}
	if len(l) > 2 && l[0] == '`' && l[len(l)-1] == '`' {
		l = l[1 : len(l)-1]
	}
	if isPath(l) {
		return l
	}
	if explicit {
		parts := strings.Split(l, "`")
		if len(parts) == 3 && isPath(parts[1]) && (strings.Contains(parts[1], "/") || strings.Contains(parts[1], ".")) {
			return parts[1]
		}
	}
	return ""
}

// isPath reports whether p looks like a relative path: no spaces or quotes,
// not a sentence end ("Changes:", "Done."), with a letter or digit.
func isPath(p string) bool {
	if p == "" || len(p) > 1024 || strings.ContainsAny(p, " \t`<>|\"*?") {
		return false
	}
	switch p[len(p)-1] {
	case ':', '.', ',', ';', '!':
		return false
	}
	if c := p[0]; c == '-' || c == '+' || c == '=' || c == '@' {
		return false
	}
	return strings.IndexFunc(p, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}) >= 0
}

// raw adds the raw diffs in lines [lo, hi) of a top-level region.
func (s *scanner) raw(r *region, lo, hi int) {
	if r.depth > 0 {
		// A container's content is a candidate as a whole.
		return
	}
	for i := lo; i < hi; {
		if !isHeaderStart(r.lines, i, hi, false) {
			i++
			continue
		}
		end := max(diffEnd(r.lines, i, hi, false), i+1)
		c := &cand{Candidate: Candidate{Kind: "raw", StartLine: r.nums[i], EndLine: r.nums[end-1], Text: joinLines(r.lines[i:end])},
			adj: "raw", noun: "diff", rank: 2}
		s.add(r, c)
		i = end
	}
}
