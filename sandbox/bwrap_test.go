package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBwrapNoNetwork opens a TCP listener on the host's loopback and checks
// that a sandboxed command cannot connect to it, while the plain runner and
// a sandbox with Network set can.
func TestBwrapNoNetwork(t *testing.T) {
	b := requireBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := t.TempDir()
	helper := copyHelper(t, dir)
	cmd := Command{
		Dir:  dir,
		Args: []string{helper, "connect", ln.Addr().String()},
		Env:  []string{helperEnv + "=1"},
	}
	for _, c := range []struct {
		runner  Runner
		network bool
		want    int
	}{
		{Plain{}, false, 0}, // control: the listener works
		{b, false, 3},
		{b, true, 0},
	} {
		cmd.Network = c.network
		res, err := c.runner.Run(t.Context(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != c.want {
			t.Errorf("%s, Network %v: connect to %s: exit %d, want %d; stdout %q, stderr %q",
				c.runner.Name(), c.network, ln.Addr(), res.ExitCode, c.want, res.Stdout, res.Stderr)
		}
	}
	// Only a loopback interface inside.
	res, err := b.Run(t.Context(), Command{Dir: dir, Args: []string{"cat", "/proc/net/dev"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(res.Stdout), "\n")[2:] {
		if name, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && name != "lo" {
			t.Errorf("sandbox has network interface %q", name)
		}
	}
}

// TestBwrapWriteConfinement checks that a sandboxed command can write in its
// work directory, ExtraWritable and its private /tmp, and nowhere else.
func TestBwrapWriteConfinement(t *testing.T) {
	b := requireBwrap(t)
	work := t.TempDir()
	extra := t.TempDir()
	outside := t.TempDir() // under the host's temporary directory
	// A directory the sandbox can see (the package directory is not
	// under /tmp), to show it is read-only rather than hidden.
	visible, err := os.MkdirTemp(".", ".sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	visible, _ = filepath.Abs(visible)
	t.Cleanup(func() { os.RemoveAll(visible) })
	for _, d := range []string{outside, visible} {
		if err := os.WriteFile(filepath.Join(d, "keep"), []byte("original\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	tmpName := "patchbench-escape-" + marker()
	etcName := "/etc/patchbench-escape-" + marker()
	t.Cleanup(func() {
		// Only if the sandbox failed: do not leave its escapes behind.
		os.Remove(etcName)
		os.Remove(filepath.Join(os.TempDir(), tmpName))
		os.Remove(filepath.Join(filepath.Dir(work), "escape.txt"))
	})

	attempts := []struct {
		name, script string
		allowed      bool
	}{
		{"write in work dir", `echo inside > "$WORK/ok.txt"`, true},
		{"write in extra dir", `echo extra > "$EXTRA/ok.txt"`, true},
		{"write in private /tmp", `echo tmp > /tmp/` + tmpName, true},
		{"write in home", `echo home > "$HOME/ok.txt"`, true},
		{"create in another temp dir", `echo bad > "$OUTSIDE/escape.txt"`, false},
		{"append in another temp dir", `echo bad >> "$OUTSIDE/keep"`, false},
		{"create in visible dir", `echo bad > "$VISIBLE/escape.txt"`, false},
		{"append in visible dir", `echo bad >> "$VISIBLE/keep"`, false},
		{"remove in visible dir", `rm "$VISIBLE/keep"`, false},
		{"create in /etc", `echo bad > ` + etcName, false},
		{"remount / read-write", `mount -o remount,rw /`, false},
	}
	env := []string{"WORK=" + work, "EXTRA=" + extra, "OUTSIDE=" + outside, "VISIBLE=" + visible}
	for _, a := range attempts {
		res, err := b.Run(t.Context(), Command{
			Dir:           work,
			Args:          []string{"sh", "-c", a.script},
			Env:           env,
			ExtraWritable: []string{extra},
		})
		if err != nil {
			t.Fatal(err)
		}
		if ok := res.ExitCode == 0; ok != a.allowed {
			t.Errorf("%s: exit %d (stderr %q), want allowed %v", a.name, res.ExitCode, res.Stderr, a.allowed)
		}
	}
	// The work directory's parent is in the sandbox's /tmp (then the
	// write lands there) or read-only: the host's is untouched either way.
	if _, err := b.Run(t.Context(), Command{Dir: work, Args: []string{"sh", "-c", `echo bad > ../escape.txt`}}); err != nil {
		t.Fatal(err)
	}
	// The sandbox sees the visible directory, unless the tests run under
	// /tmp, which the sandbox replaces.
	if strings.HasPrefix(visible, "/tmp/") {
		t.Logf("%s is under /tmp: hidden in the sandbox, not only read-only", visible)
	} else {
		res, err := b.Run(t.Context(), Command{Dir: work, Args: []string{"cat", filepath.Join(visible, "keep")}})
		if err != nil || string(res.Stdout) != "original\n" {
			t.Errorf("reading a host file from the sandbox: %+v, %v", res, err)
		}
	}

	// What the host sees afterwards.
	for p, want := range map[string]string{
		filepath.Join(work, "ok.txt"):                   "inside\n",
		filepath.Join(extra, "ok.txt"):                  "extra\n",
		filepath.Join(outside, "keep"):                  "original\n",
		filepath.Join(visible, "keep"):                  "original\n",
		filepath.Join(outside, "escape.txt"):            "",
		filepath.Join(visible, "escape.txt"):            "",
		filepath.Join(os.TempDir(), tmpName):            "",
		etcName:                                         "",
		filepath.Join(filepath.Dir(work), "escape.txt"): "",
	} {
		data, err := os.ReadFile(p)
		switch {
		case want == "" && !errors.Is(err, os.ErrNotExist):
			t.Errorf("%s exists on the host after the sandbox ran (%q, %v)", p, data, err)
		case want != "" && string(data) != want:
			t.Errorf("%s = %q, %v on the host; want %q", p, data, err, want)
		}
	}
}

// TestBwrapNewSessionStillKilled checks that a process that starts its own
// session, and so leaves the process group, dies with the sandbox.
func TestBwrapNewSessionStillKilled(t *testing.T) {
	b := requireBwrap(t)
	m := marker()
	script := fmt.Sprintf("setsid sleep %s </dev/null >/dev/null 2>&1 & echo started; sleep 600", m)
	res, err := b.Run(t.Context(), Command{Dir: t.TempDir(), Args: []string{"sh", "-c", script}, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || string(res.Stdout) != "started\n" {
		t.Fatalf("Run = %+v", res)
	}
	waitGone(t, m)
}

func TestBwrapArgs(t *testing.T) {
	b := &Bwrap{path: "/usr/bin/bwrap"}
	got, err := b.args(Command{Args: []string{"pytest", "-x"}, ExtraWritable: []string{"/"}}, "/w")
	if err != nil {
		t.Fatal(err)
	}
	want := "/usr/bin/bwrap --die-with-parent --unshare-all --cap-drop ALL --new-session --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind /w /w --bind / / --chdir /w -- pytest -x"
	if strings.Join(got, " ") != want {
		t.Errorf("args:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	got, _ = b.args(Command{Args: []string{"true"}, Network: true}, "/w")
	if !strings.Contains(strings.Join(got, " "), "--unshare-all --share-net") {
		t.Errorf("Network: args %q lack --share-net", got)
	}
	if _, err := b.args(Command{Args: []string{"true"}, ExtraWritable: []string{"rel"}}, "/w"); err == nil {
		t.Error("relative ExtraWritable accepted")
	}
}

// TestBwrapPytest runs a small pytest suite in the sandbox, as the test stage
// does. It needs a python3 with pytest (Debian package python3-pytest).
func TestBwrapPytest(t *testing.T) {
	b := requireBwrap(t)
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import pytest").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with pytest (apt-get install python3-pytest)")
	}
	dir := t.TempDir()
	test := `import os, subprocess, sys

def test_pass(tmp_path):
    (tmp_path / "f").write_text("x")
    assert os.environ["HOME"] == "/tmp"

def test_fail():
    assert 1 == 2
`
	if err := os.WriteFile(filepath.Join(dir, "test_a.py"), []byte(test), 0o666); err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(t.Context(), Command{
		Dir:     dir,
		Args:    []string{python, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_a.py"},
		Env:     []string{"PYTHONDONTWRITEBYTECODE=1"},
		Timeout: 10 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if res.ExitCode != 1 || !strings.Contains(out, "PASSED test_a.py::test_pass") || !strings.Contains(out, "FAILED test_a.py::test_fail") {
		t.Errorf("pytest: exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, out, res.Stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("pytest left files in the work directory: %v", entries)
	}
}
