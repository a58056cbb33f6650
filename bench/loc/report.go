package loc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/report/html"
	"github.com/patchbench/patchbench/runner"
)

// Report is report.json of a run: the metric means overall, per category
// and per repository, each a report.Report, in the {"title", "rows",
// "reports"} shape `patchbench report` compares side by side.
type Report struct {
	Title   string           `json:"title"`
	Model   string           `json:"model,omitempty"`
	Mode    string           `json:"mode,omitempty"`
	Dataset string           `json:"dataset,omitempty"`
	Rows    int              `json:"rows"`
	Reports []*report.Report `json:"reports"`
	// Unscored are the cases left out of every mean (no ground truth),
	// each with the reason; Rows does not count them.
	Unscored []Problem `json:"unscored,omitempty"`
	// The top-level fields of relace-mcp's report.json, for its readers.
	RelaceSummary
}

// RelaceSummary holds relace-mcp's summary fields, as its runner computes
// them: means over the scored cases, those that completed (neither failed
// nor ended without an answer: relace-mcp's partial cases are left out of
// every avg_ mean and counted in partial_cases); the function hit rate
// over the scored cases whose ground truth has functions. success_rate
// (its first runner's name) and completion_rate (its later one's) are the
// completed cases over all. avg_latency_ms is the mean wall time of a
// case's search (search_ms), as relace-mcp times its search, and
// avg_latency_s the mean of those times in seconds rounded to 0.1, as its
// later runner records them; avg_turns_used (the name relace-mcp's
// documentation gives) and avg_turns (the one its report writer uses) are
// the same mean of the model turns.
type RelaceSummary struct {
	TotalCases              int     `json:"total_cases"`
	SuccessRate             float64 `json:"success_rate"`
	CompletionRate          float64 `json:"completion_rate"`
	ScoredCases             int     `json:"scored_cases"`
	PartialCases            int     `json:"partial_cases"`
	AvgReturnedFiles        float64 `json:"avg_returned_files"`
	AvgFileRecall           float64 `json:"avg_file_recall"`
	AvgFilePrecision        float64 `json:"avg_file_precision"`
	AvgLineCoverage         float64 `json:"avg_line_coverage"`
	AvgLinePrecisionMatched float64 `json:"avg_line_precision_matched"`
	FunctionCases           int     `json:"function_cases"`
	AvgFunctionHitRate      float64 `json:"avg_function_hit_rate"`
	AvgQualityScore         float64 `json:"avg_quality_score"`
	AvgTurnsUsed            float64 `json:"avg_turns_used"`
	AvgTurns                float64 `json:"avg_turns"`
	AvgLatencyMS            float64 `json:"avg_latency_ms"`
	AvgLatencyS             float64 `json:"avg_latency_s"`
}

// relaceSummary computes [RelaceSummary] from the rows of a run (the
// unscored ones already left out).
func relaceSummary(rows []map[string]any) RelaceSummary {
	s := RelaceSummary{TotalCases: len(rows)}
	scored := 0
	// Sums in key order: floating-point addition depends on the order, and
	// a run's rows come in the order the cases finished (a merged run's in
	// key order), so the same cases would give averages a last bit apart.
	rows = slices.Clone(rows)
	key := func(r map[string]any) string { k, _ := r["key"].(string); return k }
	slices.SortStableFunc(rows, func(a, b map[string]any) int { return strings.Compare(key(a), key(b)) })
	for _, r := range rows {
		if why, _ := r["no_answer"].(string); r["failed"] == true || why != "" {
			continue
		}
		scored++
		m, _ := r["metrics"].(map[string]any)
		num := func(k string) float64 { v, _ := m[k].(float64); return v }
		s.AvgFileRecall += num("file_recall")
		s.AvgFilePrecision += num("file_precision")
		s.AvgLineCoverage += num("line_coverage")
		s.AvgLinePrecisionMatched += num("line_precision_matched")
		s.AvgQualityScore += num("quality_score")
		if _, ok := m["function_hit_rate"]; ok {
			s.FunctionCases++
			s.AvgFunctionHitRate += num("function_hit_rate")
		}
		if f, ok := r["found"].(map[string]any); ok {
			files, _ := f["files"].([]any)
			s.AvgReturnedFiles += float64(len(files))
		}
		t, _ := r["turns"].(float64)
		s.AvgTurns += t
		ms, _ := r["search_ms"].(float64)
		s.AvgLatencyMS += ms
		s.AvgLatencyS += math.Round(ms/100) / 10
	}
	s.ScoredCases, s.PartialCases = scored, len(rows)-scored
	if scored == 0 {
		return s
	}
	n := float64(scored)
	s.SuccessRate = n / float64(len(rows))
	s.CompletionRate = s.SuccessRate
	for _, p := range []*float64{&s.AvgReturnedFiles, &s.AvgFileRecall, &s.AvgFilePrecision, &s.AvgLineCoverage,
		&s.AvgLinePrecisionMatched, &s.AvgQualityScore, &s.AvgTurns, &s.AvgLatencyMS, &s.AvgLatencyS} {
		*p /= n
	}
	s.AvgTurnsUsed = s.AvgTurns
	if s.FunctionCases > 0 {
		s.AvgFunctionHitRate /= float64(s.FunctionCases)
	}
	return s
}

