package cache_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
	"github.com/patchbench/patchbench/llm/llmtest"
)

func ptr[T any](v T) *T { return &v }

// toolTurn is a conversation of one tool call and its result.
func toolTurn(id, args, result string, isErr bool) []llm.Message {
	return []llm.Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: id, Name: "f", Arguments: args}}},
		{Role: "tool", ToolResults: []llm.ToolResult{{CallID: id, Content: result, IsError: isErr}}},
	}
}

func TestKey(t *testing.T) {
	base := llm.Request{
		Model: "openai/gpt-4o", System: "s",
		Messages:    []llm.Message{{Role: "user", Content: "q"}},
		Temperature: ptr(0.0), MaxTokens: 100, Seed: ptr(int64(1)),
		Meta: map[string]string{"id": "1"},
	}
	k := cache.Key(base)
	if k != cache.Key(base) {
		t.Fatal("key is not stable")
	}
	// The key document of a request without tools is the one caches were
	// written with before tools existed: their entries stay valid.
	old := sha256.Sum256([]byte(`{"v":1,"provider":"openai","model":"gpt-4o","temperature":0,"max_tokens":100,"seed":1,"system":"s","messages":[{"role":"user","content":"q"}]}`))
	if k != hex.EncodeToString(old[:]) {
		t.Errorf("key of a request without tools changed")
	}
	// The provider's own endpoint keeps the key; another server gets its own.
	if cache.KeyAt(base, "") != k {
		t.Error("KeyAt with the provider's endpoint differs from Key")
	}
	if other := cache.KeyAt(base, "http://localhost:8000/v1"); other == k || other == cache.KeyAt(base, "http://localhost:8001/v1") {
		t.Error("endpoints do not separate keys")
	}
	same := base
	same.Meta = map[string]string{"id": "2", "task": "other"}
	if cache.Key(same) != k {
		t.Error("Meta changed the key")
	}
	variants := map[string]func(r *llm.Request){
		"provider":    func(r *llm.Request) { r.Model = "anthropic/gpt-4o" },
		"model":       func(r *llm.Request) { r.Model = "openai/gpt-4o-mini" },
		"temperature": func(r *llm.Request) { r.Temperature = ptr(0.5) },
		"no temp":     func(r *llm.Request) { r.Temperature = nil },
		"max tokens":  func(r *llm.Request) { r.MaxTokens = 101 },
		"seed":        func(r *llm.Request) { r.Seed = ptr(int64(2)) },
		"no seed":     func(r *llm.Request) { r.Seed = nil },
		"system":      func(r *llm.Request) { r.System = "t" },
		"message":     func(r *llm.Request) { r.Messages = []llm.Message{{Role: "user", Content: "r"}} },
		"role":        func(r *llm.Request) { r.Messages = []llm.Message{{Role: "assistant", Content: "q"}} },
		"more turns": func(r *llm.Request) {
			r.Messages = []llm.Message{{Role: "user", Content: "q"}, {Role: "user", Content: ""}}
		},
		"tools": func(r *llm.Request) { r.Tools = []llm.Tool{{Name: "f"}} },
		"tool schema": func(r *llm.Request) {
			r.Tools = []llm.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}
		},
		"tool call":  func(r *llm.Request) { r.Messages = toolTurn("c1", `{"a":1}`, "out", false) },
		"call id":    func(r *llm.Request) { r.Messages = toolTurn("c2", `{"a":1}`, "out", false) },
		"arguments":  func(r *llm.Request) { r.Messages = toolTurn("c1", `{"a":2}`, "out", false) },
		"result":     func(r *llm.Request) { r.Messages = toolTurn("c1", `{"a":1}`, "other", false) },
		"error flag": func(r *llm.Request) { r.Messages = toolTurn("c1", `{"a":1}`, "out", true) },
		"sample":     func(r *llm.Request) { r.Sample = "1" },
		"sample 2":   func(r *llm.Request) { r.Sample = "2" },
		"vote":       func(r *llm.Request) { r.Sample = "1/0" },
	}
	seen := map[string]string{k: "base"}
	for name, f := range variants {
		r := base
		f(&r)
		kk := cache.Key(r)
		if prev, ok := seen[kk]; ok {
			t.Errorf("%s has the same key as %s", name, prev)
		}
		seen[kk] = name
	}
}

