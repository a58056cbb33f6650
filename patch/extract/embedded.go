package extract

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// How a fence's content is read by the sample rules, by its info word.
type shown int

const (
	// runs: diffs and shell sessions, whose edits are the answer's (a
	// shell runs the heredoc it holds).
	runs shown = iota
	// code: a programming language. An edit with lines of that code
	// before and after it is a string of the code (a test's fixture).
	code
	// generic: no label, or text. Read as code.
	generic
	// data: JSON. An envelope in it is an edit only in an apply_patch
	// call; in other JSON (a fixture) it is a string of that data.
	data
	// doc: markdown and other markup. Shown as a file (named above it),
	// an edit with the document's text around it is an example in that
	// document.
	doc
)

var (
	runLangs = map[string]bool{
		"sh": true, "bash": true, "shell": true, "zsh": true, "fish": true,
		"console": true, "shell-session": true, "sh-session": true, "terminal": true,
		"cmd": true, "bat": true, "powershell": true, "ps1": true, "pwsh": true,
	}
	genericLangs = map[string]bool{"": true, "text": true, "txt": true, "plaintext": true, "plain": true}
	dataLangs    = map[string]bool{"json": true, "jsonc": true, "json5": true, "jsonl": true}
	docLangs     = map[string]bool{
		"markdown": true, "md": true, "mdx": true, "rst": true, "rest": true,
		"restructuredtext": true, "asciidoc": true, "adoc": true, "org": true,
	}
)

// shownAs says how the sample rules read fence c, runs for what is no
// fence.
func shownAs(c *cand) shown {
	if c == nil || c.Kind != "fence" {
		return runs
	}
	lang := strings.ToLower(c.Lang)
	if k := strings.IndexByte(lang, ':'); k >= 0 {
		lang = lang[:k] // "python:src/a.py"
	}
	switch {
	case diffLangs[lang] || runLangs[lang]:
		return runs
	case genericLangs[lang]:
		return generic
	case dataLangs[lang]:
		return data
	case docLangs[lang]:
		return doc
	}
	return code
}

