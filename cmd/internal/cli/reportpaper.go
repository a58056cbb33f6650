package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
)

// paperColumns are the columns of the Diff-XYZ paper's tables for each
// task: EM for apply and anti-apply; parsing rate, applying rate, and EM
// and IoU after applying for diffgen.
var paperColumns = []struct {
	task    string
	metrics []string
	labels  []string
}{
	{"apply", []string{"em"}, []string{"EM"}},
	{"anti-apply", []string{"em"}, []string{"EM"}},
	{"diffgen", []string{"parsed", "applied", "em", "iou"}, []string{"parsing", "applying", "EM", "IoU"}},
}

// paperFormats are the paper's formats, in its order; a run's other
// formats follow them, marked.
var paperFormats = []string{"udiff", "udiff-h", "udiff-l", "search-replace"}

// paperDims are the dimensions of the table the layout is read from.
var paperDims = []string{"task", "format", "prompt"}

// runReportPaper prints Diff-XYZ runs as the paper lays its tables out.
func runReportPaper(dirs []string, markdown bool, sio Stdio) error {
	names := RunNames(dirs)
	byRun := make([]map[[3]string]report.Group, len(dirs))
	var formats, prompts []string
	models := map[string]bool{}
	for i, d := range dirs {
		s, err := readReportSet(d)
		if err != nil {
			return Usage(fmt.Errorf("report: %w", err))
		}
		j := slices.IndexFunc(s.Reports, func(r *report.Report) bool { return slices.Equal(r.Dims, paperDims) })
		if j < 0 {
			return Usage(fmt.Errorf("report: --paper: %s has no table by task, format and prompt; not a Diff-XYZ run", d))
		}
		if s.Model != "" && !models[s.Model] {
			models[s.Model] = true
			names[i] = s.Model
		}
		byRun[i] = map[[3]string]report.Group{}
		for _, g := range s.Reports[j].Groups {
			byRun[i][[3]string(g.Values)] = g
			if !slices.Contains(formats, g.Values[1]) {
				formats = append(formats, g.Values[1])
			}
			if !slices.Contains(prompts, g.Values[2]) {
				prompts = append(prompts, g.Values[2])
			}
		}
	}
	// The paper's formats first, in its order; then the others by name.
	rank := func(f string) int {
		if i := slices.Index(paperFormats, f); i >= 0 {
			return i
		}
		return len(paperFormats)
	}
	slices.SortStableFunc(formats, func(a, b string) int {
		if c := rank(a) - rank(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	first := true
	for _, pc := range paperColumns {
		for _, prompt := range prompts {
			t := report.Table{Header: []string{"format"}, Right: []bool{false}}
			for _, name := range names {
				for _, l := range pc.labels {
					h := name
					if len(pc.labels) > 1 {
						h += " " + l
					}
					t.Header = append(t.Header, h)
					t.Right = append(t.Right, true)
				}
			}
			kept := false
			for _, f := range formats {
				label := f
				if rank(f) == len(paperFormats) {
					label += " (not in the paper)"
				}
				row := []string{label}
				have := false
				for _, groups := range byRun {
					g, ok := groups[[3]string{pc.task, f, prompt}]
					for _, m := range pc.metrics {
						cell := "—"
						if st, found := g.Stats[m]; ok && found {
							cell = fmt.Sprintf("%.3f", st.Value)
							have = true
						}
						row = append(row, cell)
					}
				}
				if have {
					t.Rows = append(t.Rows, row)
					kept = true
				}
			}
			if !kept {
				continue
			}
			title := pc.task + " (" + prompt + "): " + strings.Join(pc.labels, ", ")
			if !first {
				b.WriteString("\n")
			}
			first = false
			var err error
			if markdown {
				fmt.Fprintf(&b, "## %s\n\n", title)
				err = t.WriteMarkdown(&b)
			} else {
				fmt.Fprintf(&b, "%s\n\n", title)
				err = t.WriteText(&b)
			}
			if err != nil {
				return err
			}
		}
	}
	if first {
		return Usage(fmt.Errorf("report: --paper: no apply, anti-apply or diffgen rows in %s", strings.Join(dirs, ", ")))
	}
	_, err := io.WriteString(sio.Out, b.String())
	return err
}
