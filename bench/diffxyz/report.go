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

// Report is report.json of a run: the results grouped each way of
// [Groupings], each a report.Report. Its JSON shape, {"title", "rows", "reports": [...]}, is
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
var Metrics = []string{"em", "iou", "parsed", "applied", "f1_plus", "f1_minus",
	"applied_tolerant", "em_tolerant", "iou_tolerant", "f1_plus_tolerant", "f1_minus_tolerant",
	"failed", "cached", "latency_ms", "tokens", "cost"}

// Groupings are the dimensions a report groups rows by, one table each.
// Every table keeps tasks, formats and prompts apart, as the paper's tables
// do: a mean over formats (or over tasks) is no figure of the paper, so no
// table pools them and no table has a row over all rows.
var Groupings = []struct {
	Title string
	Dims  []string
}{
	{"By task, format and prompt", []string{"task", "format", "prompt"}},
	{"By task, format, prompt and language", []string{"task", "format", "prompt", "lang"}},
	{"By task, format, prompt and size class", []string{"task", "format", "prompt", "size_class"}},
	{"By task, format, prompt and change kind", []string{"task", "format", "prompt", "change_kind"}},
}

// Aggregate builds the report of results rows (as runner.ReadRows returns
// them).
func Aggregate(rows []map[string]any, title string) (*Report, error) {
	b := newReportBuilder()
	for _, r := range rows {
		if err := b.add(r); err != nil {
			return nil, err
		}
	}
	return b.report(title)
}

// reportBuilder aggregates results rows one at a time (report.Aggregator
// per grouping), so that a report of any size takes one pass over
// results.jsonl and the memory of its groups. Means do not depend on the
// order of the rows.
type reportBuilder struct {
	aggs          []*report.Aggregator
	rows, failed  int
	models        map[string]bool
	notApplicable map[string]int
}

func newReportBuilder() *reportBuilder {
	order := map[string][]string{
		"task":        {string(Apply), string(AntiApply), string(DiffGen)},
		"prompt":      PromptVariants,
		"lang":        Languages,
		"size_class":  SizeClasses,
		"change_kind": ChangeKinds,
	}
	for _, f := range patch.Formats {
		order["format"] = append(order["format"], string(f))
	}
	b := &reportBuilder{models: map[string]bool{}}
	for _, g := range Groupings {
		a, err := report.NewAggregator(report.Spec{
			Title: g.Title, Dims: g.Dims, Metrics: Metrics, Order: order, Definitions: maps.Clone(Definitions),
		})
		if err != nil {
			panic(err) // the groupings and metrics are this package's
		}
		b.aggs = append(b.aggs, a)
	}
	return b
}

func (b *reportBuilder) add(r map[string]any) error {
	b.rows++
	if r["failed"] == true {
		b.failed++
	}
	if m, _ := r["model"].(string); m != "" {
		b.models[m] = true
	}
	if why, _ := r["not_applicable"].(string); why != "" {
		if b.notApplicable == nil {
			b.notApplicable = map[string]int{}
		}
		f, _ := r["format"].(string)
		b.notApplicable[f]++
	}
	for _, a := range b.aggs {
		if err := a.Add(r); err != nil {
			return fmt.Errorf("diffxyz: %w", err)
		}
	}
	return nil
}

// report returns the report; metrics that no row has are left out.
func (b *reportBuilder) report(title string) (*Report, error) {
	rep := &Report{Title: title, Rows: b.rows, NotApplicable: b.notApplicable}
	for _, a := range b.aggs {
		r, err := a.Report()
		if err != nil {
			return nil, fmt.Errorf("diffxyz: %w", err)
		}
		var kept []report.Metric
		for _, m := range r.Metrics {
			if _, ok := r.Total.Stats[m.Name]; ok {
				kept = append(kept, m)
			}
		}
		r.Metrics = kept
		r.DropUnspent()
		r.NoTotal = true
		rep.Reports = append(rep.Reports, r)
	}
	return rep, nil
}

// WriteReport reads results.jsonl of the run directory dir and writes
// report.json, report.md and report.html beside it. It returns the report,
// the number of rows and the number of failed rows. It reads the file a
// row at a time, never holding it: the report is aggregated during the
// page's first pass over the rows.
func WriteReport(dir string) (*Report, int, int, error) {
	b := newReportBuilder()
	title := "Diff-XYZ"
	info, _ := ReadRunInfo(dir)
	var model, dataset string
	if info != nil {
		model, dataset = info.Model, info.Dataset
	}
	observe := b.add
	if model == "" {
		// No run.json: the title names the rows' models, so they are
		// read first.
		if _, err := runner.EachRow(filepath.Join(dir, ResultsFile), b.add); err != nil {
			return nil, 0, 0, fmt.Errorf("diffxyz: %w", err)
		}
		observe = nil
		model = strings.Join(slices.Sorted(maps.Keys(b.models)), ", ")
	}
	if model != "" {
		title += ": " + model
	}
	// report.html holds every case, for people to browse. The page reads
	// the rows once (its kind is given); the report is aggregated on the
	// way.
	if err := html.WriteRunDir(dir, title, Page(), observe); err != nil {
		return nil, 0, 0, fmt.Errorf("diffxyz: %w", err)
	}
	rep, err := b.report(title)
	if err != nil {
		return nil, 0, 0, err
	}
	rep.Model, rep.Dataset = model, dataset
	if err := rep.WriteFiles(dir); err != nil {
		return nil, 0, 0, err
	}
	return rep, b.rows, b.failed, nil
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
	names = append(names, "n", "task", "format", "prompt", "lang", "size_class", "change_kind")
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
	b.WriteString("\nA rate (%) is the share of rows in which the field is true; a mean is taken over the rows that have the field. No table pools tasks, formats or prompts: each row is one task in one format with one prompt, as in the paper's tables.\n")
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
