package ape

import (
	"maps"
	"slices"

	"github.com/patchbench/patchbench/internal/pageedit"
	"github.com/patchbench/patchbench/metrics"
	"github.com/patchbench/patchbench/report/html"
)

// Page is how the HTML page shows APE candidates: a case table with the
// last stage each candidate passed, the pass@k curves of the compile and
// judge stages and the semantic drop by k.
func Page() *html.Kind {
	return &html.Kind{
		Name: "ape",
		Match: func(r map[string]any) bool {
			_, sample := r["sample"]
			_, judge := r["judge_pass"]
			return sample && judge
		},
		Columns:  []string{"id", "sample", "category", "difficulty", "status", "applied", "compile_pass", "judge_pass", "grade"},
		Derived:  []string{"status"},
		Status:   pageStatus,
		NewStats: func(run string) html.Stats { return &pageStats{run: run, tasks: map[string]*pageCounts{}} },
		Charts:   pageCharts,
		Edit:     pageedit.FromResponse,
	}
}

// pageStatus is the last stage a candidate passed (failed for a row the
// runner could not score; the status field of one not evaluated).
func pageStatus(row map[string]any) string {
	s := html.GenericStatus(row)
	if _, ok := row["judge_pass"]; s != "ok" || !ok {
		return s
	}
	switch {
	case row["judge_pass"] == true:
		return "passed"
	case row["compile_pass"] == true:
		return "compiled"
	case row["applied"] == true:
		return "applied"
	}
	return "not_applied"
}

// pageStats are, per task of a run, its candidates and how many compiled
// and passed the judge.
type pageStats struct {
	run   string
	tasks map[string]*pageCounts
}

type pageCounts struct{ n, compile, judge int }

// passAt averages compile_pass@k and judge_pass@k over the tasks ids, each
// task estimated from its own candidates (k is at most the fewest).
func (st *pageStats) passAt(ids []string, k int) (compile, judge float64) {
	var cs, js []float64
	for _, id := range ids {
		c := st.tasks[id]
		cs = append(cs, metrics.PassAtK(c.n, c.compile, k))
		js = append(js, metrics.PassAtK(c.n, c.judge, k))
	}
	return metrics.Mean(cs), metrics.Mean(js)
}

func (st *pageStats) Add(row map[string]any) {
	task, ok := row["task"].(string)
	if !ok {
		return
	}
	if s, _ := row["status"].(string); s == StatusEnvironment || s == StatusInput {
		return // not evaluated: not a candidate of pass@k
	}
	if _, ok := row["judge_pass"]; !ok {
		return
	}
	c := st.tasks[task]
	if c == nil {
		c = &pageCounts{}
		st.tasks[task] = c
	}
	c.n++
	if row["compile_pass"] == true {
		c.compile++
	}
	if row["judge_pass"] == true {
		c.judge++
	}
}

// pageCharts: compile_pass@k and judge_pass@k for k = 1..n (averaged over
// tasks, each estimated from its own candidates, n the fewest candidates
// a task has), and the semantic drop at
// each k: how much of what compiles the judge rejects.
func pageCharts(stats []html.Stats) ([]html.Chart, error) {
	var curves, drops []html.Point
	var names []string
	for _, s := range stats {
		r := s.(*pageStats)
		names = append(names, r.run)
		if len(r.tasks) == 0 {
			continue
		}
		n := -1
		for _, c := range r.tasks {
			if n < 0 || c.n < n {
				n = c.n
			}
		}
		ids := slices.Sorted(maps.Keys(r.tasks))
		for k := 1; k <= n; k++ {
			cm, jm := r.passAt(ids, k)
			curves = append(curves,
				html.Point{"run": r.run, "k": k, "stage": "compile", "value": cm, "n": len(ids)},
				html.Point{"run": r.run, "k": k, "stage": "judge", "value": jm, "n": len(ids)})
			drops = append(drops, html.Point{"run": r.run, "k": k, "value": metrics.SemanticDrop(cm, jm), "n": len(ids)})
		}
	}
	if len(curves) == 0 {
		return nil, nil
	}
	charts := []html.Chart{
		{Title: "pass@k: compile and judge", Spec: html.LineSpec(curves, "stage", "pass@k")},
		{Title: "Semantic drop by k (% of compile_pass@k)", Spec: html.LineSpec(drops, "", "semantic drop (%)")},
	}
	var judged []html.Point
	for _, p := range curves {
		if p["stage"] == "judge" {
			judged = append(judged, p)
		}
	}
	if d := html.Differences(names, judged, "k"); len(d) > 0 {
		charts = append(charts, html.Chart{Title: "judge_pass@k difference to " + names[0], Spec: html.BarSpec(d, "k", "", "Δ judge_pass@k", false)})
	}
	return charts, nil
}
