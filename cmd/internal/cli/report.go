package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/report"
)

type reportOptions struct {
	markdown, paper bool
	html            string
	best            string
}

func newReportCommand(sio Stdio) *cmdline.Command {
	var o reportOptions
	cmd := &cmdline.Command{
		Use:   "report [flags] RUN_DIR...",
		Short: "Print the report of a run, or several runs side by side",
		Long: `Print the report of each RUN_DIR (its report.json, as a benchmark run writes
it). With one run, its tables; with several, every group and metric of the
runs side by side (with two runs, the difference of the second to the first).
Runs are named by their directory.

A report.json is either one report (groups of one set of dimensions) or a set
of them ({"title", "reports": [...]}, as diffxyz run writes: by task, format
and prompt; by task, format, prompt and language; by task, format, prompt
and size class; by task, format, prompt and change kind). Sets are compared
report by report.

With --html OUT.html, write one page instead, from each run's results.jsonl:
charts for the benchmark (several runs side by side) and a browser of every
case. The page is self-contained: it opens offline and requests nothing.

With --best GRID.json (as loc grid writes it), name the configuration with
the highest quality_score and list every configuration's key means.

With --paper, Diff-XYZ runs are laid out as the paper's tables, to set beside
them: per task (and prompt variant), a row per format and a column per run
(named by its model): EM for apply and anti-apply; parsing rate, applying
rate, EM and IoU after applying for diffgen. Values are fractions (0 to 1).
Formats the paper has not (v4a) are rows of their own, marked as such.

Exit status: 0 success; 2 usage or input error (such as a directory without
report.json, or runs that group by different dimensions).`,
		Run: func(ctx context.Context, args []string) error {
			if o.best != "" {
				if len(args) > 0 {
					return Usage(fmt.Errorf("report: --best takes no run directories"))
				}
				return runReportBest(o.best, sio)
			}
			if len(args) == 0 {
				return Usage(fmt.Errorf("report: give at least one run directory"))
			}
			if o.paper {
				if o.html != "" {
					return Usage(fmt.Errorf("report: --paper and --html exclude each other"))
				}
				return runReportPaper(args, o.markdown, sio)
			}
			return runReport(o, args, sio)
		},
	}
	cmd.Flags.Bool(&o.markdown, "markdown", 0, false, "print Markdown instead of plain text")
	cmd.Flags.Bool(&o.paper, "paper", 0, false, "lay Diff-XYZ runs out as the paper's tables: per task, formats as rows, models as columns")
	cmd.Flags.String(&o.html, "html", 0, "", "write one self-contained HTML page (charts and every case of the runs' results.jsonl) to `OUT.html` instead")
	cmd.Flags.String(&o.best, "best", 0, "", "name the best configuration of a grid `FILE` (grid.json of loc grid)")
	return cmd
}

// reportSet is what a run's report.json holds: one report or several.
type reportSet struct {
	Title string
	// Model is the run's model, when the set names it (diffxyz run).
	Model   string
	Reports []*report.Report
}

