package html

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
)

// Kind is what the page knows of one benchmark's rows: its table, its
// statuses, its charts and the edit a case shows. A benchmark defines its
// Kind (runner.Benchmark.Page); the page knows none by name. A run of no
// kind, or a page of runs of several kinds, is drawn as [Generic].
type Kind struct {
	// Name names the kind (the benchmark's name).
	Name string
	// Match reports whether a row is one of the kind's: a run whose kind
	// is not given is of the kind of its first row one matches.
	Match func(row map[string]any) bool
	// Columns are the case table's columns, in order, each shown when
	// some row has the field (or Nested has it), or when it is Derived.
	Columns []string
	// Derived are the columns Cell or Status make, shown whatever the
	// rows hold.
	Derived []string
	// Nested names a field of the rows holding an object whose fields
	// count as the row's for the table (Loc-Bench's metrics).
	Nested string
	// Status is a row's word in the "status" column; nil means the
	// generic one: failed, else the row's status field, else ok.
	Status func(row map[string]any) string
	// Cell, when set, gives column c of row where the field is not the
	// value; ok false takes the field.
	Cell func(row map[string]any, c string) (v any, ok bool)
	// NewStats returns what the charts need of one run (named run),
	// gathered row by row, and Charts draws the charts of the runs from
	// their stats, in the runs' order. Nil NewStats: no charts.
	NewStats func(run string) Stats
	Charts   func(runs []Stats) ([]Chart, error)
	// Edit returns the edit a case holds, for its detail; nil for none.
	Edit func(row map[string]any) *Edit
}

// Stats gathers what a kind's charts need of one run. Add may keep an
// error for the charts it concerns (see Kind.Charts) rather than fail the
// page.
type Stats interface {
	Add(row map[string]any)
}

// Chart is one Vega-Lite chart of the page, its data inline (aggregated
// by the kind, so the page draws a few hundred marks whatever the number
// of cases).
type Chart struct {
	Title string         `json:"title"`
	Spec  map[string]any `json:"spec"`
}

// Edit is the edit a case holds, as opening the case shows it: the text,
// its format and where it came from, and the candidates considered.
type Edit struct {
	Text, Format, Source string
	Candidates           []Candidate
}

// Candidate is an edit considered in a response (see patch/extract).
type Candidate struct {
	Kind   string `json:"kind"`
	Lines  string `json:"lines"`
	Format string `json:"format"`
	Chosen bool   `json:"chosen"`
	Reason string `json:"reason"`
}

// GenericName is the name of the generic kind.
const GenericName = "generic"

// Generic returns the kind of rows no other kind matches: the table's
// usual columns and, for charts, the mean of each numeric field and the
// rate of each boolean field, run by run. A caller may set its Match (to
// end a list of kinds to detect) and its Edit; it stays generic by its
// name.
func Generic() *Kind {
	return &Kind{
		Name:    GenericName,
		Columns: []string{"id", "task", "format", "status", "score", "error"},
		Derived: []string{"status"},
	}
}

// isGeneric reports whether k is the generic kind: its page draws the
// generic charts, and each row's status and edit are its run's kind's.
func (k *Kind) isGeneric() bool { return k.Name == GenericName }

// status is the word of row in the "status" column.
func (k *Kind) status(row map[string]any) string {
	if k != nil && k.Status != nil {
		return k.Status(row)
	}
	return GenericStatus(row)
}

// GenericStatus is a row's status when its kind says nothing more:
// failed (the runner could not score it), else its status field, else ok.
func GenericStatus(row map[string]any) string {
	if row["failed"] == true {
		return "failed"
	}
	if s, ok := row["status"].(string); ok && s != "" {
		return s
	}
	return "ok"
}

// has adds the fields of row (and of its Nested object) to has.
func (k *Kind) has(row map[string]any, has map[string]bool) {
	for f := range row {
		has[f] = true
	}
	if k.Nested != "" {
		if ms, ok := row[k.Nested].(map[string]any); ok {
			for f := range ms {
				has[f] = true
			}
		}
	}
}

