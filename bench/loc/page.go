package loc

import (
	"fmt"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/report/html"
)

// Page is how the HTML page shows Loc-Bench rows: a case table with the
// scores of their metrics, the mean of each score, quality_score by
// category and its distribution.
func Page() *html.Kind {
	return &html.Kind{
		Name: "loc",
		Match: func(r map[string]any) bool {
			_, metrics := r["metrics"].(map[string]any)
			_, found := r["found"]
			return metrics && found
		},
		Columns:  []string{"id", "repo", "category", "mode", "status", "quality_score", "quality_score_v2", "file_acc@5", "function_acc@10", "turns"},
		Derived:  []string{"status"},
		Nested:   "metrics",
		NewStats: func(run string) html.Stats { return newPageStats(run) },
		Charts:   pageCharts,
	}
}

// pageMetrics are the scores the charts show, in order.
var pageMetrics = []string{"file_recall", "file_precision", "line_coverage", "function_hit_rate", "quality_score", "quality_score_v2", "file_acc@5", "function_acc@10"}

// pageStats are a run's scores (its metrics map) by category, and a
// histogram of quality_score in tenths.
type pageStats struct {
	*html.Aggregates
	quality [11]int
}

func newPageStats(run string) *pageStats {
	return &pageStats{Aggregates: html.NewAggregates(run, report.Spec{Dims: []string{"category"}, Metrics: pageMetrics})}
}

func (st *pageStats) Add(row map[string]any) {
	ms, ok := row["metrics"].(map[string]any)
	if !ok {
		return
	}
	flat := map[string]any{"category": row["category"]}
	for k, v := range ms {
		flat[k] = v
	}
	st.Aggregates.Add(flat)
	if q, ok := ms["quality_score"].(float64); ok {
		st.quality[min(max(int(q*10), 0), 10)]++
	}
}

// pageCharts: the mean of each score, run by run; quality_score by
// category; and the distribution of quality_score over the cases.
func pageCharts(stats []html.Stats) ([]html.Chart, error) {
	var means, byCat, hist []html.Point
	var names []string
	for _, s := range stats {
		r := s.(*pageStats)
		names = append(names, r.Run)
		rep, err := r.Report([]string{"category"}, pageMetrics)
		if err != nil {
			return nil, err
		}
		for _, m := range pageMetrics {
			if st, ok := rep.Total.Stats[m]; ok {
				means = append(means, html.Point{"run": r.Run, "metric": m, "value": st.Value, "n": st.N})
			}
		}
		for _, p := range html.Points(r.Run, rep, []string{"category"}, "quality_score") {
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
			hist = append(hist, html.Point{"run": r.Run, "quality": label, "value": c, "n": c})
		}
	}
	var charts []html.Chart
	if len(means) > 0 {
		charts = append(charts, html.Chart{Title: "Scores (means over cases)", Spec: html.BarSpec(means, "metric", "", "mean", true)})
	}
	if len(byCat) > 0 {
		charts = append(charts, html.Chart{Title: "quality_score by category", Spec: html.BarSpec(byCat, "category", "", "quality_score", true)})
		charts = append(charts, html.Chart{Title: "Distribution of quality_score", Spec: html.BarSpec(hist, "quality", "", "cases", false)})
	}
	if d := html.Differences(names, means, "metric"); len(d) > 0 {
		charts = append(charts, html.Chart{Title: "Score difference to " + names[0], Spec: html.BarSpec(d, "metric", "", "Δ mean", false)})
	}
	return charts, nil
}