func open(t testing.TB, path string) *cache.Store {
	t.Helper()
	s, err := cache.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stack(t testing.TB, model string, srv *llmtest.Server, s *cache.Store) llm.Client {
	t.Helper()
	p, _ := llm.SplitModel(model)
	base := srv.OpenAIBaseURL()
	if p == "anthropic" {
		base = srv.AnthropicBaseURL()
	}
	c, err := llm.New(context.Background(), model, llm.Options{
		BaseURL: base, APIKey: "sk-test",
		Retry: llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cache.Wrap(c, s)
}

func request(model string, i int) llm.Request {
	return llm.Request{
		Model:    model,
		Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("case %d", i)}},
		Meta:     map[string]string{"id": fmt.Sprint(i)},
	}
}

// runAll sends n requests from workers goroutines and returns the responses.
func runAll(t testing.TB, c llm.Client, model string, n, workers int) []llm.Response {
	t.Helper()
	out := make([]llm.Response, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				resp, err := c.Complete(context.Background(), request(model, i))
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				out[i] = resp
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return out
}

func TestWarmCacheMakesNoRequests(t *testing.T) {
	for _, model := range []string{"openai/gpt-test", "anthropic/claude-test"} {
		t.Run(model, func(t *testing.T) {
			// The first attempt of every conversation fails: only the
			// successful answer may be stored.
			srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 500}}})
			defer srv.Close()
			path := filepath.Join(t.TempDir(), "cache.db")
			const n = 50

			s := open(t, path)
			first := runAll(t, stack(t, model, srv, s), model, n, 16)
			if got := srv.Requests(); got != 2*n {
				t.Fatalf("cold run: server saw %d requests, want %d", got, 2*n)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			srv.ResetCounts()
			s = open(t, path) // a rerun is a new process
			defer s.Close()
			second := runAll(t, stack(t, model, srv, s), model, n, 16)
			if got := srv.Requests(); got != 0 {
				t.Errorf("warm run: server saw %d requests, want 0", got)
			}
			for i := range n {
				if !second[i].Cached || first[i].Cached {
					t.Errorf("case %d: cached %v then %v, want false then true", i, first[i].Cached, second[i].Cached)
				}
				if second[i].Text != first[i].Text || second[i].Text != fmt.Sprintf("echo: case %d", i) {
					t.Errorf("case %d: text %q then %q", i, first[i].Text, second[i].Text)
				}
				if second[i].InputTokens != first[i].InputTokens || second[i].OutputTokens != first[i].OutputTokens {
					t.Errorf("case %d: usage not kept", i)
				}
			}
			if st := s.Stats(); st.Hits != n || st.Misses != 0 || st.ReadErrors+st.WriteErrors != 0 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 400}}})
	defer srv.Close()
	s := open(t, filepath.Join(t.TempDir(), "c.db"))
	defer s.Close()
	c := stack(t, "openai/m", srv, s)
	if _, err := c.Complete(context.Background(), request("openai/m", 1)); err == nil {
		t.Fatal("no error for 400")
	}
	resp, err := c.Complete(context.Background(), request("openai/m", 1))
	if err != nil || resp.Cached {
		t.Fatalf("second call: %+v, %v", resp, err)
	}
	if srv.Requests() != 2 {
		t.Errorf("server saw %d requests, want 2", srv.Requests())
	}
}

func TestReplayAndReferenceBypassCache(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "c.db"))
	defer s.Close()
	var calls int
	inner := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		calls++
		return llm.Response{Text: req.Meta["id"]}, nil
	})
	c := cache.Wrap(inner, s)
	for _, model := range []string{"reference", "replay/x.jsonl"} {
		for _, id := range []string{"1", "2", "1"} {
			req := llm.Request{Model: model, Messages: []llm.Message{{Role: "user", Content: "same"}}, Meta: map[string]string{"id": id}}
			resp, err := c.Complete(context.Background(), req)
			if err != nil || resp.Text != id || resp.Cached {
				t.Errorf("%s id %s: %+v, %v", model, id, resp, err)
			}
		}
	}
	if calls != 6 {
		t.Errorf("%d calls, want 6", calls)
	}
}

