package extract

import (
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// plainLangs are fence info words whose content is not program source:
// diffs, prose, shell sessions (which run apply_patch or git apply on the
// edit they hold) and JSON tool calls. Any other word (python, go, ...)
// labels code, and an edit with code lines on both sides of it in such a
// fence is a sample in a string literal of that code (a test's fixture),
// not the answer's edit.
var plainLangs = map[string]bool{
	"": true, "text": true, "txt": true, "plaintext": true, "plain": true,
	"markdown": true, "md": true, "sh": true, "bash": true, "shell": true,
	"zsh": true, "fish": true, "console": true, "shell-session": true,
	"sh-session": true, "terminal": true, "cmd": true, "bat": true,
	"powershell": true, "ps1": true, "pwsh": true, "json": true,
	"jsonc": true, "json5": true, "jsonl": true,
}

// codeFence reports whether c is a fence labelled with a programming
// language.
func codeFence(c *cand) bool {
	if c == nil || c.Kind != "fence" {
		return false
	}
	lang := strings.ToLower(c.Lang)
	if k := strings.IndexByte(lang, ':'); k >= 0 {
		lang = lang[:k] // "python:src/a.py"
	}
	return !plainLangs[lang] && !diffLangs[lang]
}

// dropEmbedded marks as no edit the edits that sit inside the code of a
// fence labelled with a programming language, with lines of that code
// both before and after them: a whole file shown in the answer (a test
// whose string holds a SEARCH/REPLACE block, a V4A envelope or a unified
// diff) is not an edit of the file its sample names.
func dropEmbedded(cands []*cand, lines []string) {
	children := map[*cand][]*cand{}
	for _, c := range cands {
		if c.parent != nil {
			children[c.parent] = append(children[c.parent], c)
		}
	}
	for _, f := range cands {
		if !codeFence(f) {
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
		code := func(k int) bool {
			l := strings.TrimSpace(lines[lo+k])
			if l == "" || covered[k] || pathFrom(l) != "" {
				return false
			}
			_, fence := parseFence(l)
			return !fence
		}
		around := func(a, b int) bool { // code before line a and after line b (0-based in content)
			before, after := false, false
			for k := 0; k < a && !before; k++ {
				before = code(k)
			}
			for k := b + 1; k < len(covered) && !after; k++ {
				after = code(k)
			}
			return before && after
		}
		why := "sits between lines of " + f.Lang + " code in " + f.describe() + ", as a string of that code: a sample, not an edit"
		dropped, kept := 0, 0
		for _, c := range children[f] {
			switch {
			case !c.IsEdit:
			case c.Kind != "fence" && c.Kind != "heredoc" && around(c.StartLine-1-lo, c.EndLine-1-lo):
				c.IsEdit = false
				c.Reason = c.Reason + "; " + why
				dropped++
			default:
				kept++
			}
		}
		if f.IsEdit && dropped > 0 && kept == 0 && (f.Format == patch.V4A || f.Format == patch.SearchReplace) {
			// The fence is an edit only through the samples it holds.
			f.IsEdit = false
			f.Reason = f.Reason + "; its " + string(f.Format) + " markers are the samples' only"
		}
		if f.IsEdit && f.Format != patch.V4A && f.Format != patch.SearchReplace {
			content := make([]string, hi-lo)
			for k := range content {
				content[k] = bare(lines[lo+k])
			}
			first, last := -1, -1
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
			if first >= 0 && around(first, last) {
				f.IsEdit = false
				f.Reason = f.Reason + "; the diff " + why
			}
		}
	}
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
