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

// fakeKind is a kind of rows with a "score": its status is high or low,
// and it draws one chart of the rows counted.
func fakeKind() *Kind {
	return &Kind{
		Name:    "fake",
		Match:   func(r map[string]any) bool { _, ok := r["score"]; return ok },
		Columns: []string{"id", "status", "score", "absent"},
		Derived: []string{"status"},
		Status: func(r map[string]any) string {
			if s, _ := r["score"].(float64); s >= 0.5 {
				return "high"
			}
			return "low"
		},
		NewStats: func(run string) Stats { return &fakeStats{run: run} },
		Charts: func(stats []Stats) ([]Chart, error) {
			var pts []Point
			for _, s := range stats {
				f := s.(*fakeStats)
				pts = append(pts, Point{"run": f.run, "value": f.n, "n": f.n})
			}
			return []Chart{{Title: "rows", Spec: BarSpec(pts, "run", "", "rows", false)}}, nil
		},
		Edit: func(r map[string]any) *Edit {
			resp, _ := r["response"].(string)
			if i := strings.Index(resp, "--- "); i >= 0 {
				text, _, _ := strings.Cut(resp[i:], "```")
				return &Edit{Text: text, Format: "udiff", Source: "response"}
			}
			return nil
		},
	}
}

type fakeStats struct {
	run string
	n   int
}

func (f *fakeStats) Add(map[string]any) { f.n++ }

// fakeRows are n rows of fakeKind, with responses holding an edit.
func fakeRows(n int) []map[string]any {
	var rows []map[string]any
	for i := range n {
		rows = append(rows, map[string]any{"key": fmt.Sprint(i), "id": fmt.Sprintf("case-%d", i), "score": float64(i%4) / 4,
			"response": fmt.Sprintf("here:\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b %d\n", i)})
	}
	return rows
}

// The data cannot end a script element: model text travels as base64 or
// as JSON with < escaped.
func TestWriteScriptsClosed(t *testing.T) {
	rows := fakeRows(16)
	rows[0]["response"] = "</script><script>alert(1)</script>"
	var b bytes.Buffer
	if err := Write(&b, "t</script>", []Run{{Name: "r</script>", Rows: rows}}, fakeKind()); err != nil {
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

// A page of runs whose kind is given has what a page of runs whose kind
// is detected has: the same meta, the same table, the absent columns
// dropped, the same chunks.
func TestKindGivenMatchesDetected(t *testing.T) {
	for _, rows := range [][]map[string]any{fakeRows(4), fakeRows(300)} {
		var given, detected bytes.Buffer
		if err := Write(&detected, "t", []Run{{Name: "r", Rows: rows}}, fakeKind()); err != nil {
			t.Fatal(err)
		}
		if err := Write(&given, "t", []Run{{Name: "r", Kind: fakeKind(), Rows: rows}}); err != nil {
			t.Fatal(err)
		}
		m1, t1 := pageData(t, given.String())
		m2, t2 := pageData(t, detected.String())
		if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(t1, t2) {
			t.Errorf("given: %v %v\ndetected: %v %v", m1.Columns, t1[:1], m2.Columns, t2[:1])
		}
		if given.String() != detected.String() {
			t.Errorf("the pages differ")
		}
		if m1.Kind != "fake" || !slices.Equal(m1.Columns, []string{"id", "status", "score"}) || len(t1[0]) != len(m1.Columns)+1 {
			t.Errorf("kind %s, columns %v, table rows of %d cells; want fake, [id status score] and 4", m1.Kind, m1.Columns, len(t1[0]))
		}
		if t1[1][2] != "low" || t1[2][2] != "high" {
			t.Errorf("statuses %v %v, want low then high", t1[1][2], t1[2][2])
		}
		if len(m1.Charts) != 1 || m1.Charts[0].Title != "rows" {
			t.Errorf("charts %v, want the kind's one", m1.Charts)
		}
	}
}

// Rows no kind matches make a generic page: the generic columns and
// status, a chart per numeric field.
func TestGenericPage(t *testing.T) {
	var b bytes.Buffer
	rows := []map[string]any{{"key": "a", "id": "a", "score": 0.5, "failed": true}, {"key": "b", "id": "b", "score": 1.0}}
	if err := Write(&b, "t", []Run{{Name: "g", Rows: rows}}); err != nil {
		t.Fatal(err)
	}
	m, table := pageData(t, b.String())
	if m.Kind != GenericName || !slices.Equal(m.Columns, []string{"id", "status", "score"}) {
		t.Errorf("kind %s, columns %v", m.Kind, m.Columns)
	}
	if table[0][2] != "failed" || table[1][2] != "ok" {
		t.Errorf("statuses %v %v, want failed and ok", table[0][2], table[1][2])
	}
	if len(m.Charts) != 2 || m.Charts[0].Title != "Rate of failed" || m.Charts[1].Title != "Mean score" {
		t.Errorf("charts %v, want the rate of failed and the mean score", m.Charts)
	}
}

// The edit found in a response is stored as where it is in the response,
// in UTF-16 units as the page slices strings: what the page shows is the
// edit, whatever characters come before it.
func TestEditStoredAsOffsets(t *testing.T) {
	resp := "Voilà 😀, the fix:\n```diff\n--- a/é.go\n+++ b/é.go\n@@ -1 +1 @@\n-a 😀\n+b\n```\n"
	d := detail(fakeKind(), map[string]any{"response": resp})
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
	rows := fakeRows(5)
	for _, kind := range []*Kind{fakeKind(), nil} {
		seen := 0
		n, err := WriteFile(filepath.Join(t.TempDir(), "p.html"), "t", []Run{{Name: "r", Kind: kind, Rows: rows,
			Observe: func(map[string]any) error { seen++; return nil }}}, fakeKind())
		if err != nil || seen != len(rows) || n != len(rows) {
			t.Errorf("kind %v: observed %d rows, wrote %d cases (%v); want %d", kind, seen, n, err, len(rows))
		}
	}
}
