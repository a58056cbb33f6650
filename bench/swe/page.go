package swe

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report/html"
)

// Page is how the HTML page shows swe eval rows: a case table by
// instance and status, the repaired patch as each case's edit, and the
// statuses, the resolved rate and the error families as charts.
func Page() *html.Kind {
	return &html.Kind{
		Name: "swe",
		Match: func(r map[string]any) bool {
			_, id := r["instance_id"]
			_, st := r["status"]
			return id && st
		},
		Columns: []string{"instance_id", "status", "patch_status", "format", "repairs", "reason"},
		Cell:    pageCell,
		NewStats: func(run string) html.Stats {
			return &pageStats{run: run, statuses: map[string]int{}, families: map[string]int{}}
		},
		Charts: pageCharts,
		Edit: func(row map[string]any) *html.Edit {
			if p, ok := row["repaired_patch"].(string); ok && p != "" {
				return &html.Edit{Text: p, Format: "udiff", Source: "repaired_patch"}
			}
			return nil
		},
	}
}

// pageCell: a failed row (the runner's, not a status) is an infra_error,
// and repairs are counted.
func pageCell(row map[string]any, c string) (any, bool) {
	switch {
	case c == "status" && row["failed"] == true:
		return StatusInfraError, true
	case c == "repairs":
		if l, ok := row[c].([]any); ok {
			return len(l), true
		}
		return 0, true
	}
	return nil, false
}

// pageStats counts a run's statuses and the families of its failures.
type pageStats struct {
	run                string
	n                  int
	statuses, families map[string]int
}

func (st *pageStats) Add(row map[string]any) {
	st.n++
	// As the table prints the status ("<nil>" for none).
	s := fmt.Sprint(row["status"])
	if v, ok := pageCell(row, "status"); ok {
		s = v.(string)
	}
	st.statuses[s]++
	if reason, _ := row["reason"].(string); reason != "" && s != StatusResolved {
		st.families[errorFamily(reason)]++
	} else if e, _ := row["error"].(string); e != "" {
		st.families[errorFamily(e)]++
	}
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

// pageTestStatuses are the statuses only an instance whose tests ran has.
var pageTestStatuses = []string{StatusResolved, StatusUnresolved, StatusTestError, StatusTestTimeout}

// pageAppliedStatuses are those of an instance whose edit applied and
// whose tests did not run (swe eval --no-tests).
var pageAppliedStatuses = []string{StatusApplied, StatusAppliedRepaired, StatusAlreadyApplied}

func pageCharts(stats []html.Stats) ([]html.Chart, error) {
	runs := make([]*pageStats, len(stats))
	for i, s := range stats {
		runs[i] = s.(*pageStats)
	}
	// With no test run in any run (--no-tests), every resolved rate is 0
	// and the chart was empty without saying why: the applied rate
	// stands in, and the title says so.
	rated, title, yTitle := []string{StatusResolved}, "Resolved rate", "resolved"
	testsRan := false
	for _, r := range runs {
		for _, s := range pageTestStatuses {
			testsRan = testsRan || r.statuses[s] > 0
		}
	}
	if !testsRan {
		rated, title, yTitle = pageAppliedStatuses, "Applied rate (the tests did not run, as with --no-tests: no instance is resolved)", "applied"
	}
	var statuses, rates, families []html.Point
	for _, r := range runs {
		for _, s := range slices.Sorted(maps.Keys(r.statuses)) {
			statuses = append(statuses, html.Point{"run": r.run, "status": s, "value": r.statuses[s], "n": r.statuses[s]})
		}
		rate := 0.0
		if r.n > 0 {
			k := 0
			for _, s := range rated {
				k += r.statuses[s]
			}
			rate = float64(k) / float64(r.n)
		}
		rates = append(rates, html.Point{"run": r.run, "value": rate, "n": r.n})
		for _, f := range slices.Sorted(maps.Keys(r.families)) {
			families = append(families, html.Point{"run": r.run, "family": f, "value": r.families[f], "n": r.families[f]})
		}
	}
	charts := []html.Chart{
		{Title: "Statuses", Spec: html.BarSpec(statuses, "status", "", "instances", false)},
		{Title: title, Spec: html.BarSpec(rates, "run", "", yTitle, true)},
	}
	if len(families) > 0 {
		charts = append(charts, html.Chart{Title: "Error families", Spec: html.BarSpec(families, "family", "", "instances", false)})
	}
	return charts, nil
}
