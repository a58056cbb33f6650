package cli

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHoldSignals runs itself as a child process: a SIGTERM that comes
// while the writes are held waits for them, then ends the process; once
// released, no signal is left ignored (children would inherit that).
func TestHoldSignals(t *testing.T) {
	switch os.Getenv("PATCHBENCH_HOLDSIGNALS_CHILD") {
	case "signal":
		done, _ := holdSignals()
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond) // the signal has arrived; the writes go on
		fmt.Println("written")
		done()
		time.Sleep(10 * time.Second)
		fmt.Println("survived")
		os.Exit(0)
	case "none":
		done, _ := holdSignals()
		done()
		b, _ := os.ReadFile("/proc/self/status")
		fmt.Println(regexp.MustCompile(`(?m)^SigIgn:\s*(\S+)$`).FindStringSubmatch(string(b))[1])
		os.Exit(0)
	}
	run := func(mode string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHoldSignals$")
		cmd.Env = append(os.Environ(), "PATCHBENCH_HOLDSIGNALS_CHILD="+mode)
		out, err := cmd.Output()
		return string(out), err
	}
	out, err := run("signal")
	ee, ok := err.(*exec.ExitError)
	if !ok || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM || out != "written\n" {
		t.Errorf("SIGTERM during the writes: output %q, %v; want the writes finished, then the end by SIGTERM", out, err)
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	out, err = run("none")
	ign, perr := strconv.ParseUint(strings.TrimSpace(out), 16, 64)
	if err != nil || perr != nil || ign&(1<<(syscall.SIGTERM-1)|1<<(syscall.SIGINT-1)) != 0 {
		t.Errorf("after the writes: SigIgn %q (%v, %v); want SIGINT and SIGTERM not ignored", out, err, perr)
	}
}