// columns returns the case table's columns and the ones it has a filter
// for: the kind's columns present in some row (has) or derived, in their
// order.
func (k *Kind) columns(has map[string]bool) (cols, filters []string) {
	for _, c := range k.Columns {
		if has[c] || slices.Contains(k.Derived, c) {
			cols = append(cols, c)
		}
	}
	for _, f := range []string{"status", "task", "format"} {
		if slices.Contains(cols, f) {
			filters = append(filters, f)
		}
	}
	return cols, filters
}

// cell is the table's value of column c for row of a run of kind run on a
// page of kind k.
func (k *Kind) cell(run *Kind, row map[string]any, c string) any {
	if k.Cell != nil {
		if v, ok := k.Cell(row, c); ok {
			return v
		}
	}
	if c == "status" && slices.Contains(k.Derived, c) {
		if k.isGeneric() {
			return run.status(row) // each row as its own kind says
		}
		return k.status(row)
	}
	v := row[c]
	if k.Nested != "" && v == nil {
		if ms, ok := row[k.Nested].(map[string]any); ok {
			v = ms[c]
		}
	}
	switch v := v.(type) {
	case string:
		if len(v) > 200 {
			return v[:200] + "…"
		}
		return v
	case float64, bool, nil:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// genericStats are the generic charts' stats of a run: every numeric and
// boolean field.
type genericStats struct {
	name string
	agg  *report.Aggregator
	err  error
}

func newGenericStats(name string) *genericStats {
	agg, _ := report.NewAggregator(report.Spec{})
	return &genericStats{name: name, agg: agg}
}

func (st *genericStats) Add(row map[string]any) {
	if st.err == nil {
		if err := st.agg.Add(row); err != nil {
			st.err = fmt.Errorf("html: %w", err)
		}
	}
}

// genericCharts draws, for any rows, the mean of each numeric field and
// the rate of each boolean field, run by run (all: the stats of every
// run's rows together, which name the fields).
func genericCharts(runs []*genericStats, all *genericStats) ([]Chart, error) {
	if all.err != nil {
		return nil, all.err
	}
	rep, err := all.agg.Report()
	if err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	var charts []Chart
	for _, m := range rep.Metrics {
		if len(charts) == 12 {
			break
		}
		var pts []Point
		for _, r := range runs {
			if r.err != nil {
				return nil, r.err
			}
			rr, err := r.agg.Report()
			if err != nil {
				return nil, fmt.Errorf("html: %w", err)
			}
			pts = append(pts, Points(r.name, rr, nil, m.Name)...)
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
		charts = append(charts, Chart{title, BarSpec(pts, "run", "", m.Name, m.Kind == report.Rate)})
	}
	return charts, nil
}

// detect returns the kind of the first of kinds that matches row, or nil.
func detect(kinds []*Kind, row map[string]any) *Kind {
	for _, k := range kinds {
		if k.Match != nil && k.Match(row) {
			return k
		}
	}
	return nil
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// caseDetail is what opening a case shows beyond its row: the edit found
// in it and how it was found.
type caseDetail struct {
	Row        map[string]any `json:"row"`
	Edit       *editInfo      `json:"edit,omitempty"`
	Candidates []Candidate    `json:"candidates,omitempty"`
}

type editInfo struct {
	// Text is the edit, or, when it is a part of the response, empty and
	// At says where (UTF-16 offsets, as JavaScript slices strings): the
	// page does not carry it twice.
	Text   string `json:"text,omitempty"`
	At     []int  `json:"at,omitempty"`
	Format string `json:"format"`
	Source string `json:"source"`
}

// detail makes a case's detail from the edit its kind finds in the row.
func detail(k *Kind, row map[string]any) caseDetail {
	d := caseDetail{Row: row}
	if k == nil || k.Edit == nil {
		return d
	}
	e := k.Edit(row)
	if e == nil {
		return d
	}
	d.Candidates = e.Candidates
	if e.Text == "" {
		return d
	}
	d.Edit = &editInfo{Text: e.Text, Format: e.Format, Source: e.Source}
	if resp, ok := row["response"].(string); ok {
		if i := strings.Index(resp, e.Text); i >= 0 {
			start := utf16Len(resp[:i])
			d.Edit.At, d.Edit.Text = []int{start, start + utf16Len(e.Text)}, ""
		}
	}
	return d
}
