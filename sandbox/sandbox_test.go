package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunBasics(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			dir := t.TempDir()
			for _, c := range []struct {
				name           string
				cmd            Command
				code           int
				stdout, stderr string
			}{
				{"exit code", Command{Args: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, 3, "out\n", "err\n"},
				{"killed by a signal", Command{Args: []string{"sh", "-c", "kill -9 $$"}}, 128 + 9, "", ""},
				{"stdin", Command{Args: []string{"cat"}, Stdin: strings.NewReader("hello\n")}, 0, "hello\n", ""},
				{"no stdin", Command{Args: []string{"cat"}}, 0, "", ""},
				{"work directory", Command{Args: []string{"sh", "-c", "pwd"}}, 0, dir + "\n", ""},
				{"env defaults", Command{Args: []string{"sh", "-c", `test "$HOME" = "$TMPDIR" && touch "$HOME/x" && echo "$LANG"`}}, 0, "C.UTF-8\n", ""},
				{"env added and overridden", Command{
					Args: []string{"sh", "-c", `echo "$FOO $LANG"`},
					Env:  []string{"FOO=bar", "LANG=en_US.UTF-8"},
				}, 0, "bar en_US.UTF-8\n", ""},
				{"caller env not inherited", Command{Args: []string{"sh", "-c", `echo "[$PATCHBENCH_SECRET]"`}}, 0, "[]\n", ""},
			} {
				t.Setenv("PATCHBENCH_SECRET", "s3cret")
				c.cmd.Dir = dir
				res, err := r.Run(t.Context(), c.cmd)
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				if res.ExitCode != c.code || string(res.Stdout) != c.stdout || string(res.Stderr) != c.stderr {
					t.Errorf("%s: got exit %d, stdout %q, stderr %q; want %d, %q, %q",
						c.name, res.ExitCode, res.Stdout, res.Stderr, c.code, c.stdout, c.stderr)
				}
				if res.TimedOut || res.StdoutTruncated || res.StderrTruncated {
					t.Errorf("%s: unexpected flags %+v", c.name, res)
				}
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	for _, r := range runners(t) {
		for _, c := range []Command{
			{Dir: dir},
			{Dir: dir, Args: []string{""}},
			{Args: []string{"true"}},
			{Dir: filepath.Join(dir, "missing"), Args: []string{"true"}},
			{Dir: dir, Args: []string{"true"}, Env: []string{"NOEQUALS"}},
		} {
			if _, err := r.Run(t.Context(), c); err == nil {
				t.Errorf("%s: Run(%+v) succeeded", r.Name(), c)
			} else if !strings.HasPrefix(err.Error(), "sandbox: run ") {
				t.Errorf("%s: error %q does not say what", r.Name(), err)
			}
		}
	}
	// The plain runner cannot start a missing program; bubblewrap starts
	// and reports it.
	res, err := Plain{}.Run(t.Context(), Command{Dir: dir, Args: []string{"no-such-program-xyz"}})
	if err == nil {
		t.Errorf("plain: missing program: %+v", res)
	}
}

// TestTimeoutKillsProcessTree starts a child and grandchildren that outlive
// it and checks that the timeout kills them all.
func TestTimeoutKillsProcessTree(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			dir := t.TempDir()
			m1, m2 := marker(), marker()
			script := fmt.Sprintf(`
sleep %s &
echo $! > grandchild.pid
sh -c 'sleep %s & wait' &
echo started
wait`, m1, m2)
			res, err := r.Run(t.Context(), Command{Dir: dir, Args: []string{"sh", "-c", script}, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut {
				t.Errorf("TimedOut not set: %+v", res)
			}
			if res.ExitCode != 128+9 {
				t.Errorf("exit code %d, want %d (SIGKILL)", res.ExitCode, 128+9)
			}
			if string(res.Stdout) != "started\n" {
				t.Fatalf("stdout %q: the command did not start its children", res.Stdout)
			}
			waitGone(t, m1)
			waitGone(t, m2)
			if _, ok := r.(Plain); ok {
				// Without a PID namespace the pid is the host's.
				data, err := os.ReadFile(filepath.Join(dir, "grandchild.pid"))
				if err != nil {
					t.Fatal(err)
				}
				pid := strings.TrimSpace(string(data))
				if _, err := strconv.Atoi(pid); err != nil {
					t.Fatalf("grandchild.pid holds %q", data)
				}
				if !zombie(pid) {
					t.Errorf("grandchild %s still alive", pid)
				}
			}
		})
	}
}

func TestCancelKillsProcessTree(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			dir := t.TempDir()
			m := marker()
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer cancel()
				waitFile(t, filepath.Join(dir, "started"), done)
			}()
			script := fmt.Sprintf("sh -c 'sleep %s & wait' & touch started; wait", m)
			res, err := r.Run(ctx, Command{Dir: dir, Args: []string{"sh", "-c", script}})
			close(done)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %+v, %v; want context.Canceled", res, err)
			}
			if res.TimedOut {
				t.Error("TimedOut set on cancellation")
			}
			waitGone(t, m)
		})
	}
}

