package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeDocker is a docker client stand-in, a shell script first in PATH,
// whose behaviour the test sets through files in its state directory.
type fakeDocker struct {
	t     *testing.T
	state string
}

const fakeDockerScript = `#!/bin/sh
S='%s'
echo "$*" >> "$S/log"
case "$1" in
info)
	if [ -e "$S/engine" ]; then echo 27.0.0; exit 0; fi
	echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
	exit 1;;
image)
	if [ -e "$S/have-image" ]; then echo sha256:0123; exit 0; fi
	echo "Error response from daemon: No such image: $5" >&2
	exit 1;;
pull)
	n=$(cat "$S/pulls" 2>/dev/null || echo 0)
	n=$((n+1))
	echo $n > "$S/pulls"
	if [ "$n" -le "$(cat "$S/failing-pulls" 2>/dev/null || echo 0)" ]; then
		cat "$S/pull-error" >&2
		exit 1
	fi
	touch "$S/have-image"
	echo docker.io/library/$3
	exit 0;;
run)
	shift
	for a; do echo "$a"; done > "$S/run-args"
	exec sh "$S/run.sh";;
kill)
	echo "$2" >> "$S/killed"
	exit 0;;
esac
echo "fake docker: unknown command $1" >&2
exit 2
`

func newFakeDocker(t *testing.T) *fakeDocker {
	t.Helper()
	bin, state := t.TempDir(), t.TempDir()
	script := fmt.Sprintf(fakeDockerScript, state)
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &fakeDocker{t: t, state: state}
}

func (f *fakeDocker) set(name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.state, name), []byte(content), 0o666); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeDocker) get(name string) string {
	data, _ := os.ReadFile(filepath.Join(f.state, name))
	return strings.TrimSpace(string(data))
}

// calls returns the invocations of subcommand cmd, from the log.
func (f *fakeDocker) calls(cmd string) []string {
	var out []string
	for _, line := range strings.Split(f.get("log"), "\n") {
		if line == cmd || strings.HasPrefix(line, cmd+" ") {
			out = append(out, line)
		}
	}
	return out
}

func TestNewDocker(t *testing.T) {
	f := newFakeDocker(t)
	_, err := NewDocker(t.Context())
	if err == nil || !strings.Contains(err.Error(), "sandbox: no docker engine") || !strings.Contains(err.Error(), "Cannot connect") {
		t.Errorf("NewDocker without an engine = %v", err)
	}
	f.set("engine", "")
	d, err := NewDocker(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.Name() != "docker" {
		t.Errorf("Name() = %q", d.Name())
	}
}

const rateLimited = "Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit"

func TestDockerPullRetriesRateLimits(t *testing.T) {
	for _, c := range []struct {
		name     string
		failures int
		message  string
		attempts int
		wantErr  string // empty: success
		wantRuns int
	}{
		{"rate limited twice", 2, rateLimited, 0, "", 3},
		{"429 then fine", 1, "received unexpected HTTP status: 429 Too Many Requests", 0, "", 2},
		{"timeout then fine", 1, "net/http: TLS handshake timeout", 0, "", 2},
		{"rate limited past the attempts", 100, rateLimited, 4, "giving up after 4 attempts", 4},
		{"not found is final", 100, "Error response from daemon: manifest for x:latest not found: manifest unknown", 0, "manifest unknown", 1},
		{"unauthorized is final", 100, "Error response from daemon: pull access denied for x, repository does not exist or may require 'docker login'", 0, "pull access denied", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeDocker(t)
			f.set("failing-pulls", fmt.Sprint(c.failures))
			f.set("pull-error", c.message)
			d := &Docker{PullAttempts: c.attempts, PullBackoff: time.Millisecond, PullMaxBackoff: 4 * time.Millisecond}
			err := d.Pull(t.Context(), "swebench/sweb.eval.x86_64.django_1776_django-11099:latest")
			if c.wantErr == "" && err != nil {
				t.Errorf("Pull = %v, want success", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), "sandbox: pull swebench/")) {
				t.Errorf("Pull = %v, want an error containing %q", err, c.wantErr)
			}
			if got := len(f.calls("pull")); got != c.wantRuns {
				t.Errorf("%d pulls, want %d", got, c.wantRuns)
			}
		})
	}
}

func TestDockerPullStopsWithContext(t *testing.T) {
	f := newFakeDocker(t)
	f.set("failing-pulls", "100")
	f.set("pull-error", rateLimited)
	d := &Docker{PullBackoff: time.Hour}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := d.Pull(ctx, "img")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Pull = %v, want context.DeadlineExceeded", err)
	}
	if got := len(f.calls("pull")); got > 1 {
		t.Errorf("%d pulls, want at most 1", got)
	}
}

func TestBackoff(t *testing.T) {
	base, max := time.Second, 20*time.Second
	for _, c := range []struct {
		n        int
		low, top time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{3, 2 * time.Second, 4 * time.Second},
		{5, 8 * time.Second, 16 * time.Second},
		{6, 10 * time.Second, 20 * time.Second},
		{60, 10 * time.Second, 20 * time.Second},
	} {
		if got := backoff(c.n, base, max, 0); got != c.low {
			t.Errorf("backoff(%d, r=0) = %v, want %v", c.n, got, c.low)
		}
		if got := backoff(c.n, base, max, 0.999999999); got > c.top || got < c.top-time.Millisecond {
			t.Errorf("backoff(%d, r→1) = %v, want about %v", c.n, got, c.top)
		}
	}
}