// dropEmbedded sets aside as samples the edits inside a file the answer
// shows whole, which are strings or examples of that file, not edits of
// the files they name:
//
//   - code (a fence labelled with a programming language, no label, or
//     text): an edit with lines of that code before and after it, outside
//     every other structure, blank and path lines aside (a test whose
//     string holds a SEARCH/REPLACE block, a V4A envelope or a unified
//     diff). When one edit of a fence is such a string, every edit of it
//     is set aside: taking the others would apply part of the sample.
//   - data (JSON): an envelope in JSON that is no apply_patch call: the
//     JSON has a field a test has ("expected", "want", "cases"), whatever
//     tool it names, or names no patch tool and has fields a call has not
//     ("name" of a test case); a test fixture, not a tool call.
//   - a document (a fence labelled markdown or other markup) that holds
//     text of its own before its first edit, and that the answer shows as
//     a file (named by a path in its info string, a path line above it, or
//     a document's name, README, CHANGELOG, a .md or .rst file, in the
//     prose just above it) with edits that do not all change that file,
//     or that no prose names and whose headings are a README's: every
//     edit in it is an example of that document, and the fence itself is
//     the document, not an edit. A named document with no edit in it is
//     marked (shownDoc) for choose, which refuses it beside edits that
//     leave it unchanged.
//
// Shell fences run their heredocs and diff fences hold diffs, so they are
// not read so.
func dropEmbedded(cands []*cand, lines []string) {
	children := map[*cand][]*cand{}
	inTop := make([]bool, len(lines)+1) // 1-based: the line is in a top-level structure
	for _, c := range cands {
		if c.parent != nil {
			children[c.parent] = append(children[c.parent], c)
			continue
		}
		for n := c.StartLine; n <= c.EndLine && n < len(inTop); n++ {
			inTop[n] = true
		}
	}
	for _, c := range cands {
		if !c.IsEdit || c.Kind != "v4a" || c.Lang != "json" {
			continue
		}
		// JSON at the top level, as a tool call is written without a
		// fence: the lines around the envelope, to a blank line. A value
		// that opens there is a call or data; JSON inside prose or code
		// is data when it has a test's fields.
		var block string
		opens := false
		switch kind := shownAs(c.parent); {
		case c.parent == nil:
			lo, hi := c.StartLine, c.EndLine
			for lo > 1 && !inTop[lo-1] {
				lo--
			}
			for hi < len(lines) && !inTop[hi+1] {
				hi++
			}
			block, opens = jsonBlock(lines, c.StartLine, lo, hi)
		case kind == code || kind == generic:
			block, _ = jsonBlock(lines, c.StartLine, c.parent.StartLine+1, c.parent.EndLine-1)
		default:
			continue // data fences below; shells and diffs run theirs
		}
		// The envelopes' own text (JSON-escaped strings) is the file's,
		// not the JSON's.
		for {
			a := strings.Index(block, v4aBegin)
			z := strings.Index(block[max(a, 0):], v4aEnd)
			if a < 0 || z < 0 {
				break
			}
			block = block[:a] + block[a+z+len(v4aEnd):]
		}
		fields := fixtureFields(block)
		if opens {
			fields = notCallFields(block)
		}
		switch {
		case fields == nil:
		case c.parent == nil:
			setAside(c, c, "the JSON on "+c.lines(), dataWhy(fields))
		default:
			setAside(c, c.parent, "the JSON on "+c.lines()+" of "+c.parent.describe(), dataWhy(fields))
		}
	}
	for _, h := range cands {
		if h.Kind != "heredoc" || !h.IsEdit && !anyEditIn(cands, h) {
			continue
		}
		if file := writtenFile(lines, h); file != "" {
			where := "the heredoc of `" + strings.TrimSpace(bare(lines[h.StartLine-1])) + "`"
			why := "which writes " + file + " and nothing applies it: a file the answer writes, not an edit"
			for _, c := range cands {
				if c.IsEdit && (c == h || descends(c, h)) {
					setAside(c, nil, where, why)
				}
			}
			// A shell fence around it is an edit only through its text.
			for a := h.parent; a != nil; a = a.parent {
				if a.IsEdit && !anyEditIn(cands, a) {
					setAside(a, a, where, why)
				}
			}
		}
	}
	for _, f := range cands {
		kind := shownAs(f)
		if kind == runs {
			continue
		}
		// The content's input lines, 0-based.
		lo, hi := f.StartLine, f.EndLine-1
		if f.note != "" {
			hi = f.EndLine // unterminated: runs to the end
		}
		covered := make([]bool, hi-lo)
		for _, c := range children[f] {
			for n := c.StartLine; n <= c.EndLine; n++ {
				if k := n - 1 - lo; k >= 0 && k < len(covered) {
					covered[k] = true
				}
			}
		}
		text := func(k int) bool { // a line of the fence's own code or text
			l := strings.TrimSpace(lines[lo+k])
			if l == "" || covered[k] || pathFrom(l) != "" {
				return false
			}
			_, fence := parseFence(l)
			return !fence
		}
		around := func(a, b int) bool { // text before line a and after line b (0-based in content)
			before, after := false, false
			for k := 0; k < a && !before; k++ {
				before = text(k)
			}
			for k := b + 1; k < len(covered) && !after; k++ {
				after = text(k)
			}
			return before && after
		}
		// The fence's own unified diff, from its first header to the end
		// of its last section (0-based in content).
		first, last := -1, -1
		if f.IsEdit && f.Format != patch.V4A && f.Format != patch.SearchReplace {
			content := make([]string, hi-lo)
			for k := range content {
				content[k] = bare(lines[lo+k])
			}
			for k := 0; k < len(content); {
				if covered[k] || !isHeaderStart(content, k, len(content), false) {
					k++
					continue
				}
				end := max(diffEnd(content, k, len(content), false), k+1)
				if first < 0 {
					first = k
				}
				last = end - 1
				k = end
			}
		}
		switch kind {
		case code, generic:
			what := "code"
			if kind == code {
				what = f.Lang + " code"
			}
			why := "between lines of " + what + ": a string of that code, not an edit"
			sampled := false
			for _, c := range children[f] {
				if c.IsEdit && c.Kind != "fence" && c.Kind != "heredoc" && around(c.StartLine-1-lo, c.EndLine-1-lo) {
					sampled = true
				}
			}
			if sampled {
				for _, c := range children[f] {
					if c.IsEdit && c.Kind != "fence" && c.Kind != "heredoc" {
						setAside(c, f, f.describe(), why)
					}
				}
				if f.IsEdit && (f.Format == patch.V4A || f.Format == patch.SearchReplace) {
					// The fence is an edit only through the samples it holds.
					f.IsEdit = false
					f.Reason = f.Reason + "; its " + string(f.Format) + " markers are the samples' only"
				}
			}
			if f.IsEdit && first >= 0 && around(first, last) {
				setAsideSpan(f, lo+first+1, lo+last+1, f.describe(), why)
			}
		case data:
			var envs []*cand
			for _, c := range children[f] {
				if c.Kind == "v4a" {
					envs = append(envs, c)
				}
			}
			if len(envs) == 0 {
				break
			}
			fields := notCallFields(envelopesOut(lines, lo, hi, envs))
			if fields == nil {
				break
			}
			for _, c := range envs {
				if c.IsEdit {
					setAside(c, f, f.describe(), dataWhy(fields))
				}
			}
			if f.IsEdit && f.Format == patch.V4A {
				f.IsEdit = false
				f.Reason = f.Reason + "; its v4a markers are the samples' only"
			}
		}
		// Only a fence labelled as markup is read as a document: an
		// unlabelled one named by prose ("Update requirements.txt:") is
		// how answers show a diff.
		if kind != doc {
			continue
		}
		name := shownName(f, lines, inTop)
		// A document's own text comes before its first example (a title,
		// a paragraph): text only after an edit may be a line of that edit
		// (a context line that lost its space).
		firstEdit := len(covered)
		if first >= 0 {
			firstEdit = first
		}
		var edits []*cand
		if f.IsEdit {
			edits = append(edits, f)
		}
		for _, c := range cands {
			if c.IsEdit && descends(c, f) {
				firstEdit = min(firstEdit, c.StartLine-1-lo)
				edits = append(edits, c)
			}
		}
		var own []string // the document's own text, in order
		ownText := false
		for k := range covered {
			if text(k) {
				own = append(own, strings.TrimSpace(lines[lo+k]))
				ownText = ownText || k < firstEdit
			}
		}
		if !ownText {
			continue
		}
		if len(edits) == 0 {
			// A document shown whole with no edit in it: part of what
			// the answer means when it stands beside edits of other
			// files (see choose).
			if name != "" {
				f.shownDoc = name
			}
			continue
		}
		where := name + " (" + f.adj + " fence, " + f.lines() + ")"
		why := "which the answer shows whole with text around it: an example in that document, not an edit"
		// The fence's own lines, outside the structures in it and its own
		// diff: a README's heading in a diff's context is the file's.
		var bareText []string
		for k := range covered {
			if covered[k] || (first >= 0 && k >= first && k <= last) {
				bareText = append(bareText, "")
				continue
			}
			bareText = append(bareText, strings.TrimRight(bare(lines[lo+k]), " \t"))
		}
		switch sections, words := docSigns(own, bareText); {
		case name != "" && editsOf(edits, name):
			// "Here is the change to README.md:" above the answer
			// wrapped whole, holding a change of README.md: a document
			// holds no change of itself.
			f.Reason += "; named " + name + ", and its edits change " + name + ": the answer wrapped, not the document"
			continue
		case name != "":
		case sections == "":
			continue // the answer wrapped whole (a title, a sentence)
		case words == "":
			where = f.describe()
			why = "a document shown whole (" + sections + "): an example in that document, not an edit"
		default:
			where = f.describe()
			why = "which reads as a document shown whole (" + sections + ") and as the answer wrapped whole (" + words + "): whether its edits are examples or the answer's is not written down"
		}
		for _, c := range edits {
			setAside(c, f, where, why)
		}
		if name == "" {
			f.Reason += "; a document the answer shows whole, not an edit"
			continue
		}
		f.Reason += "; the answer shows it as the document " + name + ", not an edit"
	}
}

