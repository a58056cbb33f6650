package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// row is the result the tests' case functions return.
type row struct {
	Task   string  `json:"task"`
	Score  float64 `json:"score"`
	Tokens int64   `json:"tokens"`
}

func (r row) Usage() Usage { return Usage{Tokens: r.Tokens, Cost: 0.5} }

func makeCases(n int) []Case {
	cases := make([]Case, n)
	for i := range cases {
		cases[i] = Case{ID: fmt.Sprintf("inst%d", i), Key: fmt.Sprintf("k%03d", i), Data: i}
	}
	return cases
}

func keysOf(cases []Case) []string {
	keys := make([]string, len(cases))
	for i, c := range cases {
		keys[i] = c.Key
	}
	return keys
}

// succeed is a case function that scores every case.
func succeed(_ context.Context, c Case) (Result, error) {
	return row{Task: "apply", Score: float64(c.Data.(int)), Tokens: 10}, nil
}

// fileLines returns the lines of path, each of which must be a JSON object.
func fileLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("%s does not end with a newline", path)
	}
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for i := 1; sc.Scan(); i++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s line %d: %v: %q", path, i, err, sc.Text())
		}
		rows = append(rows, m)
	}
	return rows
}

// fileKeys returns the key of each line of path, in order.
func fileKeys(t *testing.T, path string) []string {
	t.Helper()
	var keys []string
	for _, r := range fileLines(t, path) {
		keys = append(keys, r["key"].(string))
	}
	return keys
}

// assertEachOnce checks that the keys in path are exactly want, each once.
func assertEachOnce(t *testing.T, path string, want []string) {
	t.Helper()
	got := fileKeys(t, path)
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys in %s (-want +got):\n%s", filepath.Base(path), diff)
	}
}

func TestRunWritesRows(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run", "results.jsonl")
	cases := makeCases(10)
	fn := func(ctx context.Context, c Case) (Result, error) {
		if c.Data.(int) == 3 {
			return row{Task: "apply", Tokens: 4}, errors.New("model said no")
		}
		return succeed(ctx, c)
	}
	s, err := Run(t.Context(), cases, fn, Options{Out: out, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Selected: 10, Planned: 10, Done: 10, Failed: 1, Tokens: 94, Cost: 5}
	if diff := cmp.Diff(want, s, cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".Elapsed"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	rows := fileLines(t, out)
	if len(rows) != 10 {
		t.Fatalf("got %d rows, want 10", len(rows))
	}
	for _, r := range rows {
		for _, f := range []string{"key", "id", "task", "score", "tokens", "failed", "elapsed_ms"} {
			if _, ok := r[f]; !ok {
				t.Errorf("row %v has no field %q", r, f)
			}
		}
		if r["key"] == "k003" {
			if r["failed"] != true || r["error"] != "model said no" || r["task"] != "apply" {
				t.Errorf("failed row = %v, want failed with error and the result's fields", r)
			}
		} else if r["failed"] != false || r["error"] != nil {
			t.Errorf("row = %v, want not failed and no error", r)
		}
	}
	// The runner's fields come first and last, the result's in between,
	// in the order encoding/json gives them.
	raw, _ := os.ReadFile(out)
	first := strings.SplitN(string(raw), "\n", 2)[0]
	if !strings.HasPrefix(first, `{"key":"k00`) || !strings.Contains(first, `,"task":"apply","score":`) {
		t.Errorf("first line %s: unexpected layout", first)
	}
}

func TestResumeAfterCancel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	cases := makeCases(20)
	var mu sync.Mutex
	finished := map[string]int{}
	record := func(key string) {
		mu.Lock()
		finished[key]++
		mu.Unlock()
	}

	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int32
	first := func(ctx context.Context, c Case) (Result, error) {
		switch k := n.Add(1); {
		case k == 7:
			cancel() // the 7th case still finishes and is recorded
		case k > 7:
			<-ctx.Done()
			return nil, ctx.Err()
		}
		record(c.Key)
		return succeed(ctx, c)
	}
	s, err := Run(ctx, cases, first, Options{Out: out, Workers: 3, Resume: true})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: err = %v, want context.Canceled", err)
	}
	if s.Done != 7 || s.Remaining() != 13 {
		t.Errorf("first run: done %d, remaining %d; want 7, 13", s.Done, s.Remaining())
	}
	if got := len(fileKeys(t, out)); got != 7 {
		t.Errorf("first run left %d rows, want 7", got)
	}

	second := func(ctx context.Context, c Case) (Result, error) {
		record(c.Key)
		return succeed(ctx, c)
	}
	s, err = Run(t.Context(), cases, second, Options{Out: out, Workers: 3, Resume: true})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if s.Skipped != 7 || s.Done != 13 {
		t.Errorf("second run: skipped %d, done %d; want 7, 13", s.Skipped, s.Done)
	}
	for _, k := range keysOf(cases) {
		if finished[k] != 1 {
			t.Errorf("case %s finished %d times, want 1", k, finished[k])
		}
	}
	assertEachOnce(t, out, keysOf(cases))
}

func TestResumeTruncatedLastLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	cases := makeCases(6)
	var ran []string
	fn := func(ctx context.Context, c Case) (Result, error) {
		ran = append(ran, c.Key) // one worker: no race
		return succeed(ctx, c)
	}
	if _, err := Run(t.Context(), cases[:3], fn, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of writing k003's row.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"key":"k003","id":"inst3","task":"app`)
	f.Close()

	if rows, err := ReadRows(out); err != nil || len(rows) != 3 {
		t.Fatalf("ReadRows before resume: %d rows, %v; want 3, nil", len(rows), err)
	}
	ran = nil
	s, err := Run(t.Context(), cases, fn, Options{Out: out, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"k003", "k004", "k005"}, ran); diff != "" {
		t.Errorf("resumed cases (-want +got):\n%s", diff)
	}
	if s.Skipped != 3 {
		t.Errorf("skipped %d, want 3", s.Skipped)
	}
	assertEachOnce(t, out, keysOf(cases))
}

func TestResumeMissingNewline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	// The last row is whole; only its newline was lost.
	os.WriteFile(out, []byte("{\"key\":\"k000\",\"failed\":false}\n{\"key\":\"k001\",\"failed\":false}"), 0o644)
	var ran []string
	fn := func(ctx context.Context, c Case) (Result, error) {
		ran = append(ran, c.Key)
		return succeed(ctx, c)
	}
	if _, err := Run(t.Context(), makeCases(3), fn, Options{Out: out, Resume: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"k002"}, ran); diff != "" {
		t.Errorf("resumed cases (-want +got):\n%s", diff)
	}
	assertEachOnce(t, out, []string{"k000", "k001", "k002"})
}

func TestResumeCorruptLine(t *testing.T) {
	tests := map[string]string{
		"bad json": "{\"key\":\"k000\"}\n{\"key\":\n{\"key\":\"k002\"}\n",
		"no key":   "{\"key\":\"k000\"}\n{\"id\":\"x\"}\n",
		"not obj":  "{\"key\":\"k000\"}\n[1,2]\n",
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "results.jsonl")
			os.WriteFile(out, []byte(content), 0o644)
			_, err := Run(t.Context(), makeCases(3), succeed, Options{Out: out, Resume: true})
			if err == nil || !strings.Contains(err.Error(), "results.jsonl line 2: ") {
				t.Errorf("err = %v, want one naming results.jsonl line 2", err)
			}
			if got, _ := os.ReadFile(out); string(got) != content {
				t.Errorf("file changed to %q", got)
			}
		})
	}
}

func TestExistingFileWithoutResume(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	os.WriteFile(out, []byte("{\"key\":\"k000\"}\n"), 0o644)
	_, err := Run(t.Context(), makeCases(2), succeed, Options{Out: out})
	if err == nil || !strings.Contains(err.Error(), "already holds results") {
		t.Errorf("err = %v, want an already-holds-results error", err)
	}
}

