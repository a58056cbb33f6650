// Package cli is patchbench's command line: the patch engine's commands
// (apply, diff, convert, repair, applybench, report) and what every command
// shares (exit codes, error reporting, input). The benchmark commands are in
// package benchcli, linked only into the patchbench-full binary, so that
// the patchbench binary, which agents run once per edit, starts without
// initialising the model SDKs, SQLite and Parquet.
//
// Exit codes: 0 success; 1 the operation did not succeed (a patch was
// refused, a run had failures); 2 usage or input error.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1
	ExitUsage   = 2
	ProgramName = "patchbench" // in messages
)

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Failed marks err as "the operation did not succeed" (exit 1).
func Failed(err error) error { return &exitError{ExitFailed, err} }

// Usage marks err as a usage or input error (exit 2).
func Usage(err error) error { return &exitError{ExitUsage, err} }

// Stdio is where a command reads and writes; tests substitute it.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// OSStdio is the process's standard input, output and error.
func OSStdio() Stdio { return Stdio{os.Stdin, os.Stdout, os.Stderr} }

// Commands makes more commands for the root.
type Commands func(sio Stdio) []*cobra.Command

// engineCommands are the patch engine's commands by name. An agent runs
// one of them once per edit: Run builds only the one asked for.
var engineCommands = map[string]func(Stdio) *cobra.Command{
	"apply":      newApplyCommand,
	"diff":       newDiffCommand,
	"convert":    newConvertCommand,
	"applybench": newApplybenchCommand,
	"repair":     newRepairCommand,
	"report":     newReportCommand,
}

// newRootCommand makes the root command with the engine's commands and
// more; with only set, with that engine command alone (and no completion
// command, which would list the others).
func newRootCommand(sio Stdio, more Commands, only string) *cobra.Command {
	root := &cobra.Command{
		Use:           ProgramName,
		Short:         "Parse, apply, repair and generate code edits; benchmark code-editing models",
		Version:       Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetIn(sio.In)
	root.SetOut(sio.Out)
	root.SetErr(sio.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return Usage(err) })
	if only != "" {
		root.AddCommand(engineCommands[only](sio))
		root.CompletionOptions.DisableDefaultCmd = true
		return root
	}
	root.AddCommand(
		newApplyCommand(sio),
		newDiffCommand(sio),
		newConvertCommand(sio),
		newApplybenchCommand(sio),
		newRepairCommand(sio),
		newReportCommand(sio),
	)
	if more != nil {
		root.AddCommand(more(sio)...)
	}
	return root
}

// annotationQuick marks a command that runs in milliseconds and watches no
// context: it is left to the default signal handling. Installing a handler
// (signal.NotifyContext) starts a goroutine and a thread, about 15% of the
// start-up of an apply that agents run once per edit (issue 8 §5).
const annotationQuick = "patchbench.quick"

// Run runs the command line args with the engine's commands and more, and
// returns the exit code. Interrupts and SIGTERM cancel the command's
// context, except for quick commands (annotationQuick), which they end.
func Run(args []string, sio Stdio, more Commands) int {
	growStack(len(args))
	stop := func() {}
	defer func() { stop() }()
	// Building every command and its flags is a tenth of a one-hunk
	// apply's start-up: a command line naming an engine command gets that
	// one alone. Anything else (help, completion, a benchmark command, a
	// typo to suggest a name for) gets them all.
	only := ""
	if len(args) > 0 && engineCommands[args[0]] != nil {
		only = args[0]
	}
	root := newRootCommand(sio, more, only)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// One rule for every command's worker count: a negative one is a
		// usage error, never read as one worker or the default.
		if n, err := cmd.Flags().GetInt("workers"); err == nil && n < 0 {
			return Usage(fmt.Errorf("%s: --workers %d: want at least 1", strings.TrimPrefix(cmd.CommandPath(), root.Name()+" "), n))
		}
		if cmd.Annotations[annotationQuick] != "" {
			return nil
		}
		var ctx context.Context
		ctx, stop = signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		cmd.SetContext(ctx)
		return nil
	}
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return ExitOK
	}
	code := ExitUsage // cobra's own errors (unknown command, bad args) are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if err.Error() != "" {
		fmt.Fprintf(sio.Err, "%s: %v\n", ProgramName, err)
	}
	return code
}