// splitUnscored takes the unscored rows (no ground truth) out of rows and
// names them.
func splitUnscored(rows []map[string]any) (scored []map[string]any, unscored []Problem) {
	for _, r := range rows {
		if why, _ := r["unscored"].(string); why != "" {
			id, _ := r["id"].(string)
			unscored = append(unscored, Problem{ID: id, Err: why})
			continue
		}
		scored = append(scored, r)
	}
	sort.Slice(unscored, func(i, j int) bool { return unscored[i].ID < unscored[j].ID })
	return scored, unscored
}

// Groupings are the tables of a report.
var Groupings = []struct {
	Title string
	Dims  []string
}{
	{"Overall", nil},
	{"By category", []string{"category"}},
	{"By repository", []string{"repo"}},
}

// KeyMetrics are the columns of report.md's tables; report.json has all.
var KeyMetrics = []string{"quality_score", "quality_score_v2", "file_recall", "file_precision",
	"line_coverage", "line_precision_matched", "function_hit_rate", "function_target_hit_rate",
	"file_acc@1", "file_acc@5", "module_acc@5", "function_acc@5", "function_acc@10", "failed"}

// Definitions of the report's columns.
var Definitions = map[string]string{
	"file_recall":              "ground-truth files in the answer's {path: ranges}, over the ground-truth files",
	"file_precision":           "answer files in the ground truth, over the answer files",
	"line_coverage":            "ground-truth lines inside answer ranges of the same file, over the ground-truth lines",
	"line_precision_matched":   "answer lines that are ground-truth lines, counting only files in both",
	"function_hit_rate":        "ground-truth functions whose definition span an answer range overlaps (relace-mcp; cases with ground-truth functions only)",
	"function_target_hit_rate": "ground-truth functions with a changed line inside an answer range (cases with ground-truth functions only)",
	"quality_score":            "0.4·file_recall + 0.4·line_precision_matched + 0.2·function_hit_rate, the last 0 without ground-truth functions (relace-mcp)",
	"quality_score_v2":         "0.3·file_recall + 0.2·file_precision + 0.3·line_precision_matched + 0.2·function_hit_rate; without ground-truth functions 0.375·file_recall + 0.25·file_precision + 0.375·line_precision_matched (relace-mcp's later runner)",
	"file_acc@1":               "LocAgent Acc@k: the top k files hold min(k, |ground truth|) ground-truth files",
	"file_acc@5":               "as file_acc@1 with k = 5",
	"module_acc@5":             "Acc@5 over modules (path:Class or path:function)",
	"function_acc@5":           "Acc@5 over functions (path:Class.method; __init__ named by its class)",
	"function_acc@10":          "Acc@10 over functions",
	"failed":                   "share of cases whose search failed (missing repository or commit, search error)",
}

// Flatten turns results rows into report rows: the metrics map becomes
// top-level fields.
func Flatten(rows []map[string]any) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		m := map[string]any{}
		for k, v := range r {
			if k != "metrics" && k != "found" {
				m[k] = v
			}
		}
		if ms, ok := r["metrics"].(map[string]any); ok {
			for k, v := range ms {
				m[k] = v
			}
		}
		if _, ok := m["failed"]; !ok {
			m["failed"] = false
		}
		out[i] = m
	}
	return out
}

// Aggregate builds the report of results rows.
func Aggregate(rows []map[string]any, title string) (*Report, error) {
	flat := Flatten(rows)
	present := map[string]bool{}
	for _, r := range flat {
		for k, v := range r {
			if v != nil {
				present[k] = true
			}
		}
	}
	var ms []string
	for _, m := range append(MetricNames(), "failed", "turns", "latency_ms", "tokens", "cost") {
		if present[m] {
			ms = append(ms, m)
		}
	}
	rep := &Report{Title: title, Rows: len(rows)}
	for _, g := range Groupings {
		r, err := report.Aggregate(flat, report.Spec{Title: g.Title, Dims: g.Dims, Metrics: ms, Definitions: Definitions})
		if err != nil {
			return nil, fmt.Errorf("loc: %w", err)
		}
		r.DropUnspent()
		rep.Reports = append(rep.Reports, r)
	}
	return rep, nil
}

