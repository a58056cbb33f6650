package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Bwrap runs commands in bubblewrap. Make one with [NewBwrap], which checks
// that bubblewrap works here.
//
// The command sees the host's file system read-only, with its work
// directory and Command.ExtraWritable bound read-write at the same paths, a
// fresh tmpfs on /tmp, a minimal /dev, and its own /proc. It runs in new
// user, PID, IPC, UTS, cgroup and network namespaces (the network one only
// holds a loopback interface, so not even the host's 127.0.0.1 is
// reachable; Command.Network shares the host's instead), with no
// capabilities, in a new session, and dies with its parent.
type Bwrap struct {
	path string
}

// NewBwrap finds bwrap in PATH and runs a probe sandbox with the options
// every run uses, since bubblewrap may be installed but unable to work (user
// namespaces disabled, or no permission to mount /proc in a container). The
// error says why bubblewrap cannot be used.
func NewBwrap(ctx context.Context) (*Bwrap, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("sandbox: bubblewrap is not installed (Debian package bubblewrap): %w", err)
	}
	b := &Bwrap{path: path}
	dir, err := os.MkdirTemp("", "patchbench-probe-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe bubblewrap: %w", err)
	}
	defer os.RemoveAll(dir)
	res, err := b.Run(ctx, Command{Dir: dir, Args: []string{"true"}, Timeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe bubblewrap: %w", err)
	}
	if res.ExitCode != 0 {
		msg := strings.TrimSpace(string(res.Stderr))
		if msg == "" {
			msg = "no message"
		}
		return nil, fmt.Errorf("sandbox: bubblewrap does not work here: %s --ro-bind / / ... true: exit status %d: %s", path, res.ExitCode, msg)
	}
	return b, nil
}

// Name returns "bwrap".
func (b *Bwrap) Name() string { return "bwrap" }

// Run runs c in a bubblewrap sandbox.
func (b *Bwrap) Run(ctx context.Context, c Command) (Result, error) {
	fail := func(res Result, err error) (Result, error) {
		return res, fmt.Errorf("sandbox: run %s in bwrap: %w", describe(c), err)
	}
	dir, err := c.check()
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	args, err := b.args(c, dir)
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	env := environ([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=/tmp",
		"TMPDIR=/tmp",
		"LANG=C.UTF-8",
	}, c.Env)
	res, err := run(ctx, spec{
		path: b.path, args: args, env: env, dir: dir, stdin: c.Stdin,
		timeout: c.Timeout, maxOutput: c.MaxOutput,
	})
	if err != nil {
		return fail(res, err)
	}
	return res, nil
}

// args returns bwrap's argv for c.
func (b *Bwrap) args(c Command, dir string) ([]string, error) {
	a := []string{b.path, "--die-with-parent", "--unshare-all"}
	if c.Network {
		a = append(a, "--share-net")
	}
	a = append(a,
		"--cap-drop", "ALL",
		"--new-session",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		// After the tmpfs, so a work directory under /tmp shows.
		"--bind", dir, dir,
	)
	for _, w := range c.ExtraWritable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("writable path %q is not absolute", w)
		}
		fi, err := os.Stat(w)
		if err != nil {
			return nil, fmt.Errorf("writable path: %w", err)
		}
		if !fi.IsDir() {
			return nil, errors.New("writable path " + w + " is not a directory")
		}
		a = append(a, "--bind", w, w)
	}
	a = append(a, "--chdir", dir, "--")
	pre, err := prlimitArgs(c.Limits)
	if err != nil {
		return nil, err
	}
	a = append(a, pre...)
	return append(a, c.Args...), nil
}
