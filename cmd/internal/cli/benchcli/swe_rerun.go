package benchcli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/runner"
)

type sweRerunOptions struct {
	from   string
	typ    string
	dryRun bool
	tests  sweTestFlags
}

func newSWERerunCommand(sio cli.Stdio) *cobra.Command {
	var o sweRerunOptions
	cmd := &cobra.Command{
		Use:   "rerun --from DIR --type malformed|apply-failed|infra|all [--dry-run]",
		Short: "Re-evaluate the failed instances of an earlier run with the current repair",
		Long: `Re-evaluate only the instances of one kind from an earlier "swe eval" run,
with the same inputs (run.json) and the current repair, and merge the results
into that run: results.jsonl and every report are rewritten atomically.

--type malformed selects malformed; apply-failed selects apply_failed; infra
selects test_error, test_timeout and infra_error; all selects all of these.
SWE4CC's names work too: apply_failed and patch_failed (apply-failed), docker
(infra).
--dry-run prints the selected instance ids, one a line, and changes nothing.
Test-stage flags given here override the earlier run's.

Prints the status counts before and after. Exit status as for swe eval.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSWERerun(cmd, o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "run `DIR` of an earlier swe eval")
	f.StringVar(&o.typ, "type", "", "which failures: malformed, apply-failed, infra or all (SWE4CC's apply_failed, patch_failed, docker are aliases)")
	f.BoolVar(&o.dryRun, "dry-run", false, "list the instances that would be re-evaluated; change nothing")
	o.tests.register(f)
	cmd.MarkFlagRequired("from")
	cmd.MarkFlagRequired("type")
	return cmd
}

func runSWERerun(cmd *cobra.Command, o sweRerunOptions, sio cli.Stdio) error {
	if o.dryRun {
		sel, err := swe.RerunSelection(o.from, o.typ)
		if err != nil {
			return sweExit(cmd.Context(), nil, err)
		}
		for _, r := range sel {
			fmt.Fprintln(sio.Out, r.InstanceID)
		}
		fmt.Fprintf(sio.Err, "%d instances of type %s would be re-evaluated\n", len(sel), o.typ)
		return nil
	}
	flags := cmd.Flags()
	if err := o.tests.checkWorkers(flags); err != nil {
		return err
	}
	s, err := swe.Rerun(cmd.Context(), swe.RerunOptions{
		From: o.from, Type: o.typ,
		Override: func(c *swe.Config) { o.tests.apply(flags, c, false) },
		Progress: runner.ProgressTo(sio.Err),
		Log:      sio.Err,
	})
	if s != nil && s.Before != nil {
		fmt.Fprintf(sio.Out, "re-evaluated %d instances (%s)\n", s.Evaluated, o.typ)
		fmt.Fprintf(sio.Out, "  %-17s %6s %6s\n", "status", "before", "after")
		for _, st := range swe.Statuses {
			if s.Before[st] > 0 || s.Counts[st] > 0 {
				fmt.Fprintf(sio.Out, "  %-17s %6d %6d\n", st, s.Before[st], s.Counts[st])
			}
		}
		if s.RerunReport != "" {
			fmt.Fprintf(sio.Out, "comparison: %s, %s.md\n", s.RerunReport, strings.TrimSuffix(s.RerunReport, ".json"))
		}
	}
	return sweExit(cmd.Context(), s, err)
}