// Version is the module version and the commit the binary was built from,
// as the go command recorded them: "v1.2.3" for go install of a tagged
// version, "(devel) commit 0123abcd (modified)" for a build in a checkout
// (the commit is absent when built with -buildvcs=false).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " commit " + rev
		if modified == "true" {
			v += " (modified)"
		}
	}
	return v + " " + bi.GoVersion
}

// growStack grows the goroutine's stack to 32 KiB while it is shallow. A
// command's calls need that much; grown on demand (8, 16, 32 KiB),
// every growth copies the stack and walks all its frames, reading the
// function tables from disk on a cold start.
//
//go:noinline
func growStack(n int) byte {
	var pad [24 << 10]byte
	pad[n%len(pad)] = byte(n)
	return pad[(n*7)%len(pad)]
}

// ArgsUsage wraps a cobra positional-args validator so its errors exit 2.
func ArgsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return Usage(err)
		}
		return nil
	}
}

// ReadInput reads a file, or standard input for "-".
func ReadInput(sio Stdio, name string) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(sio.In)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", Usage(fmt.Errorf("read %s: %w", name, err))
	}
	return string(b), nil
}

// FullBinary is the binary that has every command: patchbench hands the
// benchmark commands to it.
const FullBinary = "patchbench-full"

// FullOnly are the commands only FullBinary links (package benchcli), with
// their one-line help.
var FullOnly = []struct{ Name, Short string }{
	{"swe", "Evaluate SWE-bench-style predictions: repair, apply, test in a sandbox, report"},
	{"diffxyz", "Diff-XYZ benchmark: apply, anti-apply and diff generation; build, run, score"},
	{"env", "Per-commit environments in a content-addressed store: build, restore, stats, verify, gc, ls"},
	{"loc", "Code localization benchmark (Loc-Bench): build, validate, run, grid, analyze"},
	{"ape", "APE-Bench I style instructed edits: build tasks, run (compile, judge), judge again"},
	{"merge", "Merge the shards of a benchmark run (--shard i/n) into one run directory"},
	{"k8s", "Kubernetes manifests: a benchmark run as an Indexed Job of N shards, and its merge"},
	{"mcp", "Serve the patch engine and code search to agents over the Model Context Protocol"},
}

// FullShort is the one-line help of FullOnly's command name, which both
// binaries show: patchbench for the command it hands over, patchbench-full
// for the command itself.
func FullShort(name string) string {
	for _, c := range FullOnly {
		if c.Name == name {
			return c.Short
		}
	}
	panic("cli: no FullOnly command " + name)
}

// HandOver returns a command for each of FullOnly that runs FullBinary with
// the same arguments in place of this process, so that they keep their
// exit codes, signals and terminal.
func HandOver(sio Stdio) []*cobra.Command {
	var cmds []*cobra.Command
	for _, c := range FullOnly {
		cmds = append(cmds, &cobra.Command{
			Use:                c.Name,
			Short:              c.Short + " (runs " + FullBinary + ")",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return handOver(c.Name, args)
			},
		})
	}
	return cmds
}

// handOver runs FullBinary's command name with args in place of this
// process; it returns only on failure.
func handOver(name string, args []string) error {
	path, err := findFull()
	if err != nil {
		return Usage(err)
	}
	argv := append([]string{path, name}, args...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return Failed(fmt.Errorf("run %s: %w", path, err))
	}
	return nil
}

// findFull looks for FullBinary next to this executable, then in PATH.
func findFull() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), FullBinary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(FullBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("this command is in %s, which is neither next to this binary nor in PATH: go install github.com/patchbench/patchbench/cmd/%s@latest (or go run ./cmd/%s from a checkout)", FullBinary, FullBinary, FullBinary)
}