func TestRetryFailed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	cases := makeCases(6)
	odd := func(ctx context.Context, c Case) (Result, error) {
		if c.Data.(int)%2 == 1 {
			return nil, errors.New("flaky")
		}
		return succeed(ctx, c)
	}
	if s, err := Run(t.Context(), cases, odd, Options{Out: out, Workers: 2}); err != nil || s.Failed != 3 {
		t.Fatalf("first run: failed %d, err %v; want 3, nil", s.Failed, err)
	}
	// Plain resume keeps the failed rows.
	s, err := Run(t.Context(), cases, succeed, Options{Out: out, Resume: true})
	if err != nil || len(s.Pending) != 0 {
		t.Fatalf("plain resume: pending %d, err %v; want 0, nil", len(s.Pending), err)
	}
	var ran []string
	fn := func(ctx context.Context, c Case) (Result, error) {
		ran = append(ran, c.Key)
		return succeed(ctx, c)
	}
	if _, err := Run(t.Context(), cases, fn, Options{Out: out, Resume: true, RetryFailed: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"k001", "k003", "k005"}, ran); diff != "" {
		t.Errorf("retried cases (-want +got):\n%s", diff)
	}
	rows, err := ReadRows(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("ReadRows: %d rows, want 6", len(rows))
	}
	for _, r := range rows {
		if r["failed"] != false {
			t.Errorf("row %v: the retry's row should win", r)
		}
	}
	if got := len(fileKeys(t, out)); got != 9 {
		t.Errorf("file has %d lines, want 9 (6 + 3 retries)", got)
	}
}

func TestFailFast(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	var calls atomic.Int32
	fail := func(context.Context, Case) (Result, error) {
		calls.Add(1)
		return nil, errors.New("boom")
	}
	s, err := Run(t.Context(), makeCases(10), fail, Options{Out: out, FailFast: 3})
	if !errors.Is(err, ErrFailFast) {
		t.Fatalf("err = %v, want ErrFailFast", err)
	}
	if calls.Load() != 3 || s.Done != 3 || s.Failed != 3 {
		t.Errorf("calls %d, done %d, failed %d; want 3 each", calls.Load(), s.Done, s.Failed)
	}
	if got := len(fileKeys(t, out)); got != 3 {
		t.Errorf("%d rows written, want 3", got)
	}
}

// TestFailFastConsecutive: with FailFastConsecutive a success starts the
// count again, so 2 failures, a success and 2 failures do not stop at 3;
// the third failure in a row does.
func TestFailFastConsecutive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	// cases 0-1 fail, 2 succeeds, 3-4 fail, 5 succeeds, 6-8 fail, 9 succeeds
	failing := map[int]bool{0: true, 1: true, 3: true, 4: true, 6: true, 7: true, 8: true}
	fn := func(_ context.Context, c Case) (Result, error) {
		if failing[c.Data.(int)] {
			return nil, errors.New("boom")
		}
		return row{}, nil
	}
	s, err := Run(t.Context(), makeCases(10), fn, Options{Out: out, FailFast: 3, FailFastConsecutive: true})
	if !errors.Is(err, ErrFailFast) || !strings.Contains(err.Error(), "3 failed cases in a row") {
		t.Fatalf("err = %v, want ErrFailFast after 3 in a row", err)
	}
	if s.Done != 9 || s.Failed != 7 {
		t.Errorf("done %d, failed %d; want 9 and 7 (stopped at the third failure in a row)", s.Done, s.Failed)
	}
	// Counted in all, the same cases stop at the third failure (case 3).
	out2 := filepath.Join(t.TempDir(), "results.jsonl")
	s, err = Run(t.Context(), makeCases(10), fn, Options{Out: out2, FailFast: 3})
	if !errors.Is(err, ErrFailFast) || s.Done != 4 {
		t.Errorf("FailFast 3 in all: done %d, err %v; want 4 and ErrFailFast", s.Done, err)
	}
}

// incompleteRow is a result that did not complete (relace-mcp's partial
// case: the model ended without its answer).
type incompleteRow struct{ row }

func (incompleteRow) Incomplete() bool { return true }

