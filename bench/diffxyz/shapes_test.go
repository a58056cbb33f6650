package diffxyz

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/metrics"
	"github.com/patchbench/patchbench/patch"
)

// devRows loads and prepares the dev set (or the copy in testdata/corpus).
func devRows(t *testing.T) []*Row {
	t.Helper()
	rows, err := Load(testdata.Path(t, "diffxyz-dev.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Prepare(rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// crlf writes s with CRLF line endings, whatever its endings were.
func crlf(s string) string {
	return strings.ReplaceAll(normEOL(s), "\n", "\r\n")
}

// shape is a way a model writes an answer (text is the exact answer, info
// the fence's info string).
type shape struct {
	name string
	wrap func(text, info string) string
}

// exactShapes are the ways of writing an exact answer that must score full
// marks.
var exactShapes = []shape{
	{"backticks", func(e, i string) string { return "```" + i + "\n" + withNewline(e) + "```\n" }},
	{"tildes", func(e, i string) string { return "~~~" + i + "\n" + withNewline(e) + "~~~\n" }},
	{"four backticks", func(e, i string) string { return "````" + i + "\n" + withNewline(e) + "````\n" }},
	{"long prose around", func(e, i string) string {
		return "Sure! Here is the result, with every hunk of the edit applied and nothing else touched.\nI kept the indentation.\n\n```" + i + "\n" + withNewline(e) +
			"```\n\nSummary:\n- the hunks were applied in order\n- nothing else changed\n- formatting was kept\n- so was the indentation\n"
	}},
	{"CRLF", func(e, i string) string { return crlf("```" + i + "\n" + withNewline(e) + "```\n") }},
	{"LF", func(e, i string) string { return normEOL("```" + i + "\n" + withNewline(e) + "```\n") }},
	{"bare CRLF", func(e, i string) string { return crlf(e) }},
	{"byte order mark", func(e, i string) string { return "\ufeff```" + i + "\n" + withNewline(e) + "```\n" }},
	{"bare after a byte order mark", func(e, i string) string { return "\ufeff" + e }},
	{"no newline before the closing fence", func(e, i string) string {
		return "```" + i + "\n" + strings.TrimRight(e, "\r\n") + "\n```"
	}},
	{"blank lines before the closing fence", func(e, i string) string { return "```" + i + "\n" + withNewline(e) + "\n\n```\n" }},
	{"white space after the fences", func(e, i string) string { return "```" + i + "  \n" + withNewline(e) + "```   \n" }},
	{"leading blank lines", func(e, i string) string { return "\n\n```" + i + "\n" + withNewline(e) + "```\n" }},
	{"reasoning first", func(e, i string) string {
		return "<think>\nthe fence ``` is\n</think>\n```" + i + "\n" + withNewline(e) + "```\n"
	}},
	{"end token", func(e, i string) string { return "```" + i + "\n" + withNewline(e) + "```<|im_end|>" }},
	{"repeated", func(e, i string) string {
		b := "```" + i + "\n" + withNewline(e) + "```\n"
		return b + "\n" + b
	}},
	{"repeated with a sentence", func(e, i string) string {
		b := "```" + i + "\n" + withNewline(e) + "```\n"
		return "Here is the file:\n" + b + "Once more, the whole file:\n\n" + b
	}},
}

// TestWholeFileShapes: on every dev row, the exact answer of apply and
// anti-apply scores em 1 and iou 1 in every shape, and answers that are
// not the file (empty, the other file first, tabs for spaces, trailing
// spaces) score em 0 — except the other file where the two differ in
// blank lines only, which EM does not count.
func TestWholeFileShapes(t *testing.T) {
	rows := devRows(t)
	n, sameRows := 0, 0
	for _, r := range rows {
		for _, task := range []Task{Apply, AntiApply} {
			c := Case{Row: r, Task: task, Format: patch.UDiff, Prompt: WithFormat}
			e := c.Expected()
			for _, s := range exactShapes {
				n++
				if sc := ScoreResponse(c, s.wrap(e, r.Lang)); sc.EM != 1 || sc.IoU != 1 {
					t.Errorf("%s, %s: em %v iou %v, want 1", c.Key(), s.name, sc.EM, sc.IoU)
				}
			}
			other := r.OldCode
			if task == AntiApply {
				other = r.NewCode
			}
			fenced := func(s string) string { return "```" + r.Lang + "\n" + withNewline(s) + "```\n" }
			wrong := map[string]string{
				"empty":                         "",
				"the other file, then the file": "Original:\n" + fenced(other) + "Updated:\n" + fenced(e),
				"the file, then the other file": "Updated:\n" + fenced(e) + "Original:\n" + fenced(other),
				"the other file, twice":         fenced(other) + "\n" + fenced(other),
				"tabs for four spaces":          fenced(strings.ReplaceAll(e, "    ", "\t")),
				"a space after every line":      fenced(strings.ReplaceAll(normEOL(withNewline(e)), "\n", " \n")),
				"the last line dropped":         fenced(strings.Join(strippedLines(e)[:len(strippedLines(e))-1], "\n")),
			}
			// EM compares the files with blank lines stripped (as the
			// paper's metric does), so where the row's edit only adds or
			// removes blank lines the other file is the file: given
			// alone (twice) it scores em 1. Beside the file it still
			// scores 0: two different blocks are no answer.
			same := metrics.StrippedEM(norm(other), norm(e))
			if same {
				sameRows++
			}
			for name, resp := range wrong {
				if name == "tabs for four spaces" && !strings.Contains(e, "    ") {
					continue
				}
				want := 0.0
				if same && name == "the other file, twice" {
					want = 1
				}
				n++
				if sc := ScoreResponse(c, resp); sc.EM != want {
					t.Errorf("%s, %s: em %v, want %v", c.Key(), name, sc.EM, want)
				}
			}
		}
	}
	t.Logf("%d rows, %d answers; %d tasks whose files differ in blank lines only", len(rows), n, sameRows)
}

func strippedLines(s string) []string {
	var out []string
	for l := range strings.Lines(normEOL(s)) {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return out
}

// TestDiffGenShapes: on every dev row and format, the reference edit
// written in each shape is parsed and applied by the paper's reading and
// by the tolerant engine, with em 1 and F1 1. The one exception is a
// search-replace edit written twice: its blocks are applied in turn (as
// Aider does), so the second finds nothing to replace.
func TestDiffGenShapes(t *testing.T) {
	rows := devRows(t)
	n := 0
	for _, r := range rows {
		for _, c := range Cases([]*Row{r}, []Task{DiffGen}, patch.Formats, []string{WithFormat}) {
			if _, na := r.NotApplicable[c.Format]; na {
				continue
			}
			e := c.Expected()
			for _, s := range exactShapes {
				if c.Format == patch.SearchReplace && strings.HasPrefix(s.name, "repeated") {
					continue
				}
				n++
				sc := ScoreResponse(c, s.wrap(e, "diff"))
				if sc.EM != 1 || !*sc.Parsed || !*sc.Applied || *sc.F1Plus != 1 || *sc.F1Minus != 1 || !*sc.AppliedTolerant || *sc.EMTolerant != 1 {
					t.Errorf("%s, %s: em %v parsed %v applied %v f1 %v/%v tolerant %v em %v (%s)", c.Key(), s.name,
						sc.EM, *sc.Parsed, *sc.Applied, *sc.F1Plus, *sc.F1Minus, *sc.AppliedTolerant, *sc.EMTolerant, sc.ApplyError)
				}
			}
		}
	}
	t.Logf("%d rows, %d edits", len(rows), n)
}
