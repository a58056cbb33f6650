package benchcli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/cmd/internal/cmdline"
)

// annotationQuick marks a command that runs in milliseconds and watches no
// context: it is left to the default signal handling. Installing a handler
// (signal.NotifyContext) starts a goroutine and a thread, about 15% of the
// start-up of an apply that agents run once per edit.
const annotationQuick = "patchbench.quick"

// Run runs the command line args of patchbench-full, which has every
// command, and returns the exit code. Interrupts and SIGTERM cancel the
// command's context, except for quick commands, which they end.
func Run(args []string, sio cli.Stdio) int {
	stop := func() {}
	defer func() { stop() }()
	root := newRootCommand(sio)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// One rule for every command's worker count: a negative one is a
		// usage error, never read as one worker or the default.
		if n, err := cmd.Flags().GetInt("workers"); err == nil && n < 0 {
			return cli.Usage(fmt.Errorf("%s: --workers %d: want at least 1", strings.TrimPrefix(cmd.CommandPath(), root.Name()+" "), n))
		}
		if cmd.Annotations[annotationQuick] != "" {
			return nil
		}
		var ctx context.Context
		ctx, stop = signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		cmd.SetContext(ctx)
		return nil
	}
	root.SetArgs(ExpandNargs(args))
	return cli.Exit(root.ExecuteContext(context.Background()), sio)
}

// newRootCommand makes the root command with every command.
func newRootCommand(sio cli.Stdio) *cobra.Command {
	root := &cobra.Command{
		Use:           cli.ProgramName,
		Short:         cli.Short,
		Version:       cli.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetIn(sio.In)
	root.SetOut(sio.Out)
	root.SetErr(sio.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cli.Usage(err) })
	for _, c := range cli.Engine(sio) {
		root.AddCommand(engineCommand(c, sio))
	}
	root.AddCommand(Commands(sio)...)
	return root
}

// engineCommand runs the engine command c, which parses its own flags
// (package cmdline) as the patchbench binary does, so both binaries read
// a command line the same way.
func engineCommand(c *cmdline.Command, sio cli.Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:                c.Use,
		Short:              c.Short,
		Long:               c.Long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.RunEngine(cmd.Context(), c, args, sio)
		},
		// Shell completion: the flags' names after "-", files otherwise.
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if !strings.HasPrefix(toComplete, "-") {
				return nil, cobra.ShellCompDirectiveDefault
			}
			var out []cobra.Completion
			for _, f := range c.Flags.Flags() {
				if name := "--" + f.Name; strings.HasPrefix(name, toComplete) {
					_, usage := f.Help()
					out = append(out, cobra.CompletionWithDesc(name, usage))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
	}
	if c.Quick {
		cmd.Annotations = map[string]string{annotationQuick: "yes"}
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) { fmt.Fprint(sio.Out, c.Help(cli.ProgramName)) })
	return cmd
}

// ArgsUsage wraps a cobra positional-args validator so its errors exit 2.
func ArgsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return cli.Usage(err)
		}
		return nil
	}
}
