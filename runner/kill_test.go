package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The kill test runs this test binary again as a helper process that runs
// the runner; the environment variable selects the helper's behaviour.
const helperEnv = "RUNNER_TEST_KILL_HELPER"

const (
	killCases   = 30
	killWorkers = 2
	killBlockAt = 10 // in the first process, cases from this index on hang
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode == "hold" {
		if err := holdHelper(os.Getenv("RUNNER_TEST_OUT")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
	} else if mode != "" {
		if err := killHelper(mode, os.Getenv("RUNNER_TEST_OUT"), os.Getenv("RUNNER_TEST_CALLS")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// killHelper runs killCases cases into out with resume, logging each call
// to the calls file. In mode "first" the cases from killBlockAt on hang
// until the process is killed.
func killHelper(mode, out, calls string) error {
	log, err := os.OpenFile(calls, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	fn := func(ctx context.Context, c Case) (Result, error) {
		if _, err := fmt.Fprintf(log, "%s %s\n", mode, c.Key); err != nil {
			return nil, err
		}
		if mode == "first" && c.Data.(int) >= killBlockAt {
			// Hang until killed. The timer keeps the runtime from taking
			// the hang for a deadlock; it never fires in practice.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Hour):
				return nil, errors.New("helper was not killed")
			}
		}
		return row{Task: "apply", Score: 1, Tokens: 3}, nil
	}
	_, err = Run(context.Background(), makeCases(killCases), fn, Options{Out: out, Workers: killWorkers, Resume: true})
	return err
}

func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "results.jsonl")
	calls := filepath.Join(dir, "calls.log")
	helper := func(mode string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+mode, "RUNNER_TEST_OUT="+out, "RUNNER_TEST_CALLS="+calls)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		return cmd, &stderr
	}

	// First process: the first killBlockAt cases finish, then every worker
	// hangs. Wait until their rows are on disk, then SIGKILL it.
	first, stderr := helper("first")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	for {
		if n := countWholeLines(t, out); n >= killBlockAt {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("helper exited before it was killed: %v\n%s", err, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if n := countWholeLines(t, out); n != killBlockAt {
		t.Fatalf("killed run left %d rows, want %d", n, killBlockAt)
	}
	// Make the kill look like it hit a write in progress.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"key":"k010","id":"inst10","ta`)
	f.Close()

	// Second process: resume and finish.
	second, stderr := helper("second")
	if err := second.Run(); err != nil {
		t.Fatalf("resumed helper: %v\n%s", err, stderr)
	}

	assertEachOnce(t, out, keysOf(makeCases(killCases)))
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	// The resumed process runs exactly the cases without a row: those that
	// hung, the one whose row was cut short, and those never started.
	var ranSecond []string
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if key, ok := strings.CutPrefix(line, "second "); ok {
			ranSecond = append(ranSecond, key)
		}
	}
	slices.Sort(ranSecond)
	if diff := cmp.Diff(keysOf(makeCases(killCases)[killBlockAt:]), ranSecond); diff != "" {
		t.Errorf("cases run after the kill (-want +got):\n%s", diff)
	}
}

// countWholeLines returns the number of newline-terminated lines in path,
// 0 when it does not exist yet.
func countWholeLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}
