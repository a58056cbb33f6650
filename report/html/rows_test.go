package html_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/bench/diffxyz"
	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/internal/pageedit"
	"github.com/patchbench/patchbench/report/html"
)

// kinds are the benchmarks' kinds and the generic one, as patchbench
// report --html reads runs.
func kinds() []*html.Kind {
	g := html.Generic()
	g.Match = func(map[string]any) bool { return true }
	g.Edit = pageedit.FromResponse
	return []*html.Kind{diffxyz.Page(), loc.Page(), ape.Page(), swe.Page(), g}
}

var formats = []string{"udiff", "udiff-h", "search-replace", "v4a"}

// diffxyzRows makes n Diff-XYZ-like rows per task × format; shift moves
// which of them score, so that two runs differ.
func diffxyzRows(n, shift int) []map[string]any {
	var rows []map[string]any
	for _, task := range []string{"apply", "diffgen"} {
		for fi, f := range formats {
			for i := range n {
				id := fmt.Sprintf("case-%d:%s", i, task)
				em := 0.0
				if (i+fi+shift)%3 != 0 {
					em = 1
				}
				r := map[string]any{
					"key": id + "|" + f, "id": id, "task": task, "format": f, "prompt": []string{"plain", "with-format"}[i%2],
					"lang": []string{"go", "python"}[i%2], "size_class": "small", "em": em, "iou": em, "failed": false,
					"response": "here:\n```diff\n--- a/x.go\n+++ b/x.go\n@@ -10,2 +10,2 @@\n ctx\n-old line\n+new line " + id + "\n```\n",
				}
				if task == "diffgen" {
					r["applied"] = em == 1 || i%2 == 0
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

func sweRows() []map[string]any {
	return []map[string]any{
		{"key": "a", "id": "a", "instance_id": "a", "status": "resolved", "repairs": []any{}, "repaired_patch": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n"},
		{"key": "b", "id": "b", "instance_id": "b", "status": "apply_failed", "reason": "hunk 2 of f.py: context \"x\" not found at line 12"},
		{"key": "c", "id": "c", "instance_id": "c", "status": "apply_failed", "reason": "hunk 1 of g.py: context \"y\" not found at line 3"},
		{"key": "d", "id": "d", "instance_id": "d", "status": "unresolved", "repairs": []any{"whitespace"}},
	}
}

// locRows are Loc-Bench results: scores in a metrics map, by category.
func locRows() []map[string]any {
	var rows []map[string]any
	for i := range 12 {
		q := float64(i%5) / 4
		rows = append(rows, map[string]any{
			"key": fmt.Sprintf("loc-%d", i), "id": fmt.Sprintf("loc-%d", i), "repo": "acme/calc",
			"category": []string{"fix", "feature", ""}[i%3], "mode": "indexed", "failed": false,
			"found": map[string]any{"files": []any{"calc.py"}},
			"metrics": map[string]any{"file_recall": q, "file_precision": q, "line_coverage": q / 2, "quality_score": q,
				"quality_score_v2": q, "file_acc@5": q, "function_acc@10": q / 2},
		})
	}
	return rows
}

// apeRows are APE candidates: 3 tasks of 4 samples, some compiling, fewer
// passing the judge.
func apeRows() []map[string]any {
	var rows []map[string]any
	for t := range 3 {
		for s := range 4 {
			task := fmt.Sprintf("t%d", t)
			rows = append(rows, map[string]any{
				"key": fmt.Sprintf("%s|%d", task, s), "id": task, "task": task, "sample": float64(s),
				"category": "Feature", "difficulty": "Easy", "applied": s != 3,
				"compile_pass": s < 3-t%2, "judge_pass": s < 2-t%2, "grade": "Good",
				"response": "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -1 +1 @@\n-a\n+b\n```\n",
			})
		}
	}
	return rows
}

// TestDetectKind: a run given without its kind is read as the kind of
// its rows, and runs of two kinds make a generic page.
func TestDetectKind(t *testing.T) {
	for _, c := range []struct {
		want string
		runs [][]map[string]any
	}{
		{"diffxyz", [][]map[string]any{diffxyzRows(1, 0)}},
		{"swe", [][]map[string]any{sweRows()}},
		{"loc", [][]map[string]any{locRows()}},
		{"ape", [][]map[string]any{apeRows()}},
		{"generic", [][]map[string]any{{{"id": "x", "score": 1.0}}}},
		{"generic", [][]map[string]any{sweRows(), apeRows()}},
	} {
		var runs []html.Run
		for i, rows := range c.runs {
			runs = append(runs, html.Run{Name: fmt.Sprint(i), Rows: rows})
		}
		var b bytes.Buffer
		if err := html.Write(&b, "t", runs, kinds()...); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		i := strings.Index(page, `id="pb-meta">`)
		rest := page[i+len(`id="pb-meta">`):]
		var m struct{ Kind string }
		if err := json.Unmarshal([]byte(rest[:strings.Index(rest, "</script>")]), &m); err != nil {
			t.Fatal(err)
		}
		if m.Kind != c.want {
			t.Errorf("%d runs of %v...: page kind %s, want %s", len(runs), c.runs[0][0], m.Kind, c.want)
		}
	}
}
