package sandbox

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Defaults for the Docker runner's image pulls.
const (
	DefaultPullAttempts   = 6
	DefaultPullBackoff    = 10 * time.Second
	DefaultPullMaxBackoff = 5 * time.Minute
)

// Docker runs commands in containers through the docker command-line
// client. Make one with [NewDocker], which checks that an engine answers.
//
// Each run is "docker run --rm --init --network none" (unless
// Command.Network) of Command.Image, with the work directory and
// Command.ExtraWritable bind-mounted read-write at the same paths,
// Command.ExtraReadOnly read-only, and the work directory as the working
// directory. No other path of the host is mounted: the container sees its
// image, as with [Bwrap] it sees only the system directories. The image is pulled first if it is
// missing; pulls that fail for reasons that pass (registry rate limits,
// timeouts, 5xx answers) are retried with exponential backoff and jitter.
// On timeout or when ctx ends, the container is killed with "docker kill".
//
// Docker reports its own failures as exit status 125 (and 126, 127 when the
// command cannot be run), indistinguishable from the command's own.
type Docker struct {
	// Path is the docker client; empty means "docker" in PATH.
	Path string
	// PullAttempts is how many times a pull is tried; zero means
	// DefaultPullAttempts.
	PullAttempts int
	// PullBackoff is the wait after the first failed pull; it doubles
	// after each further failure, up to PullMaxBackoff. Each wait is
	// drawn at random between half and all of its value. Zero means
	// DefaultPullBackoff, and DefaultPullMaxBackoff.
	PullBackoff, PullMaxBackoff time.Duration
}

// NewDocker returns a Docker runner if "docker info" answers: the client is
// installed and an engine is running and reachable.
func NewDocker(ctx context.Context) (*Docker, error) {
	d := &Docker{}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := d.output(ctx, "info", "--format", "{{.ServerVersion}}"); err != nil {
		return nil, fmt.Errorf("sandbox: no docker engine: %w", err)
	}
	return d, nil
}

// Name returns "docker".
func (d *Docker) Name() string { return "docker" }

func (d *Docker) path() string {
	if d.Path != "" {
		return d.Path
	}
	return "docker"
}

// output runs the docker client and returns its stdout; the error holds its
// stderr.
func (d *Docker) output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, d.path(), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("docker %s: %w", args[0], ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return nil, fmt.Errorf("docker %s: %w: %s", args[0], err, msg)
	}
	return stdout.Bytes(), nil
}

// EnsureImage pulls image unless it is present already.
func (d *Docker) EnsureImage(ctx context.Context, image string) error {
	if _, err := d.output(ctx, "image", "inspect", "--format", "{{.Id}}", image); err == nil {
		return nil
	}
	return d.Pull(ctx, image)
}

// Pull pulls image, retrying failures that may pass (see [Docker]) with
// exponential backoff.
func (d *Docker) Pull(ctx context.Context, image string) error {
	attempts := d.PullAttempts
	if attempts <= 0 {
		attempts = DefaultPullAttempts
	}
	base, max := d.PullBackoff, d.PullMaxBackoff
	if base <= 0 {
		base = DefaultPullBackoff
	}
	if max <= 0 {
		max = DefaultPullMaxBackoff
	}
	for attempt := 1; ; attempt++ {
		_, err := d.output(ctx, "pull", "--quiet", image)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("sandbox: pull %s: %w", image, err)
		}
		if !retryable(err.Error()) {
			return fmt.Errorf("sandbox: pull %s: %w", image, err)
		}
		if attempt >= attempts {
			return fmt.Errorf("sandbox: pull %s: giving up after %d attempts: %w", image, attempt, err)
		}
		t := time.NewTimer(backoff(attempt, base, max, rand.Float64()))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("sandbox: pull %s: %w (after %d attempts, last: %v)", image, ctx.Err(), attempt, err)
		}
	}
}

// backoff returns the wait after failed attempt n (from 1): base doubled
// n-1 times, at most max, scaled into [1/2, 1] by r in [0, 1).
func backoff(n int, base, max time.Duration, r float64) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return d/2 + time.Duration(r*float64(d/2))
}

// retryable reports whether a pull error message describes a failure that
// may pass: rate limits, timeouts, dropped connections, 5xx answers.
func retryable(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range []string{
		"toomanyrequests", "too many requests", "rate limit", "429",
		"500 internal server error", "502 bad gateway", "503 service unavailable", "504 gateway",
		"tls handshake timeout", "i/o timeout", "timeout exceeded", "connection reset by peer",
		"connection refused", "unexpected eof", "temporary failure in name resolution",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Run runs c in a new container of c.Image, pulling the image if needed.
func (d *Docker) Run(ctx context.Context, c Command) (Result, error) {
	fail := func(res Result, err error) (Result, error) {
		return res, fmt.Errorf("sandbox: run %s in docker: %w", describe(c), err)
	}
	dir, err := c.check()
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	if c.Namespace != 0 {
		return fail(Result{ExitCode: -1}, errors.New("the work directory is mounted in another namespace, which the docker daemon does not see"))
	}
	if c.Image == "" || strings.HasPrefix(c.Image, "-") {
		return fail(Result{ExitCode: -1}, fmt.Errorf("invalid image %q", c.Image))
	}
	if err := d.EnsureImage(ctx, c.Image); err != nil {
		return Result{ExitCode: -1}, err
	}
	var id [8]byte
	crand.Read(id[:])
	name := "patchbench-" + hex.EncodeToString(id[:])
	args, err := d.args(c, dir, name)
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	path, err := exec.LookPath(d.path())
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	kill := func() {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		d.output(kctx, "kill", name)
	}
	res, err := run(ctx, spec{
		path: path, args: args, env: os.Environ(), dir: dir, stdin: c.Stdin,
		timeout: c.Timeout, maxOutput: c.MaxOutput, kill: kill,
	})
	if err != nil {
		return fail(res, err)
	}
	return res, nil
}

// args returns the docker client's argv for c.
func (d *Docker) args(c Command, dir, name string) ([]string, error) {
	a := []string{d.path(), "run", "--rm", "--init", "--name", name}
	if !c.Network {
		a = append(a, "--network", "none")
	}
	if c.Stdin != nil {
		a = append(a, "--interactive")
	}
	writable, readOnly, err := c.extraPaths()
	if err != nil {
		return nil, err
	}
	volume := func(p, mode string) error {
		// --volume splits its argument at colons.
		if strings.Contains(p, ":") {
			return fmt.Errorf("docker cannot mount %s: the path holds a colon", p)
		}
		a = append(a, "--volume", p+":"+p+mode)
		return nil
	}
	if err := volume(dir, ""); err != nil {
		return nil, err
	}
	a = append(a, "--workdir", dir)
	for _, p := range readOnly {
		if err := volume(p, ":ro"); err != nil {
			return nil, err
		}
	}
	for _, p := range writable {
		if err := volume(p, ""); err != nil {
			return nil, err
		}
	}
	l := c.Limits
	ulimit := func(name string, v uint64) {
		if v > 0 {
			s := strconv.FormatUint(v, 10)
			a = append(a, "--ulimit", name+"="+s+":"+s)
		}
	}
	ulimit("cpu", cpuSeconds(l.CPUTime))
	ulimit("nofile", l.OpenFiles)
	ulimit("nproc", l.Processes)
	ulimit("fsize", l.FileSize)
	if l.AddressSpace > 0 {
		a = append(a, "--memory", strconv.FormatUint(l.AddressSpace, 10))
	}
	for _, kv := range c.Env {
		a = append(a, "--env", kv)
	}
	a = append(a, c.Image)
	return append(a, c.Args...), nil
}
