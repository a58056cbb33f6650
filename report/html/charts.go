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

func makeCharts(kind string, runs []Run) ([]chart, error) {
	switch kind {
	case KindDiffXYZ:
		return diffxyzCharts(runs)
	case KindSWE:
		return sweCharts(runs), nil
	}
	return genericCharts(runs)
}

// point is one aggregated value of a chart: its run, its dimension
// values, the value and the number of rows behind it.
type point map[string]any

// aggregate groups each run's rows by dims and returns one point per group
// with metric's value, for the groups that have the metric.
func aggregate(runs []Run, dims []string, metric string) ([]point, error) {
	var out []point
	for _, r := range runs {
		rep, err := report.Aggregate(r.Rows, report.Spec{Dims: dims, Metrics: []string{metric}})
		if err != nil {
			return nil, fmt.Errorf("html: run %s: %w", r.Name, err)
		}
		for _, g := range rep.Groups {
			st, ok := g.Stats[metric]
			if !ok {
				continue
			}
			p := point{"run": r.Name, "value": st.Value, "n": st.N}
			for i, d := range dims {
				p[d] = g.Values[i]
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// distinct counts the distinct values of field over every run's rows.
func distinct(runs []Run, field string) int {
	seen := map[any]bool{}
	for _, r := range runs {
		for _, row := range r.Rows {
			if v, ok := row[field]; ok {
				seen[v] = true
			}
		}
	}
	return len(seen)
}

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

func diffxyzCharts(runs []Run) ([]chart, error) {
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
			if p["run"] == runs[0].Name {
				base[fmt.Sprint(p["task"], "\x00", p["format"])] = p["value"].(float64)
			}
		}
		var diffs []point
		for _, p := range pts {
			b, ok := base[fmt.Sprint(p["task"], "\x00", p["format"])]
			if p["run"] == runs[0].Name || !ok {
				continue
			}
			diffs = append(diffs, point{"run": p["run"], "task": p["task"], "format": p["format"], "value": p["value"].(float64) - b, "n": p["n"]})
		}
		if len(diffs) > 0 {
			charts = append(charts, chart{Title: "EM difference to " + runs[0].Name, Spec: barSpec(diffs, "format", "task", "ΔEM", false)})
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

func sweCharts(runs []Run) []chart {
	var statuses, resolved, families []point
	for _, r := range runs {
		counts := map[string]int{}
		fams := map[string]int{}
		for _, row := range r.Rows {
			s := fmt.Sprint(cell(KindSWE, row, "status"))
			counts[s]++
			if reason, _ := row["reason"].(string); reason != "" && s != "resolved" {
				fams[errorFamily(reason)]++
			} else if e, _ := row["error"].(string); e != "" {
				fams[errorFamily(e)]++
			}
		}
		for _, s := range slices.Sorted(maps.Keys(counts)) {
			statuses = append(statuses, point{"run": r.Name, "status": s, "value": counts[s], "n": counts[s]})
		}
		rate := 0.0
		if len(r.Rows) > 0 {
			rate = float64(counts["resolved"]) / float64(len(r.Rows))
		}
		resolved = append(resolved, point{"run": r.Name, "value": rate, "n": len(r.Rows)})
		for _, f := range slices.Sorted(maps.Keys(fams)) {
			families = append(families, point{"run": r.Name, "family": f, "value": fams[f], "n": fams[f]})
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
func genericCharts(runs []Run) ([]chart, error) {
	all := []map[string]any{}
	for _, r := range runs {
		all = append(all, r.Rows...)
	}
	rep, err := report.Aggregate(all, report.Spec{})
	if err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	var charts []chart
	for _, m := range rep.Metrics {
		if len(charts) == 12 {
			break
		}
		pts, err := aggregate(runs, nil, m.Name)
		if err != nil {
			return nil, err
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
