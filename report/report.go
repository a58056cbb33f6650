// Package report turns results rows into aggregate reports: rows grouped by
// dimension fields (task, format, prompt; or lang, size class), with the
// count of rows, the mean of each numeric metric and the rate of each
// boolean metric per group. A report is written as report.json and
// report.md (Markdown tables in a stable order, followed by the definitions
// of the metrics), and several runs' reports can be compared side by side.
//
// The package knows nothing of benchmarks: which fields are dimensions and
// metrics, and what the metrics mean, is the caller's [Spec].
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/internal/atomicfile"
)

// Kind is how a metric is aggregated.
type Kind string

// The kinds of metrics.
const (
	// Mean is the arithmetic mean of a numeric field.
	Mean Kind = "mean"
	// Rate is the share of rows in which a boolean field is true.
	Rate Kind = "rate"
)

// Spec says how to aggregate rows.
type Spec struct {
	// Title heads the Markdown report; empty means "Report".
	Title string `json:"title,omitempty"`
	// Dims are the fields rows are grouped by, in column order. A row
	// without a dimension field has the empty value there.
	Dims []string `json:"dims,omitempty"`
	// Metrics are the fields aggregated, in column order. A field whose
	// values are booleans is a [Rate], one whose values are numbers a
	// [Mean]. Rows without the field, or with null, do not count toward it.
	// When Metrics is nil, every field that holds a number or a boolean in
	// some row and is not a dimension is a metric, in name order.
	Metrics []string `json:"metrics,omitempty"`
	// Order fixes, per dimension, the order of its values in the tables.
	// Values not listed follow, in natural order (numbers by value, the
	// rest as strings).
	Order map[string][]string `json:"order,omitempty"`
	// Definitions maps a metric (or a dimension, or "n") to the text that
	// defines it; they are written under "Definitions" in the report.
	Definitions map[string]string `json:"definitions,omitempty"`
}

// Report is the aggregate of a set of rows.
type Report struct {
	Title   string   `json:"title,omitempty"`
	Rows    int      `json:"rows"`
	Dims    []string `json:"dims"`
	Metrics []Metric `json:"metrics"`
	Groups  []Group  `json:"groups"`
	Total   Group    `json:"total"`
	// NoTotal says that the row over all rows pools groups that must not
	// be pooled (Diff-XYZ's tasks and formats): tables leave it out. Total
	// is still computed.
	NoTotal bool `json:"no_total,omitempty"`
	// Order is Spec.Order, kept so that [Compare] orders groups the same
	// way.
	Order       map[string][]string `json:"order,omitempty"`
	Definitions map[string]string   `json:"definitions,omitempty"`
}

// Metric names a metric and how it is aggregated.
type Metric struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
}

// Group is the aggregate of the rows that share the values of the
// dimensions.
type Group struct {
	// Values holds the dimension values, in the order of Report.Dims; it
	// is empty for Report.Total.
	Values []string `json:"values"`
	// N is the number of rows in the group.
	N int `json:"n"`
	// Stats maps each metric to its aggregate. A metric no row of the
	// group has is missing.
	Stats map[string]Stat `json:"stats"`
}

// Stat is the aggregate of one metric in one group.
type Stat struct {
	// Value is the mean, or for a rate the share of true values (0 to 1).
	Value float64 `json:"value"`
	// N is the number of rows that had the metric.
	N int `json:"n"`
}

// Aggregate groups rows by spec.Dims and aggregates spec.Metrics in each
// group and over all rows. Groups are ordered by spec.Order, then
// naturally, dimension by dimension. It is [Aggregator] over a slice.
func Aggregate(rows []map[string]any, spec Spec) (*Report, error) {
	a, err := NewAggregator(spec)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if err := a.Add(row); err != nil {
			return nil, err
		}
	}
	return a.Report()
}

// Aggregator aggregates rows one at a time, keeping only the sums of each
// group: a report of a results file of any size takes one pass over it
// and memory for its groups. The report does not depend on the order of
// the rows.
type Aggregator struct {
	spec   Spec
	kinds  map[string]Kind // metric → kind, as far as the rows have shown
	bad    map[string]error
	groups map[string]*acc
	order  []*acc
	total  *acc
	rows   int
}

type acc struct {
	values []string
	n      int
	sums   map[string]*sum
}

func newAcc(values []string) *acc { return &acc{values: values, sums: map[string]*sum{}} }