// apeReport turns an APE-Bench report.json (figures overall, by
// category, difficulty and language; package ape, which this binary does
// not link) into a report of one dimension, group, so that runs compare
// as any other: a row per group, the three figures as means over its tasks.
func apeReport(data []byte) (*report.Report, error) {
	var a struct {
		Tasks      int                           `json:"tasks"`
		K          int                           `json:"k"`
		Overall    map[string]float64            `json:"overall"`
		ByCategory map[string]map[string]float64 `json:"by_category"`
		ByDiff     map[string]map[string]float64 `json:"by_difficulty"`
		ByLanguage map[string]map[string]float64 `json:"by_language"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, err
	}
	names := []string{fmt.Sprintf("compile_pass@%d", a.K), fmt.Sprintf("judge_pass@%d", a.K), "semantic_drop"}
	r := &report.Report{Title: "APE-Bench", Rows: a.Tasks, Dims: []string{"group"}}
	for _, n := range names {
		r.Metrics = append(r.Metrics, report.Metric{Name: n, Kind: report.Mean})
	}
	group := func(values []string, figs map[string]float64) report.Group {
		tasks := int(figs["tasks"])
		g := report.Group{Values: values, N: tasks, Stats: map[string]report.Stat{}}
		for _, n := range names {
			if v, ok := figs[n]; ok {
				g.Stats[n] = report.Stat{Value: v, N: tasks}
			}
		}
		return g
	}
	for _, part := range []struct {
		prefix string
		m      map[string]map[string]float64
	}{{"category ", a.ByCategory}, {"difficulty ", a.ByDiff}, {"language ", a.ByLanguage}} {
		for _, k := range slices.Sorted(maps.Keys(part.m)) {
			r.Groups = append(r.Groups, group([]string{part.prefix + k}, part.m[k]))
		}
	}
	r.Total = group([]string{}, a.Overall)
	return r, nil
}

// readReportSet reads dir/report.json (or the file itself).
func readReportSet(path string) (*reportSet, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, "report.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set struct {
		Title   string            `json:"title"`
		Model   string            `json:"model"`
		Reports []json.RawMessage `json:"reports"`
		// An APE-Bench report (see apeReport).
		Overall map[string]float64 `json:"overall"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if set.Reports == nil && set.Overall != nil {
		r, err := apeReport(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &reportSet{Title: r.Title, Reports: []*report.Report{r}}, nil
	}
	if set.Reports == nil {
		r, err := report.ReadReport(path)
		if err != nil {
			return nil, err
		}
		return &reportSet{Title: r.Title, Reports: []*report.Report{r}}, nil
	}
	out := &reportSet{Title: set.Title, Model: set.Model}
	for i, raw := range set.Reports {
		var r report.Report
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%s: report %d: %w", path, i+1, err)
		}
		if r.Dims == nil {
			return nil, fmt.Errorf("%s: report %d: no dims field; not a report", path, i+1)
		}
		out.Reports = append(out.Reports, &r)
	}
	return out, nil
}

func runReport(o reportOptions, dirs []string, sio Stdio) error {
	if o.html != "" {
		if ReportHTML == nil {
			return handOver("report", append([]string{"--html", o.html}, dirs...))
		}
		return ReportHTML(o.html, dirs, sio)
	}
	sets := make([]*reportSet, len(dirs))
	for i, d := range dirs {
		s, err := readReportSet(d)
		if err != nil {
			return Usage(fmt.Errorf("report: %w", err))
		}
		sets[i] = s
	}
	var b strings.Builder
	if len(sets) == 1 {
		writeOneReport(&b, sets[0], o.markdown)
		_, err := io.WriteString(sio.Out, b.String())
		return err
	}
	names := RunNames(dirs)
	for i, s := range sets {
		if len(s.Reports) != len(sets[0].Reports) {
			return Usage(fmt.Errorf("report: %s has %d reports, %s has %d", dirs[0], len(sets[0].Reports), dirs[i], len(s.Reports)))
		}
	}
	for k := range sets[0].Reports {
		reports := make([]*report.Report, len(sets))
		for i, s := range sets {
			reports[i] = s.Reports[k]
		}
		c, err := report.Compare(names, reports)
		if err != nil {
			return Usage(err)
		}
		title := reports[0].Title
		if title == "" {
			title = "By " + strings.Join(c.Dims, ", ")
		}
		if k > 0 {
			b.WriteString("\n")
		}
		if o.markdown {
			var md strings.Builder
			if err := c.WriteMarkdown(&md); err != nil {
				return err
			}
			// Each comparison is a section of one document.
			fmt.Fprintf(&b, "# %s\n%s", title, strings.TrimPrefix(md.String(), "# Comparison\n"))
		} else {
			fmt.Fprintf(&b, "=== %s\n\n", title)
			if err := c.WriteText(&b); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(sio.Out, b.String())
	return err
}

func writeOneReport(b *strings.Builder, s *reportSet, markdown bool) {
	if s.Title != "" && len(s.Reports) > 1 {
		if markdown {
			fmt.Fprintf(b, "# %s\n\n", s.Title)
		} else {
			fmt.Fprintf(b, "%s\n\n", s.Title)
		}
	}
	for i, r := range s.Reports {
		if i > 0 {
			b.WriteString("\n")
		}
		if markdown {
			_ = r.WriteMarkdown(b) // a strings.Builder does not fail
		} else {
			_ = r.WriteText(b)
		}
	}
}

// RunNames names runs by their directories: the base names when they
// differ, else the paths as given.
func RunNames(dirs []string) []string {
	names := make([]string, len(dirs))
	for i, d := range dirs {
		d = strings.TrimSuffix(filepath.Clean(d), string(filepath.Separator)+"report.json")
		names[i] = filepath.Base(d)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			out := slices.Clone(dirs)
			for i := range out {
				out[i] = filepath.Clean(out[i])
			}
			return out
		}
		seen[n] = true
	}
	return names
}

// ReportHTML writes the HTML page of report --html. Only FullBinary sets
// it (package benchcli): the page embeds the Vega bundles, megabytes that
// every apply would otherwise load at start-up. Where it is nil, report
// --html is handed to FullBinary.
var ReportHTML func(out string, dirs []string, sio Stdio) error

// runReportBest prints the configurations of a grid.json and the best by
// quality_score.
func runReportBest(path string, sio Stdio) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return Usage(fmt.Errorf("report: %w", err))
	}
	var g struct {
		Runs []struct {
			Name    string             `json:"name"`
			Cases   int                `json:"cases"`
			Failed  int                `json:"failed"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return Usage(fmt.Errorf("report: %s: %w", path, err))
	}
	if len(g.Runs) == 0 {
		return Usage(fmt.Errorf("report: %s: no runs; not a grid.json", path))
	}
	best := 0
	for i, r := range g.Runs {
		if r.Metrics["quality_score"] > g.Runs[best].Metrics["quality_score"] {
			best = i
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %6s %6s %14s %17s %11s\n", "configuration", "cases", "failed", "quality_score", "quality_score_v2", "file_acc@5")
	for _, r := range g.Runs {
		fmt.Fprintf(&b, "%-28s %6d %6d %14.4f %17.4f %11.4f\n", r.Name, r.Cases, r.Failed,
			r.Metrics["quality_score"], r.Metrics["quality_score_v2"], r.Metrics["file_acc@5"])
	}
	fmt.Fprintf(&b, "best: %s (quality_score %.4f)\n", g.Runs[best].Name, g.Runs[best].Metrics["quality_score"])
	_, err = io.WriteString(sio.Out, b.String())
	return err
}
