package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBwrapNoNetwork opens a TCP listener on the host's loopback and checks
// that a sandboxed command cannot connect to it, while the plain runner and
// a sandbox with Network set can.
func TestBwrapNoNetwork(t *testing.T) {
	b := requireBwrap(t)
	ln := loopbackListener(t)
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
	// A directory the sandbox shows read-only, as the user's read-only
	// paths (the package directory is not under /tmp).
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
			ExtraReadOnly: []string{visible},
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
	// The sandbox shows the visible directory only when asked to.
	for _, ro := range [][]string{{visible}, nil} {
		res, err := b.Run(t.Context(), Command{Dir: work, Args: []string{"cat", filepath.Join(visible, "keep")}, ExtraReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		if shown := res.ExitCode == 0 && string(res.Stdout) == "original\n"; shown != (ro != nil) {
			t.Errorf("read-only %q: reading %s/keep: exit %d, stdout %q, stderr %q", ro, visible, res.ExitCode, res.Stdout, res.Stderr)
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
	b := &Bwrap{path: "/usr/bin/bwrap", system: []string{"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin"}}
	tool, cache, file := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "tool.cfg")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(tool, "pkg", "cache")
	if err := os.MkdirAll(inner, 0o777); err != nil {
		t.Fatal(err)
	}
	got, err := b.args(Command{
		Args:          []string{"pytest", "-x"},
		ExtraWritable: []string{inner, cache},
		ExtraReadOnly: []string{tool + "/", file},
	}, "/w")
	if err != nil {
		t.Fatal(err)
	}
	// The system paths, then /dev, /proc, /tmp, then the command's paths
	// from the shallowest: the writable cache inside the read-only
	// toolchain comes after it.
	want := []string{"/usr/bin/bwrap", "--die-with-parent", "--unshare-all", "--cap-drop", "ALL", "--new-session",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", "/w", "/w",
		"--ro-bind", tool, tool, "--bind", cache, cache, "--ro-bind", file, file,
		"--bind", inner, inner,
		"--remount-ro", "/", "--chdir", "/w", "--", "pytest", "-x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	for i, a := range got {
		if a == "/" && got[i-1] != "--remount-ro" {
			t.Errorf("args show the host's root: %q", got)
		}
	}
	got, _ = b.args(Command{Args: []string{"true"}, Network: true}, "/w")
	if !strings.Contains(strings.Join(got, " "), "--unshare-all --share-net") {
		t.Errorf("Network: args %q lack --share-net", got)
	}
	for _, c := range []Command{
		{ExtraWritable: []string{"rel"}},
		{ExtraWritable: []string{file}},
		{ExtraWritable: []string{filepath.Join(tool, "missing")}},
		{ExtraReadOnly: []string{"rel"}},
		{ExtraReadOnly: []string{filepath.Join(tool, "missing")}},
	} {
		c.Args = []string{"true"}
		if _, err := b.args(c, "/w"); err == nil {
			t.Errorf("writable %q, read-only %q accepted", c.ExtraWritable, c.ExtraReadOnly)
		}
	}
}

// TestSystemArgs builds a small root file system with merged /usr, /etc
// entries that are links into /usr, out of it and dangling, and files the
// sandbox must not show, and checks the arguments that show it.
func TestSystemArgs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/share/zoneinfo/Etc", "lib32", "etc/ssl/certs", "etc/ssl/private",
		"etc/python3.11", "etc/python3", "etc/alternatives", "run/resolve", "root/.ssh", "home/u", "opt"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"usr/share/zoneinfo/Etc/UTC", "etc/passwd", "etc/shadow", "etc/gshadow", "etc/hosts",
		"etc/pip.conf", "etc/gitconfig", "etc/machine-id", "run/resolve/stub-resolv.conf", "etc/ssl/private/key.pem"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"bin":               "usr/bin",
		"lib":               "usr/lib", // dangling in the sandbox too: /usr/lib is not there; still a link
		"etc/localtime":     "/usr/share/zoneinfo/Etc/UTC",
		"etc/resolv.conf":   "../run/resolve/stub-resolv.conf",
		"etc/mtab":          "/proc/mounts",
		"etc/os-release":    "../usr/lib/os-release",
		"etc/nsswitch.conf": "/nowhere/nsswitch.conf",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	got := systemArgs(root)
	r := func(p string) string { return root + p }
	want := []string{
		"--ro-bind", r("/usr"), "/usr",
		"--symlink", "usr/bin", "/bin",
		"--symlink", "usr/lib", "/lib",
		"--ro-bind", r("/lib32"), "/lib32",
		"--ro-bind", r("/etc/passwd"), "/etc/passwd",
		"--ro-bind", r("/etc/hosts"), "/etc/hosts",
		// Its target is under /run, which the sandbox does not show.
		"--ro-bind", r("/etc/resolv.conf"), "/etc/resolv.conf",
		"--ro-bind", r("/etc/ssl/certs"), "/etc/ssl/certs",
		"--symlink", "/usr/share/zoneinfo/Etc/UTC", "/etc/localtime",
		"--symlink", "../usr/lib/os-release", "/etc/os-release",
		"--ro-bind", r("/etc/alternatives"), "/etc/alternatives",
		"--symlink", "/proc/mounts", "/etc/mtab",
		"--ro-bind", r("/etc/python3"), "/etc/python3",
		"--ro-bind", r("/etc/python3.11"), "/etc/python3.11",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("systemArgs (-want +got):\n%s", diff)
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
