package diffxyz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// synthRows returns n small rows, each a different edit of a 45-line file.
func synthRows(n int) []*Row {
	rows := make([]*Row, n)
	for i := range rows {
		var old, nw strings.Builder
		fmt.Fprintf(&old, "package p%d\n\n", i)
		fmt.Fprintf(&nw, "package p%d\n\n", i)
		for j := range 43 {
			line := fmt.Sprintf("var v%d = %d\n", j, j*i)
			old.WriteString(line)
			switch {
			case j == i%40:
				fmt.Fprintf(&nw, "var v%d = %d // changed\n", j, j*i+1)
			case j == 41 && i%2 == 0:
				nw.WriteString(line + "var extra = true\n")
			default:
				nw.WriteString(line)
			}
		}
		rows[i] = &Row{ID: fmt.Sprintf("row%03d", i), Path: fmt.Sprintf("p%d/f.go", i), Lang: "go", OldCode: old.String(), NewCode: nw.String()}
	}
	return rows
}

// answerBook maps the user message of every case to its reference answer,
// so that a fake server can answer correctly.
func answerBook(t testing.TB, cases []Case) func(model, system string, msgs []llm.Message) string {
	t.Helper()
	p, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	book := map[string]string{}
	for _, c := range cases {
		_, user, err := p.Render(c)
		if err != nil {
			t.Fatal(err)
		}
		book[user] = c.Reference()
	}
	return func(model, system string, msgs []llm.Message) string {
		if a, ok := book[msgs[len(msgs)-1].Content]; ok {
			return a
		}
		return "unknown question"
	}
}

// keyCounts returns the number of rows of each key in a results file.
func keyCounts(t testing.TB, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r struct{ Key string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		counts[r.Key]++
	}
	return counts
}

// checkAllPerfect checks that the results file holds each case exactly
// once, unfailed, with em 1.
func checkAllPerfect(t *testing.T, out string, cases []Case) []map[string]any {
	t.Helper()
	counts := keyCounts(t, filepath.Join(out, ResultsFile))
	for _, c := range cases {
		if counts[c.Key()] != 1 {
			t.Errorf("%s: %d rows, want 1", c.Key(), counts[c.Key()])
		}
	}
	if len(counts) != len(cases) {
		t.Errorf("%d keys in the results, want %d", len(counts), len(cases))
	}
	rows, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r["failed"] != false || r["em"] != 1.0 {
			t.Errorf("%s: failed %v (%v), em %v", r["key"], r["failed"], r["error"], r["em"])
		}
	}
	return rows
}

// fastRetry retries at once, so that fault tests spend their time on the
// server's Retry-After only.
var fastRetry = llm.RetryPolicy{MaxAttempts: 10, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}

