package report

import (
	"io"
	"strings"
)

// Table is a rectangular table of text cells, for layouts of a caller's
// own (patchbench report --paper), written as the reports' tables are.
type Table struct {
	Header []string
	// Right marks the right-aligned columns.
	Right []bool
	Rows  [][]string
}

func (t Table) table() table {
	right := make([]bool, len(t.Header))
	copy(right, t.Right)
	return table{header: t.Header, right: right, rows: t.Rows}
}

// WriteText writes t with aligned columns and a rule under the header.
func (t Table) WriteText(w io.Writer) error {
	var b strings.Builder
	t.table().text(&b)
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}

// WriteMarkdown writes t as a GitHub-flavoured Markdown table.
func (t Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	t.table().markdown(&b)
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}