func TestLeftoverProcessesAreKilled(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			m := marker()
			// The command exits at once and leaves a background
			// process holding nothing of ours.
			script := fmt.Sprintf("sleep %s </dev/null >/dev/null 2>&1 & echo bye", m)
			res, err := r.Run(t.Context(), Command{Dir: t.TempDir(), Args: []string{"sh", "-c", script}})
			if err != nil || res.ExitCode != 0 || res.TimedOut {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			waitGone(t, m)
		})
	}
}

func TestLimits(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			dir := t.TempDir()
			res, err := r.Run(t.Context(), Command{
				Dir:    dir,
				Args:   []string{"sh", "-c", "ulimit -n; ulimit -v"},
				Limits: Limits{OpenFiles: 64, AddressSpace: 1 << 30},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(res.Stdout), "64\n1048576\n"; got != want {
				t.Errorf("limits seen by the command: %q, want %q (stderr %q)", got, want, res.Stderr)
			}
			// A CPU-bound loop dies of its CPU limit (SIGXCPU, or
			// SIGKILL at the hard limit).
			res, err = r.Run(t.Context(), Command{
				Dir:     dir,
				Args:    []string{"sh", "-c", "while :; do :; done"},
				Limits:  Limits{CPUTime: time.Second},
				Timeout: 10 * time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.TimedOut || (res.ExitCode != 128+24 && res.ExitCode != 128+9) {
				t.Errorf("CPU-bound loop: %+v, want killed by SIGXCPU or SIGKILL", res)
			}
			// Writing past the file size limit fails.
			res, err = r.Run(t.Context(), Command{
				Dir:    dir,
				Args:   []string{"sh", "-c", "trap '' XFSZ; head -c 100000 /dev/zero > big"},
				Limits: Limits{FileSize: 4096},
			})
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(filepath.Join(dir, "big")); res.ExitCode == 0 || err != nil || fi.Size() > 4096 {
				t.Errorf("write past the file size limit: %+v, file %v %v", res, fi, err)
			}
		})
	}
}

func TestOutputCap(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			// 3 MiB of numbered lines on stdout, a little on stderr.
			const lines = 3 << 20 / 8
			script := fmt.Sprintf("seq -f %%07g 1 %d; echo small >&2", lines)
			res, err := r.Run(t.Context(), Command{Dir: t.TempDir(), Args: []string{"sh", "-c", script}, MaxOutput: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if !res.StdoutTruncated || res.StderrTruncated {
				t.Errorf("truncated flags: stdout %v, stderr %v", res.StdoutTruncated, res.StderrTruncated)
			}
			if string(res.Stderr) != "small\n" {
				t.Errorf("stderr %q", res.Stderr)
			}
			if !bytes.HasPrefix(res.Stdout, []byte("0000001\n0000002\n")) {
				t.Errorf("stdout does not keep its start: %q", res.Stdout[:32])
			}
			last := fmt.Sprintf("%07d\n", lines)
			if !bytes.HasSuffix(res.Stdout, []byte(last)) {
				t.Errorf("stdout does not keep its end: %q", res.Stdout[len(res.Stdout)-32:])
			}
			omitted := fmt.Sprintf("[... %d bytes left out by patchbench ...]", lines*8-(1<<20))
			if !bytes.Contains(res.Stdout, []byte(omitted)) {
				t.Errorf("stdout does not say %q", omitted)
			}
			if len(res.Stdout) > 1<<20+100 {
				t.Errorf("stdout holds %d bytes, cap is %d", len(res.Stdout), 1<<20)
			}
		})
	}
}

func TestCapBuffer(t *testing.T) {
	for _, max := range []int{2, 3, 10, 101, 4096} {
		for trial := range 50 {
			b := newCapBuffer(max)
			var all []byte
			for range rand.IntN(20) {
				p := make([]byte, rand.IntN(3*max))
				for i := range p {
					p[i] = byte('a' + rand.IntN(26))
				}
				b.Write(p)
				all = append(all, p...)
			}
			got, truncated := b.Bytes()
			if len(all) <= max {
				if truncated || !bytes.Equal(got, all) {
					t.Fatalf("max %d trial %d: %q, %v; want %q", max, trial, got, truncated, all)
				}
				continue
			}
			head, tail := max-max/2, max/2
			want := append([]byte(nil), all[:head]...)
			want = fmt.Appendf(want, "\n[... %d bytes left out by patchbench ...]\n", len(all)-max)
			want = append(want, all[len(all)-tail:]...)
			if !truncated || !bytes.Equal(got, want) {
				t.Fatalf("max %d trial %d: %q, %v; want %q", max, trial, got, truncated, want)
			}
		}
	}
}

func TestDetect(t *testing.T) {
	r := Detect(t.Context())
	if _, err := NewBwrap(t.Context()); err == nil {
		if r.Name() != "bwrap" {
			t.Errorf("Detect = %s, want bwrap", r.Name())
		}
	} else if r.Name() != "unsandboxed" {
		t.Errorf("Detect = %s without bubblewrap (%v), want unsandboxed", r.Name(), err)
	}
}
