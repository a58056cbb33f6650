package report

import (
	"testing"
)

// TestDropUnspent: an offline run's zero usage columns go, a spent one and
// the scores (zero or not) stay.
func TestDropUnspent(t *testing.T) {
	rows := []map[string]any{
		{"em": 0.0, "latency_ms": 0.0, "tokens": 0.0, "cost": 0.0},
		{"em": 0.0, "latency_ms": 0.0, "tokens": 12.0, "cost": 0.0},
	}
	r, err := Aggregate(rows, Spec{Title: "t", Metrics: []string{"em", "latency_ms", "tokens", "cost"}})
	if err != nil {
		t.Fatal(err)
	}
	r.DropUnspent()
	var got []string
	for _, m := range r.Metrics {
		got = append(got, m.Name)
	}
	if len(got) != 2 || got[0] != "em" || got[1] != "tokens" {
		t.Errorf("columns %v, want [em tokens]", got)
	}
	if _, ok := r.Total.Stats["latency_ms"]; !ok {
		t.Errorf("latency_ms stats dropped from the JSON too")
	}
}
