package loc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/runner"
)

// GridFile is the summary loc grid writes into its directory.
const GridFile = "grid.json"

// Grid is grid.json: one entry per configuration, and the best by
// quality_score.
type Grid struct {
	Runs []GridRun `json:"runs"`
	// Best names the run with the highest quality_score (ties: the
	// first, in the order of the runs).
	Best string `json:"best"`
}

// GridRun is one configuration of a grid and its overall means.
type GridRun struct {
	Name        string   `json:"name"`
	Dir         string   `json:"dir"`
	MaxTurns    int      `json:"max_turns"`
	Temperature *float64 `json:"temperature,omitempty"`
	Cases       int      `json:"cases"`
	Failed      int      `json:"failed"`
	// Metrics are the run's overall means by our names, and relace-mcp's
	// summary fields (avg_file_recall, avg_quality_score, ...).
	Metrics map[string]float64 `json:"metrics"`
	// Config is the configuration as relace-mcp's grid.json names it.
	Config GridConfig `json:"config"`
}

// GridConfig is a grid run's configuration under relace-mcp's names.
type GridConfig struct {
	SearchMaxTurns    int      `json:"search_max_turns"`
	SearchTemperature *float64 `json:"search_temperature"`
}

// GridName names a configuration: turns=8,temp=0.2.
func GridName(maxTurns int, temp *float64) string {
	name := "turns=" + strconv.Itoa(maxTurns)
	if temp != nil {
		name += ",temp=" + strconv.FormatFloat(*temp, 'g', -1, 64)
	}
	return name
}

// RunGrid runs base once per max-turns × temperature pair, each into
// out/NAME, all sharing one response cache (out/cache.db unless base
// names another), and writes out/grid.json. A configuration that fails is
// recorded with its failures; the grid goes on.
func RunGrid(ctx context.Context, base RunOptions, out string, turns []int, temps []*float64) (*Grid, error) {
	if len(turns) == 0 {
		turns = []int{base.MaxTurns}
	}
	if len(temps) == 0 {
		temps = []*float64{base.Temperature}
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, fmt.Errorf("loc grid: %w", err)
	}
	if base.ModelOptions.Cache == "" {
		base.ModelOptions.Cache = filepath.Join(out, runner.CacheFile)
	}
	g := &Grid{}
	var firstErr error
	best := -1.0
	for _, t := range turns {
		for _, temp := range temps {
			o := base
			o.MaxTurns, o.Temperature = t, temp
			name := GridName(t, temp)
			o.Out = filepath.Join(out, name)
			o.ModelOptions.Dir = o.Out
			// Each configuration's run holds its own directory.
			o.Session = nil
			sum, err := Run(ctx, o)
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("loc grid: %s: %w", name, err)
			}
			if ctx.Err() != nil {
				return g, ctx.Err()
			}
			gr := GridRun{Name: name, Dir: name, MaxTurns: t, Temperature: temp,
				Cases: sum.Rows, Failed: sum.FailedRows, Metrics: map[string]float64{}}
			gr.Config = GridConfig{SearchMaxTurns: t, SearchTemperature: temp}
			if sum.Report != nil {
				for k, st := range sum.Report.Reports[0].Total.Stats {
					gr.Metrics[k] = st.Value
				}
				rs := sum.Report.RelaceSummary
				for k, v := range map[string]float64{"success_rate": rs.SuccessRate, "avg_file_recall": rs.AvgFileRecall,
					"avg_file_precision": rs.AvgFilePrecision, "avg_line_coverage": rs.AvgLineCoverage,
					"avg_line_precision_matched": rs.AvgLinePrecisionMatched, "avg_function_hit_rate": rs.AvgFunctionHitRate,
					"avg_quality_score": rs.AvgQualityScore, "avg_turns": rs.AvgTurns, "avg_turns_used": rs.AvgTurnsUsed,
					"avg_latency_ms": rs.AvgLatencyMS} {
					gr.Metrics[k] = v
				}
			}
			if q, ok := gr.Metrics["quality_score"]; ok && q > best {
				best, g.Best = q, name
			}
			g.Runs = append(g.Runs, gr)
		}
	}
	js, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(out, GridFile), append(js, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("loc grid: %w", err)
	}
	return g, firstErr
}
