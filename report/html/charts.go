package html

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
)

// chart is one Vega-Lite chart of the page, its data inline (aggregated
// here, so the page draws a few hundred marks whatever the number of
// cases).
type chart struct {
	Title string         `json:"title"`
	Spec  map[string]any `json:"spec"`
}

func makeCharts(kind string, runs []*runStats, all *runStats) ([]chart, error) {
	switch kind {
	case KindDiffXYZ:
		return diffxyzCharts(runs)
	case KindSWE:
		return sweCharts(runs), nil
	}
	return genericCharts(runs, all)
}

// runStats is what the charts need of one run, gathered row by row: the
// aggregates the Diff-XYZ charts draw, the distinct values of their
// dimensions, the SWE status and failure counts, and every numeric and
// boolean field for the generic charts. A run of any size takes the memory
// of its groups.
type runStats struct {
	name     string
	n        int
	aggs     map[string]*report.Aggregator // by aggKey
	err      error                         // the first error of aggs
	distinct map[string]map[any]bool
	statuses map[string]int
	families map[string]int
	generic  *report.Aggregator
	genErr   error
}

// diffxyzAggs are the (dimensions, metric) pairs the Diff-XYZ charts draw.
var diffxyzAggs = []struct {
	dims   []string
	metric string
}{
	{[]string{"task", "format"}, "em"},
	{[]string{"task", "format"}, "applied"},
	{[]string{"task", "prompt"}, "em"},
	{[]string{"task", "lang"}, "em"},
	{[]string{"task", "size_class"}, "em"},
}

func aggKey(dims []string, metric string) string { return strings.Join(dims, ",") + "|" + metric }

func newRunStats(name string) *runStats {
	st := &runStats{name: name, aggs: map[string]*report.Aggregator{}, distinct: map[string]map[any]bool{},
		statuses: map[string]int{}, families: map[string]int{}}
	for _, a := range diffxyzAggs {
		st.aggs[aggKey(a.dims, a.metric)], _ = report.NewAggregator(report.Spec{Dims: a.dims, Metrics: []string{a.metric}})
	}
	st.generic, _ = report.NewAggregator(report.Spec{})
	return st
}

// add gathers one row. Errors are kept for the charts of the kind they
// concern: a field that breaks a Diff-XYZ aggregate does not stop an SWE
// page.
func (st *runStats) add(row map[string]any) {
	st.n++
	if st.err == nil {
		for _, a := range diffxyzAggs {
			if err := st.aggs[aggKey(a.dims, a.metric)].Add(row); err != nil {
				st.err = fmt.Errorf("html: run %s: %w", st.name, err)
				break
			}
		}
	}
	for _, d := range []string{"prompt", "lang", "size_class"} {
		if v, ok := row[d]; ok {
			if st.distinct[d] == nil {
				st.distinct[d] = map[any]bool{}
			}
			st.distinct[d][v] = true
		}
	}
	s := fmt.Sprint(cell(KindSWE, row, "status"))
	st.statuses[s]++
	if reason, _ := row["reason"].(string); reason != "" && s != "resolved" {
		st.families[errorFamily(reason)]++
	} else if e, _ := row["error"].(string); e != "" {
		st.families[errorFamily(e)]++
	}
	st.addGeneric(row)
}

func (st *runStats) addGeneric(row map[string]any) {
	if st.genErr == nil {
		if err := st.generic.Add(row); err != nil {
			st.genErr = fmt.Errorf("html: %w", err)
		}
	}
}

// aggregate returns one point per group of each run's aggregate of metric
// by dims, for the groups that have the metric.
func aggregate(runs []*runStats, dims []string, metric string) ([]point, error) {
	var out []point
	for _, r := range runs {
		if r.err != nil {
			return nil, r.err
		}
		rep, err := r.aggs[aggKey(dims, metric)].Report()
		if err != nil {
			return nil, fmt.Errorf("html: run %s: %w", r.name, err)
		}
		out = append(out, points(r.name, rep, dims, metric)...)
	}
	return out, nil
}

func points(run string, rep *report.Report, dims []string, metric string) []point {
	var out []point
	for _, g := range rep.Groups {
		st, ok := g.Stats[metric]
		if !ok {
			continue
		}
		p := point{"run": run, "value": st.Value, "n": st.N}
		for i, d := range dims {
			p[d] = g.Values[i]
		}
		out = append(out, p)
	}
	return out
}

// distinct counts the distinct values of field over every run's rows.
func distinct(runs []*runStats, field string) int {
	seen := map[any]bool{}
	for _, r := range runs {
		for v := range r.distinct[field] {
			seen[v] = true
		}
	}
	return len(seen)
}

// point is one aggregated value of a chart: its run, its dimension
// values, the value and the number of rows behind it.
type point map[string]any

// barSpec is a grouped bar chart: x by x, bars of each run side by side,
// one panel per value of column ("" for one panel).
func barSpec(data []point, x, column, yTitle string, rate bool) map[string]any {
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
	return map[string]any{
		"$schema":  "https://vega.github.io/schema/vega-lite/v6.json",
		"data":     map[string]any{"values": data},
		"mark":     map[string]any{"type": "bar", "tooltip": true},
		"encoding": enc,
		"width":    map[string]any{"step": 14},
		"height":   180,
	}
}

