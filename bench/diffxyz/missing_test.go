package diffxyz

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/runner"
)

// TestMissingCodeLeftOut: a row without new_code (or old_code), or with
// it null, cannot be scored: it is left out and named, not run as an edit
// to (or from) an empty file. A column that is there and empty is a file
// of no lines, and runs.
func TestMissingCodeLeftOut(t *testing.T) {
	data := strings.Join([]string{
		`{"id":"good","path":"a.go","lang":"go","old_code":"a\nb\n","new_code":"a\nB\n"}`,
		`{"id":"nonew","path":"b.go","lang":"go","old_code":"a\nb\n"}`,
		`{"id":"nullnew","path":"c.go","lang":"go","old_code":"a\nb\n","new_code":null}`,
		`{"id":"noold","path":"d.go","lang":"go","new_code":"a\nb\n"}`,
		`{"id":"emptied","path":"e.go","lang":"go","old_code":"a\nb\n","new_code":""}`,
		"",
	}, "\n")
	path := filepath.Join(t.TempDir(), "data.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	sum, err := Run(t.Context(), Options{
		Dataset: path, ModelOptions: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
		Out: out, Runner: runner.Options{Workers: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, e := range sum.BadRows {
		bad = append(bad, e.Error())
	}
	want := []string{
		`dataset: row 1 (id "nonew"): no new_code: the row cannot be scored`,
		`dataset: row 2 (id "nullnew"): no new_code: the row cannot be scored`,
		`dataset: row 3 (id "noold"): no old_code: the row cannot be scored`,
	}
	if diff := cmp.Diff(want, bad); diff != "" {
		t.Errorf("rows left out (-want +got):\n%s", diff)
	}
	rows, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, r := range rows {
		ids[r["id"].(string)]++
		if r["em"] != 1.0 {
			t.Errorf("%s: em %v, want 1", r["key"], r["em"])
		}
	}
	per := len(Tasks) * len(PaperFormats)
	if diff := cmp.Diff(map[string]int{"good": per, "emptied": per}, ids); diff != "" {
		t.Errorf("results rows by id (-want +got):\n%s", diff)
	}
	if slices.ContainsFunc(rows, func(r map[string]any) bool { return r["id"] == "nonew" }) {
		t.Error("a row without new_code was run")
	}
}