func TestFaultsThenSuccess(t *testing.T) {
	faults := []llmtest.Fault{
		{Status: http.StatusTooManyRequests, RetryAfter: "1"},
		{Status: http.StatusInternalServerError},
		{Delay: 30 * time.Second}, // beyond the attempt timeout
		{Truncate: true},
		{Status: http.StatusServiceUnavailable, RetryAfterMS: 50},
		{Drop: true},
	}
	for _, model := range []string{"openai/gpt-test", "anthropic/claude-test"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			rows := synthRows(4)
			tasks, formats := Tasks, []patch.Format{patch.UDiff, patch.SearchReplace}
			if err := Prepare(rows); err != nil {
				t.Fatal(err)
			}
			cases := Cases(rows, tasks, formats, []string{WithFormat})
			srv := llmtest.NewServer(llmtest.Config{Faults: faults, Reply: answerBook(t, cases), APIKey: "test-key"})
			defer srv.Close()
			base := srv.OpenAIBaseURL()
			if strings.HasPrefix(model, "anthropic/") {
				base = srv.AnthropicBaseURL()
			}
			out := t.TempDir()
			sum, err := Run(context.Background(), Options{
				Rows: rows, Tasks: tasks, Formats: formats, Out: out,
				// The attempt timeout must cut the slow attempt short but
				// no other, even on a loaded machine.
				ModelOptions: runner.ModelOptions{Model: model,
					LLM: llm.Options{BaseURL: base, APIKey: "test-key", Timeout: time.Second, Retry: fastRetry}},
				Runner: runner.Options{Workers: len(cases)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Done != len(cases) || sum.Failed != 0 || sum.FailedRows != 0 {
				t.Errorf("done %d failed %d (rows %d), want %d and 0", sum.Done, sum.Failed, sum.FailedRows, len(cases))
			}
			checkAllPerfect(t, out, cases)
			if got, want := srv.Requests(), len(cases)*(len(faults)+1); got != want {
				t.Errorf("server saw %d requests, want %d", got, want)
			}
			// A rerun into another directory, from the warm cache, sends
			// nothing.
			srv.ResetCounts()
			out2 := t.TempDir()
			sum, err = Run(context.Background(), Options{
				Rows: rows, Tasks: tasks, Formats: formats, Out: out2,
				ModelOptions: runner.ModelOptions{Model: model, Cache: filepath.Join(out, runner.CacheFile),
					LLM: llm.Options{BaseURL: base, APIKey: "test-key", Retry: fastRetry}},
				Runner: runner.Options{Workers: 8},
			})
			if err != nil {
				t.Fatal(err)
			}
			if srv.Requests() != 0 {
				t.Errorf("cached rerun made %d requests, want 0", srv.Requests())
			}
			if sum.Cache.Hits != int64(len(cases)) || sum.Cache.Misses != 0 || sum.Tokens != 0 {
				t.Errorf("cache hits %d misses %d, tokens spent %d; want %d, 0, 0", sum.Cache.Hits, sum.Cache.Misses, sum.Tokens, len(cases))
			}
			for _, r := range checkAllPerfect(t, out2, cases) {
				if r["cached"] != true || r["tokens"] == 0.0 {
					t.Errorf("%s: cached %v tokens %v; want a cached row with the original tokens", r["key"], r["cached"], r["tokens"])
				}
			}
		})
	}
}

// TestGreedyByDefault: with no temperature given every request carries
// temperature 0 on both wires, as the paper decodes; a temperature given
// is sent as it is.
func TestGreedyByDefault(t *testing.T) {
	rows := synthRows(1)
	if err := Prepare(rows); err != nil {
		t.Fatal(err)
	}
	cases := Cases(rows, []Task{Apply}, []patch.Format{patch.UDiff}, []string{WithFormat})
	for _, tt := range []struct {
		model string
		given *float64
		want  float64
	}{
		{"openai/gpt-test", nil, 0},
		{"anthropic/claude-test", nil, 0},
		{"openai/gpt-test", ptr(0.7), 0.7},
	} {
		srv := llmtest.NewServer(llmtest.Config{Reply: answerBook(t, cases)})
		base := srv.OpenAIBaseURL()
		if strings.HasPrefix(tt.model, "anthropic/") {
			base = srv.AnthropicBaseURL()
		}
		_, err := Run(context.Background(), Options{
			Rows: rows, Tasks: []Task{Apply}, Formats: []patch.Format{patch.UDiff}, Out: t.TempDir(), Temperature: tt.given,
			ModelOptions: runner.ModelOptions{Model: tt.model, LLM: llm.Options{BaseURL: base, APIKey: "k", Retry: fastRetry}},
		})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		calls := srv.Calls()
		if len(calls) != len(cases) {
			t.Fatalf("%s: %d requests, want %d", tt.model, len(calls), len(cases))
		}
		for _, c := range calls {
			if c.Temperature == nil || *c.Temperature != tt.want {
				t.Errorf("%s (given %v): request temperature %v, want %v; body %s", tt.model, tt.given, c.Temperature, tt.want, c.Body)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A run cancelled mid-way and resumed finishes without running a recorded
// case again.
func TestResumeAfterCancel(t *testing.T) {
	rows := synthRows(5)
	if err := Prepare(rows); err != nil {
		t.Fatal(err)
	}
	cases := Cases(rows, Tasks, patch.Formats, []string{WithFormat})
	byKey := map[string]Case{}
	for _, c := range cases {
		byKey[c.Key()] = c
	}
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answered atomic.Int32
	first := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if answered.Add(1) > 12 {
			cancel() // "killed" here: later calls hang until the run stops
			<-ctx.Done()
			return llm.Response{}, ctx.Err()
		}
		return llm.Response{Text: byKey[metaKey(req.Meta)].Reference()}, nil
	})
	opts := Options{Rows: rows, Formats: patch.Formats, ModelOptions: runner.ModelOptions{Model: "openai/test", Client: first}, Out: out, Runner: runner.Options{Workers: 4}}
	if _, err := Run(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: error %v, want context.Canceled", err)
	}
	done := keyCounts(t, filepath.Join(out, ResultsFile))
	if len(done) == 0 || len(done) >= len(cases) {
		t.Fatalf("the first run recorded %d of %d cases", len(done), len(cases))
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no report of the interrupted run: %v", err)
	}

	var mu sync.Mutex
	asked := map[string]int{}
	second := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		asked[metaKey(req.Meta)]++
		mu.Unlock()
		return llm.Response{Text: byKey[metaKey(req.Meta)].Reference()}, nil
	})
	opts.Client = second
	opts.Runner.Resume = true
	sum, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range asked {
		if done[k] > 0 {
			t.Errorf("%s: finished in the first run, asked again", k)
		}
		if n != 1 {
			t.Errorf("%s: asked %d times", k, n)
		}
	}
	if len(asked)+len(done) != len(cases) || sum.Skipped != len(done) {
		t.Errorf("asked %d + recorded %d (skipped %d), want %d cases", len(asked), len(done), sum.Skipped, len(cases))
	}
	checkAllPerfect(t, out, cases)
	// Resuming with another model is refused.
	opts.Model = "openai/other"
	if _, err := Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "cannot resume") {
		t.Errorf("resume with another model: error %v", err)
	}
}