func diffxyzCharts(runs []*runStats) ([]chart, error) {
	var charts []chart
	add := func(title string, dims []string, metric string, rate bool) error {
		pts, err := aggregate(runs, dims, metric)
		if err != nil || len(pts) == 0 {
			return err
		}
		x, col := dims[len(dims)-1], ""
		if len(dims) > 1 {
			col = dims[0]
		}
		charts = append(charts, chart{Title: title, Spec: barSpec(pts, x, col, metric, rate)})
		return nil
	}
	type c struct {
		title  string
		dims   []string
		metric string
	}
	list := []c{
		{"EM by task × format", []string{"task", "format"}, "em"},
		{"Apply rate by task × format", []string{"task", "format"}, "applied"},
	}
	for _, d := range []string{"prompt", "lang", "size_class"} {
		if distinct(runs, d) > 1 {
			list = append(list, c{"EM by task × " + d, []string{"task", d}, "em"})
		}
	}
	for _, x := range list {
		if err := add(x.title, x.dims, x.metric, true); err != nil {
			return nil, err
		}
	}
	if len(runs) > 1 {
		// The difference of each run to the first, group by group.
		pts, err := aggregate(runs, []string{"task", "format"}, "em")
		if err != nil {
			return nil, err
		}
		base := map[string]float64{}
		for _, p := range pts {
			if p["run"] == runs[0].name {
				base[fmt.Sprint(p["task"], "\x00", p["format"])] = p["value"].(float64)
			}
		}
		var diffs []point
		for _, p := range pts {
			b, ok := base[fmt.Sprint(p["task"], "\x00", p["format"])]
			if p["run"] == runs[0].name || !ok {
				continue
			}
			diffs = append(diffs, point{"run": p["run"], "task": p["task"], "format": p["format"], "value": p["value"].(float64) - b, "n": p["n"]})
		}
		if len(diffs) > 0 {
			charts = append(charts, chart{Title: "EM difference to " + runs[0].name, Spec: barSpec(diffs, "format", "task", "ΔEM", false)})
		}
	}
	return charts, nil
}

// errorFamily is the kind of a failure reason: its text before the first
// colon, with numbers and quoted parts dropped, so that reasons differing
// only in a path or a count fall together.
func errorFamily(reason string) string {
	if i := strings.IndexAny(reason, ":\n"); i >= 0 {
		reason = reason[:i]
	}
	reason = quotedRe.ReplaceAllString(reason, "…")
	reason = numRe.ReplaceAllString(reason, "N")
	reason = strings.TrimSpace(reason)
	if len(reason) > 60 {
		reason = reason[:60] + "…"
	}
	return reason
}

var (
	quotedRe = regexp.MustCompile(`"[^"]*"|'[^']*'|\x60[^\x60]*\x60`)
	numRe    = regexp.MustCompile(`[0-9]+`)
)

func sweCharts(runs []*runStats) []chart {
	var statuses, resolved, families []point
	for _, r := range runs {
		for _, s := range slices.Sorted(maps.Keys(r.statuses)) {
			statuses = append(statuses, point{"run": r.name, "status": s, "value": r.statuses[s], "n": r.statuses[s]})
		}
		rate := 0.0
		if r.n > 0 {
			rate = float64(r.statuses["resolved"]) / float64(r.n)
		}
		resolved = append(resolved, point{"run": r.name, "value": rate, "n": r.n})
		for _, f := range slices.Sorted(maps.Keys(r.families)) {
			families = append(families, point{"run": r.name, "family": f, "value": r.families[f], "n": r.families[f]})
		}
	}
	charts := []chart{
		{"Statuses", barSpec(statuses, "status", "", "instances", false)},
		{"Resolved rate", barSpec(resolved, "run", "", "resolved", true)},
	}
	if len(families) > 0 {
		charts = append(charts, chart{"Error families", barSpec(families, "family", "", "instances", false)})
	}
	return charts
}

// genericCharts draws, for any rows, the mean of each numeric field and
// the rate of each boolean field, run by run.
func genericCharts(runs []*runStats, all *runStats) ([]chart, error) {
	if all.genErr != nil {
		return nil, all.genErr
	}
	rep, err := all.generic.Report()
	if err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	var charts []chart
	for _, m := range rep.Metrics {
		if len(charts) == 12 {
			break
		}
		var pts []point
		for _, r := range runs {
			if r.genErr != nil {
				return nil, r.genErr
			}
			rr, err := r.generic.Report()
			if err != nil {
				return nil, fmt.Errorf("html: %w", err)
			}
			pts = append(pts, points(r.name, rr, nil, m.Name)...)
		}
		if len(pts) == 0 {
			continue
		}
		title := "Mean " + m.Name
		if m.Kind == report.Rate {
			title = "Rate of " + m.Name
		}
		for _, p := range pts {
			p["metric"] = m.Name
		}
		charts = append(charts, chart{title, barSpec(pts, "run", "", m.Name, m.Kind == report.Rate)})
	}
	return charts, nil
}
