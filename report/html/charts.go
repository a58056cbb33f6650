package html

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/metrics"
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
	case KindLoc:
		return locCharts(runs)
	case KindAPE:
		return apeCharts(runs), nil
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
	kind     string // the page's kind, "" while unknown: gather for every kind
	n        int
	aggs     map[string]*report.Aggregator // by aggKey
	err      error                         // the first error of aggs
	distinct map[string]map[any]bool
	statuses map[string]int
	families map[string]int
	generic  *report.Aggregator
	genErr   error
	// Loc-Bench: the scores (its metrics map) by category, and a histogram
	// of quality_score in tenths.
	locAgg  *report.Aggregator
	locErr  error
	quality [11]int
	// APE: per task, its candidates and how many compiled and passed the
	// judge.
	apeTasks map[string]*apeCounts
}

type apeCounts struct{ n, compile, judge int }

// locMetrics are the Loc-Bench scores the charts show, in order.
var locMetrics = []string{"file_recall", "file_precision", "line_coverage", "function_hit_rate", "quality_score", "quality_score_v2", "file_acc@5", "function_acc@10"}

// diffxyzAggs are the (dimensions, metric) pairs the Diff-XYZ charts draw.
var diffxyzAggs = []struct {
	dims   []string
	metric string
}{
	{[]string{"task", "format"}, "em"},
	{[]string{"task", "format"}, "applied"},
	{[]string{"task", "format"}, "applied_tolerant"},
	// Within a task, formats are kept apart, as in the paper's tables.
	{[]string{"task", "format", "prompt"}, "em"},
	{[]string{"task", "format", "lang"}, "em"},
	{[]string{"task", "format", "size_class"}, "em"},
	{[]string{"task", "format", "change_kind"}, "em"},
}

// diffxyzOrder orders the values of the Diff-XYZ dimensions in charts as
// the report's tables do: tasks as the paper lists them, size classes from
// small to large.
var diffxyzOrder = map[string][]string{
	"task":        {"apply", "anti-apply", "diffgen"},
	"size_class":  {"small", "medium", "large"},
	"change_kind": {"add+delete", "add-only", "delete-only"},
}

// diffxyzDims are the dimensions that get an EM chart when they vary.
var diffxyzDims = []string{"prompt", "lang", "size_class", "change_kind"}

func aggKey(dims []string, metric string) string { return strings.Join(dims, ",") + "|" + metric }

func newRunStats(name, kind string) *runStats {
	st := &runStats{name: name, kind: kind, aggs: map[string]*report.Aggregator{}, distinct: map[string]map[any]bool{},
		statuses: map[string]int{}, families: map[string]int{}}
	for _, a := range diffxyzAggs {
		st.aggs[aggKey(a.dims, a.metric)], _ = report.NewAggregator(report.Spec{Dims: a.dims, Metrics: []string{a.metric}, Order: diffxyzOrder})
	}
	st.generic, _ = report.NewAggregator(report.Spec{})
	st.locAgg, _ = report.NewAggregator(report.Spec{Dims: []string{"category"}, Metrics: locMetrics})
	st.apeTasks = map[string]*apeCounts{}
	return st
}

// add gathers one row. Errors are kept for the charts of the kind they
// concern: a field that breaks a Diff-XYZ aggregate does not stop an SWE
// page.
// wants reports whether the charts of kind may be drawn from these stats.
func (st *runStats) wants(kind string) bool { return st.kind == "" || st.kind == kind }

func (st *runStats) add(row map[string]any) {
	st.n++
	if st.wants(KindDiffXYZ) {
		st.addDiffXYZ(row)
	}
	if st.wants(KindSWE) {
		s := fmt.Sprint(cell(KindSWE, row, "status"))
		st.statuses[s]++
		if reason, _ := row["reason"].(string); reason != "" && s != "resolved" {
			st.families[errorFamily(reason)]++
		} else if e, _ := row["error"].(string); e != "" {
			st.families[errorFamily(e)]++
		}
	}
	if st.wants(KindGeneric) {
		st.addGeneric(row)
	}
	if st.wants(KindLoc) {
		st.addLoc(row)
	}
	if st.wants(KindAPE) {
		st.addAPE(row)
	}
}

func (st *runStats) addDiffXYZ(row map[string]any) {
	if st.err == nil {
		for _, a := range diffxyzAggs {
			if err := st.aggs[aggKey(a.dims, a.metric)].Add(row); err != nil {
				st.err = fmt.Errorf("html: run %s: %w", st.name, err)
				break
			}
		}
	}
	for _, d := range diffxyzDims {
		if v, ok := row[d]; ok {
			if st.distinct[d] == nil {
				st.distinct[d] = map[any]bool{}
			}
			st.distinct[d][v] = true
		}
	}
}

