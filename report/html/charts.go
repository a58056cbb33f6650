package html

import (
	"fmt"

	"github.com/patchbench/patchbench/report"
)

// The pieces a kind's charts are made of: points aggregated from its
// rows, and the Vega-Lite specs of the chart types the page draws.

// Point is one aggregated value of a chart: its run, its dimension
// values, the value and the number of rows behind it.
type Point map[string]any

// Points returns one point per group of rep (a run's aggregate of metric
// by dims) that has the metric.
func Points(run string, rep *report.Report, dims []string, metric string) []Point {
	var out []Point
	for _, g := range rep.Groups {
		st, ok := g.Stats[metric]
		if !ok {
			continue
		}
		p := Point{"run": run, "value": st.Value, "n": st.N}
		for i, d := range dims {
			p[d] = g.Values[i]
		}
		out = append(out, p)
	}
	return out
}

// Differences returns, for each run after the first (runs names them in
// order), its points minus the first run's point with the same value of
// field.
func Differences(runs []string, pts []Point, field string) []Point {
	if len(runs) < 2 {
		return nil
	}
	base := map[any]float64{}
	for _, p := range pts {
		if p["run"] == runs[0] {
			base[p[field]] = p["value"].(float64)
		}
	}
	var out []Point
	for _, p := range pts {
		b, ok := base[p[field]]
		if p["run"] == runs[0] || !ok {
			continue
		}
		out = append(out, Point{"run": p["run"], field: p[field], "value": p["value"].(float64) - b, "n": p["n"]})
	}
	return out
}

// BarSpec is a grouped bar chart: x by x, bars of each run side by side,
// one panel per value of column ("" for one panel); rate draws y as a
// percentage from 0 to 1.
func BarSpec(data []Point, x, column, yTitle string, rate bool) map[string]any {
	return BarSpecRows(data, x, column, "", yTitle, rate)
}

// BarSpecRows is BarSpec with a row of charts per value of row ("" for
// one row).
func BarSpecRows(data []Point, x, column, row, yTitle string, rate bool) map[string]any {
	y := map[string]any{"field": "value", "type": "quantitative", "title": yTitle}
	if rate {
		y["scale"] = map[string]any{"domain": []float64{0, 1}}
		y["axis"] = map[string]any{"format": ".0%"}
	}
	enc := map[string]any{
		"x":       map[string]any{"field": x, "type": "nominal", "title": x, "sort": nil},
		"y":       y,
		"xOffset": map[string]any{"field": "run", "type": "nominal"},
		"color":   map[string]any{"field": "run", "type": "nominal", "title": "run"},
		"tooltip": []any{
			map[string]any{"field": "run"}, map[string]any{"field": x},
			map[string]any{"field": "value", "format": ".3f"}, map[string]any{"field": "n"},
		},
	}
	if column != "" {
		enc["column"] = map[string]any{"field": column, "type": "nominal", "title": column, "sort": nil}
		enc["tooltip"] = append(enc["tooltip"].([]any), map[string]any{"field": column})
	}
	if row != "" {
		enc["row"] = map[string]any{"field": row, "type": "nominal", "title": row, "sort": nil}
		enc["tooltip"] = append(enc["tooltip"].([]any), map[string]any{"field": row})
	}
	return map[string]any{
		"$schema":  "https://vega.github.io/schema/vega-lite/v6.json",
		"data":     map[string]any{"values": data},
		"mark":     map[string]any{"type": "bar", "tooltip": true},
		"encoding": enc,
		"width":    map[string]any{"step": 14},
		"height":   180,
	}
}

// LineSpec is a line chart of value by k, a line per series (and per
// run), y from 0 to 1 as a percentage.
func LineSpec(data []Point, series, yTitle string) map[string]any {
	color := map[string]any{"field": "run", "type": "nominal", "title": "run"}
	enc := map[string]any{
		"x":       map[string]any{"field": "k", "type": "ordinal", "title": "k"},
		"y":       map[string]any{"field": "value", "type": "quantitative", "title": yTitle, "scale": map[string]any{"domain": []float64{0, 1}}, "axis": map[string]any{"format": ".0%"}},
		"color":   color,
		"tooltip": []any{map[string]any{"field": "run"}, map[string]any{"field": "k"}, map[string]any{"field": "value", "format": ".3f"}, map[string]any{"field": "n"}},
	}
	if series != "" {
		enc["strokeDash"] = map[string]any{"field": series, "type": "nominal", "title": series}
		enc["detail"] = map[string]any{"field": series}
	}
	return map[string]any{
		"$schema":  "https://vega.github.io/schema/vega-lite/v6.json",
		"data":     map[string]any{"values": data},
		"mark":     map[string]any{"type": "line", "point": true, "tooltip": true},
		"encoding": enc,
		"width":    320,
		"height":   180,
	}
}

// Aggregates are a run's aggregates of one metric each by some
// dimensions, gathered row by row (a run of any size takes the memory of
// its groups). The first error is kept for the charts, not the page.
type Aggregates struct {
	Run  string
	aggs map[string]*report.Aggregator
	err  error
}

// NewAggregates returns the aggregates of run for specs.
func NewAggregates(run string, specs ...report.Spec) *Aggregates {
	a := &Aggregates{Run: run, aggs: map[string]*report.Aggregator{}}
	for _, s := range specs {
		agg, err := report.NewAggregator(s)
		if err != nil && a.err == nil {
			a.err = fmt.Errorf("html: %w", err)
		}
		a.aggs[aggKey(s.Dims, s.Metrics)] = agg
	}
	return a
}

func aggKey(dims, metrics []string) string { return fmt.Sprint(dims, metrics) }

// Add adds row to every aggregate.
func (a *Aggregates) Add(row map[string]any) {
	if a.err != nil {
		return
	}
	for _, agg := range a.aggs {
		if err := agg.Add(row); err != nil {
			a.err = fmt.Errorf("html: run %s: %w", a.Run, err)
			return
		}
	}
}

// Report returns the aggregate of metrics by dims.
func (a *Aggregates) Report(dims, metrics []string) (*report.Report, error) {
	if a.err != nil {
		return nil, a.err
	}
	agg, ok := a.aggs[aggKey(dims, metrics)]
	if !ok {
		return nil, fmt.Errorf("html: run %s: no aggregate of %v by %v", a.Run, metrics, dims)
	}
	rep, err := agg.Report()
	if err != nil {
		return nil, fmt.Errorf("html: run %s: %w", a.Run, err)
	}
	return rep, nil
}
