package diffxyz

import (
	"fmt"

	"github.com/patchbench/patchbench/internal/pageedit"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/report/html"
)

// Page is how the HTML page shows Diff-XYZ rows: a case table by task,
// format and prompt, a status word from the scores, and EM and applying
// rates by task × format (and by each dimension that varies).
func Page() *html.Kind {
	return &html.Kind{
		Name: "diffxyz",
		Match: func(r map[string]any) bool {
			_, task := r["task"]
			_, format := r["format"]
			_, em := r["em"]
			return task && format && em
		},
		Columns: []string{"id", "task", "format", "prompt", "lang", "size_class", "change_kind", "status", "em", "iou", "parsed", "applied",
			"em_tolerant", "applied_tolerant"},
		Derived:  []string{"status"},
		Status:   pageStatus,
		NewStats: func(run string) html.Stats { return newPageStats(run) },
		Charts:   pageCharts,
		Edit:     pageedit.FromResponse,
	}
}

// pageStatus is one word for a row: failed (the runner could not score
// it), its status field if any, exact (EM 1), applied (the edit applied,
// not exactly), or wrong.
func pageStatus(row map[string]any) string {
	s := html.GenericStatus(row)
	if s != "ok" {
		return s
	}
	if em, ok := row["em"].(float64); ok {
		if em == 1 {
			return "exact"
		}
		if row["applied"] == true {
			return "applied"
		}
		return "wrong"
	}
	return s
}

// pageAggs are the (dimensions, metric) pairs the charts draw.
var pageAggs = []struct {
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

// pageDims are the dimensions that get an EM chart when they vary.
var pageDims = []string{"prompt", "lang", "size_class", "change_kind"}

// pageStats are the aggregates of one run and the distinct values of its
// dimensions.
type pageStats struct {
	*html.Aggregates
	distinct map[string]map[any]bool
}

func newPageStats(run string) *pageStats {
	var specs []report.Spec
	for _, a := range pageAggs {
		// The values of the dimensions in the order of the report's
		// tables: tasks as the paper lists them, sizes from small to large.
		specs = append(specs, report.Spec{Dims: a.dims, Metrics: []string{a.metric}, Order: reportOrder()})
	}
	return &pageStats{Aggregates: html.NewAggregates(run, specs...), distinct: map[string]map[any]bool{}}
}

// reportOrder orders the values of the dimensions in charts as the
// report's tables do.
func reportOrder() map[string][]string {
	return map[string][]string{
		"task":        {"apply", "anti-apply", "diffgen"},
		"size_class":  {"small", "medium", "large"},
		"change_kind": {"add+delete", "add-only", "delete-only"},
	}
}

func (st *pageStats) Add(row map[string]any) {
	st.Aggregates.Add(row)
	for _, d := range pageDims {
		if v, ok := row[d]; ok {
			if st.distinct[d] == nil {
				st.distinct[d] = map[any]bool{}
			}
			st.distinct[d][v] = true
		}
	}
}

// aggregate returns one point per group of each run's aggregate of metric
// by dims.
func aggregate(runs []*pageStats, dims []string, metric string) ([]html.Point, error) {
	var out []html.Point
	for _, r := range runs {
		rep, err := r.Report(dims, []string{metric})
		if err != nil {
			return nil, err
		}
		out = append(out, html.Points(r.Run, rep, dims, metric)...)
	}
	return out, nil
}

// distinct counts the distinct values of field over every run's rows.
func distinct(runs []*pageStats, field string) int {
	seen := map[any]bool{}
	for _, r := range runs {
		for v := range r.distinct[field] {
			seen[v] = true
		}
	}
	return len(seen)
}

func pageCharts(stats []html.Stats) ([]html.Chart, error) {
	runs := make([]*pageStats, len(stats))
	for i, s := range stats {
		runs[i] = s.(*pageStats)
	}
	var charts []html.Chart
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
		charts = append(charts, html.Chart{Title: title, Spec: html.BarSpecRows(pts, x, col, row, metric, rate)})
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
	for _, d := range pageDims {
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
			if p["run"] == runs[0].Run {
				base[fmt.Sprint(p["task"], "\x00", p["format"])] = p["value"].(float64)
			}
		}
		var diffs []html.Point
		for _, p := range pts {
			b, ok := base[fmt.Sprint(p["task"], "\x00", p["format"])]
			if p["run"] == runs[0].Run || !ok {
				continue
			}
			diffs = append(diffs, html.Point{"run": p["run"], "task": p["task"], "format": p["format"], "value": p["value"].(float64) - b, "n": p["n"]})
		}
		if len(diffs) > 0 {
			charts = append(charts, html.Chart{Title: "EM difference to " + runs[0].Run, Spec: html.BarSpec(diffs, "format", "task", "ΔEM", false)})
		}
	}
	return charts, nil
}
