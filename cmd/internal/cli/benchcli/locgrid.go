package benchcli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/cmd/internal/cli"
)

type locGridOptions struct {
	locRunOptions
	turns    []int
	oldTurns []int
	temps    []string
}

func newLocGridCommand(sio cli.Stdio) *cobra.Command {
	var o locGridOptions
	cmd := &cobra.Command{
		Use:   "grid --dataset CASES.jsonl --repos DIR --out DIR --max-turns N... --temperature T... [run flags]",
		Short: "Run every max-turns × temperature pair as its own run, sharing the response cache",
		Long: `Run loc run once per pair of --max-turns and --temperature (both
repeatable) into DIR/turns=N,temp=T, all sharing DIR/cache.db, and write
DIR/grid.json with every configuration's overall means and the best by
quality_score (patchbench report --best DIR/grid.json names it); with
relace-mcp's --output NAME (as --out), NAME.grid.json too. Each run entry
carries relace-mcp's config (search_max_turns, search_temperature) and its
avg_ metrics beside ours. Turns and temperature are the agentic search's:
in indexed mode, or with --model reference or replay/FILE, the grid is
refused, every configuration being the same run.

Exit status: 0 every run succeeded; 1 some cases or runs failed; 2 usage or
input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.modeGiven = cmd.Flags().Changed("mode")
			// The grid's directory is not a run but holds one per
			// configuration; the runner locks each as it runs it.
			ro, err := o.options("loc grid", "", sio)
			if err != nil {
				return err
			}
			if ro.Mode != loc.ModeAgentic || ro.Model == "reference" || strings.HasPrefix(ro.Model, "replay/") {
				// No model is asked: every configuration would be the same
				// run.
				return cli.Usage(fmt.Errorf("loc grid: --max-turns and --temperature change nothing in %s (no model is asked, every configuration would be the same run); use loc run, or give --model PROVIDER/NAME for the agentic search",
					noModelWhat(ro)))
			}
			var temps []*float64
			for _, s := range o.temps {
				for _, part := range strings.Split(s, ",") {
					t, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
					if err != nil {
						return cli.Usage(fmt.Errorf("loc grid: --temperature %q: %w", part, err))
					}
					temps = append(temps, &t)
				}
			}
			if len(o.turns) == 0 && len(temps) == 0 {
				return cli.Usage(errors.New("loc grid: give --max-turns or --temperature values"))
			}
			grid, err := loc.RunGrid(cmd.Context(), ro, o.run.out, append(o.turns, o.oldTurns...), temps)
			if grid != nil {
				for _, r := range grid.Runs {
					fmt.Fprintf(sio.Out, "%-24s cases %d failed %d quality_score %s file_acc@5 %s\n",
						r.Name, r.Cases, r.Failed, gridMetric(r, "quality_score"), gridMetric(r, "file_acc@5"))
				}
				fmt.Fprintf(sio.Out, "best: %s (%s)\n", grid.Best, filepath.Join(o.run.out, loc.GridFile))
				if o.output != "" {
					// relace-mcp's name for the grid's summary: NAME.grid.json.
					if cerr := copyFile(filepath.Join(o.run.out, loc.GridFile), o.output+".grid.json"); cerr != nil {
						err = errors.Join(err, cerr)
					}
				}
			}
			if err != nil {
				return cli.Failed(err)
			}
			failed := 0
			for _, r := range grid.Runs {
				failed += r.Failed
			}
			if failed > 0 {
				return cli.Failed(fmt.Errorf("loc grid: %d cases failed across the runs (see each run's %s)", failed, loc.ResultsFile))
			}
			return nil
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.IntSliceVar(&o.turns, "max-turns", nil, "agent turn bounds to try (repeatable or comma-separated)")
	f.IntSliceVar(&o.oldTurns, "turns", nil, "another name of --max-turns (relace-mcp)")
	f.Lookup("temperature").Usage = "sampling temperatures to try (repeatable or comma-separated)"
	// The grid's --temperature is a list; the run's single value is
	// replaced.
	f.Lookup("temperature").Value = newStringsValue(&o.temps)
	f.Var(newStringsValue(&o.temps), "temperatures", "another name of --temperature (relace-mcp)")
	return cmd
}

// noModelWhat says which run asks no model, for loc grid's refusal.
func noModelWhat(ro loc.RunOptions) string {
	if ro.Model != "" {
		return "a run with --model " + ro.Model
	}
	return "indexed mode"
}

// stringsValue is a repeatable string flag.
type stringsValue struct{ p *[]string }

func newStringsValue(p *[]string) *stringsValue { return &stringsValue{p} }
func (v *stringsValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}
func (v *stringsValue) Set(s string) error { *v.p = append(*v.p, s); return nil }
func (v *stringsValue) Type() string       { return "floats" }

func newLocAnalyzeCommand(sio cli.Stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "analyze DIR",
		Short: "Per-category and per-repository tables, where the misses are, and the worst cases of a loc run",
		Long: `Read DIR/results.jsonl of a loc run and print the key metrics per category
and per repository, how many answers missed the file, hit the file but not
the lines, or hit, and the ten worst cases by quality_score.

Exit status: 0 printed; 2 usage or input error.`,
		Args: ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loc.Analyze(args[0], sio.Out); err != nil {
				return cli.Usage(err)
			}
			return nil
		},
	}
}

// gridMetric prints a grid point's metric, or "failed" when none of its
// cases was scored (a mean of no case is not 0).
func gridMetric(r loc.GridRun, name string) string {
	v, ok := r.Metrics[name]
	if !ok || r.Failed >= r.Cases {
		return "failed"
	}
	return fmt.Sprintf("%.4f", v)
}