// TestFailFastIncomplete: with FailFastConsecutive an incomplete result
// counts in the failures in a row, as relace-mcp's --fail-fast counts a
// case that did not complete, without being a failed row; counted in all
// (FailFast alone) it is not a failure.
func TestFailFastIncomplete(t *testing.T) {
	// cases 0 fails, 1-2 are incomplete, 3 succeeds ...
	fn := func(_ context.Context, c Case) (Result, error) {
		switch c.Data.(int) {
		case 0:
			return nil, errors.New("boom")
		case 1, 2:
			return incompleteRow{}, nil
		}
		return row{}, nil
	}
	out := filepath.Join(t.TempDir(), "results.jsonl")
	s, err := Run(t.Context(), makeCases(10), fn, Options{Out: out, FailFast: 3, FailFastConsecutive: true})
	if !errors.Is(err, ErrFailFast) || s.Done != 3 || s.Failed != 1 {
		t.Errorf("in a row: done %d, failed %d, err %v; want 3, 1 and ErrFailFast", s.Done, s.Failed, err)
	}
	out2 := filepath.Join(t.TempDir(), "results.jsonl")
	s, err = Run(t.Context(), makeCases(10), fn, Options{Out: out2, FailFast: 2})
	if err != nil || s.Done != 10 || s.Failed != 1 {
		t.Errorf("in all: done %d, failed %d, err %v; want 10, 1 and no error", s.Done, s.Failed, err)
	}
}

func TestFailFastWorkers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	const workers, limit = 4, 3
	var calls atomic.Int32
	fail := func(context.Context, Case) (Result, error) {
		calls.Add(1)
		return nil, errors.New("boom")
	}
	s, err := Run(t.Context(), makeCases(50), fail, Options{Out: out, FailFast: limit, Workers: workers})
	if !errors.Is(err, ErrFailFast) {
		t.Fatalf("err = %v, want ErrFailFast", err)
	}
	// Before the limit is seen at most limit-1 failures are counted, and at
	// most one case per worker is running.
	if c := int(calls.Load()); c < limit || c > limit-1+workers {
		t.Errorf("%d cases started, want %d to %d", c, limit, limit-1+workers)
	}
	if s.Done != int(calls.Load()) {
		t.Errorf("done %d, want every started case (%d) recorded", s.Done, calls.Load())
	}
}

