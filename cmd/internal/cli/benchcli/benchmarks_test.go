package benchcli

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonFields names the JSON fields of values of type t, embedded structs
// flattened.
func jsonFields(t reflect.Type, into map[string]reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "":
			jsonFields(f.Type, into)
		case tag != "":
			into[tag] = f.Type
		case f.IsExported():
			into[f.Name] = f.Type
		}
	}
}

// TestBenchmarksRegistered: each benchmark merge and report --html know
// is whole, and every column of its page is a field of its results row
// (the runner's own, one the page derives, or one of its nested object),
// so that the page shows what the rows hold.
func TestBenchmarksRegistered(t *testing.T) {
	runnerFields := []string{"key", "id", "failed", "error", "elapsed_ms"}
	seen := map[string]bool{}
	for _, b := range benchmarks() {
		if b.Name == "" || seen[b.Name] || b.ResultsFile == "" || b.Row == nil || b.WriteReport == nil || b.Page == nil {
			t.Errorf("benchmark %q: name, results file, row, report writer and page are all needed (or the name is taken)", b.Name)
			continue
		}
		seen[b.Name] = true
		if b.Page.Name != b.Name || b.Page.Match == nil {
			t.Errorf("%s: page named %q, match %v", b.Name, b.Page.Name, b.Page.Match != nil)
		}
		fields := map[string]reflect.Type{}
		jsonFields(reflect.TypeOf(b.Row), fields)
		for _, c := range b.Page.Columns {
			if _, ok := fields[c]; ok || slices.Contains(runnerFields, c) || slices.Contains(b.Page.Derived, c) {
				continue
			}
			if nt, ok := fields[b.Page.Nested]; ok && nt.Kind() == reflect.Map {
				continue // a score of the nested map
			}
			t.Errorf("%s: page column %q is no field of its results row %T", b.Name, c, b.Row)
		}
	}
}

// TestPageKindsDetectTheirRows: report --html reads a run given alone as
// the kind of its rows; each benchmark's rows match its own kind first.
func TestPageKindsDetectTheirRows(t *testing.T) {
	rows := map[string]map[string]any{
		"diffxyz": {"task": "apply", "format": "udiff", "em": 1.0, "prompt": "p"},
		"loc":     {"metrics": map[string]any{"quality_score": 1.0}, "found": map[string]any{}, "repo": "r"},
		"ape":     {"task": "t", "sample": 0.0, "judge_pass": true, "compile_pass": true},
		"swe":     {"instance_id": "a", "status": "resolved"},
		"generic": {"id": "x", "score": 1.0},
	}
	kinds := pageKinds()
	for want, row := range rows {
		got := ""
		for _, k := range kinds {
			if k.Match(row) {
				got = k.Name
				break
			}
		}
		if got != want {
			t.Errorf("rows of %s read as %s", want, got)
		}
	}
}