// readmeSections are the headings of a project's README (lower case, as
// they start): a fence holding them is a document, not an answer wrapped.
var readmeSections = []string{
	"install", "getting started", "quick start", "quickstart", "usage", "requirements",
	"prerequisites", "license", "licence", "contributing", "contribute", "configuration",
	"features", "examples", "documentation", "api reference", "faq", "authors", "credits",
	"acknowledgements", "acknowledgments", "table of contents", "overview", "changelog", "roadmap",
}

var (
	// A heading: "## Usage", or a line underlined by === or ---.
	reHeading   = lazyRegexp(`^#{1,6}\s+(.+?)\s*#*$`)
	reUnderline = lazyRegexp(`^(?:=+|-+)$`)
	// Words an answer says of its own edit, and no README does.
	reAnswerWords = lazyRegexp(`(?i)\b(?:here(?:'s| is| are)|let's|that's all|that is all|nothing else|the fix|this fix|this fixes|this change|these changes|the change above|the patch above|the diff above|this patch|this diff)\b|\bI(?:'ve|'m| have| changed| updated| added| fixed)?\b|\b[Ww]e(?:'ll| need| can| should)\b`)
)

// docSigns says what in a markup fence's text tells a document shown
// whole from the answer wrapped whole: the README sections among the
// headings of its lines (all, blank where a structure in it stands), or a
// badge ("headings Installation, Usage"), and the words an answer says of
// its edit in its own text (own: "\"Here is\""); "" for none.
func docSigns(own, all []string) (sections, words string) {
	var heads []string
	badge := false
	for i, l := range all {
		// Headings start in column 0: a diff's context line " ## Usage"
		// is none.
		badge = badge || strings.HasPrefix(l, "[![")
		h := ""
		if m := reHeading().FindStringSubmatch(l); m != nil {
			h = m[1]
		} else if i+1 < len(all) && strings.TrimSpace(l) != "" && l[0] != ' ' && !reUnderline().MatchString(l) && reUnderline().MatchString(all[i+1]) && len(all[i+1]) >= 3 {
			h = l
		}
		w := strings.ToLower(strings.Trim(h, " *_`:"))
		for _, s := range readmeSections {
			if strings.HasPrefix(w, s) {
				heads = append(heads, strings.Trim(h, " *_`:"))
				break
			}
		}
	}
	for _, l := range own {
		if words == "" {
			if m := reAnswerWords().FindString(l); m != "" {
				words = `"` + m + `"`
			}
		}
	}
	switch {
	case len(heads) > 0:
		sections = plural("heading", len(heads)) + " " + strings.Join(heads, ", ")
	case badge:
		sections = "a badge"
	}
	return sections, words
}

