package loc

import "testing"

// TestRelaceSummaryOrder: the same rows in another order (a run's finish
// order, a merged run's key order) give bit-identical averages.
func TestRelaceSummaryOrder(t *testing.T) {
	row := func(key string, q float64) map[string]any {
		return map[string]any{"key": key, "metrics": map[string]any{"quality_score": q}}
	}
	a := relaceSummary([]map[string]any{row("a", 0.1), row("b", 0.2), row("c", 0.3)})
	b := relaceSummary([]map[string]any{row("c", 0.3), row("b", 0.2), row("a", 0.1)})
	if a != b {
		t.Errorf("averages depend on row order: %v and %v", a.AvgQualityScore, b.AvgQualityScore)
	}
}
