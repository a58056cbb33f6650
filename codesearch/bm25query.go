package codesearch

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/symbols"
)

// issue is what a query says that a model-free search can use besides its
// words: the code it names. Everything here is read from the query
// alone, never from the fix.
type issue struct {
	// text is the query for BM25: without the lines an issue template
	// fills in (checklists, HTML comments), when cleaning is on.
	text string
	// frames are the traceback frames, in the order printed: Python's
	// (File "a.py", line 3, in f) and other stack traces' a.py:3.
	frames []frame
	// imports are the import statements of the code the query quotes.
	imports []pyImport
	// paths are the file paths the query names (frames excluded), in
	// order of first mention.
	paths []string
	// modules are dotted names (a.b.c), in order of first mention.
	modules []string
	// names are the identifiers that look like code (in code spans,
	// snake_case, CamelCase, called), in order of first mention.
	names []string
	// words are every word of the query lower-cased, with the parts of
	// CamelCase and snake_case words, for matching file names.
	words map[string]bool
	// aboutTests says the query's title is about tests; aboutExamples
	// about examples, docs, benchmarks or demos; aboutStubs about type
	// stubs or fixtures.
	aboutTests, aboutExamples, aboutStubs bool
	// title is what the first line names: an issue's title names what
	// it is about, its body also the code around it (logs, examples).
	title *issue
}

// frame is one traceback frame: File "path", line N, in fn.
type frame struct {
	path string
	line int
	fn   string
}

var (
	frameRe = regexp.MustCompile(`File "([^"\n]+)", line (\d+), in ([\w<>.]+)`)
	// lineFrameRe is a frame of other tracebacks (pytest's "a/b.py:12: in
	// f", Go's panics, JavaScript's "at f (a/b.js:3:5)"): a code file's
	// path and a line number.
	lineFrameRe = regexp.MustCompile(`([\w.\-/\\]*[\w\-]\.(?:py|go|js|jsx|ts|tsx|java|rs|kt)):(\d+)\b`)
	pathRe      = regexp.MustCompile(`[\w.\-/]*[\w\-]\.[A-Za-z]{1,5}\b`)
	dottedRe    = regexp.MustCompile(`\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+`)
	identRe     = regexp.MustCompile(`\b[A-Za-z_]\w*\b`)
	callRe      = regexp.MustCompile(`\b([A-Za-z_]\w*)\(`)
	spanRe      = regexp.MustCompile("(?s)```.*?```|`[^`\n]+`")
	commentRe   = regexp.MustCompile(`(?s)<!--.*?-->`)
	checkboxRe  = regexp.MustCompile(`(?m)^\s*[-*] \[[ xX]\].*$`)
	fenceTagRe  = regexp.MustCompile("```[\\w+-]+")
	testWordRe  = regexp.MustCompile(`(?i)\b(tests?|testing|pytest|unittest|test_\w+|\w+_test)\b`)
	// exampleWordRe and stubWordRe: a title about examples, docs,
	// benchmarks or demos; about type stubs or fixtures.
	exampleWordRe = regexp.MustCompile(`(?i)\b(examples?|docs?|documentation|benchmarks?|demos?|samples?|tutorials?)\b`)
	stubWordRe    = regexp.MustCompile(`(?i)(\.pyi\b|\b(stubs?|typeshed|fixtures?)\b)`)
)

// parseIssue reads the code a query names. clean leaves template lines
// out of the BM25 text.
func parseIssue(q string, clean bool) issue {
	is := readIssue(q, clean)
	title, _, _ := strings.Cut(strings.TrimSpace(q), "\n")
	t := readIssue(title, clean)
	is.title = &t
	return is
}

func readIssue(q string, clean bool) issue {
	is := issue{text: q, words: map[string]bool{}}
	if clean {
		is.text = checkboxRe.ReplaceAllString(commentRe.ReplaceAllString(q, " "), " ")
	}
	// Names and paths are read from the cleaned text either way: a
	// template's links and comments name no code of the repository.
	body := checkboxRe.ReplaceAllString(commentRe.ReplaceAllString(q, " "), " ")
	// A fence's language tag (```python) names no code of the repository.
	body = fenceTagRe.ReplaceAllString(body, "```")
	title, _, _ := strings.Cut(strings.TrimSpace(q), "\n")
	is.aboutTests = testWordRe.MatchString(title)
	is.aboutExamples = exampleWordRe.MatchString(title)
	is.aboutStubs = stubWordRe.MatchString(title)

	seen := map[string]bool{}
	add := func(list *[]string, kind, s string) {
		if !seen[kind+s] {
			seen[kind+s] = true
			*list = append(*list, s)
		}
	}
	for _, m := range frameRe.FindAllStringSubmatch(body, -1) {
		n, _ := strconv.Atoi(m[2])
		is.frames = append(is.frames, frame{m[1], n, m[3]})
		seen["p"+strings.Trim(m[1], "./")] = true
	}
	for _, m := range lineFrameRe.FindAllStringSubmatch(body, -1) {
		n, _ := strconv.Atoi(m[2])
		is.frames = append(is.frames, frame{m[1], n, ""})
		seen["p"+strings.Trim(m[1], "./")] = true
	}
	is.imports = pyImports(body)
	for _, m := range pathRe.FindAllString(body, -1) {
		m = strings.Trim(m, "./")
		if symbols.LanguageOf(m) != "" {
			add(&is.paths, "p", m)
		}
	}
	for _, m := range dottedRe.FindAllString(body, -1) {
		if symbols.LanguageOf(m) == "" && !strings.HasPrefix(m, "www.") {
			add(&is.modules, "m", m)
		}
	}
	// Identifiers: every one inside a code span, and those outside that
	// only code writes (snake_case, CamelCase, a call).
	for _, span := range spanRe.FindAllString(body, -1) {
		for _, id := range identRe.FindAllString(span, -1) {
			if len(id) > 2 {
				add(&is.names, "n", id)
			}
		}
	}
	for _, m := range callRe.FindAllStringSubmatch(body, -1) {
		add(&is.names, "n", m[1])
	}
	for _, id := range identRe.FindAllString(body, -1) {
		if codeLike(id) {
			add(&is.names, "n", id)
		}
		lw := strings.ToLower(id)
		is.words[lw] = true
		is.words[strings.ReplaceAll(lw, "_", "")] = true
		for _, p := range splitIdent(id) {
			is.words[strings.ToLower(p)] = true
		}
	}
	for _, f := range is.frames {
		if f.fn != "" {
			add(&is.names, "n", f.fn)
		}
	}
	return is
}

// codeLike reports whether a word is written as only code writes words:
// with an inner underscore or an upper-case letter after a lower-case one.
func codeLike(w string) bool {
	if strings.Contains(strings.Trim(w, "_"), "_") {
		return true
	}
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			return true
		}
	}
	return false
}
