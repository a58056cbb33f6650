package extract_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch/extract"
)

func TestAnswer(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no fence", "just code\nhere", "just code\nhere"},
		{"no fence crlf", "a\r\nb\r\n", "a\nb\n"},
		{"empty", "", ""},
		{"plain fence in prose", "Here:\n```\nx = 1\n```\nDone.", "x = 1\n"},
		{"language tag", "```python\ndef f():\n    pass\n```\n", "def f():\n    pass\n"},
		{"tilde fence", "~~~go\npackage p\n~~~\n", "package p\n"},
		{"prose after the closing fence", "```go\npackage p\n```\n\nThis renames f.\n", "package p\n"},
		{"a fence at the start runs to its last closing line", "```\none\n```\ntext\n```\ntwo\n```\n", "one\n```\ntext\n```\ntwo\n"},
		{"unterminated", "```js\nlet a;\nlet b;", "let a;\nlet b;"},
		{"unterminated at end of fence line", "```", ""},
		{"empty block", "```\n```\n", ""},
		{"crlf", "Answer:\r\n```c\r\nint x;\r\n\r\n```\r\n", "int x;\n\n"},
		{"blank lines kept", "```\n\na\n\n```", "\na\n\n"},
		{"closing fence may be longer", "```\na\n`````\n", "a\n"},
		{"shorter run does not close", "````\n```\ninner\n```\n````\n", "```\ninner\n```\n"},
		{"tildes do not close backticks", "```\n~~~\na\n```\n", "~~~\na\n"},
		{"closing fence with info does not close", "```\na\n```go\nb\n```\n", "a\n```go\nb\n"},
		{"indented fence", "1. Do this:\n   ```\n   x\n     y\n   ```\n", "x\n  y\n"},
		{"inline triple backticks are not a fence", "use ```x``` here\n```\ncode\n```", "code\n"},
		{"two backticks are not a fence", "``\nx\n``", "``\nx\n``"},
		{"closing fence with trailing space", "```\na\n```  \nb", "a\n"},
		{"end token", "```\na\n```\n<|im_end|>", "a\n"},
		{"reasoning first", "<think>\nmaybe ```\n</think>\n```\na\n```\n", "a\n"},
		{"byte order mark", "\ufeff```go\npackage p\n```\n", "package p\n"},
		{"byte order mark before bare code", "\ufeffpackage p\n", "package p\n"},
		{"the same block twice", "```go\npackage p\n```\n\n```go\npackage p\n```\n", "package p\n"},
		{"the same block twice, a sentence before each", "Here:\n```\na\n```\nAgain:\n~~~\na\n~~~\n", "a\n"},
		{"the same block twice, holding fence lines", "````\na\n```\nb\n```\n````\n````\na\n```\nb\n```\n````\n", "a\n```\nb\n```\n"},
		{"two different blocks are one answer", "Old:\n```\na\n```\nNew:\n```\nb\n```\n", "a\n```\nNew:\n```\nb\n"},
		{"the same block twice, then prose of two lines", "```\na\n```\n```\na\n```\nOne.\nTwo.\n", "a\n```\n```\na\n"},
		// Bare code is never cut at its own fence-like lines.
		{"underline", "\"\"\"\nrequests.hooks\n~~~~~~~~~~~~~~\n\"\"\"\nx = 1\n", "\"\"\"\nrequests.hooks\n~~~~~~~~~~~~~~\n\"\"\"\nx = 1\n"},
		{"two underlines", "A\n~~~~\nb = 1\nC\n~~~~\nd = 2\ne = 3\nf = 4\n", "A\n~~~~\nb = 1\nC\n~~~~\nd = 2\ne = 3\nf = 4\n"},
		{"doc example in bare code", "/*!\nExample:\n\n```\nlet x = 1;\n```\n*/\nuse std::io;\nfn main() {}\n",
			"/*!\nExample:\n\n```\nlet x = 1;\n```\n*/\nuse std::io;\nfn main() {}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extract.Answer(tt.in); got != tt.want {
				t.Errorf("Answer(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// fenceLike reports whether code holds a line that opens or closes a
// Markdown fence: three or more backticks or tildes after white space.
func fenceLike(code string) bool {
	for l := range strings.Lines(code) {
		l = strings.TrimLeft(l, " \t")
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			return true
		}
	}
	return false
}

// AnswerShapes are the shapes in which a model gives a whole file: fenced
// with ```, fenced with an info string, bare, and fenced inside prose. Each
// returns the answer and the text a correct extraction gives.
var answerShapes = []struct {
	name string
	wrap func(code, lang string) string
}{
	{"fenced", func(code, _ string) string { return "```\n" + withNL(code) + "```\n" }},
	{"fenced-info", func(code, lang string) string { return "```" + lang + "\n" + withNL(code) + "```\n" }},
	{"bare", func(code, _ string) string { return code }},
	{"prose", func(code, lang string) string {
		return "Here is the file after the change:\n\n```" + lang + "\n" + withNL(code) +
			"```\n\nThe rest of the file is unchanged.\n"
	}},
}

func withNL(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// fenceRows returns the rows of the sample shipped in the repository and of
// the shared development set (when it is beside the checkout) whose code
// holds fence-like lines.
func fenceRows(t *testing.T) []testdata.Triple {
	t.Helper()
	f, err := os.Open("../../testdata/diffxyz-sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []testdata.Triple
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r testdata.Triple
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		r.ID = "sample:" + r.ID
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(testdata.SharedDir(), "diffxyz-dev.jsonl.gz")); err == nil {
		rows = append(rows, testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")...)
	}
	var out []testdata.Triple
	for _, r := range rows {
		if fenceLike(r.OldCode) || fenceLike(r.NewCode) {
			out = append(out, r)
		}
	}
	return out
}

// TestAnswerFenceLikeRows gives the old and the new code of every row with
// fence-like lines (reStructuredText underlines, Rust doc examples) in
// each answer shape: Answer must return exactly the code.
func TestAnswerFenceLikeRows(t *testing.T) {
	rows := fenceRows(t)
	sample, dev := 0, 0
	for _, r := range rows {
		if strings.HasPrefix(r.ID, "sample:") {
			sample++
		} else {
			dev++
		}
		for _, code := range []string{r.OldCode, r.NewCode} {
			code = strings.ReplaceAll(code, "\r\n", "\n")
			for _, s := range answerShapes {
				want := code
				if s.name != "bare" {
					want = withNL(code)
				}
				got := extract.Answer(s.wrap(code, r.Lang))
				if got != want {
					t.Errorf("%s, %s: answer differs (-want +got):\n%s", r.ID, s.name, firstLines(cmp.Diff(want, got), 20))
				}
			}
		}
	}
	if sample == 0 {
		t.Fatal("no row of the shipped sample has fence-like lines")
	}
	t.Logf("%d shipped and %d development rows with fence-like lines, %d shapes each", sample, dev, len(answerShapes))
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("... (%d more lines)\n", len(lines)-n)
}

func FuzzAnswer(f *testing.F) {
	for _, s := range []string{"", "```\nx\n```", "~~~~\r\n~~~\r\n", "a\n```go\nb", "  ```\n  c\n", "p\n```\nx\n```\nq\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := extract.Answer(s)
		if !strings.ContainsAny(s, "`~<") && got != strings.ReplaceAll(s, "\r\n", "\n") {
			t.Errorf("Answer(%q) = %q, want the whole response", s, got)
		}
		if len(got) > len(s) {
			t.Errorf("Answer(%q) = %q is longer than the response", s, got)
		}
		// Fencing an answer with a fence longer than any in it gives it
		// back.
		if !strings.Contains(got, "````") && !strings.Contains(got, "\r") {
			if back := extract.Answer("````\n" + withNL(got) + "````\n"); back != withNL(got) {
				t.Errorf("Answer of %q fenced = %q", withNL(got), back)
			}
		}
	})
}
