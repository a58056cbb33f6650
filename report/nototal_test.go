package report

import (
	"strings"
	"testing"
)

// TestNoTotal: a report whose groups must not be pooled prints no "all"
// row, alone or compared, in text and Markdown; its JSON keeps the total.
func TestNoTotal(t *testing.T) {
	rows := []map[string]any{
		{"task": "apply", "format": "udiff", "em": 1.0},
		{"task": "diffgen", "format": "udiff", "em": 0.0},
	}
	for _, noTotal := range []bool{false, true} {
		r, err := Aggregate(rows, Spec{Dims: []string{"task", "format"}, Metrics: []string{"em"}})
		if err != nil {
			t.Fatal(err)
		}
		r.NoTotal = noTotal
		c, err := Compare([]string{"a", "b"}, []*Report{r, r})
		if err != nil {
			t.Fatal(err)
		}
		var txt, md, ctxt, cmd strings.Builder
		for _, err := range []error{r.WriteText(&txt), r.WriteMarkdown(&md), c.WriteText(&ctxt), c.WriteMarkdown(&cmd)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for name, out := range map[string]string{"text": txt.String(), "markdown": md.String(), "compare text": ctxt.String(), "compare markdown": cmd.String()} {
			hasAll := strings.Contains(out, "\nall ") || strings.Contains(out, "| all |")
			if hasAll == noTotal {
				t.Errorf("NoTotal %v, %s: all row present = %v:\n%s", noTotal, name, hasAll, out)
			}
			if !strings.Contains(out, "diffgen") {
				t.Errorf("NoTotal %v, %s: groups missing:\n%s", noTotal, name, out)
			}
		}
		if r.Total.N != 2 {
			t.Errorf("NoTotal %v: total n = %d, want 2 (still computed)", noTotal, r.Total.N)
		}
	}
}
