package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Plain runs commands without isolation: they can use the network and write
// wherever the user can. It still applies the environment, resource limits,
// timeout, process-group kill and output capture of the other runners, and
// gives each run a private temporary directory as HOME and TMPDIR. Use it
// only where bubblewrap is not available; Name says "unsandboxed" so that
// reports show it.
type Plain struct{}

// Name returns "unsandboxed".
func (Plain) Name() string { return "unsandboxed" }

// Run runs c directly. Command.Network, Command.ExtraWritable and
// Command.ExtraReadOnly have no effect: nothing is taken away.
func (Plain) Run(ctx context.Context, c Command) (Result, error) {
	fail := func(res Result, err error) (Result, error) {
		return res, fmt.Errorf("sandbox: run %s: %w", describe(c), err)
	}
	dir, err := c.check()
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	tmp, err := os.MkdirTemp("", "patchbench-run-")
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	defer removeAll(tmp)
	env := environ(baseEnv(tmp), c.Env)
	args, err := prlimitArgs(c.Limits)
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	args = append(args, c.Args...)
	path, err := lookPath(args[0], env)
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	if c.Namespace != 0 {
		// Inside the namespace this process is its root: unshare(1)
		// gives the command this process's uid and gid back.
		enter, err := EnterArgs(c.Namespace, dir)
		if err != nil {
			return fail(Result{ExitCode: -1}, err)
		}
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			return fail(Result{ExitCode: -1}, fmt.Errorf("entering a namespace needs unshare (util-linux): %w", err))
		}
		args = append(append(enter, unshare, "--user", "--map-user="+strconv.Itoa(os.Getuid()), "--map-group="+strconv.Itoa(os.Getgid()), "--", path), args[1:]...)
		path = args[0]
	}
	res, err := run(ctx, spec{
		path: path, args: args, env: env, dir: dir, stdin: c.Stdin,
		timeout: c.Timeout, maxOutput: c.MaxOutput,
	})
	if err != nil {
		return fail(res, err)
	}
	return res, nil
}

// removeAll is os.RemoveAll that first makes read-only directories under p
// writable, as test suites (and Go's module cache) leave them.
func removeAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