func TestConcurrentWriters(t *testing.T) {
	// 64 goroutines, each writing and reading overlapping keys; two stores
	// on one file stand for two processes.
	path := filepath.Join(t.TempDir(), "c.db")
	s1, s2 := open(t, path), open(t, path)
	defer s1.Close()
	defer s2.Close()
	inner := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: "a:" + req.Messages[0].Content, InputTokens: 1, OutputTokens: 2}, nil
	})
	clients := []llm.Client{cache.Wrap(inner, s1), cache.Wrap(inner, s2)}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Go(func() {
			c := clients[g%2]
			for i := range 10 {
				req := request("openai/m", (g*7+i)%50)
				resp, err := c.Complete(context.Background(), req)
				if err != nil {
					errs <- err
					return
				}
				if want := "a:" + req.Messages[0].Content; resp.Text != want {
					errs <- fmt.Errorf("got %q, want %q", resp.Text, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, s := range []*cache.Store{s1, s2} {
		if st := s.Stats(); st.ReadErrors+st.WriteErrors != 0 {
			t.Errorf("store %d: %+v", i, st)
		}
	}
}

func TestPutGet(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "c.db"))
	defer s.Close()
	ctx := context.Background()
	req := request("anthropic/x", 3)
	if _, ok, err := s.Get(ctx, cache.Key(req)); ok || err != nil {
		t.Fatalf("empty store: %v, %v", ok, err)
	}
	want := llm.Response{Text: "t", InputTokens: 3, OutputTokens: 4, Cost: 0.5, Latency: 1500 * time.Millisecond,
		ToolCalls:  []llm.ToolCall{{ID: "toolu_1", Name: "grep", Arguments: `{"pattern":"x"}`}, {ID: "toolu_2", Name: "view", Arguments: `{broken`}},
		StopReason: "tool_use"}
	if err := s.Put(ctx, req, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get(ctx, cache.Key(req))
	if !ok || err != nil {
		t.Fatalf("got %v, %v", ok, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored response differs (-want +got):\n%s", d)
	}
}

// TestOpenOldCache opens a cache file written before tool calls were
// stored: Open adds the columns and the old entries are still served.
func TestOpenOldCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	req := request("openai/x", 1)
	if _, err := db.Exec(`CREATE TABLE responses (
		key TEXT PRIMARY KEY, model TEXT NOT NULL, request TEXT NOT NULL, text TEXT NOT NULL,
		input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cost REAL NOT NULL,
		latency_ms INTEGER NOT NULL, created_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO responses VALUES (?, 'openai/x', '{}', 'old answer', 1, 2, 0, 5, '')`, cache.Key(req)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i := 0; i < 2; i++ { // the second Open finds the columns there
		s := open(t, path)
		got, ok, err := s.Get(context.Background(), cache.Key(req))
		if !ok || err != nil || got.Text != "old answer" || got.ToolCalls != nil {
			t.Errorf("open %d: got %+v, %v, %v; want the old answer", i+1, got, ok, err)
		}
		s.Close()
	}
}

// TestMerge: the caches of two shards merge into one that answers every
// request of both; a key both hold keeps the first answer and is counted
// when they differ; merging again adds nothing.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a, b := open(t, filepath.Join(dir, "a.db")), open(t, filepath.Join(dir, "b.db"))
	for i := range 3 {
		if err := a.Put(ctx, request("openai/m", i), llm.Response{Text: fmt.Sprint("a", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 2; i < 6; i++ {
		if err := b.Put(ctx, request("openai/m", i), llm.Response{Text: fmt.Sprint("b", i), StopReason: "stop"}); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	added, differing, err := a.Merge(ctx, filepath.Join(dir, "b.db"))
	if err != nil || added != 3 || differing != 1 {
		t.Fatalf("merge: added %d, differing %d, %v; want 3, 1", added, differing, err)
	}
	for i, want := range []string{"a0", "a1", "a2", "b3", "b4", "b5"} {
		got, ok, err := a.Get(ctx, cache.Key(request("openai/m", i)))
		if !ok || err != nil || got.Text != want {
			t.Errorf("request %d: %q, %v, %v; want %q", i, got.Text, ok, err, want)
		}
	}
	if added, _, err := a.Merge(ctx, filepath.Join(dir, "b.db")); err != nil || added != 0 {
		t.Errorf("second merge added %d, %v", added, err)
	}
	a.Close()
}
