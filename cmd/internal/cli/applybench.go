package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/internal/atomicfile"
)

type applybenchOptions struct {
	cases   string
	compare string
	json    string
	workers int
}

func newApplybenchCommand(sio Stdio) *cmdline.Command {
	var o applybenchOptions
	cmd := &cmdline.Command{
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
		Args: cmdline.NoArgs,
		Run: func(ctx context.Context, args []string) error {
			return runApplybench(ctx, o, sio)
		},
	}
	f := &cmd.Flags
	f.String(&o.cases, "cases", 0, "", "corpus `FILE` (.jsonl or .jsonl.gz)")
	f.String(&o.compare, "compare", 0, strings.Join(applybench.PeerNames, ","), "peers to run too, comma-separated ("+strings.Join(applybench.PeerNames, ", ")+"), or none")
	f.String(&o.json, "json", 0, "applybench.json", "write rows and scores to `FILE` (- for none)")
	f.Int(&o.workers, "workers", 0, runtime.NumCPU(), "cases run at once")
	f.Require("cases")
	f.AtLeast("workers", 1)
	return cmd
}

func runApplybench(ctx context.Context, o applybenchOptions, sio Stdio) error {
	cases, err := applybench.LoadCases(o.cases)
	if err != nil {
		return Usage(err)
	}
	if len(cases) == 0 {
		// An empty corpus scores nothing: an input error, not a 0% table.
		return Usage(fmt.Errorf("applybench: --cases %s holds no case", o.cases))
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
	rows, err := applybench.Run(ctx, cases, tools, o.workers)
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
