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
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
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

// commandList are commands by name, each made on demand (a process runs
// one of them).
type commandList []struct {
	name string
	make func(Stdio) *cmdline.Command
}

// all makes every command of l, in order.
func (l commandList) all(sio Stdio) []*cmdline.Command {
	cmds := make([]*cmdline.Command, len(l))
	for i, e := range l {
		cmds[i] = e.make(sio)
	}
	return cmds
}

// find makes the command of l called name alone, or returns nil.
func (l commandList) find(name string, sio Stdio) *cmdline.Command {
	for _, e := range l {
		if e.name == name {
			return e.make(sio)
		}
	}
	return nil
}

// engine are the patch engine's commands by name, in help order.
var engine = commandList{
	{"apply", newApplyCommand},
	{"diff", newDiffCommand},
	{"convert", newConvertCommand},
	{"applybench", newApplybenchCommand},
	{"repair", newRepairCommand},
	{"report", newReportCommand},
}

// Engine returns the patch engine's commands, which both binaries run.
func Engine(sio Stdio) []*cmdline.Command { return engine.all(sio) }

// engineCommand makes the engine command called name alone (an agent
// runs one of them once per edit), or returns nil.
func engineCommand(name string, sio Stdio) *cmdline.Command { return engine.find(name, sio) }

// Short is the one-line description of the program.
const Short = "Parse, apply, repair and generate code edits; benchmark code-editing models"

// RunEngine runs engine command c with args (those after its name) and
// ctx: its flags parsed, its help printed for -h/--help. Errors are
// marked with their exit code.
func RunEngine(ctx context.Context, c *cmdline.Command, args []string, sio Stdio) error {
	rest, err := c.Parse(args)
	if errors.Is(err, cmdline.ErrHelp) {
		fmt.Fprint(sio.Out, c.Help(ProgramName))
		return nil
	}
	if err != nil {
		return Usage(err)
	}
	return c.Run(ctx, rest)
}

// Exit prints err, if any, and returns the exit code it carries: its
// mark (Failed, Usage), ExitUsage when unmarked (the CLI library's own
// errors: unknown command, bad arguments), ExitOK for nil.
func Exit(err error, sio Stdio) int {
	if err == nil {
		return ExitOK
	}
	code := ExitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if err.Error() != "" {
		fmt.Fprintf(sio.Err, "%s: %v\n", ProgramName, err)
	}
	return code
}

// Run runs the command line args of the patchbench binary and returns
// the exit code: an engine command here, a benchmark command (and shell
// completion, which needs every command) in FullBinary. Interrupts and
// SIGTERM cancel the command's context, except for quick commands, which
// they end.
func Run(args []string, sio Stdio) int {
	growStack(len(args))
	if len(args) == 0 {
		fmt.Fprint(sio.Out, rootHelp(sio))
		return ExitOK
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		fmt.Fprint(sio.Out, rootHelp(sio))
		return ExitOK
	case "help":
		return Exit(help(args[1:], sio), sio)
	case "-v", "--version":
		fmt.Fprintf(sio.Out, "%s %s\n", ProgramName, Version())
		return ExitOK
	case "completion", "__complete", "__completeNoDesc":
		return Exit(handOver(name, args[1:]), sio)
	}
	if c := engineCommand(name, sio); c != nil {
		return runHere(c, args[1:], sio)
	}
	// env restore and env release run here, for start-up (see env.go);
	// the other env subcommands, and flags before the subcommand, are
	// patchbench-full's.
	if name == "env" && len(args) > 1 {
		if c := envLocal.find(args[1], sio); c != nil {
			return runHere(c, args[2:], sio)
		}
	}
	for _, c := range FullOnly {
		if c.Name == name {
			return Exit(handOver(name, args[1:]), sio)
		}
	}
	return Exit(unknownCommand(name, sio), sio)
}

// runHere runs c, a command this binary has, with args and returns the
// exit code. Interrupts and SIGTERM cancel its context, unless it is
// quick.
func runHere(c *cmdline.Command, args []string, sio Stdio) int {
	ctx := context.Background()
	if !c.Quick {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	return Exit(RunEngine(ctx, c, args, sio), sio)
}

// help prints the help of the command args name, as "help COMMAND" asks.
func help(args []string, sio Stdio) error {
	if len(args) == 0 {
		fmt.Fprint(sio.Out, rootHelp(sio))
		return nil
	}
	if c := engineCommand(args[0], sio); c != nil {
		fmt.Fprint(sio.Out, c.Help(ProgramName))
		return nil
	}
	for _, c := range FullOnly {
		if c.Name == args[0] {
			return handOver("help", args)
		}
	}
	return unknownCommand(args[0], sio)
}

// unknownCommand is the error for a command line that names no command,
// with the names it may have meant.
func unknownCommand(name string, sio Stdio) error {
	if strings.HasPrefix(name, "-") {
		return Usage(fmt.Errorf("unknown flag %q (run %s --help)", name, ProgramName))
	}
	var names []string
	for _, c := range Engine(sio) {
		names = append(names, c.Name())
	}
	for _, c := range FullOnly {
		names = append(names, c.Name)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := cmdline.Suggest(name, names); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return Usage(fmt.Errorf("%s (run %s --help for the list)", msg, ProgramName))
}

// rootHelp is the program's help: its commands and flags.
func rootHelp(sio Stdio) string {
	type entry struct{ name, short string }
	var cmds []entry
	for _, c := range Engine(sio) {
		cmds = append(cmds, entry{c.Name(), c.Short})
	}
	for _, c := range FullOnly {
		where := " (runs " + FullBinary + ")"
		if c.Name == "env" {
			// env restore and env release run here (envLocal).
			var local []string
			for _, e := range envLocal {
				local = append(local, e.name)
			}
			where = " (" + strings.Join(local, " and ") + " run here, the others " + FullBinary + ")"
		}
		cmds = append(cmds, entry{c.Name, c.Short + where})
	}
	cmds = append(cmds,
		entry{"completion", "Generate the autocompletion script for the specified shell (runs " + FullBinary + ")"},
		entry{"help", "Help about any command"})
	slices.SortFunc(cmds, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	b.WriteString(Short + "\n\nUsage:\n  " + ProgramName + " [command]\n\nAvailable Commands:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-11s %s\n", c.name, c.short)
	}
	b.WriteString("\nFlags:\n  -h, --help      help for " + ProgramName + "\n  -v, --version   version for " + ProgramName + "\n")
	b.WriteString("\nUse \"" + ProgramName + " [command] --help\" for more information about a command.\n")
	return b.String()
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
	// Nothing writes b: the text shares it rather than copying a patch
	// that may be as large as the files it edits.
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
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
	// The module is not published, so only an install from a clone works
	// (go install MODULE/cmd/...@latest does not resolve).
	return "", fmt.Errorf("this command is in %s, which is neither next to this binary nor in PATH: install it from a clone of the repository with go install ./cmd/%s (or run go run ./cmd/%s there)", FullBinary, FullBinary, FullBinary)
}
