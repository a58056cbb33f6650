package html

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

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

func TestDetectKind(t *testing.T) {
	for want, rows := range map[string][]map[string]any{
		KindDiffXYZ: diffxyzRows(1, 0), KindSWE: sweRows(), KindGeneric: {{"id": "x", "score": 1.0}},
		KindLoc: locRows(), KindAPE: apeRows(),
	} {
		if got := DetectKind(rows); got != want {
			t.Errorf("DetectKind = %s, want %s", got, want)
		}
	}
}

// The data cannot end a script element: model text travels as base64 or
// as JSON with < escaped.
func TestWriteScriptsClosed(t *testing.T) {
	rows := diffxyzRows(2, 0)
	rows[0]["response"] = "</script><script>alert(1)</script>"
	var b bytes.Buffer
	if err := Write(&b, "t</script>", []Run{{Name: "r</script>", Rows: rows}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// 3 bundles, meta, cases, 1 chunk (16 rows), the page's code.
	if open, closed := strings.Count(page, "<script"), strings.Count(page, "</script"); open != 7 || closed != 7 {
		t.Errorf("%d <script and %d </script in the page, want 7 each", open, closed)
	}
	if strings.Contains(page, "alert(1)") {
		t.Errorf("the response is in the page as plain text")
	}
}

func TestErrorFamily(t *testing.T) {
	a := errorFamily(`hunk 2 of f.py: context "x" not found at line 12`)
	b := errorFamily(`hunk 1 of g.py: context "y" not found at line 3`)
	// The file name stays: failures are grouped by file too.
	if a != "hunk N of f.py" || b != "hunk N of g.py" {
		t.Errorf("families %q %q, want hunk N of f.py and hunk N of g.py", a, b)
	}
}

func TestLoadLastRowOfKeyCounts(t *testing.T) {
	dir := t.TempDir()
	data := `{"key":"a","em":0}` + "\n" + `{"key":"b","em":1}` + "\n" + `{"key":"a","em":1}` + "\n" + `{"key":"c","em"`
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Load("r", dir)
	if err != nil {
		t.Fatal(err)
	}
	// Rows are read when the page is written, in the order of their last
	// line: b, then a as last written.
	var rows []map[string]any
	if err := run.each(func(r map[string]any) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0]["key"] != "b" || rows[1]["key"] != "a" || rows[1]["em"] != 1.0 {
		t.Errorf("rows %v, want b then a (em 1)", rows)
	}
}

// pageData decodes the meta and the case table of a page.
func pageData(t *testing.T, page string) (meta, [][]any) {
	t.Helper()
	field := func(id string) string {
		i := strings.Index(page, `id="`+id+`">`)
		if i < 0 {
			t.Fatalf("no %s in the page", id)
		}
		rest := page[i+len(`id="`+id+`">`):]
		return rest[:strings.Index(rest, "</script>")]
	}
	var m meta
	if err := json.Unmarshal([]byte(field("pb-meta")), &m); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(field("pb-cases"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var table [][]any
	if err := json.NewDecoder(zr).Decode(&table); err != nil {
		t.Fatal(err)
	}
	return m, table
}

// A page written in one pass (the kind given) has what a page written in
// two passes (the kind detected) has: the same meta, the same table, the
// absent columns dropped, the same chunks.
func TestOnePassPageMatchesTwoPasses(t *testing.T) {
	for _, c := range []struct {
		kind string
		rows []map[string]any
	}{{KindSWE, sweRows()}, {KindDiffXYZ, diffxyzRows(300, 1)}} {
		var one, two bytes.Buffer
		if err := Write(&two, "t", []Run{{Name: "r", Rows: c.rows}}); err != nil {
			t.Fatal(err)
		}
		if err := Write(&one, "t", []Run{{Name: "r", Kind: c.kind, Rows: c.rows}}); err != nil {
			t.Fatal(err)
		}
		m1, t1 := pageData(t, one.String())
		m2, t2 := pageData(t, two.String())
		if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(t1, t2) {
			t.Errorf("%s: one pass: %v %v\ntwo passes: %v %v", c.kind, m1.Columns, t1[:1], m2.Columns, t2[:1])
		}
		if one.String() != two.String() {
			t.Errorf("%s: the pages differ", c.kind)
		}
		if c.kind == KindSWE && (slices.Contains(m1.Columns, "format") || len(t1[0]) != len(m1.Columns)+1) {
			t.Errorf("swe: columns %v, table rows of %d cells", m1.Columns, len(t1[0]))
		}
	}
}

// The edit found in a response is stored as where it is in the response,
// in UTF-16 units as the page slices strings: what the page shows is the
// edit, whatever characters come before it.
func TestEditStoredAsOffsets(t *testing.T) {
	resp := "Voilà 😀, the fix:\n```diff\n--- a/é.go\n+++ b/é.go\n@@ -1 +1 @@\n-a 😀\n+b\n```\n"
	d := detail(map[string]any{"response": resp})
	if d.Edit == nil || d.Edit.Text != "" || len(d.Edit.At) != 2 {
		t.Fatalf("edit %+v, want offsets only", d.Edit)
	}
	units := utf16.Encode([]rune(resp))
	got := string(utf16.Decode(units[d.Edit.At[0]:d.Edit.At[1]]))
	if !strings.HasPrefix(got, "--- a/é.go\n") || !strings.HasSuffix(got, "+b\n") {
		t.Errorf("the page would show %q", got)
	}
}

// Observe sees each row once, whether the page reads the rows once (kind
// given) or twice (kind detected), and WriteFile counts the cases.
func TestObserveOncePerRow(t *testing.T) {
	rows := diffxyzRows(5, 0)
	for _, kind := range []string{KindDiffXYZ, ""} {
		seen := 0
		n, err := WriteFile(filepath.Join(t.TempDir(), "p.html"), "t", []Run{{Name: "r", Kind: kind, Rows: rows,
			Observe: func(map[string]any) error { seen++; return nil }}})
		if err != nil || seen != len(rows) || n != len(rows) {
			t.Errorf("kind %q: observed %d rows, wrote %d cases (%v); want %d", kind, seen, n, err, len(rows))
		}
	}
}

// TestDiffXYZChartOrder: the charts list size classes from small to large
// and tasks as the paper does, whatever order the rows come in, and a run
// whose rows carry change kinds gets a chart by change kind.
func TestDiffXYZChartOrder(t *testing.T) {
	st := newRunStats("run", KindDiffXYZ)
	for i, size := range []string{"large", "small", "medium", "large", "small"} {
		st.add(map[string]any{"task": []string{"diffgen", "apply"}[i%2], "format": "udiff", "size_class": size,
			"change_kind": []string{"delete-only", "add+delete", "add-only"}[i%3], "em": 1.0, "applied": true, "applied_tolerant": true})
	}
	charts, err := diffxyzCharts([]*runStats{st})
	if err != nil {
		t.Fatal(err)
	}
	order := func(title, field string) []string {
		for _, c := range charts {
			if c.Title != title {
				continue
			}
			var got []string
			for _, p := range c.Spec["data"].(map[string]any)["values"].([]point) {
				got = append(got, p["task"].(string)+"/"+p[field].(string))
			}
			return got
		}
		t.Fatalf("no chart %q", title)
		return nil
	}
	if got, want := order("EM by task × format × size_class", "size_class"), []string{"apply/small", "apply/large", "diffgen/small", "diffgen/medium", "diffgen/large"}; !slices.Equal(got, want) {
		t.Errorf("size classes %v, want %v", got, want)
	}
	if got, want := order("EM by task × format × change_kind", "change_kind"), []string{"apply/add+delete", "apply/delete-only", "diffgen/add+delete", "diffgen/add-only", "diffgen/delete-only"}; !slices.Equal(got, want) {
		t.Errorf("change kinds %v, want %v", got, want)
	}
	// Formats are kept apart within a task: a row of charts each.
	for _, c := range charts {
		if c.Title == "EM by task × format × size_class" {
			if row, _ := c.Spec["encoding"].(map[string]any)["row"].(map[string]any); row["field"] != "format" {
				t.Errorf("%s: row facet %v, want format", c.Title, row)
			}
		}
	}
}

// TestSWERateChart: the SWE page's rate chart is the resolved rate when
// tests ran; under --no-tests, where no instance can be resolved (the
// chart was all zeros without saying why), it is the applied rate and its
// title says the tests did not run.
func TestSWERateChart(t *testing.T) {
	noTests := []map[string]any{
		{"instance_id": "a", "status": "applied"}, {"instance_id": "b", "status": "applied_repaired"},
		{"instance_id": "c", "status": "malformed", "reason": "corrupt patch at line 3"}, {"instance_id": "d", "status": "empty_patch"},
	}
	for _, c := range []struct {
		name  string
		rows  []map[string]any
		title string
		rate  float64
	}{
		{"tests ran", sweRows(), "Resolved rate", 1.0 / float64(len(sweRows()))},
		{"no tests", noTests, "Applied rate (the tests did not run, as with --no-tests: no instance is resolved)", 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newRunStats("r", KindSWE)
			for _, r := range c.rows {
				st.add(r)
			}
			charts := sweCharts([]*runStats{st})
			if len(charts) < 2 || charts[1].Title != c.title {
				t.Fatalf("charts %v; want the second titled %q", charts, c.title)
			}
			pts := charts[1].Spec["data"].(map[string]any)["values"].([]point)
			if len(pts) != 1 || pts[0]["value"] != c.rate {
				t.Errorf("rate points %v; want one of value %v", pts, c.rate)
			}
		})
	}
}
