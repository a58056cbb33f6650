// Command patchbench parses, converts, applies and generates code edits, and
// runs benchmarks of code-editing models.
//
// Exit codes: 0 success; 1 the operation did not succeed (a patch was
// refused, a run had failures); 2 usage or input error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	programName = "patchbench"
)

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failed marks err as "the operation did not succeed" (exit 1).
func failed(err error) error { return &exitError{exitFailed, err} }

// usage marks err as a usage or input error (exit 2).
func usage(err error) error { return &exitError{exitUsage, err} }

// stdio is where a command reads and writes; tests substitute it.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func newRootCommand(sio stdio) *cobra.Command {
	root := &cobra.Command{
		Use:           programName,
		Short:         "Parse, apply, repair and generate code edits; benchmark code-editing models",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(sio.in)
	root.SetOut(sio.out)
	root.SetErr(sio.err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage(err) })
	root.AddCommand(
		newApplyCommand(sio),
		newDiffCommand(sio),
		newConvertCommand(sio),
		newApplybenchCommand(sio),
		newRepairCommand(sio),
		newReportCommand(sio),
	)
	root.AddCommand(benchCommands(sio)...)
	return root
}

func main() {
	os.Exit(run(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
}

func run(args []string, sio stdio) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand(sio)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage // cobra's own errors (unknown command, bad args) are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if err.Error() != "" {
		fmt.Fprintf(sio.err, "%s: %v\n", programName, err)
	}
	return code
}

// argsUsage wraps a cobra positional-args validator so its errors exit 2.
func argsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usage(err)
		}
		return nil
	}
}

// readInput reads a file, or standard input for "-".
func readInput(sio stdio, name string) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(sio.in)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", usage(fmt.Errorf("read %s: %w", name, err))
	}
	return string(b), nil
}