// NewAggregator checks spec and returns an empty aggregator. Without
// spec.Metrics, every field that holds a number or a boolean in some row,
// other than a dimension, is a metric.
func NewAggregator(spec Spec) (*Aggregator, error) {
	for i, name := range spec.Metrics {
		if slices.Contains(spec.Dims, name) {
			return nil, fmt.Errorf("report: %q is both a dimension and a metric", name)
		}
		if slices.Contains(spec.Metrics[:i], name) {
			return nil, fmt.Errorf("report: metric %q listed twice", name)
		}
	}
	a := &Aggregator{spec: spec, kinds: map[string]Kind{}, bad: map[string]error{}, groups: map[string]*acc{}, total: newAcc([]string{})}
	for _, name := range spec.Metrics {
		a.kinds[name] = ""
	}
	return a, nil
}

// Add aggregates one row. An error names the row (counting from 1) and the
// field; the aggregator is then unusable.
func (a *Aggregator) Add(row map[string]any) error {
	a.rows++
	i := a.rows
	values := make([]string, len(a.spec.Dims))
	for j, d := range a.spec.Dims {
		v, err := dimValue(row[d])
		if err != nil {
			return fmt.Errorf("report: row %d: dimension %q: %w", i, d, err)
		}
		values[j] = v
	}
	id := strings.Join(values, "\x00")
	g := a.groups[id]
	if g == nil {
		g = newAcc(values)
		a.groups[id] = g
		a.order = append(a.order, g)
	}
	g.n++
	a.total.n++
	add := func(name string, v any) error {
		if v == nil {
			return nil
		}
		k, ok := kindOf(v)
		if !ok {
			err := fmt.Errorf("report: row %d: metric %q is %T, want a number or a boolean", i, name, v)
			if _, known := a.kinds[name]; known {
				return err
			}
			if a.bad[name] == nil {
				a.bad[name] = err // an error only if the field turns out a metric
			}
			return nil
		}
		if prev := a.kinds[name]; prev != "" && prev != k {
			return fmt.Errorf("report: row %d: metric %q mixes numbers and booleans", i, name)
		}
		if err := a.bad[name]; err != nil {
			return err
		}
		a.kinds[name] = k
		x, _ := metricValue(v)
		for _, ac := range []*acc{g, a.total} {
			s := ac.sums[name]
			if s == nil {
				s = &sum{}
				ac.sums[name] = s
			}
			s.add(x)
		}
		return nil
	}
	if a.spec.Metrics != nil {
		for _, name := range a.spec.Metrics {
			if err := add(name, row[name]); err != nil {
				return err
			}
		}
		return nil
	}
	for name, v := range row {
		if slices.Contains(a.spec.Dims, name) {
			continue
		}
		if err := add(name, v); err != nil {
			return err
		}
	}
	return nil
}

// Report returns the aggregate of the rows added so far.
func (a *Aggregator) Report() (*Report, error) {
	names := a.spec.Metrics
	if names == nil {
		for name, k := range a.kinds {
			if k != "" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
	}
	metrics := make([]Metric, 0, len(names))
	for _, name := range names {
		k := a.kinds[name]
		if k == "" {
			k = Mean // no row has it; the kind does not show
		}
		metrics = append(metrics, Metric{Name: name, Kind: k})
	}
	r := &Report{
		Title:       a.spec.Title,
		Rows:        a.rows,
		Dims:        slices.Clone(a.spec.Dims),
		Metrics:     metrics,
		Order:       maps.Clone(a.spec.Order),
		Definitions: maps.Clone(a.spec.Definitions),
	}
	if r.Dims == nil {
		r.Dims = []string{}
	}
	finish := func(ac *acc) Group {
		g := Group{Values: ac.values, N: ac.n, Stats: map[string]Stat{}}
		for name, s := range ac.sums {
			g.Stats[name] = Stat{Value: s.mean(), N: s.n}
		}
		return g
	}
	order := slices.Clone(a.order)
	cmpValues := valueOrder(a.spec.Dims, a.spec.Order)
	slices.SortStableFunc(order, func(x, y *acc) int { return cmpValues(x.values, y.values) })
	r.Groups = make([]Group, 0, len(order))
	for _, ac := range order {
		r.Groups = append(r.Groups, finish(ac))
	}
	r.Total = finish(a.total)
	return r, nil
}

// kindOf returns the kind of metric a value can be.
func kindOf(v any) (Kind, bool) {
	switch v.(type) {
	case bool:
		return Rate, true
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return Mean, true
	}
	return "", false
}

// metricValue returns v as a number (true is 1), or false when v is null
// or missing.
func metricValue(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// dimValue returns a dimension value as text.
func dimValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		return x.String(), nil
	}
	if f, ok := metricValue(v); ok {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("value %T is not a string, number or boolean", v)
}

// sum accumulates a mean. The sum is exact (Shewchuk's partials, as
// Python's math.fsum) and rounded once, so a mean does not depend on the
// order of the rows: the merged shards of a run report the same bytes as
// the run in one piece, whose rows are in the order they finished.
type sum struct {
	partials []float64 // non-overlapping, increasing magnitude
	special  float64   // the sum of infinities and NaNs, kept apart
	n        int
}

func (s *sum) add(x float64) {
	s.n++
	if math.IsInf(x, 0) || math.IsNaN(x) {
		s.special += x
		return
	}
	i := 0
	for _, y := range s.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			s.partials[i] = lo
			i++
		}
		x = hi
	}
	s.partials = append(s.partials[:i], x)
}

