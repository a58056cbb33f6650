package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEndingExit(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	boom := errors.New("boom")
	failed := errors.New("2 of 4 cases failed")
	for _, c := range []struct {
		name string
		ctx  context.Context
		e    Ending
		code int
		msg  string
	}{
		{"ran to its end", bg, Ending{Started: true}, ExitOK, ""},
		{"nil failures skipped", bg, Ending{Started: true, Failures: []error{nil, nil}}, ExitOK, ""},
		{"first failure told", bg, Ending{Started: true, Failures: []error{nil, failed, boom}}, ExitFailed, failed.Error()},
		{"error before the start is the input's", bg, Ending{Err: boom}, ExitUsage, "boom"},
		{"typed: an untyped error before the start is the run's", bg, Ending{Err: boom, Typed: true}, ExitFailed, "boom"},
		{"typed input error", bg, Ending{Err: fmt.Errorf("x: %w", ErrInput), Typed: true}, ExitUsage, "x: input error"},
		{"run directory error after the start", bg, Ending{Err: dirErrorf("held"), Started: true}, ExitUsage, "held"},
		{"dry run", bg, Ending{Err: boom, DryRun: true, Started: true}, ExitUsage, "boom"},
		{"error after the start", bg, Ending{Err: boom, Started: true}, ExitFailed, "boom"},
		{"interrupted before the start", cancelled, Ending{Err: boom}, ExitFailed, "boom; continue with --resume"},
		{"cancelled error", bg, Ending{Err: fmt.Errorf("runner: interrupted: %w", context.Canceled), Started: true}, ExitFailed,
			"runner: interrupted: context canceled; continue with --resume"},
		{"fail-fast", bg, Ending{Err: fmt.Errorf("stopped: %w", ErrFailFast)}, ExitFailed, "stopped: too many failed cases; continue with --resume"},
		{"error wins over failures", bg, Ending{Err: boom, Started: true, Failures: []error{failed}}, ExitFailed, "boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, err := c.e.Exit(c.ctx)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if code != c.code || msg != c.msg {
				t.Errorf("Exit = %d, %q; want %d, %q", code, msg, c.code, c.msg)
			}
			if c.e.Err != nil && !errors.Is(err, c.e.Err) {
				t.Errorf("Exit's error does not wrap the run's")
			}
		})
	}
}

func TestFailedRows(t *testing.T) {
	if err := FailedRows(0, 4, "cases"); err != nil {
		t.Errorf("FailedRows(0) = %v, want nil", err)
	}
	want := "2 of 4 cases failed; run again with --resume --retry-failed"
	if err := FailedRows(2, 4, "cases"); err == nil || err.Error() != want {
		t.Errorf("FailedRows(2, 4) = %v, want %q", err, want)
	}
}

// TestSessionLifecycle follows a run directory through two sessions: the
// first records a run; a second without --resume or --force is refused;
// one with --force keeps run.json's place and clears the results only when
// it records; a resume of other inputs is refused, one that moved a path
// it may change is not.
func TestSessionLifecycle(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	opts := SessionOptions{Out: out, Command: "test", ResultsFile: "results.jsonl"}
	type info struct {
		Dataset string `json:"dataset"`
		Model   string `json:"model"`
	}

	s := NewSession(opts)
	if err := s.Check(); err != nil {
		t.Fatalf("Check of a missing directory: %v", err)
	}
	var ro Options
	if err := s.Open(&ro); err != nil {
		t.Fatal(err)
	}
	if ro.Out != filepath.Join(out, "results.jsonl") || ro.Dir == nil || ro.Dir != s.Dir() {
		t.Fatalf("Open set Out %q, Dir %v", ro.Out, ro.Dir)
	}
	if err := s.Record(info{"a.jsonl", "m"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ro.Out, []byte(`{"key":"k"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Held: another session is refused naming the holder.
	if err := NewSession(opts).Open(&Options{}); !errors.Is(err, ErrRunDir) {
		t.Errorf("Open of a held directory = %v, want ErrRunDir", err)
	}
	s.Close()
	s.Close() // twice is fine

	if err := NewSession(opts).Check(); !errors.Is(err, ErrRunDir) {
		t.Errorf("Check of a run with rows, no --resume or --force = %v, want ErrRunDir", err)
	}

	force := opts
	force.Force = true
	f := NewSession(force)
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	if err := f.Open(&Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Results()); err != nil {
		t.Errorf("--force removed the results before the run was recorded: %v", err)
	}
	if err := f.Record(info{"b.jsonl", "m2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Results()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--force kept the results once the run was recorded: %v", err)
	}
	f.Close()

	resume := opts
	resume.Resume = true
	if err := NewSession(resume).Record(info{"b.jsonl", "other"}); !errors.Is(err, ErrRunDir) {
		t.Errorf("resume with another model = %v, want ErrRunDir", err)
	}
	resume.MayChange = []string{"dataset"}
	if err := NewSession(resume).Record(info{"moved/b.jsonl", "m2"}); err != nil {
		t.Errorf("resume with a moved dataset: %v", err)
	}
	got, err := ReadRunInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"dataset": "moved/b.jsonl", "model": "m2"}, got); diff != "" {
		t.Errorf("run.json (-want +got):\n%s", diff)
	}
}

// TestSessionDryRun: a dry run takes, records and removes nothing, even
// with --force.
func TestSessionDryRun(t *testing.T) {
	out := t.TempDir()
	results := filepath.Join(out, "results.jsonl")
	if err := os.WriteFile(results, []byte(`{"key":"k"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSession(SessionOptions{Out: out, ResultsFile: "results.jsonl", Force: true, DryRun: true})
	var ro Options
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(&ro); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if ro.Dir != nil || ro.Out != results {
		t.Errorf("dry run Open: Dir %v, Out %q", ro.Dir, ro.Out)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 || ents[0].Name() != "results.jsonl" {
		t.Errorf("dry run left %v, want results.jsonl alone", ents)
	}
}
