package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// WriteMarkdown writes the report as Markdown: a title, one table with a row
// per group and a last row "all" over every row, and a Definitions section.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := r.Title
	if title == "" {
		title = "Report"
	}
	fmt.Fprintf(&b, "# %s\n\n", escapeLine(title))
	fmt.Fprintf(&b, "%s in %s.\n\n", plural(r.Rows, "row"), plural(len(r.Groups), "group"))
	r.table().markdown(&b)
	b.WriteString("\n## Definitions\n\n")
	for _, name := range r.definitionOrder() {
		fmt.Fprintf(&b, "- **%s**: %s\n", escapeLine(name), escapeLine(r.definition(name)))
	}
	b.WriteString("\nA rate is the share of rows in which the field is true; a mean is taken over the rows that have the field.\n")
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}

// WriteText writes the report as a plain aligned table, for terminals.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.Title != "" {
		fmt.Fprintf(&b, "%s\n\n", r.Title)
	}
	r.table().text(&b)
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}

// table lays out the report: dimension columns, n, one column per metric.
func (r *Report) table() table {
	t := table{header: labelHeader(r.Dims)}
	t.right = make([]bool, len(t.header))
	t.header = append(t.header, "n")
	t.right = append(t.right, true)
	for _, m := range r.Metrics {
		t.header = append(t.header, m.Name)
		t.right = append(t.right, true)
	}
	formats := make([]format, len(r.Metrics))
	for i, m := range r.Metrics {
		var vals []float64
		for _, g := range append(slices.Clone(r.Groups), r.Total) {
			if s, ok := g.Stats[m.Name]; ok {
				vals = append(vals, s.Value)
			}
		}
		formats[i] = newFormat(m.Kind, vals)
	}
	row := func(labels []string, g Group) {
		cells := append(labels, fmt.Sprint(g.N))
		for i, m := range r.Metrics {
			cells = append(cells, formats[i].stat(g.Stats, m.Name))
		}
		t.rows = append(t.rows, cells)
	}
	if len(r.Dims) > 0 {
		for _, g := range r.Groups {
			row(dimLabels(g.Values), g)
		}
	}
	if !r.NoTotal || len(r.Dims) == 0 {
		row(totalLabels(len(r.Dims)), r.Total)
	}
	return t
}

// definitionOrder lists the names with definitions: n, the dimensions and
// the metrics in column order, then any other name in sorted order.
func (r *Report) definitionOrder() []string {
	names := []string{"n"}
	names = append(names, r.Dims...)
	for _, m := range r.Metrics {
		names = append(names, m.Name)
	}
	var out []string
	for _, n := range names {
		if r.definition(n) != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range r.Definitions {
		if !slices.Contains(out, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// definition returns the definition of name, with a default for n.
func (r *Report) definition(name string) string {
	if d := r.Definitions[name]; d != "" {
		return d
	}
	if name == "n" {
		return "number of rows in the group"
	}
	return ""
}

// labelHeader returns the header of the label columns.
func labelHeader(dims []string) []string {
	if len(dims) == 0 {
		return []string{"group"}
	}
	return slices.Clone(dims)
}

// dimLabels returns the cells of a group's dimension values; an empty value
// shows as "(none)".
func dimLabels(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		if v == "" {
			v = "(none)"
		}
		out[i] = v
	}
	return out
}

// totalLabels returns the label cells of the row over all rows.
func totalLabels(ndims int) []string {
	out := make([]string, max(ndims, 1))
	out[0] = "all"
	return out
}

// format formats the values of one column of a metric: a rate as a
// percentage with one decimal, a mean with the decimals that give the
// largest value of the column four significant digits (none from 1000 on,
// at most six), except that scores up to 1 get three decimals.
type format struct {
	kind     Kind
	decimals int
}

// newFormat returns the format of a column of values of a metric of kind.
func newFormat(kind Kind, values []float64) format {
	f := format{kind: kind, decimals: 1}
	if kind == Rate {
		return f
	}
	var m float64
	for _, v := range values {
		m = max(m, math.Abs(v))
	}
	f.decimals = 3
	if m >= 1 || (m > 0 && m < 0.1) {
		f.decimals = min(max(3-int(math.Floor(math.Log10(m))), 0), 6)
	}
	return f
}

// value formats v.
func (f format) value(v float64) string {
	if f.kind == Rate {
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	return fmt.Sprintf("%.*f", f.decimals, v)
}

// delta formats a difference of two values: for a rate in percentage
// points.
func (f format) delta(d float64) string {
	if f.kind == Rate {
		return fmt.Sprintf("%+.1f pp", 100*d)
	}
	return fmt.Sprintf("%+.*f", f.decimals, d)
}

// stat formats a metric of a group, "—" when the group has none.
func (f format) stat(stats map[string]Stat, name string) string {
	s, ok := stats[name]
	if !ok {
		return "—"
	}
	return f.value(s.Value)
}

// table is a rectangular table of text cells.
type table struct {
	header []string
	right  []bool // right-aligned columns
	rows   [][]string
}

// markdown writes t as a GitHub-flavoured Markdown table.
func (t table) markdown(b *strings.Builder) {
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(escapeCell(c))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	line(t.header)
	b.WriteString("|")
	for _, r := range t.right {
		if r {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.rows {
		line(row)
	}
}

// text writes t with aligned columns separated by two spaces and a rule
// under the header.
func (t table) text(b *strings.Builder) {
	width := make([]int, len(t.header))
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) {
		var l strings.Builder
		for i, c := range cells {
			if i > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if t.right[i] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	line(t.header)
	rule := make([]string, len(width))
	for i, w := range width {
		rule[i] = strings.Repeat("-", w)
	}
	line(rule)
	for _, row := range t.rows {
		line(row)
	}
}

// escapeCell makes s safe inside a Markdown table cell.
func escapeCell(s string) string {
	return strings.ReplaceAll(escapeLine(s), "|", `\|`)
}

// escapeLine puts s on one line.
func escapeLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func wrapWrite(err error) error {
	if err != nil {
		return fmt.Errorf("report: writing: %w", err)
	}
	return nil
}