// WriteReport reads dir/results.jsonl and writes report.json and
// report.md beside it. It returns the report, the number of rows and the
// number of failed rows.
func WriteReport(dir, dataset string) (*Report, int, int, error) {
	rows, err := runner.ReadRows(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("loc: %w", err)
	}
	rows, unscored := splitUnscored(lastRows(rows))
	failed := 0
	var model, mode string
	for _, r := range rows {
		if r["failed"] == true {
			failed++
		}
		if s, _ := r["model"].(string); s != "" {
			model = s
		}
		if s, _ := r["mode"].(string); s != "" {
			mode = s
		}
	}
	title := "Loc-Bench"
	switch {
	case model != "":
		title += ": " + model
	case mode != "":
		title += ": " + mode
	}
	rep, err := Aggregate(rows, title)
	if err != nil {
		return nil, 0, 0, err
	}
	rep.Model, rep.Mode, rep.Dataset = model, mode, dataset
	rep.RelaceSummary = relaceSummary(rows)
	rep.Unscored = unscored
	if err := rep.WriteFiles(dir); err != nil {
		return nil, 0, 0, err
	}
	if err := html.WriteRunDir(dir, title, Page(), nil); err != nil {
		return nil, 0, 0, fmt.Errorf("loc: %w", err)
	}
	return rep, len(rows), failed, nil
}

// lastRows keeps the last row of each case (a failed case run again).
func lastRows(rows []map[string]any) []map[string]any {
	last := map[string]int{}
	for i, r := range rows {
		key, _ := r["key"].(string)
		last[key] = i
	}
	var out []map[string]any
	for i, r := range rows {
		key, _ := r["key"].(string)
		if last[key] == i {
			out = append(out, r)
		}
	}
	return out
}

// WriteFiles writes report.json and report.md into dir, atomically.
func (r *Report) WriteFiles(dir string) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("loc: %w", err)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "report.md"), md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("loc: %w", err)
	}
	return nil
}

// WriteMarkdown writes the key metrics per grouping, then every metric's
// overall mean in one column.
func (r *Report) WriteMarkdown(w *bytes.Buffer) error {
	fmt.Fprintf(w, "# %s\n\n", r.Title)
	if r.Dataset != "" {
		fmt.Fprintf(w, "Dataset: `%s`. ", r.Dataset)
	}
	fmt.Fprintf(w, "%d cases.\n", r.Rows)
	if len(r.Unscored) > 0 {
		fmt.Fprintf(w, "\nLeft out of every mean (%d):\n\n", len(r.Unscored))
		for _, u := range r.Unscored {
			fmt.Fprintf(w, "- `%s`: %s\n", u.ID, u.Err)
		}
	}
	for _, sub := range r.Reports {
		w.WriteString("\n## " + sub.Title + "\n\n")
		writeTable(w, sub, KeyMetrics)
	}
	if len(r.Reports) > 0 {
		w.WriteString("\n## Every metric, overall\n\n| metric | mean | n |\n| --- | ---: | ---: |\n")
		total := r.Reports[0].Total
		for _, m := range r.Reports[0].Metrics {
			if st, ok := total.Stats[m.Name]; ok {
				fmt.Fprintf(w, "| %s | %.4f | %d |\n", m.Name, st.Value, st.N)
			}
		}
		w.WriteString("\n## Definitions\n\n")
		for _, m := range KeyMetrics {
			if d := Definitions[m]; d != "" {
				fmt.Fprintf(w, "- **%s**: %s\n", m, d)
			}
		}
		w.WriteString("- LEVEL_METRIC@K: LocAgent's Acc, Recall, P, NDCG and MAP at k over the ranked files, modules or functions (evaluation/eval_metric.py; max_k = 10, MAP divided by k); a case whose ground truth has no item at a level is left out of that level's means.\n")
	}
	return nil
}

func writeTable(w *bytes.Buffer, r *report.Report, cols []string) {
	var have []string
	for _, c := range cols {
		if slices.ContainsFunc(r.Metrics, func(m report.Metric) bool { return m.Name == c }) {
			have = append(have, c)
		}
	}
	head := append(append([]string{}, r.Dims...), "n")
	head = append(head, have...)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	row := func(values []string, g report.Group) {
		cells := append([]string{}, values...)
		cells = append(cells, fmt.Sprint(g.N))
		for _, c := range have {
			if st, ok := g.Stats[c]; ok {
				cells = append(cells, fmt.Sprintf("%.3f", st.Value))
			} else {
				cells = append(cells, "")
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	if len(r.Dims) > 0 {
		for _, g := range r.Groups {
			vals := make([]string, len(g.Values))
			for i, v := range g.Values {
				vals[i] = strings.ReplaceAll(v, "|", `\|`)
				if vals[i] == "" {
					vals[i] = "—"
				}
			}
			row(vals, g)
		}
		return
	}
	row(nil, r.Total)
}
