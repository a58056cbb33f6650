package swe

import (
	"testing"

	"github.com/patchbench/patchbench/report/html"
)

func TestErrorFamily(t *testing.T) {
	a := errorFamily(`hunk 2 of f.py: context "x" not found at line 12`)
	b := errorFamily(`hunk 1 of g.py: context "y" not found at line 3`)
	// The file name stays: failures are grouped by file too.
	if a != "hunk N of f.py" || b != "hunk N of g.py" {
		t.Errorf("families %q %q, want hunk N of f.py and hunk N of g.py", a, b)
	}
}

func pageRows() []map[string]any {
	return []map[string]any{
		{"key": "a", "id": "a", "instance_id": "a", "status": "resolved", "repairs": []any{}, "repaired_patch": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n"},
		{"key": "b", "id": "b", "instance_id": "b", "status": "apply_failed", "reason": "hunk 2 of f.py: context \"x\" not found at line 12"},
		{"key": "c", "id": "c", "instance_id": "c", "status": "apply_failed", "reason": "hunk 1 of g.py: context \"y\" not found at line 3"},
		{"key": "d", "id": "d", "instance_id": "d", "status": "unresolved", "repairs": []any{"whitespace"}},
	}
}

// TestPageRateChart: the SWE page's rate chart is the resolved rate when
// tests ran; under --no-tests, where no instance can be resolved (the
// chart was all zeros without saying why), it is the applied rate and its
// title says the tests did not run.
func TestPageRateChart(t *testing.T) {
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
		{"tests ran", pageRows(), "Resolved rate", 1.0 / float64(len(pageRows()))},
		{"no tests", noTests, "Applied rate (the tests did not run, as with --no-tests: no instance is resolved)", 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := Page().NewStats("r")
			for _, r := range c.rows {
				st.Add(r)
			}
			charts, err := pageCharts([]html.Stats{st})
			if err != nil {
				t.Fatal(err)
			}
			if len(charts) < 2 || charts[1].Title != c.title {
				t.Fatalf("charts %v; want the second titled %q", charts, c.title)
			}
			pts := charts[1].Spec["data"].(map[string]any)["values"].([]html.Point)
			if len(pts) != 1 || pts[0]["value"] != c.rate {
				t.Errorf("rate points %v; want one of value %v", pts, c.rate)
			}
		})
	}
}

// TestPageCells: a failed row is an infra_error, and repairs are counted.
func TestPageCells(t *testing.T) {
	for _, c := range []struct {
		row  map[string]any
		col  string
		want any
		ok   bool
	}{
		{map[string]any{"failed": true, "status": "resolved"}, "status", StatusInfraError, true},
		{map[string]any{"status": "resolved"}, "status", nil, false},
		{map[string]any{"repairs": []any{"a", "b"}}, "repairs", 2, true},
		{map[string]any{}, "repairs", 0, true},
		{map[string]any{"reason": "x"}, "reason", nil, false},
	} {
		got, ok := pageCell(c.row, c.col)
		if got != c.want || ok != c.ok {
			t.Errorf("pageCell(%v, %s) = %v, %v; want %v, %v", c.row, c.col, got, ok, c.want, c.ok)
		}
	}
}
