package sandbox

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperEnv, when set, makes the test binary act as a helper program
// instead of running tests: see helperMain.
const helperEnv = "PATCHBENCH_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helperMain runs a helper command:
//
//	connect ADDR   connect to a TCP address: exit 0 if it worked, 3 if not
func helperMain(args []string) int {
	if len(args) == 2 && args[0] == "connect" {
		c, err := net.DialTimeout("tcp", args[1], 5*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, "connect:", err)
			return 3
		}
		c.Close()
		fmt.Println("connected")
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper command", args)
	return 2
}

// copyHelper copies the test binary into dir, where a sandbox can run it
// (the test binary itself lives under /tmp, which the sandbox replaces).
func copyHelper(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := filepath.Join(dir, "helper")
	dst, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// loopbackListener listens on the host's loopback and accepts (and closes)
// connections until the test ends.
func loopbackListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}

// requireBwrap returns the bubblewrap runner. It skips the test only when
// bubblewrap is not installed; installed but not working is a failure.
func requireBwrap(t testing.TB) *Bwrap {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed (apt-get install bubblewrap); skipping sandbox isolation test")
	}
	b, err := NewBwrap(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runners returns the runners to test: the plain one, and bubblewrap when
// installed.
func runners(t *testing.T) []Runner {
	rs := []Runner{Plain{}}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Log("bubblewrap is not installed: testing the plain runner only")
		return rs
	}
	return append(rs, requireBwrap(t))
}

// marker returns a sleep argument unique to this test run, to find the
// processes it names in /proc.
func marker() string {
	return fmt.Sprintf("%d.%06d", 50000+rand.IntN(10000), rand.IntN(1000000))
}

// processesWith returns the pids of live (not zombie) processes whose
// command line contains arg as one argument.
func processesWith(arg string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil {
			continue
		}
		found := false
		for _, a := range strings.Split(string(cmdline), "\x00") {
			if a == arg {
				found = true
			}
		}
		if found && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return true // gone
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// waitGone waits until no live process has arg on its command line. Killed
// processes take a moment to exit; the wait is generous and only bounds a
// failing test.
func waitGone(t *testing.T, arg string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids := processesWith(arg)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes with %q still alive: %v", arg, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFile waits until p exists.
func waitFile(t *testing.T, p string, done <-chan struct{}) {
	t.Helper()
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("command ended before it created %s", p)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
