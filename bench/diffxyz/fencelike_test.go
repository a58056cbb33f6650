package diffxyz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// fenceLikeRows returns the rows of the sample shipped in the repository
// and of the shared development set (when it is beside the checkout) whose
// code holds a line that looks like a Markdown fence: reStructuredText
// underlines ("~~~~~~"), Rust doc examples ("```ignore").
func fenceLikeRows(t *testing.T) (rows []*Row, shipped int) {
	t.Helper()
	load := func(path string) []*Row {
		rs, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []*Row
		for _, r := range rs {
			if hasFenceLine(r.OldCode) || hasFenceLine(r.NewCode) {
				out = append(out, r)
			}
		}
		return out
	}
	rows = load("../../testdata/diffxyz-sample.jsonl")
	shipped = len(rows)
	dev := filepath.Join(testdata.SharedDir(), "diffxyz-dev.jsonl.gz")
	if _, err := os.Stat(dev); err == nil {
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.ID] = true
		}
		for _, r := range load(dev) {
			if !seen[r.ID] {
				rows = append(rows, r)
			}
		}
	}
	if err := Prepare(rows); err != nil {
		t.Fatal(err)
	}
	return rows, shipped
}

func hasFenceLine(code string) bool {
	for l := range strings.Lines(code) {
		l = strings.TrimLeft(l, " \t")
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			return true
		}
	}
	return false
}

// answerShapes are the ways a model writes an answer: fenced with ```,
// fenced with an info string, bare, and fenced inside prose.
var answerShapes = []struct {
	name string
	wrap func(text, info string) string
}{
	{"fenced", func(text, _ string) string { return "```\n" + withNewline(text) + "```\n" }},
	{"fenced-info", func(text, info string) string { return "```" + info + "\n" + withNewline(text) + "```\n" }},
	{"bare", func(text, _ string) string { return text }},
	{"prose", func(text, info string) string {
		return "Here is the answer:\n\n```" + info + "\n" + withNewline(text) + "```\n\nNothing else changes.\n"
	}},
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// TestFenceLikeRowsScoreOne: on every row whose code holds fence-like
// lines, the exact answer scores em 1 in each shape, for every task; for
// diffgen, in every format, the exact edit is parsed and applied by the
// paper's definitions and by the tolerant engine, with F1 1.
func TestFenceLikeRowsScoreOne(t *testing.T) {
	rows, shipped := fenceLikeRows(t)
	if shipped == 0 {
		t.Fatal("no row of the shipped sample has fence-like lines")
	}
	answers := 0
	for _, r := range rows {
		for _, c := range Cases([]*Row{r}, Tasks, patch.Formats, []string{WithFormat}) {
			if c.Task != DiffGen && c.Format != patch.UDiff {
				continue // the answer of apply and anti-apply is the same in every format
			}
			if _, na := r.NotApplicable[c.Format]; na {
				continue
			}
			info := r.Lang
			if c.Task == DiffGen {
				info = "diff"
			}
			for _, s := range answerShapes {
				answers++
				sc := ScoreResponse(c, s.wrap(c.Expected(), info))
				ok := sc.EM == 1 && sc.IoU == 1
				if c.Task == DiffGen {
					ok = ok && *sc.Parsed && *sc.Applied && *sc.F1Plus == 1 && *sc.F1Minus == 1 &&
						*sc.AppliedTolerant && *sc.EMTolerant == 1
				}
				if !ok {
					t.Errorf("%s, %s: em %v iou %v %+v", c.Key(), s.name, sc.EM, sc.IoU, sc)
				}
			}
		}
	}
	t.Logf("%d rows (%d shipped), %d exact answers", len(rows), shipped, answers)
}