// Replayed responses get exactly the expected scores; a replay row without
// task format or prompt serves every one of them.
func TestReplayScores(t *testing.T) {
	tests := []struct {
		id               string
		apply, antiApply string
		em, iou          float64 // the same for both tasks
		antiEM, antiIoU  float64
	}{
		{"exact", "```\n" + toyNew + "```\n", "```\n" + toyOld + "```\n", 1, 1, 1, 1},
		{"blank-lines-added", "```\n\na\nB\n\n\nc\nd\ne\n\n```\n", "```\na\n\nb\nc\n\nd\n```\n", 1, 1, 1, 1},
		// apply: {a c d e} of {a B c d e}; anti-apply: {a b d} of {a b c d}.
		{"one-line-dropped", "```\na\nc\nd\ne\n```\n", "```\na\nb\nd\n```\n", 0, 0.8, 0, 0.75},
		{"prose-only", "I would rather not.", "No.", 0, 0, 0, 0},
		// Each answers with the other version of the file: 3 shared of 6.
		{"other-version", "```\n" + toyOld + "```\n", "```\n" + toyNew + "```\n", 0, 0.5, 0, 0.5},
	}
	var rows []*Row
	var replay bytes.Buffer
	enc := json.NewEncoder(&replay)
	for _, tt := range tests {
		rows = append(rows, &Row{ID: tt.id, Path: "f.txt", Lang: "text", OldCode: toyOld, NewCode: toyNew})
		enc.Encode(llm.ReplayRow{ID: tt.id, Task: string(Apply), Response: tt.apply})
		enc.Encode(llm.ReplayRow{ID: tt.id, Task: string(AntiApply), Response: tt.antiApply})
	}
	dir := t.TempDir()
	rp := filepath.Join(dir, "replay.jsonl")
	if err := os.WriteFile(rp, replay.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	sum, err := Run(context.Background(), Options{
		Rows: rows, Tasks: []Task{Apply, AntiApply}, Prompts: PromptVariants, ModelOptions: runner.ModelOptions{Model: "replay/" + rp}, Out: out,
		Runner: runner.Options{Workers: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(tests) * 2 * len(PaperFormats) * 2; sum.Rows != want || sum.FailedRows != 0 {
		t.Fatalf("%d rows (%d failed), want %d", sum.Rows, sum.FailedRows, want)
	}
	if _, err := os.Stat(filepath.Join(out, runner.CacheFile)); err == nil {
		t.Error("replay answers were cached")
	}
	results, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, tt := range tests {
			if r["id"] != tt.id {
				continue
			}
			em, iou := tt.em, tt.iou
			if r["task"] == string(AntiApply) {
				em, iou = tt.antiEM, tt.antiIoU
			}
			if r["em"] != em || !close(r["iou"].(float64), iou) {
				t.Errorf("%s: em %v iou %v, want %v %v", r["key"], r["em"], r["iou"], em, iou)
			}
		}
	}

	// score recomputes the same file, byte for byte.
	before, _ := os.ReadFile(filepath.Join(out, ResultsFile))
	rs, err := Rescore(RescoreOptions{From: out, Dataset: writeRows(t, rows)})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(out, ResultsFile))
	if rs.Rescored != len(results) || rs.Changed != 0 || !bytes.Equal(before, after) {
		t.Errorf("rescored %d of %d rows, %d changed; file unchanged: %v", rs.Rescored, len(results), rs.Changed, bytes.Equal(before, after))
	}
	// Tampered scores come back.
	tampered := bytes.ReplaceAll(before, []byte(`"iou":0.5`), []byte(`"iou":0.25`))
	if err := os.WriteFile(filepath.Join(out, ResultsFile), tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err = Rescore(RescoreOptions{From: out, Dataset: writeRows(t, rows)})
	if err != nil {
		t.Fatal(err)
	}
	after, _ = os.ReadFile(filepath.Join(out, ResultsFile))
	if want := 2 * 2 * len(PaperFormats); rs.Changed != want || !bytes.Equal(before, after) {
		t.Errorf("%d rows changed, want %d; file restored: %v", rs.Changed, want, bytes.Equal(before, after))
	}
}

func writeRows(t *testing.T, rows []*Row) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := WriteJSONL(f, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

// Failed calls make failed rows without scores; the report counts them.
func TestFailedCases(t *testing.T) {
	rows := synthRows(3)
	client := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if req.Meta["id"] == "row001" {
			return llm.Response{}, errors.New("model exploded")
		}
		return llm.Response{Text: "no idea", InputTokens: 10, OutputTokens: 5, Cost: 0.01}, nil
	})
	out := t.TempDir()
	sum, err := Run(context.Background(), Options{Rows: rows, Tasks: []Task{Apply, DiffGen}, Formats: []patch.Format{patch.UDiff}, ModelOptions: runner.ModelOptions{Model: "openai/x", Client: client}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 2 || sum.FailedRows != 2 || sum.Rows != 6 || sum.Tokens != 4*15 || !close(sum.Cost, 0.04) {
		t.Errorf("summary %+v", sum)
	}
	results, _ := runner.ReadRows(filepath.Join(out, ResultsFile))
	for _, r := range results {
		if r["id"] == "row001" {
			if r["failed"] != true || !strings.Contains(r["error"].(string), "model exploded") || r["em"] != nil || r["response"] != nil || r["task"] == nil {
				t.Errorf("failed row %v", r)
			}
		} else if r["em"] != 0.0 || (r["task"] == string(DiffGen) && r["parsed"] != false) {
			t.Errorf("row %v", r)
		}
	}
	total := sum.Report.Reports[0].Total
	if total.Stats["failed"].Value != 2.0/6 || total.Stats["em"].N != 4 {
		t.Errorf("report total %+v", total)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## By task, format and prompt", "## By task, format, prompt and language", "## By task, format, prompt and size class", "## Definitions", "**f1_plus**", "**em**: stripped exact match"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func TestDryRun(t *testing.T) {
	var buf bytes.Buffer
	sum, err := Run(context.Background(), Options{Rows: synthRows(2), ModelOptions: runner.ModelOptions{Model: "reference"}, Runner: runner.Options{DryRun: true, Limit: 5, Progress: runner.Progress{Writer: &buf}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Pending) != 5 || strings.Count(buf.String(), "\n") != 5 || !strings.HasPrefix(buf.String(), "row000\trow000|apply|udiff|with-format\n") {
		t.Errorf("pending %d, listed:\n%s", len(sum.Pending), buf.String())
	}
}
