package diffxyz

import (
	"slices"
	"testing"

	"github.com/patchbench/patchbench/report/html"
)

// TestPageChartOrder: the charts list size classes from small to large
// and tasks as the paper does, whatever order the rows come in, and a run
// whose rows carry change kinds gets a chart by change kind.
func TestPageChartOrder(t *testing.T) {
	st := newPageStats("run")
	for i, size := range []string{"large", "small", "medium", "large", "small"} {
		st.Add(map[string]any{"task": []string{"diffgen", "apply"}[i%2], "format": "udiff", "size_class": size,
			"change_kind": []string{"delete-only", "add+delete", "add-only"}[i%3], "em": 1.0, "applied": true, "applied_tolerant": true})
	}
	charts, err := pageCharts([]html.Stats{st})
	if err != nil {
		t.Fatal(err)
	}
	order := func(title, field string) []string {
		for _, c := range charts {
			if c.Title != title {
				continue
			}
			var got []string
			for _, p := range c.Spec["data"].(map[string]any)["values"].([]html.Point) {
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

// TestPageStatus: the status word of a Diff-XYZ case.
func TestPageStatus(t *testing.T) {
	for _, c := range []struct {
		row  map[string]any
		want string
	}{
		{map[string]any{"failed": true, "em": 1.0}, "failed"},
		{map[string]any{"em": 1.0}, "exact"},
		{map[string]any{"em": 0.0, "applied": true}, "applied"},
		{map[string]any{"em": 0.0, "applied": false}, "wrong"},
		{map[string]any{"not_applicable": "x", "status": "not_applicable"}, "not_applicable"},
		{map[string]any{}, "ok"},
	} {
		if got := pageStatus(c.row); got != c.want {
			t.Errorf("pageStatus(%v) = %s, want %s", c.row, got, c.want)
		}
	}
}
