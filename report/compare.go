package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Comparison lays the groups of several runs' reports side by side.
type Comparison struct {
	// Runs names the runs, in column order.
	Runs []string
	// Rows is the number of rows of each run.
	Rows []int
	// Dims are the dimensions all the reports share.
	Dims []string
	// Metrics are the metrics of any of the reports, in the order they
	// first appear.
	Metrics []Metric
	// Groups are the groups of any of the reports, ordered like the groups
	// of a report (by the first report's Order, then naturally), followed by
	// the total unless a report has NoTotal.
	Groups []ComparedGroup
	// Definitions merges the reports' definitions; the first run that
	// defines a name wins.
	Definitions map[string]string
}

// ComparedGroup is one group in every run.
type ComparedGroup struct {
	// Values holds the dimension values; it is empty for the total.
	Values []string
	// Total is set for the row over all rows.
	Total bool
	// Runs holds the group in each run, nil where a run does not have it.
	Runs []*Group
}

// Compare lines up the groups of reports, named by names. The reports must
// group by the same dimensions, and a metric must have the same kind in
// each.
func Compare(names []string, reports []*Report) (*Comparison, error) {
	if len(names) != len(reports) {
		return nil, fmt.Errorf("report: %d names for %d reports", len(names), len(reports))
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("report: nothing to compare")
	}
	c := &Comparison{
		Runs:        slices.Clone(names),
		Dims:        slices.Clone(reports[0].Dims),
		Definitions: map[string]string{},
	}
	index := map[string]int{}
	for i, r := range reports {
		if !slices.Equal(r.Dims, c.Dims) {
			return nil, fmt.Errorf("report: run %q groups by [%s], run %q by [%s]",
				names[0], strings.Join(c.Dims, " "), names[i], strings.Join(r.Dims, " "))
		}
		c.Rows = append(c.Rows, r.Rows)
		for _, m := range r.Metrics {
			j := slices.IndexFunc(c.Metrics, func(x Metric) bool { return x.Name == m.Name })
			switch {
			case j < 0:
				c.Metrics = append(c.Metrics, m)
			case c.Metrics[j].Kind != m.Kind:
				return nil, fmt.Errorf("report: metric %q is a %s in one run and a %s in run %q",
					m.Name, c.Metrics[j].Kind, m.Kind, names[i])
			}
		}
		for k, d := range r.Definitions {
			if _, ok := c.Definitions[k]; !ok {
				c.Definitions[k] = d
			}
		}
		for _, g := range r.Groups {
			id := strings.Join(g.Values, "\x00")
			j, ok := index[id]
			if !ok {
				j = len(c.Groups)
				index[id] = j
				c.Groups = append(c.Groups, ComparedGroup{Values: g.Values, Runs: make([]*Group, len(reports))})
			}
			c.Groups[j].Runs[i] = &g
		}
	}
	cmpValues := valueOrder(c.Dims, reports[0].Order)
	slices.SortStableFunc(c.Groups, func(a, b ComparedGroup) int { return cmpValues(a.Values, b.Values) })
	total := ComparedGroup{Values: []string{}, Total: true, Runs: make([]*Group, len(reports))}
	noTotal := false
	for i, r := range reports {
		total.Runs[i] = &r.Total
		noTotal = noTotal || (r.NoTotal && len(r.Dims) > 0)
	}
	if !noTotal {
		c.Groups = append(c.Groups, total)
	}
	return c, nil
}

// WriteMarkdown writes the comparison as Markdown: a section per measure (n,
// then each metric) holding a table with a row per group and a column per
// run, and with two runs a column Δ for the second minus the first.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Comparison\n\n")
	for i, name := range c.Runs {
		fmt.Fprintf(&b, "- **%s**: %s\n", escapeLine(name), plural(c.Rows[i], "row"))
	}
	for _, s := range c.sections() {
		fmt.Fprintf(&b, "\n## %s\n\n", s.title)
		s.table.markdown(&b)
	}
	r := Report{Dims: c.Dims, Metrics: c.Metrics, Definitions: c.Definitions}
	if names := r.definitionOrder(); len(names) > 0 {
		b.WriteString("\n## Definitions\n\n")
		for _, name := range names {
			fmt.Fprintf(&b, "- **%s**: %s\n", escapeLine(name), escapeLine(r.definition(name)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}

// WriteText writes the comparison as plain aligned tables, one per measure.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, s := range c.sections() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n\n", s.title)
		s.table.text(&b)
	}
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}

type section struct {
	title string
	table table
}

// sections returns the table of n and of each metric.
func (c *Comparison) sections() []section {
	count := format{kind: Mean, decimals: 0}
	out := []section{{title: "n", table: c.measure(count, func(g *Group) (float64, bool) {
		return float64(g.N), true
	})}}
	for _, m := range c.Metrics {
		get := func(g *Group) (float64, bool) {
			s, ok := g.Stats[m.Name]
			return s.Value, ok
		}
		var vals []float64
		for _, cg := range c.Groups {
			for _, g := range cg.Runs {
				if g == nil {
					continue
				}
				if v, ok := get(g); ok {
					vals = append(vals, v)
				}
			}
		}
		t := c.measure(newFormat(m.Kind, vals), get)
		out = append(out, section{title: fmt.Sprintf("%s (%s)", m.Name, m.Kind), table: t})
	}
	return out
}

// measure builds the table of one measure: label columns, a column per run
// and, with two runs, the difference.
func (c *Comparison) measure(f format, get func(*Group) (float64, bool)) table {
	t := table{header: labelHeader(c.Dims)}
	t.right = make([]bool, len(t.header))
	for _, r := range c.Runs {
		t.header = append(t.header, r)
		t.right = append(t.right, true)
	}
	withDelta := len(c.Runs) == 2
	if withDelta {
		t.header = append(t.header, "Δ")
		t.right = append(t.right, true)
	}
	for _, cg := range c.Groups {
		if !cg.Total && len(c.Dims) == 0 {
			continue
		}
		var cells []string
		if cg.Total {
			cells = totalLabels(len(c.Dims))
		} else {
			cells = dimLabels(cg.Values)
		}
		vals := make([]float64, len(cg.Runs))
		have := make([]bool, len(cg.Runs))
		for i, g := range cg.Runs {
			cell := "—"
			if g != nil {
				if v, ok := get(g); ok {
					vals[i], have[i] = v, true
					cell = f.value(v)
				}
			}
			cells = append(cells, cell)
		}
		if withDelta {
			cell := "—"
			if have[0] && have[1] {
				cell = f.delta(vals[1] - vals[0])
			}
			cells = append(cells, cell)
		}
		t.rows = append(t.rows, cells)
	}
	return t
}
