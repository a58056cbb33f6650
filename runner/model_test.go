package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
)

func TestCachePath(t *testing.T) {
	for _, tc := range []struct {
		o    runner.ModelOptions
		want string
	}{
		{runner.ModelOptions{Model: "openai/m", Dir: "run"}, filepath.Join("run", "cache.db")},
		{runner.ModelOptions{Model: "openai/m", Dir: "run", Cache: "c.db"}, "c.db"},
		{runner.ModelOptions{Model: "openai/m", Dir: "run", Cache: runner.CacheOff}, ""},
		{runner.ModelOptions{Model: "openai/m"}, ""},
		{runner.ModelOptions{Model: "replay/x.jsonl", Dir: "run"}, ""},
		{runner.ModelOptions{Model: "reference", Cache: "c.db"}, ""},
	} {
		if got := tc.o.CachePath(); got != tc.want {
			t.Errorf("%+v: CachePath() = %q, want %q", tc.o, got, tc.want)
		}
	}
}

// TestModelPath sends the same requests twice through OpenModel against a
// fake server that fails each conversation's first attempt: the first
// run retries and pays, the second is served from the cache file.
func TestModelPath(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 500}}})
	defer srv.Close()
	dir := t.TempDir()
	open := func() *runner.Model {
		m, err := runner.OpenModel(context.Background(), runner.ModelOptions{
			Model: "openai/m", Dir: dir,
			LLM: llm.Options{BaseURL: srv.OpenAIBaseURL(), Retry: llm.RetryPolicy{BaseDelay: time.Millisecond},
				Price: &llm.Price{InputPerMillion: 1e6, OutputPerMillion: 2e6}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ask := func(m *runner.Model) *runner.ModelCalls {
		var u runner.ModelCalls
		c := m.Recording(&u)
		for _, q := range []string{"one", "two"} {
			resp, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: q}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "echo: "+q {
				t.Fatalf("answer %q", resp.Text)
			}
		}
		return &u
	}

	m := open()
	u := ask(m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); got != 4 {
		t.Errorf("first run: %d requests, want 4 (two conversations, one 500 each)", got)
	}
	// The fake server counts len/4+1 tokens each way: "one" and "two" are
	// 1 input and 3 output tokens ("echo: one" is 9 characters).
	if u.Tokens != 8 || u.Cost != 2*(1+2*3) || u.Cached {
		t.Errorf("first run: tokens %d cost %v cached %v, want 8, 14, false", u.Tokens, u.Cost, u.Cached)
	}
	if got := u.Usage(); got != (runner.Usage{Tokens: 8, Cost: 14}) {
		t.Errorf("first run: usage %+v, want 8 tokens, 14 dollars", got)
	}

	srv.ResetCounts()
	m = open()
	defer m.Close()
	u = ask(m)
	if got := srv.Requests(); got != 0 {
		t.Errorf("rerun: %d requests, want 0", got)
	}
	if u.Tokens != 8 || u.Cost != 14 || !u.Cached || u.Usage() != (runner.Usage{}) {
		t.Errorf("rerun: tokens %d cost %v cached %v usage %+v, want the original 8 and 14, cached, nothing spent",
			u.Tokens, u.Cost, u.Cached, u.Usage())
	}
	if st := m.CacheStats(); st.Hits != 2 || st.Misses != 0 {
		t.Errorf("rerun: cache %+v, want 2 hits", st)
	}
}

func TestModelCallsMixed(t *testing.T) {
	var u runner.ModelCalls
	u.Add(llm.Response{InputTokens: 10, OutputTokens: 5, Cost: 1, Cached: true, Latency: time.Millisecond}, nil, time.Second)
	if !u.Cached || u.LatencyMS != 1 {
		t.Errorf("one cached answer: cached %v latency %d, want true, 1 (the answer's)", u.Cached, u.LatencyMS)
	}
	u.Add(llm.Response{InputTokens: 3, OutputTokens: 2, Cost: 0.5}, nil, 2*time.Millisecond)
	u.Add(llm.Response{}, errors.New("boom"), 4*time.Millisecond)
	if u.Cached || u.Tokens != 20 || u.Cost != 1.5 || u.LatencyMS != 7 {
		t.Errorf("got cached %v tokens %d cost %v latency %d, want false, 20, 1.5, 7", u.Cached, u.Tokens, u.Cost, u.LatencyMS)
	}
	if got := u.Usage(); got != (runner.Usage{Tokens: 5, Cost: 0.5}) {
		t.Errorf("usage %+v, want only the uncached answer's 5 tokens and 0.5", got)
	}
}

func TestOpenModelErrors(t *testing.T) {
	if _, err := runner.OpenModel(context.Background(), runner.ModelOptions{}); err == nil {
		t.Error("no model: no error")
	}
	if _, err := runner.OpenModel(context.Background(), runner.ModelOptions{Model: "nope/x"}); err == nil {
		t.Error("unknown provider: no error")
	}
	_, err := runner.OpenModel(context.Background(), runner.ModelOptions{
		Model: "openai/m", Client: llm.ClientFunc(nil), Cache: filepath.Join(t.TempDir(), "missing", "dir", "c.db")})
	if err == nil {
		t.Error("cache in a missing directory: no error")
	}
}

// TestModelAgent runs a scripted tool-calling agent through a Model: every
// turn is recorded in the case's ModelCalls, and the rerun is served from
// the cache turn by turn, spending nothing.
func TestModelAgent(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Script: []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "t1", Name: "add", Arguments: `{"a":2,"b":3}`}}},
		{Results: []llm.ToolResult{{CallID: "t1", Content: "5"}}, Text: "2+3=5"},
	}})
	defer srv.Close()
	dir := t.TempDir()
	add := func(ctx context.Context, call llm.ToolCall) (llm.ToolOutput, error) {
		var args struct{ A, B int }
		if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
			return llm.ToolOutput{Content: err.Error(), IsError: true}, nil
		}
		return llm.ToolOutput{Content: strconv.Itoa(args.A + args.B)}, nil
	}
	run := func() (*llm.Agent, *runner.ModelCalls) {
		m, err := runner.OpenModel(context.Background(), runner.ModelOptions{
			Model: "anthropic/m", Dir: dir,
			LLM: llm.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "k", Price: &llm.Price{InputPerMillion: 1e6, OutputPerMillion: 1e6}},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		var u runner.ModelCalls
		req := llm.Request{Tools: []llm.Tool{{Name: "add"}}, Messages: []llm.Message{{Role: "user", Content: "2+3?"}}}
		a, err := llm.RunAgent(context.Background(), m.Recording(&u), req, add, 4)
		if err != nil {
			t.Fatal(err)
		}
		return a, &u
	}
	a, u := run()
	if a.Text != "2+3=5" || a.Turns != 2 || srv.Requests() != 2 {
		t.Fatalf("text %q after %d turns, %d requests; want 2+3=5 after 2 turns and 2 requests", a.Text, a.Turns, srv.Requests())
	}
	tokens := int64(a.InputTokens + a.OutputTokens)
	if u.Tokens != tokens || u.Cost != float64(tokens) || u.Cached || u.Usage() != (runner.Usage{Tokens: tokens, Cost: float64(tokens)}) {
		t.Errorf("calls %+v usage %+v, want both turns' %d tokens, spent", u, u.Usage(), tokens)
	}
	srv.ResetCounts()
	b, u := run()
	if srv.Requests() != 0 || b.CachedTurns != 2 || !u.Cached || u.Tokens != tokens || u.Usage() != (runner.Usage{}) {
		t.Errorf("rerun: %d requests, %d cached turns, calls %+v usage %+v; want 0, 2, cached with the original %d tokens, nothing spent",
			srv.Requests(), b.CachedTurns, u, u.Usage(), tokens)
	}
}

