package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/internal/atomicfile"
)

type applybenchOptions struct {
	cases   string
	compare string
	json    string
	workers int
}

func newApplybenchCommand(sio Stdio) *cobra.Command {
	var o applybenchOptions
	cmd := &cobra.Command{
		Use:   "applybench --cases FILE.jsonl[.gz] [flags]",
		Short: "Score patch appliers on a corpus of broken patches",
		Long: `Score patchbench's applier, and peers run in the same run, on a corpus of
cases {id, family, path, old_code, patch, expected} where expected is the file
the patch was meant to produce, or null when it must be refused.

For each tool, in total and per family: recovered (exit 0, file equals
expected), recovered up to whitespace, false applies (exit 0 with anything
else, or on a must-refuse case), damaged (failure that still changed the
file), refused, and must-refuse cases refused. It prints a Markdown table
and writes every row and score as JSON.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApplybench(cmd, o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cases, "cases", "", "corpus `FILE` (.jsonl or .jsonl.gz)")
	f.StringVar(&o.compare, "compare", strings.Join(applybench.PeerNames, ","), "peers to run too, comma-separated ("+strings.Join(applybench.PeerNames, ", ")+"), or none")
	f.StringVar(&o.json, "json", "applybench.json", "write rows and scores to `FILE` (- for none)")
	f.IntVar(&o.workers, "workers", runtime.NumCPU(), "cases run at once")
	cmd.MarkFlagRequired("cases")
	return cmd
}

func runApplybench(cmd *cobra.Command, o applybenchOptions, sio Stdio) error {
	cases, err := applybench.LoadCases(o.cases)
	if err != nil {
		return Usage(err)
	}
	tools := []applybench.Tool{applybench.Patchbench()}
	peers := applybench.Peers()
	if o.compare != "" && o.compare != "none" {
		for _, name := range strings.Split(o.compare, ",") {
			name = strings.TrimSpace(name)
			t, ok := peers[name]
			if !ok {
				return Usage(fmt.Errorf("--compare: unknown peer %q (want %s)", name, strings.Join(applybench.PeerNames, ", ")))
			}
			missing := ""
			for _, bin := range t.Needs {
				if _, err := exec.LookPath(bin); err != nil {
					missing = bin
				}
			}
			if missing != "" {
				fmt.Fprintf(sio.Err, "%s: skipping %s: %s is not installed\n", ProgramName, name, missing)
				continue
			}
			tools = append(tools, t)
		}
	}
	rows, err := applybench.Run(cmd.Context(), cases, tools, o.workers)
	if err != nil {
		return Failed(err)
	}
	s := applybench.Summarize(rows, tools)
	fmt.Fprintf(sio.Out, "%d cases from %s\n\n", len(cases), o.cases)
	if err := s.WriteTable(sio.Out); err != nil {
		return err
	}
	if o.json != "-" && o.json != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.Write(o.json, append(b, '\n'), 0o644); err != nil {
			return Failed(fmt.Errorf("applybench: write %s: %w", o.json, err))
		}
	}
	return nil
}
