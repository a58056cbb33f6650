package loc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runner"
)

func isDir(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }

// Miss kinds of [MissKind].
const (
	MissNone        = "hit"         // every file and line found
	MissWrongFile   = "wrong file"  // no ground-truth file found
	MissSomeFiles   = "some files"  // some ground-truth files missed
	MissWrongLines  = "wrong lines" // right files, none of the lines
	MissSomeLines   = "some lines"  // right files, part of the lines
	MissFailed      = "failed"      // the search failed
	analyzeWorstCut = 10
)

// MissKind says where an answer missed, from its metrics: a wrong file,
// some files, the right file but wrong lines, some lines, or a hit.
func MissKind(row map[string]any) string {
	if row["failed"] == true {
		return MissFailed
	}
	m, _ := row["metrics"].(map[string]any)
	fr, _ := m["file_recall"].(float64)
	lc, _ := m["line_coverage"].(float64)
	switch {
	case fr == 0:
		return MissWrongFile
	case fr < 1:
		return MissSomeFiles
	case lc == 0:
		return MissWrongLines
	case lc < 1:
		return MissSomeLines
	}
	return MissNone
}

// Analyze writes the analysis of the run in dir to w: key metrics per
// category and per repository, the miss kinds, and the worst cases by
// quality_score.
// dir may also name a file of the run (report.json, results.jsonl), as
// patchbench report takes it.
func Analyze(dir string, w io.Writer) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		// relace-mcp's PREFIX.report.json (loc run -o PREFIX writes it
		// beside the run directory PREFIX), or a file inside the run.
		if prefix, ok := strings.CutSuffix(dir, ".report.json"); ok && isDir(prefix) {
			dir = prefix
		} else {
			dir = filepath.Dir(dir)
		}
	}
	rows, err := runner.ReadRows(filepath.Join(dir, ResultsFile))
	if err != nil {
		return fmt.Errorf("loc analyze: %w", err)
	}
	rows, _ = splitUnscored(lastRows(rows))
	if len(rows) == 0 {
		return fmt.Errorf("loc analyze: %s has no rows", filepath.Join(dir, ResultsFile))
	}
	flat := Flatten(rows)
	var b strings.Builder
	for _, g := range Groupings[1:] {
		r, err := report.Aggregate(flat, report.Spec{Title: g.Title, Dims: g.Dims, Metrics: presentKeyMetrics(flat)})
		if err != nil {
			return fmt.Errorf("loc analyze: %w", err)
		}
		// WriteText prints the title.
		if err := r.WriteText(&b); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[MissKind(r)]++
	}
	b.WriteString("Where the answers missed\n\n")
	for _, k := range []string{MissNone, MissSomeLines, MissWrongLines, MissSomeFiles, MissWrongFile, MissFailed} {
		fmt.Fprintf(&b, "  %-12s %4d  %5.1f%%\n", k, counts[k], 100*float64(counts[k])/float64(len(rows)))
	}
	type scored struct {
		row map[string]any
		q   float64
	}
	var all []scored
	for _, r := range rows {
		m, _ := r["metrics"].(map[string]any)
		q, _ := m["quality_score"].(float64)
		all = append(all, scored{r, q})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].q < all[j].q })
	fmt.Fprintf(&b, "\nWorst cases by quality_score (up to %d)\n\n", analyzeWorstCut)
	fmt.Fprintf(&b, "  %-40s %-24s %-18s %7s %7s %7s  %s\n", "id", "repo", "category", "quality", "f_rec", "l_cov", "miss")
	for i, s := range all {
		if i == analyzeWorstCut {
			break
		}
		m, _ := s.row["metrics"].(map[string]any)
		fr, _ := m["file_recall"].(float64)
		lc, _ := m["line_coverage"].(float64)
		fmt.Fprintf(&b, "  %-40s %-24s %-18s %7.3f %7.3f %7.3f  %s\n", s.row["id"], s.row["repo"], str(s.row["category"]), s.q, fr, lc, MissKind(s.row))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func presentKeyMetrics(flat []map[string]any) []string {
	var out []string
	for _, m := range KeyMetrics {
		for _, r := range flat {
			if r[m] != nil {
				out = append(out, m)
				break
			}
		}
	}
	return out
}
