package loc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

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

// TestRelaceSummaryPartial: relace-mcp's runner leaves its partial cases
// (a failed case, and one whose model ended without its answer) out of
// every avg_ mean and counts them in partial_cases; success_rate and
// completion_rate are the completed cases over all.
func TestRelaceSummaryPartial(t *testing.T) {
	rows := []map[string]any{
		{"key": "a", "metrics": map[string]any{"file_recall": 1.0, "quality_score": 0.8, "function_hit_rate": 1.0}, "turns": 2.0, "search_ms": 100.0},
		{"key": "b", "metrics": map[string]any{"file_recall": 0.5, "quality_score": 0.2}, "turns": 4.0, "search_ms": 300.0},
		{"key": "c", "metrics": map[string]any{"file_recall": 0.0, "quality_score": 0.0, "function_hit_rate": 0.0}, "turns": 8.0, "search_ms": 900.0, "no_answer": "no report_back within 8 turns"},
		{"key": "d", "failed": true, "error": "repository missing"},
	}
	got := relaceSummary(rows)
	want := RelaceSummary{
		TotalCases: 4, SuccessRate: 0.5, CompletionRate: 0.5, ScoredCases: 2, PartialCases: 2,
		AvgFileRecall: 0.75, AvgQualityScore: 0.5, FunctionCases: 1, AvgFunctionHitRate: 1,
		AvgTurnsUsed: 3, AvgTurns: 3, AvgLatencyMS: 200, AvgLatencyS: 0.2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("relaceSummary (-want +got):\n%s", diff)
	}
}
