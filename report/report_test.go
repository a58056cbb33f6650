package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata")

// parseRows decodes JSON lines as the runner writes them.
func parseRows(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("row %d: %v", i+1, err)
		}
		rows = append(rows, row)
	}
	return rows
}

// golden checks the outputs named in want against the sections of the
// archive at path, or rewrites them with -update.
func golden(t *testing.T, path string, ar *txtar.Archive, got map[string]string) {
	t.Helper()
	changed := false
	for i, f := range ar.Files {
		g, ok := got[f.Name]
		if !ok {
			continue
		}
		delete(got, f.Name)
		if *update {
			ar.Files[i].Data = []byte(g)
			changed = true
			continue
		}
		if diff := cmp.Diff(string(f.Data), g); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", filepath.Base(path), f.Name, diff)
		}
	}
	for name, g := range got {
		if !*update {
			t.Errorf("%s: no section %s", filepath.Base(path), name)
			continue
		}
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(g)})
		changed = true
	}
	if changed {
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func archiveFile(t *testing.T, ar *txtar.Archive, name string) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no section %s", name)
	return nil
}

// TestAggregateGolden aggregates the rows.jsonl of each archive in
// testdata/aggregate with its spec.json and compares report.md and
// report.txt.
func TestAggregateGolden(t *testing.T) {
	paths, _ := filepath.Glob("testdata/aggregate/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no test archives")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var spec Spec
			if err := json.Unmarshal(archiveFile(t, ar, "spec.json"), &spec); err != nil {
				t.Fatal(err)
			}
			r, err := Aggregate(parseRows(t, archiveFile(t, ar, "rows.jsonl")), spec)
			if err != nil {
				t.Fatal(err)
			}
			var md, txt bytes.Buffer
			if err := r.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			golden(t, path, ar, map[string]string{"report.md": md.String(), "report.txt": txt.String()})
		})
	}
}

// TestCompareGolden compares the runs run/NAME.jsonl of each archive in
// testdata/compare, aggregated with its spec.json.
func TestCompareGolden(t *testing.T) {
	paths, _ := filepath.Glob("testdata/compare/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no test archives")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var spec Spec
			if err := json.Unmarshal(archiveFile(t, ar, "spec.json"), &spec); err != nil {
				t.Fatal(err)
			}
			var names []string
			var reports []*Report
			for _, f := range ar.Files {
				name, ok := strings.CutPrefix(f.Name, "run/")
				if !ok {
					continue
				}
				r, err := Aggregate(parseRows(t, f.Data), spec)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, strings.TrimSuffix(name, ".jsonl"))
				reports = append(reports, r)
			}
			c, err := Compare(names, reports)
			if err != nil {
				t.Fatal(err)
			}
			var md, txt bytes.Buffer
			if err := c.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			golden(t, path, ar, map[string]string{"compare.md": md.String(), "compare.txt": txt.String()})
		})
	}
}

func TestAggregateValues(t *testing.T) {
	rows := []map[string]any{
		{"task": "apply", "em": true, "iou": 1.0},
		{"task": "apply", "em": false, "iou": 0.5},
		{"task": "apply", "em": false},              // no iou
		{"task": "diffgen", "em": true, "iou": nil}, // null iou
	}
	r, err := Aggregate(rows, Spec{Dims: []string{"task"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &Report{
		Rows:    4,
		Dims:    []string{"task"},
		Metrics: []Metric{{"em", Rate}, {"iou", Mean}},
		Groups: []Group{
			{Values: []string{"apply"}, N: 3, Stats: map[string]Stat{"em": {1.0 / 3, 3}, "iou": {0.75, 2}}},
			{Values: []string{"diffgen"}, N: 1, Stats: map[string]Stat{"em": {1, 1}}},
		},
		Total: Group{Values: []string{}, N: 4, Stats: map[string]Stat{"em": {0.5, 4}, "iou": {0.75, 2}}},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func TestAggregateErrors(t *testing.T) {
	tests := []struct {
		name    string
		rows    []map[string]any
		spec    Spec
		wantErr string
	}{
		{"string metric", []map[string]any{{"em": true}, {"em": "yes"}}, Spec{Metrics: []string{"em"}},
			`report: row 2: metric "em" is string, want a number or a boolean`},
		{"mixed kinds", []map[string]any{{"x": true}, {"x": 2.0}}, Spec{},
			`report: row 2: metric "x" mixes numbers and booleans`},
		{"dim is metric", nil, Spec{Dims: []string{"a"}, Metrics: []string{"a"}},
			`report: "a" is both a dimension and a metric`},
		{"metric twice", nil, Spec{Metrics: []string{"a", "a"}}, `report: metric "a" listed twice`},
		{"object dim", []map[string]any{{"d": map[string]any{}}}, Spec{Dims: []string{"d"}},
			`report: row 1: dimension "d": value map[string]interface {} is not a string, number or boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Aggregate(tt.rows, tt.spec)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("err = %v, want %s", err, tt.wantErr)
			}
		})
	}
}

func TestWriteFilesAndReadReport(t *testing.T) {
	rows := []map[string]any{
		{"lang": "go", "f1": 0.5, "failed": false},
		{"lang": "py", "f1": 1.0, "failed": true},
	}
	r, err := Aggregate(rows, Spec{Title: "Loc", Dims: []string{"lang"}, Definitions: map[string]string{"f1": "file-level F1"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("report after a round trip (-want +got):\n%s", diff)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.HasPrefix(string(md), "# Loc\n") {
		t.Errorf("report.md = %q, %v", md, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("dir holds %d files, want report.json and report.md only", len(entries))
	}
	if _, err := ReadReport(filepath.Join(dir, "report.md")); err == nil {
		t.Error("ReadReport accepted a Markdown file")
	}
}

func TestCompareErrors(t *testing.T) {
	a := &Report{Dims: []string{"task"}, Metrics: []Metric{{"em", Rate}}}
	b := &Report{Dims: []string{"lang"}}
	c := &Report{Dims: []string{"task"}, Metrics: []Metric{{"em", Mean}}}
	if _, err := Compare([]string{"a", "b"}, []*Report{a, b}); err == nil ||
		err.Error() != `report: run "a" groups by [task], run "b" by [lang]` {
		t.Errorf("dims mismatch: err = %v", err)
	}
	if _, err := Compare([]string{"a", "c"}, []*Report{a, c}); err == nil ||
		err.Error() != `report: metric "em" is a rate in one run and a mean in run "c"` {
		t.Errorf("kind mismatch: err = %v", err)
	}
	if _, err := Compare([]string{"a"}, []*Report{a, c}); err == nil {
		t.Error("names and reports of different lengths: no error")
	}
}

func TestNaturalOrder(t *testing.T) {
	cmpv := valueOrder([]string{"size"}, map[string][]string{"size": {"large"}})
	vals := [][]string{{"small"}, {"10"}, {"2"}, {"large"}, {""}, {"1.5"}}
	slicesSort := func() []string {
		var out []string
		for len(vals) > 0 {
			best := 0
			for i := range vals {
				if cmpv(vals[i], vals[best]) < 0 {
					best = i
				}
			}
			out = append(out, vals[best][0])
			vals = append(vals[:best], vals[best+1:]...)
		}
		return out
	}
	want := []string{"large", "1.5", "2", "10", "", "small"}
	if diff := cmp.Diff(want, slicesSort()); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