// total rounds the exact sum of the partials to the nearest float64 (ties
// to even), as CPython's fsum does.
func (s *sum) total() float64 {
	if s.special != 0 || math.IsNaN(s.special) {
		return s.special
	}
	p := s.partials
	n := len(p)
	if n == 0 {
		return 0
	}
	hi, lo := p[n-1], 0.0
	n--
	for n > 0 {
		x, y := hi, p[n-1]
		n--
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half-way cases the way the partials below lo say.
	if n > 0 && (lo < 0 && p[n-1] < 0 || lo > 0 && p[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}

func (s *sum) mean() float64 { return s.total() / float64(s.n) }

// valueOrder returns the comparison of dimension value tuples that Order
// and natural order define.
func valueOrder(dims []string, order map[string][]string) func(a, b []string) int {
	rank := make([]map[string]int, len(dims))
	for i, d := range dims {
		rank[i] = map[string]int{}
		for j, v := range order[d] {
			if _, dup := rank[i][v]; !dup {
				rank[i][v] = j
			}
		}
	}
	return func(a, b []string) int {
		for i := range a {
			ra, oka := rank[i][a[i]]
			rb, okb := rank[i][b[i]]
			switch {
			case oka && okb:
				if ra != rb {
					return ra - rb
				}
			case oka:
				return -1
			case okb:
				return 1
			default:
				if c := naturalCompare(a[i], b[i]); c != 0 {
					return c
				}
			}
		}
		return 0
	}
}

// naturalCompare orders numbers by value before other strings, and other
// strings bytewise.
func naturalCompare(a, b string) int {
	fa, erra := strconv.ParseFloat(a, 64)
	fb, errb := strconv.ParseFloat(b, 64)
	switch {
	case erra == nil && errb == nil && !math.IsNaN(fa) && !math.IsNaN(fb):
		if fa != fb {
			if fa < fb {
				return -1
			}
			return 1
		}
	case erra == nil:
		return -1
	case errb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// WriteFiles writes the report to dir as report.json and report.md. Each
// file is written to a temporary file first and renamed into place.
func (r *Report) WriteFiles(dir string) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report: encoding report.json: %w", err)
	}
	js = append(js, '\n')
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "report.json"), js); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "report.md"), md.Bytes())
}

// ReadReport reads a report.json written by [Report.WriteFiles].
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	if r.Dims == nil {
		return nil, fmt.Errorf("report: %s: no dims field; not a report", path)
	}
	for i, g := range r.Groups {
		if len(g.Values) != len(r.Dims) {
			return nil, fmt.Errorf("report: %s: group %d has %d values for %d dims", path, i+1, len(g.Values), len(r.Dims))
		}
	}
	return &r, nil
}

// writeFileAtomic writes a report file so that readers never see a part.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}

// usageMetrics are what the model calls spent. Offline models (reference,
// replay) spend nothing: a column of zeros would read as a measurement.
var usageMetrics = map[string]bool{"latency_ms": true, "tokens": true, "cost": true}

// DropUnspent removes from r's columns the usage metrics (latency_ms,
// tokens, cost) that are zero over all rows, as they are for a run of an
// offline model. Their stats stay in the JSON.
func (r *Report) DropUnspent() {
	kept := r.Metrics[:0]
	for _, m := range r.Metrics {
		if st, ok := r.Total.Stats[m.Name]; ok && usageMetrics[m.Name] && st.Value == 0 {
			continue
		}
		kept = append(kept, m)
	}
	r.Metrics = kept
}