func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results.jsonl")
	never := func(context.Context, Case) (Result, error) {
		t.Error("dry run ran a case")
		return nil, nil
	}
	var list bytes.Buffer
	s, err := Run(t.Context(), makeCases(3), never, Options{Out: out, DryRun: true, Progress: Progress{Writer: &list}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "inst0\tk000\ninst1\tk001\ninst2\tk002\n"; list.String() != want {
		t.Errorf("dry-run list = %q, want %q", list.String(), want)
	}
	if s.Done != 0 || len(s.Pending) != 3 {
		t.Errorf("done %d, pending %d; want 0, 3", s.Done, len(s.Pending))
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run created %s", out)
	}

	// With Resume it lists what is left and leaves a cut-short line alone.
	content := "{\"key\":\"k001\"}\n{\"key\":\"k0"
	os.WriteFile(out, []byte(content), 0o644)
	list.Reset()
	s, err = Run(t.Context(), makeCases(3), never, Options{Out: out, DryRun: true, Resume: true, Progress: Progress{Writer: &list}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "inst0\tk000\ninst2\tk002\n"; list.String() != want || s.Skipped != 1 {
		t.Errorf("dry-run list = %q, skipped %d; want %q, 1", list.String(), s.Skipped, want)
	}
	if got, _ := os.ReadFile(out); string(got) != content {
		t.Errorf("dry run changed the results file to %q", got)
	}
}

func TestShardPartition(t *testing.T) {
	cases := makeCases(1000)
	for n := 1; n <= 7; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			s, err := Plan(cases, Options{Shard: Shard{Index: i, Count: n}})
			if err != nil {
				t.Fatal(err)
			}
			if n > 1 && (len(s.Pending) == 0 || len(s.Pending) == len(cases)) {
				t.Errorf("shard %d/%d holds %d of %d cases", i, n, len(s.Pending), len(cases))
			}
			for _, c := range s.Pending {
				seen[c.Key]++
			}
		}
		for _, c := range cases {
			if seen[c.Key] != 1 {
				t.Errorf("n=%d: key %s in %d shards, want 1", n, c.Key, seen[c.Key])
			}
		}
	}
}

func TestShardPinned(t *testing.T) {
	// The shard of a key is part of the contract: the first 8 bytes of
	// SHA-256(key) mod n, plus 1 (checked against Python's hashlib).
	s, err := Plan(makeCases(6), Options{Shard: Shard{Index: 2, Count: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"k000", "k002", "k003"}, keysOf(s.Pending)); diff != "" {
		t.Errorf("shard 2/3 of k000..k005 (-want +got):\n%s", diff)
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr bool
	}{
		{"", Shard{}, false},
		{"1/1", Shard{1, 1}, false},
		{"2/4", Shard{2, 4}, false},
		{"4/4", Shard{4, 4}, false},
		{"0/4", Shard{}, true},
		{"5/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"2", Shard{}, true},
		{"a/b", Shard{}, true},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("ParseShard(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestShuffleDeterminism(t *testing.T) {
	cases := makeCases(100)
	plan := func(cs []Case, seed int64) []string {
		s, err := Plan(cs, Options{Shuffle: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return keysOf(s.Pending)
	}
	a := plan(cases, 1)
	if diff := cmp.Diff(a, plan(cases, 1)); diff != "" {
		t.Errorf("same seed, different order:\n%s", diff)
	}
	reversed := slices.Clone(cases)
	slices.Reverse(reversed)
	if diff := cmp.Diff(a, plan(reversed, 1)); diff != "" {
		t.Errorf("order depends on the input order:\n%s", diff)
	}
	if slices.Equal(a, keysOf(cases)) {
		t.Error("shuffle kept the input order")
	}
	if slices.Equal(a, plan(cases, 2)) {
		t.Error("seeds 1 and 2 give the same order")
	}
	if diff := cmp.Diff(keysOf(cases), slices.Sorted(slices.Values(a))); diff != "" {
		t.Errorf("shuffle lost or added cases:\n%s", diff)
	}
	// The order is part of the contract (runs must be reproducible across
	// Go versions); this pins it.
	got := plan(makeCases(6), 42)
	want := pinnedShuffle
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shuffle of k000..k005 with seed 42 changed (-want +got):\n%s", diff)
	}
}

// pinnedShuffle is the order of k000..k005 with seed 42.
var pinnedShuffle = []string{"k002", "k001", "k000", "k003", "k005", "k004"}

func TestLimitComesBeforeResume(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	cases := makeCases(10)
	opts := Options{Out: out, Limit: 5, Shuffle: true, Seed: 7}
	if _, err := Run(t.Context(), cases, succeed, opts); err != nil {
		t.Fatal(err)
	}
	first := fileKeys(t, out)
	opts.Resume = true
	s, err := Run(t.Context(), cases, succeed, opts)
	if err != nil || s.Skipped != 5 || len(s.Pending) != 0 {
		t.Fatalf("resume with the same limit: skipped %d, pending %d, err %v; want 5, 0, nil", s.Skipped, len(s.Pending), err)
	}
	opts.Limit = 7
	s, err = Run(t.Context(), cases, succeed, opts)
	if err != nil || s.Skipped != 5 || s.Done != 2 {
		t.Fatalf("resume with a larger limit: skipped %d, done %d, err %v; want 5, 2, nil", s.Skipped, s.Done, err)
	}
	if diff := cmp.Diff(first, fileKeys(t, out)[:5]); diff != "" {
		t.Errorf("rows of the first run changed:\n%s", diff)
	}
}

func TestWorkersRunInParallel(t *testing.T) {
	const workers = 4
	arrived := make(chan struct{})
	release := make(chan struct{})
	go func() {
		for range workers {
			<-arrived
		}
		close(release)
	}()
	// Each of the first four cases waits until all four are running: a
	// runner that ran them one at a time would never finish.
	fn := func(ctx context.Context, c Case) (Result, error) {
		if c.Data.(int) < workers {
			arrived <- struct{}{}
			<-release
		}
		return succeed(ctx, c)
	}
	out := filepath.Join(t.TempDir(), "results.jsonl")
	s, err := Run(t.Context(), makeCases(10), fn, Options{Out: out, Workers: workers})
	if err != nil || s.Done != 10 {
		t.Fatalf("done %d, err %v; want 10, nil", s.Done, err)
	}
}

func TestPerCaseTimeout(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	var sawDeadline atomic.Bool
	fn := func(ctx context.Context, c Case) (Result, error) {
		if c.Data.(int) == 1 {
			<-ctx.Done()
			sawDeadline.Store(errors.Is(ctx.Err(), context.DeadlineExceeded))
			return row{Task: "slow"}, ctx.Err()
		}
		return succeed(ctx, c)
	}
	s, err := Run(t.Context(), makeCases(3), fn, Options{Out: out, PerCaseTimeout: time.Millisecond, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !sawDeadline.Load() {
		t.Error("the case's context was not cancelled by its deadline")
	}
	if s.Done != 3 || s.Failed != 1 {
		t.Errorf("done %d, failed %d; want 3, 1", s.Done, s.Failed)
	}
	for _, r := range fileLines(t, out) {
		if r["key"] != "k001" {
			continue
		}
		if r["failed"] != true || !strings.HasPrefix(r["error"].(string), "timed out after 1ms: context deadline exceeded") || r["task"] != "slow" {
			t.Errorf("timed-out row = %v", r)
		}
	}
}

func TestPanicIsRecorded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	fn := func(ctx context.Context, c Case) (Result, error) {
		if c.Data.(int) == 0 {
			panic("scorer bug")
		}
		return succeed(ctx, c)
	}
	s, err := Run(t.Context(), makeCases(2), fn, Options{Out: out})
	if err != nil || s.Failed != 1 {
		t.Fatalf("failed %d, err %v; want 1, nil", s.Failed, err)
	}
	rows, _ := ReadRows(out)
	if e, _ := rows[0]["error"].(string); !strings.HasPrefix(e, "panic: scorer bug\n") {
		t.Errorf("error = %q, want the panic and its stack", e)
	}
}

type mapResult map[string]any

func (mapResult) Usage() Usage { return Usage{} }

type intResult int

func (intResult) Usage() Usage { return Usage{} }

func TestBadResultsStopTheRun(t *testing.T) {
	tests := []struct {
		name    string
		res     Result
		wantErr string
	}{
		{"reserved field", mapResult{"key": "x"}, `case "k000": result runner.mapResult uses the reserved field "key"`},
		{"not an object", intResult(3), `case "k000": result runner.intResult is not a JSON object`},
		{"nan", row{Score: math.NaN()}, `case "k000": encoding the result: json: unsupported value: NaN`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "results.jsonl")
			fn := func(context.Context, Case) (Result, error) { return tt.res, nil }
			_, err := Run(t.Context(), makeCases(5), fn, Options{Out: out})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if got := fileKeys(t, out); len(got) != 0 {
				t.Errorf("rows written: %v", got)
			}
		})
	}
}

func TestMapResultAndNil(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	fn := func(_ context.Context, c Case) (Result, error) {
		if c.Data.(int) == 0 {
			return nil, nil
		}
		return mapResult{"lang": "go", "<html>": "a&b"}, nil
	}
	if _, err := Run(t.Context(), makeCases(2), fn, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if !strings.HasPrefix(lines[0], `{"key":"k000","id":"inst0","failed":false,"elapsed_ms":`) {
		t.Errorf("nil result row = %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], `{"key":"k001","id":"inst1","<html>":"a&b","lang":"go","failed":false`) {
		t.Errorf("map result row = %s", lines[1])
	}
}

func TestInvalidCases(t *testing.T) {
	tests := []struct {
		name    string
		cases   []Case
		opts    Options
		wantErr string
	}{
		{"empty key", []Case{{ID: "a"}}, Options{}, `case 0 (id "a"): empty key`},
		{"duplicate key", []Case{{Key: "a"}, {Key: "b"}, {Key: "a"}}, Options{}, `cases 0 and 2 share the key "a"`},
		{"bad utf-8", []Case{{Key: "a\xff"}}, Options{}, `not valid UTF-8`},
		{"bad shard", makeCases(1), Options{Shard: Shard{3, 2}}, `shard 3/2`},
		{"negative limit", makeCases(1), Options{Limit: -1}, `negative limit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Plan(tt.cases, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Plan: err = %v, want it to contain %q", err, tt.wantErr)
			}
			tt.opts.Out = filepath.Join(t.TempDir(), "results.jsonl")
			_, err = Run(t.Context(), tt.cases, succeed, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Run: err = %v, want it to contain %q", err, tt.wantErr)
			}
			if _, err := os.Stat(tt.opts.Out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Run with invalid input created %s", tt.opts.Out)
			}
		})
	}
}

func TestPlainProgress(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	var log bytes.Buffer
	_, err := Run(t.Context(), makeCases(10), succeed, Options{Out: out, Progress: Progress{Writer: &log, Every: 5}})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("progress lines:\n%s\nwant 3 (start, 5/10, end)", log.String())
	}
	if lines[0] != "runner: 10 cases to run" ||
		!strings.HasPrefix(lines[1], "runner: 5/10 done, 0 failed, ") ||
		!strings.HasPrefix(lines[2], "runner: finished 10/10, 0 failed, in ") ||
		!strings.HasSuffix(lines[2], ", 100 tokens, $5.0000") {
		t.Errorf("progress lines:\n%s", log.String())
	}
}

func TestBarProgress(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	var bar syncBuffer
	_, err := Run(t.Context(), makeCases(10), succeed, Options{Out: out, Workers: 2, Progress: Progress{Writer: &bar, Terminal: true}})
	if err != nil {
		t.Fatal(err)
	}
	if s := bar.String(); !strings.Contains(s, "10/10") || !strings.Contains(s, "100 tok $5.0000") {
		t.Errorf("bar output lacks the final counts:\n%q", s)
	}
	// Nothing left to run: the empty bar must not wait forever.
	s, err := Run(t.Context(), makeCases(10), succeed, Options{Out: out, Resume: true, Progress: Progress{Writer: &bar, Terminal: true}})
	if err != nil || s.Skipped != 10 {
		t.Errorf("resume of a finished run: skipped %d, err %v; want 10, nil", s.Skipped, err)
	}
	// A stopped run aborts the bar instead of waiting for it forever.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out2 := filepath.Join(t.TempDir(), "results.jsonl")
	_, err = Run(ctx, makeCases(10), succeed, Options{Out: out2, Progress: Progress{Writer: &bar, Terminal: true}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the bar's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestShardsSplitTheLimitedRun(t *testing.T) {
	// With shuffle and limit, the union of the shards is the unsharded run.
	cases := makeCases(40)
	whole, err := Plan(cases, Options{Shuffle: true, Seed: 3, Limit: 17})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range whole.Pending {
		want[c.Key] = true
	}
	for _, n := range []int{1, 3, 7} {
		got := map[string]int{}
		for i := 1; i <= n; i++ {
			s, err := Plan(cases, Options{Shuffle: true, Seed: 3, Limit: 17, Shard: Shard{i, n}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range s.Pending {
				got[c.Key]++
			}
		}
		if len(got) != len(want) {
			t.Errorf("n=%d: shards hold %d cases, the run %d", n, len(got), len(want))
		}
		for k, c := range got {
			if !want[k] || c != 1 {
				t.Errorf("n=%d: case %s in %d shards (in run: %v)", n, k, c, want[k])
			}
		}
	}
}

func TestParseShardEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexEnv {
				return v
			}
			return ""
		}
	}
	if s, err := ParseShardEnv("env/7", env("0")); err != nil || s != (Shard{1, 7}) {
		t.Errorf("env/7 with index 0 = %v, %v; want 1/7", s, err)
	}
	if s, err := ParseShardEnv("env/7", env("6")); err != nil || s != (Shard{7, 7}) {
		t.Errorf("env/7 with index 6 = %v, %v; want 7/7", s, err)
	}
	for _, v := range []string{"", "7", "x", "-1"} {
		if s, err := ParseShardEnv("env/7", env(v)); err == nil {
			t.Errorf("env/7 with index %q = %v, want an error", v, s)
		}
	}
}

// genList makes its cases when asked, as a benchmark of many cases does.
type genList struct {
	n     int
	calls int
}

func (g *genList) Len() int { return g.n }
func (g *genList) Case(i int) Case {
	g.calls++
	return Case{ID: fmt.Sprintf("inst%d", i/3), Key: fmt.Sprintf("inst%d|%d", i/3, i%3), Data: i}
}

// TestRunListMatchesRun: a CaseList plans the cases its options choose,
// computed here from their definitions (Plan, which now goes through
// PlanList, is no independent witness): limit the first cases, the shard
// the keys whose SHA-256 says so, shuffle the order of SHA-256(seed, key).
func TestRunListMatchesRun(t *testing.T) {
	g := &genList{n: 3000}
	keys := make([]string, g.n)
	for i := range keys {
		keys[i] = g.Case(i).Key
	}
	shuffled := func(seed int64) []string {
		rank := func(k string) []byte {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(seed))
			h := sha256.Sum256(append(b[:], k...))
			return h[:]
		}
		out := slices.Clone(keys)
		slices.SortFunc(out, func(a, b string) int { return bytes.Compare(rank(a), rank(b)) })
		return out
	}
	inShard := func(ks []string, sh Shard) []string {
		var out []string
		for _, k := range ks {
			h := sha256.Sum256([]byte(k))
			if int(binary.BigEndian.Uint64(h[:8])%uint64(sh.Count))+1 == sh.Index {
				out = append(out, k)
			}
		}
		return out
	}
	for _, tc := range []struct {
		opts Options
		want []string
	}{
		{Options{}, keys},
		{Options{Limit: 100}, keys[:100]},
		{Options{Shard: Shard{3, 7}}, inShard(keys, Shard{3, 7})},
		{Options{Shuffle: true, Seed: 7}, shuffled(7)},
		{Options{Shuffle: true, Seed: 3, Limit: 500, Shard: Shard{2, 3}}, inShard(shuffled(3)[:500], Shard{2, 3})},
	} {
		got, err := PlanList(g, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var gotKeys []string
		for _, c := range got.Pending {
			gotKeys = append(gotKeys, c.Key)
		}
		if !slices.Equal(gotKeys, tc.want) || got.Planned != len(tc.want) {
			t.Errorf("%+v: planned %d cases, want %d (or another order)", tc.opts, got.Planned, len(tc.want))
		}
	}
	out := filepath.Join(t.TempDir(), "results.jsonl")
	fn := func(ctx context.Context, c Case) (Result, error) { return row{Task: "apply"}, nil }
	s, err := RunList(t.Context(), g, fn, Options{Out: out, Workers: 4, Limit: 1000})
	if err != nil || s.Done != 1000 || s.Pending != nil {
		t.Fatalf("RunList: %+v, %v; want 1000 done and no Pending list", s, err)
	}
	// Resume skips what is recorded; a duplicate key is refused.
	s, err = RunList(t.Context(), g, fn, Options{Out: out, Workers: 4, Resume: true})
	if err != nil || s.Skipped != 1000 || s.Done != 2000 {
		t.Fatalf("resumed RunList: %+v, %v; want 1000 skipped, 2000 done", s, err)
	}
	dup := Cases{{ID: "a", Key: "k"}, {ID: "b", Key: "x"}, {ID: "c", Key: "k"}}
	if _, err := PlanList(dup, Options{}); err == nil || !strings.Contains(err.Error(), `cases 0 and 2 share the key "k"`) {
		t.Errorf("duplicate keys: %v", err)
	}
}