// editsOf reports whether every edit changes document name and nothing
// else: README.md, or docs/README.md for the name README.
func editsOf(edits []*cand, name string) bool {
	for _, c := range edits {
		for _, p := range editPaths(c) {
			if !sameDoc(p, name) {
				return false
			}
		}
	}
	return true
}

// sameDoc reports whether path p is the document the answer names name
// (a path, or a bare name such as README), ignoring case.
func sameDoc(p, name string) bool {
	if p == "" {
		return false
	}
	p, name = strings.ToLower(p), strings.ToLower(name)
	if p == name || strings.HasSuffix(p, "/"+name) {
		return true
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	if k := strings.LastIndexByte(base, '.'); k > 0 && !strings.Contains(name, ".") {
		base = base[:k]
	}
	return base == name
}

// anyEditIn reports whether an edit is inside h.
func anyEditIn(cands []*cand, h *cand) bool {
	for _, c := range cands {
		if c.IsEdit && descends(c, h) {
			return true
		}
	}
	return false
}

var (
	// The file a shell line sends its heredoc to: "cat > F <<'EOF'",
	// "cat <<EOF >> F", "tee -a F <<EOF".
	reRedirect = lazyRegexp(`(?:^|[^<>&\d])>>?\s*([^\s<>|;&'"]+)|\btee\s+(?:-a\s+)?([^\s<>|;&'"-][^\s<>|;&'"]*)`)
	// A command that applies a patch file.
	reApplies = lazyRegexp(`\bgit\s+(?:apply|am)\b|(?:^|[\s;&|(])patch\s+[-<]|\bapply_patch\b|\bpatchbench\s+apply\b`)
)

// writtenFile returns the file heredoc h writes (its shell line
// redirects it to a file, or tees it) when no line of the answer applies
// that file (the heredoc's own line, or a later one that names it with
// git apply, patch, apply_patch): a fixture the answer saves, not an
// edit. It returns "" otherwise.
func writtenFile(lines []string, h *cand) string {
	l := bare(lines[h.StartLine-1])
	if reApplies().MatchString(l) || strings.Contains(l, "|") {
		return "" // the heredoc goes to the applier
	}
	m := reRedirect().FindStringSubmatch(l)
	if m == nil {
		return ""
	}
	file := m[1] + m[2]
	base := file[strings.LastIndexByte(file, '/')+1:]
	for _, later := range lines[h.EndLine:] {
		// Each command of the line on its own: "git apply --check F &&
		// git apply F" applies F, "git apply --check F" alone does not.
		for _, cmd := range reCommandSep().Split(later, -1) {
			if strings.Contains(cmd, base) && reApplies().MatchString(cmd) && !reNoWrite().MatchString(cmd) {
				return ""
			}
		}
	}
	return file
}

var (
	// What separates the commands of a shell line.
	reCommandSep = lazyRegexp(`&&|\|\||;`)
	// Options with which git apply or patch write nothing.
	reNoWrite = lazyRegexp(`(?:^|\s)--(?:check|stat|numstat|summary|dry-run)\b`)
)

// setAside marks edit c a sample of the file shown in fence f.
func setAside(c, f *cand, where, why string) {
	c.IsEdit = false
	c.Reason += "; in " + where + ", " + why
	c.sample = fmt.Sprintf("the edit at %s is in %s, %s", c.lines(), where, why)
	c.sampleSelf = c == f
}

// setAsideSpan marks fence f, whose own diff at input lines a..b is a
// sample, not an edit.
func setAsideSpan(f *cand, a, b int, where, why string) {
	span := fmt.Sprintf("lines %d-%d", a, b)
	if a == b {
		span = fmt.Sprintf("line %d", a)
	}
	f.IsEdit = false
	f.Reason += "; the diff at " + span + " is " + why
	f.sample = fmt.Sprintf("the edit at %s is in %s, %s", span, where, why)
	f.sampleSelf = true
}

// descends reports whether c is inside f.
func descends(c, f *cand) bool {
	for p := c.parent; p != nil; p = p.parent {
		if p == f {
			return true
		}
	}
	return false
}

func dataWhy(fields []string) string {
	if !slices.ContainsFunc(fields, func(f string) bool { return !fixtureField(f) }) {
		return "JSON that holds a test's data (" + plural("field", len(fields)) + " " + strings.Join(fields, ", ") + "), no apply_patch call: a string of that data, not an edit"
	}
	return "JSON that is no apply_patch call (" + plural("field", len(fields)) + " " + strings.Join(fields, ", ") + "): a string of that data, not an edit"
}

// callFields are the fields of a tool call that runs apply_patch, in the
// wire formats models write them (OpenAI's function call and its
// arguments, codex's shell call, Anthropic's tool_use, VS Code Copilot's
// apply_patch arguments: input and explanation).
var callFields = map[string]bool{
	"input": true, "patch": true, "arguments": true, "args": true,
	"parameters": true, "params": true, "cmd": true, "command": true,
	"type": true, "id": true, "call_id": true, "tool_call_id": true,
	"workdir": true, "cwd": true, "timeout": true, "timeout_ms": true,
	"explanation": true,
}

var (
	// A JSON field name, its quotes escaped or not (in a string of
	// arguments).
	reJSONField = lazyRegexp(`\\*"([^"\\]+)\\*"\s*:`)
	// The tool's name as a JSON string, or a shell command string that
	// runs it on a heredoc (codex's shell tool: ["bash", "-lc",
	// "apply_patch <<'EOF'\n..."]).
	reApplyPatch = lazyRegexp(`\\*"(?:functions\.|tools\.)?apply_patch(?:\\*"|\s*<<)`)
	// A field that names the tool a call runs, naming a patch tool:
	// {"tool": "patch", ...}, {"recipient_name": "functions.apply_patch"}.
	rePatchTool = lazyRegexp(`(?i)\\*"(?:name|tool|tool_name|recipient_name|function|action)\\*"\s*:\s*\\*"(?:functions\.|tools\.)?(?:apply_patch|apply-patch|applypatch|patch|apply_diff)\\*"`)
)

// fixtureField reports whether a JSON field says what a test expects
// (expected, want, output, cases, ...): no tool call has one, so JSON that
// has one is a test's data, whatever tool it names.
func fixtureField(f string) bool {
	f = strings.ToLower(f)
	switch f {
	case "output", "outputs", "case", "cases", "test_cases", "testcases", "tests", "golden", "fixture", "fixtures":
		return true
	}
	return strings.HasPrefix(f, "expect") || strings.HasPrefix(f, "want") || strings.HasPrefix(f, "assert")
}

// jsonFields returns the field names of JSON text, in order, once each.
func jsonFields(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range reJSONField().FindAllStringSubmatch(text, -1) {
		if f := m[1]; !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// reOutputList finds an "output" field holding a list or an object: the
// items of an OpenAI Responses API response (its calls among them), not
// a test's expected output.
var reOutputList = lazyRegexp(`\\*"outputs?\\*"\s*:\s*[\[{]`)

// fixtureFields returns the fields of JSON text that are a test's (see
// fixtureField), or nil.
func fixtureFields(text string) []string {
	var out []string
	for _, f := range jsonFields(text) {
		if fixtureField(f) && !(strings.HasPrefix(f, "output") && reOutputList().MatchString(text)) {
			out = append(out, f)
		}
	}
	return out
}

// notCallFields returns the fields of JSON text (its envelopes left out)
// that no apply_patch call has, in order, or nil when it is a call: it
// names apply_patch (or a tool called patch) and has no field of a
// test's, or has only a call's fields.
func notCallFields(text string) []string {
	if fx := fixtureFields(text); fx != nil {
		return fx
	}
	if reApplyPatch().MatchString(text) || rePatchTool().MatchString(text) {
		return nil
	}
	var out []string
	for _, f := range jsonFields(text) {
		if !callFields[f] {
			out = append(out, f)
		}
	}
	return out
}

// jsonBlock returns the lines around line n (1-based) of lines that are
// not blank, within lo..hi (1-based, inclusive), where a JSON value written
// over several lines lies, and whether a line of them up to n opens one
// ("{" or "["): then the block starts there.
func jsonBlock(lines []string, n, lo, hi int) (string, bool) {
	a, b := n, n
	for a > lo && strings.TrimSpace(lines[a-2]) != "" {
		if _, fence := parseFence(strings.TrimSpace(lines[a-2])); fence {
			break
		}
		a--
	}
	for b < hi && strings.TrimSpace(lines[b]) != "" {
		if _, fence := parseFence(strings.TrimSpace(lines[b])); fence {
			break
		}
		b++
	}
	// The value opens at the last line up to n that starts with "{" or
	// "[" (prose may lead into it: "The call:").
	for k := n; k >= a; k-- {
		if l := strings.TrimSpace(lines[k-1]); strings.HasPrefix(l, "{") || strings.HasPrefix(l, "[") {
			return strings.Join(lines[k-1:b], "\n"), true
		}
	}
	return strings.Join(lines[a-1:b], "\n"), false
}

// envelopesOut returns input lines lo..hi-1 (0-based) without the text of
// the envelopes envs: the JSON around them.
func envelopesOut(lines []string, lo, hi int, envs []*cand) string {
	var b strings.Builder
	k := 0
	for i := lo; i < hi; i++ {
		l := lines[i]
		for k < len(envs) && envs[k].EndLine < i+1 {
			k++
		}
		if k < len(envs) && envs[k].StartLine <= i+1 {
			e := envs[k]
			if i+1 == e.StartLine {
				if a := strings.Index(l, v4aBegin); a >= 0 {
					rest := l[a:]
					l = l[:a]
					if i+1 == e.EndLine {
						if z := strings.Index(rest, v4aEnd); z >= 0 {
							l += rest[z+len(v4aEnd):]
						}
					}
				}
			} else if i+1 == e.EndLine {
				if z := strings.Index(l, v4aEnd); z >= 0 {
					l = l[z+len(v4aEnd):]
				} else {
					l = ""
				}
			} else {
				l = ""
			}
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// reDocName finds a document's name in prose: a file of a markup or text
// format, or the names projects give their documents.
var reDocName = lazyRegexp(`(?i)(?:[\w.-]+/)*[\w-]+\.(?:md|markdown|mdx|rst|txt|adoc|asciidoc|org)\b|\b(?:readme|changelog|contributing)\b`)

// shownName returns the name under which the answer shows fence f as a
// file, or "": a path in its info string ("markdown:README.md",
// title="docs/a.md"), a path line right above it, or a document's name in
// the prose just above it (at most 3 lines, to the nearest structure).
func shownName(f *cand, lines []string, inTop []bool) string {
	if g, ok := parseFence(bare(lines[f.StartLine-1])); ok {
		for _, w := range strings.Fields(g.info) {
			w = strings.Trim(w, `"'`)
			if _, v, ok := strings.Cut(w, "="); ok {
				w = strings.Trim(v, `"'`)
			}
			if p := fenceInfoPath(w); p != "" {
				return p
			}
		}
	}
	prose := 0
	for n := f.StartLine - 1; n >= 1 && prose < 3; n-- {
		if (f.parent != nil && n <= f.parent.StartLine) || (f.parent == nil && inTop[n]) {
			break
		}
		l := strings.TrimSpace(bare(lines[n-1]))
		if l == "" {
			continue
		}
		if _, ok := parseFence(l); ok {
			break
		}
		if prose == 0 {
			if p := pathFrom(l); p != "" {
				return p
			}
		}
		if m := reDocName().FindString(l); m != "" {
			return m
		}
		prose++
	}
	return ""
}

// editPaths returns the files an edit's text names, without a/ and b/
// prefixes; a block or hunk with no name gives "".
func editPaths(c *cand) []string {
	if c.Format == patch.SearchReplace {
		return []string{c.Lang}
	}
	var out []string
	lines, _ := patch.SplitLines(c.Text)
	for _, l := range lines {
		l = bare(l)
		var p string
		switch {
		case strings.HasPrefix(l, "+++ "):
			p = l[4:]
		case strings.HasPrefix(l, "*** Update File: "), strings.HasPrefix(l, "*** Add File: "), strings.HasPrefix(l, "*** Delete File: "):
			_, p, _ = strings.Cut(l, ": ")
		default:
			continue
		}
		p, _, _ = strings.Cut(strings.TrimSpace(p), "\t")
		p = strings.TrimPrefix(strings.TrimPrefix(p, "b/"), "a/")
		out = append(out, p)
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}