func (st *runStats) addLoc(row map[string]any) {
	if ms, ok := row["metrics"].(map[string]any); ok && st.locErr == nil {
		flat := map[string]any{"category": row["category"]}
		for k, v := range ms {
			flat[k] = v
		}
		if err := st.locAgg.Add(flat); err != nil {
			st.locErr = fmt.Errorf("html: run %s: %w", st.name, err)
		}
		if q, ok := ms["quality_score"].(float64); ok {
			st.quality[min(max(int(q*10), 0), 10)]++
		}
	}
}

func (st *runStats) addAPE(row map[string]any) {
	if task, ok := row["task"].(string); ok {
		if st, _ := row["status"].(string); st == "environment-error" || st == "input-error" {
			return // not evaluated (bench/ape's statuses): not a candidate of pass@k
		}
		if _, ape := row["judge_pass"]; ape {
			c := st.apeTasks[task]
			if c == nil {
				c = &apeCounts{}
				st.apeTasks[task] = c
			}
			c.n++
			if row["compile_pass"] == true {
				c.compile++
			}
			if row["judge_pass"] == true {
				c.judge++
			}
		}
	}
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
	return barSpecRows(data, x, column, "", yTitle, rate)
}

// barSpecRows is barSpec with a row of charts per value of row ("" for
// one row).
func barSpecRows(data []point, x, column, row, yTitle string, rate bool) map[string]any {
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

func diffxyzCharts(runs []*runStats) ([]chart, error) {
	var charts []chart
	add := func(title string, dims []string, metric string, rate bool) error {
		pts, err := aggregate(runs, dims, metric)
		if err != nil || len(pts) == 0 {
			return err
		}
		x, col, row := dims[len(dims)-1], "", ""
		if len(dims) > 1 {
			col = dims[0]
		}
		if len(dims) > 2 {
			row = dims[1]
		}
		charts = append(charts, chart{Title: title, Spec: barSpecRows(pts, x, col, row, metric, rate)})
		return nil
	}
	type c struct {
		title  string
		dims   []string
		metric string
	}
	list := []c{
		{"EM by task × format", []string{"task", "format"}, "em"},
		{"Applying rate (requested format's parser, exact apply) by task × format", []string{"task", "format"}, "applied"},
		{"Applying rate, tolerant engine, by task × format", []string{"task", "format"}, "applied_tolerant"},
	}
	for _, d := range diffxyzDims {
		if distinct(runs, d) > 1 {
			list = append(list, c{"EM by task × format × " + d, []string{"task", "format", d}, "em"})
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

// sweTestStatuses are the statuses only an instance whose tests ran has.
var sweTestStatuses = []string{"resolved", "unresolved", "test_error", "test_timeout"}

// sweAppliedStatuses are those of an instance whose edit applied and whose
// tests did not run (swe eval --no-tests).
var sweAppliedStatuses = []string{"applied", "applied_repaired", "already_applied"}

func sweCharts(runs []*runStats) []chart {
	// With no test run in any run (--no-tests), every resolved rate is 0
	// and the chart was empty without saying why: the applied rate
	// stands in, and the title says so.
	rated, title, yTitle := []string{"resolved"}, "Resolved rate", "resolved"
	testsRan := false
	for _, r := range runs {
		for _, s := range sweTestStatuses {
			testsRan = testsRan || r.statuses[s] > 0
		}
	}
	if !testsRan {
		rated, title, yTitle = sweAppliedStatuses, "Applied rate (the tests did not run, as with --no-tests: no instance is resolved)", "applied"
	}
	var statuses, rates, families []point
	for _, r := range runs {
		for _, s := range slices.Sorted(maps.Keys(r.statuses)) {
			statuses = append(statuses, point{"run": r.name, "status": s, "value": r.statuses[s], "n": r.statuses[s]})
		}
		rate := 0.0
		if r.n > 0 {
			k := 0
			for _, s := range rated {
				k += r.statuses[s]
			}
			rate = float64(k) / float64(r.n)
		}
		rates = append(rates, point{"run": r.name, "value": rate, "n": r.n})
		for _, f := range slices.Sorted(maps.Keys(r.families)) {
			families = append(families, point{"run": r.name, "family": f, "value": r.families[f], "n": r.families[f]})
		}
	}
	charts := []chart{
		{"Statuses", barSpec(statuses, "status", "", "instances", false)},
		{title, barSpec(rates, "run", "", yTitle, true)},
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

// locCharts: the mean of each score, run by run; quality_score by
// category; and the distribution of quality_score over the cases.
func locCharts(runs []*runStats) ([]chart, error) {
	var means, byCat, hist []point
	for _, r := range runs {
		if r.locErr != nil {
			return nil, r.locErr
		}
		rep, err := r.locAgg.Report()
		if err != nil {
			return nil, fmt.Errorf("html: run %s: %w", r.name, err)
		}
		for _, m := range locMetrics {
			if st, ok := rep.Total.Stats[m]; ok {
				means = append(means, point{"run": r.name, "metric": m, "value": st.Value, "n": st.N})
			}
		}
		for _, p := range points(r.name, rep, []string{"category"}, "quality_score") {
			if p["category"] == "" {
				p["category"] = "(none)"
			}
			byCat = append(byCat, p)
		}
		for i, c := range r.quality {
			label := fmt.Sprintf("%.1f–%.1f", float64(i)/10, float64(i+1)/10)
			if i == 10 {
				label = "1.0"
			}
			hist = append(hist, point{"run": r.name, "quality": label, "value": c, "n": c})
		}
	}
	var charts []chart
	if len(means) > 0 {
		charts = append(charts, chart{"Scores (means over cases)", barSpec(means, "metric", "", "mean", true)})
	}
	if len(byCat) > 0 {
		charts = append(charts, chart{"quality_score by category", barSpec(byCat, "category", "", "quality_score", true)})
		charts = append(charts, chart{"Distribution of quality_score", barSpec(hist, "quality", "", "cases", false)})
	}
	if d := differences(runs, means, "metric"); len(d) > 0 {
		charts = append(charts, chart{"Score difference to " + runs[0].name, barSpec(d, "metric", "", "Δ mean", false)})
	}
	return charts, nil
}

// differences returns, for each run after the first, its points minus the
// first run's point with the same value of field.
func differences(runs []*runStats, pts []point, field string) []point {
	if len(runs) < 2 {
		return nil
	}
	base := map[any]float64{}
	for _, p := range pts {
		if p["run"] == runs[0].name {
			base[p[field]] = p["value"].(float64)
		}
	}
	var out []point
	for _, p := range pts {
		b, ok := base[p[field]]
		if p["run"] == runs[0].name || !ok {
			continue
		}
		out = append(out, point{"run": p["run"], field: p[field], "value": p["value"].(float64) - b, "n": p["n"]})
	}
	return out
}

// apeCharts: compile_pass@k and judge_pass@k for k = 1..n (averaged over
// tasks, n the fewest candidates a task has), and the semantic drop at
// each k: how much of what compiles the judge rejects.
func apeCharts(runs []*runStats) []chart {
	var curves, drops []point
	for _, r := range runs {
		if len(r.apeTasks) == 0 {
			continue
		}
		n := -1
		for _, c := range r.apeTasks {
			if n < 0 || c.n < n {
				n = c.n
			}
		}
		ids := slices.Sorted(maps.Keys(r.apeTasks))
		for k := 1; k <= n; k++ {
			var cs, js []float64
			for _, id := range ids {
				c := r.apeTasks[id]
				cs = append(cs, metrics.PassAtK(n, min(c.compile, n), k))
				js = append(js, metrics.PassAtK(n, min(c.judge, n), k))
			}
			cm, jm := metrics.Mean(cs), metrics.Mean(js)
			curves = append(curves,
				point{"run": r.name, "k": k, "stage": "compile", "value": cm, "n": len(ids)},
				point{"run": r.name, "k": k, "stage": "judge", "value": jm, "n": len(ids)})
			drops = append(drops, point{"run": r.name, "k": k, "value": metrics.SemanticDrop(cm, jm), "n": len(ids)})
		}
	}
	if len(curves) == 0 {
		return nil
	}
	charts := []chart{
		{"pass@k: compile and judge", lineSpec(curves, "stage", "pass@k")},
		{"Semantic drop by k (% of compile_pass@k)", lineSpec(drops, "", "semantic drop (%)")},
	}
	var judged []point
	for _, p := range curves {
		if p["stage"] == "judge" {
			judged = append(judged, p)
		}
	}
	if d := differences(runs, judged, "k"); len(d) > 0 {
		charts = append(charts, chart{"judge_pass@k difference to " + runs[0].name, barSpec(d, "k", "", "Δ judge_pass@k", false)})
	}
	return charts
}

// lineSpec is a line chart of value by k, a line per series (and per run).
func lineSpec(data []point, series, yTitle string) map[string]any {
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
