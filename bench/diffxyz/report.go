package diffxyz

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/report/html"
	"github.com/patchbench/patchbench/runner"
)

// Report is report.json of a run: the results grouped three ways, each a
// report.Report. Its JSON shape, {"title", "rows", "reports": [...]}, is
// what `patchbench report` reads besides a single report.Report.
type Report struct {
	Title   string `json:"title"`
	Model   string `json:"model,omitempty"`
	Dataset string `json:"dataset,omitempty"`
	Rows    int    `json:"rows"`
	// NotApplicable counts, by format, the cases whose row's edit the
	// format cannot express; they are in Rows and in each table's n, and
	// in none of the means.
	NotApplicable map[string]int   `json:"not_applicable,omitempty"`
	Reports       []*report.Report `json:"reports"`
}

// Metrics are the metrics of a report, in column order; those no row has
// are left out.
var Metrics = []string{"em", "iou", "parsed", "applied", "applied_strict", "f1_plus", "f1_minus", "failed", "cached", "latency_ms", "tokens", "cost"}

// Groupings are the dimensions a report groups rows by, one table each.
var Groupings = []struct {
	Title string
	Dims  []string
}{
	{"By task, format and prompt", []string{"task", "format", "prompt"}},
	{"By task and language", []string{"task", "lang"}},
	{"By task and size class", []string{"task", "size_class"}},
}

// Aggregate builds the report of results rows (as runner.ReadRows returns
// them).
func Aggregate(rows []map[string]any, title string) (*Report, error) {
	present := map[string]bool{}
	for _, r := range rows {
		for k, v := range r {
			if v != nil {
				present[k] = true
			}
		}
	}
	var metrics []string
	for _, m := range Metrics {
		if present[m] {
			metrics = append(metrics, m)
		}
	}
	order := map[string][]string{
		"task":       {string(Apply), string(AntiApply), string(DiffGen)},
		"prompt":     PromptVariants,
		"lang":       Languages,
		"size_class": SizeClasses,
	}
	for _, f := range patch.Formats {
		order["format"] = append(order["format"], string(f))
	}
	rep := &Report{Title: title, Rows: len(rows)}
	for _, r := range rows {
		if why, _ := r["not_applicable"].(string); why != "" {
			if rep.NotApplicable == nil {
				rep.NotApplicable = map[string]int{}
			}
			f, _ := r["format"].(string)
			rep.NotApplicable[f]++
		}
	}
	for _, g := range Groupings {
		r, err := report.Aggregate(rows, report.Spec{
			Title:       g.Title,
			Dims:        g.Dims,
			Metrics:     metrics,
			Order:       order,
			Definitions: maps.Clone(Definitions),
		})
		if err != nil {
			return nil, fmt.Errorf("diffxyz: %w", err)
		}
		rep.Reports = append(rep.Reports, r)
	}
	return rep, nil
}

// WriteReport reads results.jsonl of the run directory dir and writes
// report.json, report.md and report.html beside it. It returns the report, the number
// of rows and the number of failed rows.
func WriteReport(dir string) (*Report, int, int, error) {
	rows, err := runner.ReadRows(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("diffxyz: %w", err)
	}
	// Rows are aggregated in key order, not the order cases finished in,
	// so that the means (float sums) are the same whatever the workers or
	// shards did.
	runner.SortRows(rows)
	failed := 0
	for _, r := range rows {
		if r["failed"] == true {
			failed++
		}
	}
	title := "Diff-XYZ"
	info, _ := ReadRunInfo(dir)
	var model, dataset string
	if info != nil {
		model, dataset = info.Model, info.Dataset
	}
	if model == "" {
		models := sortedUnique(stringField(rows, "model"))
		model = strings.Join(models, ", ")
	}
	if model != "" {
		title += ": " + model
	}
	rep, err := Aggregate(rows, title)
	if err != nil {
		return nil, 0, 0, err
	}
	rep.Model, rep.Dataset = model, dataset
	if err := rep.WriteFiles(dir); err != nil {
		return nil, 0, 0, err
	}
	// report.html holds every case, for people to browse.
	run := html.Run{Name: filepath.Base(filepath.Clean(dir)), Kind: html.KindDiffXYZ, Rows: rows}
	if err := html.WriteFile(filepath.Join(dir, "report.html"), title, []html.Run{run}); err != nil {
		return nil, 0, 0, fmt.Errorf("diffxyz: %w", err)
	}
	return rep, len(rows), failed, nil
}

func stringField(rows []map[string]any, name string) []string {
	var out []string
	for _, r := range rows {
		if s, ok := r[name].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// WriteFiles writes report.json and report.md into dir, atomically.
func (r *Report) WriteFiles(dir string) error {
	if err := writeJSONFile(filepath.Join(dir, "report.json"), r); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "report.md"), md.Bytes())
}

// WriteMarkdown writes the report as Markdown: a title, one table per
// grouping, and the definitions of every column.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	if r.Dataset != "" {
		fmt.Fprintf(&b, "Dataset: `%s`. ", r.Dataset)
	}
	fmt.Fprintf(&b, "%d results rows (one per case × task × format × prompt).\n", r.Rows)
	if len(r.NotApplicable) > 0 {
		b.WriteString("\nNot applicable (the format cannot express the row's edit; counted in n, left out of the means):")
		for _, f := range slices.Sorted(maps.Keys(r.NotApplicable)) {
			fmt.Fprintf(&b, " %s %d", f, r.NotApplicable[f])
		}
		b.WriteString(".\n")
	}
	for _, sub := range r.Reports {
		t, err := markdownTable(sub)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s", sub.Title, t)
	}
	b.WriteString("\n## Definitions\n\n")
	defs := Definitions
	if len(r.Reports) > 0 && r.Reports[0].Definitions != nil {
		defs = r.Reports[0].Definitions
	}
	var names []string
	names = append(names, "n", "task", "format", "prompt", "lang", "size_class")
	names = append(names, Metrics...)
	for _, n := range slices.Sorted(maps.Keys(defs)) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if d := defs[n]; d != "" {
			fmt.Fprintf(&b, "- **%s**: %s\n", n, d)
		}
	}
	b.WriteString("\nA rate (%) is the share of rows in which the field is true; a mean is taken over the rows that have the field. The \"all\" row is over every row of the run.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownTable returns the table of a report.Report's Markdown: the lines
// between its heading and count line and its Definitions section.
func markdownTable(r *report.Report) (string, error) {
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	start := strings.Index(s, "\n|")
	end := strings.Index(s, "\n## Definitions")
	if start < 0 || end < start {
		return s, nil // an unexpected layout: keep all of it
	}
	return s[start+1 : end], nil
}

// WriteText writes the report's tables as plain text, for terminals.
func (r *Report) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s\n", r.Title); err != nil {
		return err
	}
	for _, sub := range r.Reports {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		if err := sub.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}