// TestModelSamples sends one prompt as 3 samples through OpenModel with
// its default cache: 3 requests and 3 different answers the first time
// (the fake server samples: each answer is new), the same 3 answers and
// no request on a rerun.
func TestModelSamples(t *testing.T) {
	var calls int
	var mu sync.Mutex
	srv := llmtest.NewServer(llmtest.Config{Reply: func(_, _ string, _ []llm.Message) string {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return "draw " + strconv.Itoa(calls)
	}})
	defer srv.Close()
	dir := t.TempDir()
	run := func() []string {
		m, err := runner.OpenModel(context.Background(), runner.ModelOptions{
			Model: "openai/m", Dir: dir, LLM: llm.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		var out []string
		for s := range 3 {
			resp, err := m.Complete(context.Background(), llm.Request{
				Messages: []llm.Message{{Role: "user", Content: "same prompt"}}, Sample: strconv.Itoa(s),
			})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, resp.Text)
		}
		return out
	}
	first := run()
	if got := srv.Requests(); got != 3 {
		t.Fatalf("first run: %d requests, want 3", got)
	}
	if first[0] == first[1] || first[1] == first[2] || first[0] == first[2] {
		t.Errorf("first run answers %q: samples are not distinct", first)
	}
	second := run()
	if got := srv.Requests(); got != 3 {
		t.Errorf("rerun: %d requests in all, want 3 (none new)", got)
	}
	if !slices.Equal(first, second) {
		t.Errorf("rerun answers %q, want %q", second, first)
	}
}

// TestCacheKeepsServersApart: two servers that serve a model of one name
// answer differently; a cache file shared by runs against each must give
// each run its own server's answers, and a rerun against the first server
// must still be served from the cache.
func TestCacheKeepsServersApart(t *testing.T) {
	reply := func(who string) func(string, string, []llm.Message) string {
		return func(_, _ string, msgs []llm.Message) string { return who + ": " + msgs[len(msgs)-1].Content }
	}
	a := llmtest.NewServer(llmtest.Config{Reply: reply("a")})
	defer a.Close()
	b := llmtest.NewServer(llmtest.Config{Reply: reply("b")})
	defer b.Close()
	cacheFile := filepath.Join(t.TempDir(), "shared.db")
	ask := func(base string, env map[string]string) (string, bool) {
		t.Helper()
		m, err := runner.OpenModel(context.Background(), runner.ModelOptions{
			Model: "openai/m", Cache: cacheFile,
			LLM: llm.Options{BaseURL: base, Getenv: func(k string) string { return env[k] }},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		resp, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "q"}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Text, resp.Cached
	}
	if got, cached := ask(a.OpenAIBaseURL(), nil); got != "a: q" || cached {
		t.Errorf("server a: %q cached %v", got, cached)
	}
	// The same server named by OPENAI_BASE_URL, with a trailing slash: a hit.
	if got, cached := ask("", map[string]string{"OPENAI_BASE_URL": a.OpenAIBaseURL() + "/"}); got != "a: q" || !cached {
		t.Errorf("server a again: %q cached %v, want a cache hit", got, cached)
	}
	if got, cached := ask(b.OpenAIBaseURL(), nil); got != "b: q" || cached {
		t.Errorf("server b: %q cached %v, want b's own answer", got, cached)
	}
	if a.Requests() != 1 || b.Requests() != 1 {
		t.Errorf("requests: a %d, b %d; want 1 each", a.Requests(), b.Requests())
	}
}