func TestRetryable(t *testing.T) {
	for msg, want := range map[string]bool{
		rateLimited: true,
		"Error response from daemon: Get \"https://registry-1.docker.io/v2/\": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)": true,
		"received unexpected HTTP status: 503 Service Unavailable":                                       true,
		"read tcp 10.0.0.2:5555->1.2.3.4:443: read: connection reset by peer":                            true,
		"Error response from daemon: manifest for foo:bar not found: manifest unknown: manifest unknown": false,
		"invalid reference format": false,
		"Error response from daemon: pull access denied for foo, repository does not exist or may require 'docker login'": false,
	} {
		if got := retryable(msg); got != want {
			t.Errorf("retryable(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestDockerRun(t *testing.T) {
	f := newFakeDocker(t)
	f.set("run.sh", "read line; echo \"container got $line\"; echo warn >&2; exit 7\n")
	dir, extra, ro := t.TempDir(), t.TempDir(), t.TempDir()
	roFile := filepath.Join(ro, "toolchain.cfg")
	if err := os.WriteFile(roFile, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	d := &Docker{PullBackoff: time.Millisecond}
	res, err := d.Run(t.Context(), Command{
		Dir:           dir,
		Args:          []string{"pytest", "-rA", "tests/test x.py"},
		Env:           []string{"PYTHONDONTWRITEBYTECODE=1"},
		Stdin:         strings.NewReader("input\n"),
		ExtraWritable: []string{extra},
		ExtraReadOnly: []string{ro + "/", roFile},
		Limits:        Limits{OpenFiles: 1024, CPUTime: 1500 * time.Millisecond, AddressSpace: 8 << 30},
		Image:         "sweb.eval.x86_64.django__django-11099",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 || string(res.Stdout) != "container got input\n" || string(res.Stderr) != "warn\n" {
		t.Errorf("Run = %+v", res)
	}
	if got := len(f.calls("pull")); got != 1 {
		t.Errorf("%d pulls of a missing image, want 1", got)
	}
	args := strings.Split(f.get("run-args"), "\n")
	name := ""
	for i, a := range args {
		if a == "--name" && i+1 < len(args) {
			name = args[i+1]
			args[i+1] = "NAME"
		}
	}
	if !strings.HasPrefix(name, "patchbench-") {
		t.Errorf("container name %q", name)
	}
	want := []string{
		"--rm", "--init", "--name", "NAME", "--network", "none", "--interactive",
		"--volume", dir + ":" + dir, "--workdir", dir,
		"--volume", ro + ":" + ro + ":ro", "--volume", roFile + ":" + roFile + ":ro",
		"--volume", extra + ":" + extra,
		"--ulimit", "cpu=2:2", "--ulimit", "nofile=1024:1024", "--memory", "8589934592",
		"--env", "PYTHONDONTWRITEBYTECODE=1",
		"sweb.eval.x86_64.django__django-11099", "pytest", "-rA", "tests/test x.py",
	}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("docker run arguments (-want +got):\n%s", diff)
	}

	// Present image: no pull. Network: no --network none.
	if _, err := d.Run(t.Context(), Command{Dir: dir, Args: []string{"true"}, Image: "img", Network: true, Stdin: strings.NewReader("x\n")}); err != nil {
		t.Fatal(err)
	}
	if got := len(f.calls("pull")); got != 1 {
		t.Errorf("%d pulls, want still 1", got)
	}
	if strings.Contains(f.get("run-args"), "none") {
		t.Errorf("Network set but the container has none: %q", f.get("run-args"))
	}
	if _, err := d.Run(t.Context(), Command{Dir: dir, Args: []string{"true"}}); err == nil {
		t.Error("Run without an image succeeded")
	}
	// Paths docker cannot mount as given are refused before it runs.
	colon := filepath.Join(t.TempDir(), "a:b")
	if err := os.Mkdir(colon, 0o777); err != nil {
		t.Fatal(err)
	}
	runs := len(f.calls("run"))
	for _, c := range []Command{
		{ExtraReadOnly: []string{"relative/path"}},
		{ExtraReadOnly: []string{filepath.Join(dir, "missing")}},
		{ExtraReadOnly: []string{colon}},
		{ExtraWritable: []string{colon}},
		{ExtraWritable: []string{roFile}},
	} {
		c.Dir, c.Args, c.Image = dir, []string{"true"}, "img"
		if _, err := d.Run(t.Context(), c); err == nil {
			t.Errorf("Run with read-only %q, writable %q succeeded", c.ExtraReadOnly, c.ExtraWritable)
		}
	}
	if got := len(f.calls("run")); got != runs {
		t.Errorf("docker run called %d times for refused paths", got-runs)
	}
}

func TestDockerRunTimeoutKillsContainer(t *testing.T) {
	f := newFakeDocker(t)
	f.set("have-image", "")
	m := marker()
	f.set("run.sh", "echo started; exec sleep "+m+"\n")
	d := &Docker{}
	res, err := d.Run(t.Context(), Command{Dir: t.TempDir(), Args: []string{"sleep", "1000"}, Image: "img", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || string(res.Stdout) != "started\n" {
		t.Errorf("Run = %+v, want a timeout after start", res)
	}
	killed := f.get("killed")
	if !strings.HasPrefix(killed, "patchbench-") || !strings.Contains(f.get("run-args"), killed) {
		t.Errorf("docker kill %q, want the container's name (run: %q)", killed, f.get("run-args"))
	}
	waitGone(t, m)
}
