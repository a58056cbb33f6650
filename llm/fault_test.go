package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
)

const secret = "sk-test-SECRET-0123456789"

var wires = []struct{ name, model string }{
	{"openai", "openai/gpt-test"},
	{"anthropic", "anthropic/claude-test"},
}

// newClient returns a client of the given wire pointed at srv, with quick
// retries and a short attempt timeout.
func newClient(t *testing.T, model string, srv *llmtest.Server, opts llm.Options) llm.Client {
	t.Helper()
	p, _ := llm.SplitModel(model)
	env := map[string]string{}
	if p == "openai" {
		env["OPENAI_BASE_URL"] = srv.OpenAIBaseURL()
		env["OPENAI_API_KEY"] = secret
	} else {
		env["ANTHROPIC_BASE_URL"] = srv.AnthropicBaseURL()
		env["ANTHROPIC_API_KEY"] = secret
	}
	opts.Getenv = func(k string) string { return env[k] }
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Retry.BaseDelay == 0 {
		opts.Retry.BaseDelay = time.Millisecond
		opts.Retry.MaxDelay = 10 * time.Millisecond
	}
	c, err := llm.New(context.Background(), model, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hello(model string) llm.Request {
	return llm.Request{Model: model, System: "be brief", Messages: []llm.Message{{Role: "user", Content: "hello"}}}
}

func TestFaultsThenSuccess(t *testing.T) {
	faults := []llmtest.Fault{
		{Status: http.StatusTooManyRequests, RetryAfterMS: 200},
		{Status: http.StatusInternalServerError},
		{Delay: time.Minute}, // beyond the client's attempt timeout
		{Truncate: true},
		{Drop: true},
		{Status: http.StatusServiceUnavailable, RetryAfter: "1"},
		{Status: http.StatusBadGateway},
	}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Config{Faults: faults, APIKey: secret})
			defer srv.Close()
			// The timeout must cut the slow attempt short but no other,
			// even on a loaded machine.
			c := newClient(t, w.model, srv, llm.Options{Timeout: 2 * time.Second, Retry: llm.RetryPolicy{MaxAttempts: 10}})
			start := time.Now()
			resp, err := c.Complete(context.Background(), hello(w.model))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "echo: hello" {
				t.Errorf("text = %q, want %q", resp.Text, "echo: hello")
			}
			if resp.InputTokens == 0 || resp.OutputTokens == 0 {
				t.Errorf("usage not reported: %+v", resp)
			}
			if got, want := srv.Requests(), len(faults)+1; got != want {
				t.Errorf("server saw %d requests, want %d", got, want)
			}
			// Retry-After: 1 and retry-after-ms: 200 were honoured.
			if el := time.Since(start); el < 1200*time.Millisecond {
				t.Errorf("finished after %v, want at least 1.2s of server-requested waits", el)
			}
		})
	}
}

func TestFaultClassification(t *testing.T) {
	tests := []struct {
		name       string
		fault      llmtest.Fault
		timeout    time.Duration
		status     int
		retryAfter time.Duration
		temporary  bool
	}{
		{"429 retry-after seconds", llmtest.Fault{Status: 429, RetryAfter: "2"}, 0, 429, 2 * time.Second, true},
		{"429 retry-after-ms", llmtest.Fault{Status: 429, RetryAfterMS: 1500}, 0, 429, 1500 * time.Millisecond, true},
		{"500", llmtest.Fault{Status: 500}, 0, 500, 0, true},
		{"529 overloaded", llmtest.Fault{Status: 529}, 0, 529, 0, true},
		{"408", llmtest.Fault{Status: 408}, 0, 408, 0, true},
		{"timeout", llmtest.Fault{Delay: time.Minute}, 200 * time.Millisecond, 0, 0, true},
		{"truncated json", llmtest.Fault{Truncate: true}, 0, 200, 0, true},
		{"dropped connection", llmtest.Fault{Drop: true}, 0, 0, 0, true},
		{"400", llmtest.Fault{Status: 400}, 0, 400, 0, false},
		{"404", llmtest.Fault{Status: 404}, 0, 404, 0, false},
	}
	for _, w := range wires {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{tt.fault}})
				defer srv.Close()
				timeout := tt.timeout
				if timeout == 0 {
					timeout = 10 * time.Second
				}
				c := newClient(t, w.model, srv, llm.Options{Timeout: timeout, Retry: llm.RetryPolicy{MaxAttempts: 1}})
				_, err := c.Complete(context.Background(), hello(w.model))
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
				}
				if e.StatusCode != tt.status || e.RetryAfter != tt.retryAfter || e.Temporary != tt.temporary {
					t.Errorf("got status %d, retry after %v, temporary %v; want %d, %v, %v (error: %v)",
						e.StatusCode, e.RetryAfter, e.Temporary, tt.status, tt.retryAfter, tt.temporary, err)
				}
				if !strings.HasPrefix(err.Error(), w.name+": ") {
					t.Errorf("error %q does not start with %q", err, w.name+": ")
				}
				if srv.Requests() != 1 {
					t.Errorf("server saw %d requests, want 1", srv.Requests())
				}
				t.Log(err)
			})
		}
	}
}

func TestPermanentErrorNotRetried(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 400}}})
			defer srv.Close()
			c := newClient(t, w.model, srv, llm.Options{Retry: llm.RetryPolicy{MaxAttempts: 5}})
			if _, err := c.Complete(context.Background(), hello(w.model)); err == nil {
				t.Fatal("no error for 400")
			}
			if srv.Requests() != 1 {
				t.Errorf("server saw %d requests, want 1", srv.Requests())
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 500}, {Status: 500}, {Status: 500}}})
			defer srv.Close()
			c := newClient(t, w.model, srv, llm.Options{Retry: llm.RetryPolicy{MaxAttempts: 3}})
			_, err := c.Complete(context.Background(), hello(w.model))
			if err == nil || !strings.Contains(err.Error(), "(gave up after 3 attempts)") {
				t.Fatalf("error = %v, want gave up after 3 attempts", err)
			}
			if srv.Requests() != 3 {
				t.Errorf("server saw %d requests, want 3", srv.Requests())
			}
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			// The server wants another key and echoes the one it got.
			srv := llmtest.NewServer(llmtest.Config{APIKey: "other-key", EchoAuth: true})
			defer srv.Close()
			c := newClient(t, w.model, srv, llm.Options{})
			_, err := c.Complete(context.Background(), hello(w.model))
			if err == nil {
				t.Fatal("no error for a wrong key")
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.StatusCode != http.StatusUnauthorized || e.Temporary {
				t.Errorf("error %v: want a permanent 401 *llm.Error", err)
			}
			for _, s := range []string{err.Error(), fmt.Sprint(err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", e.Error())} {
				if strings.Contains(s, secret) {
					t.Errorf("error text contains the API key: %s", s)
				}
			}
			if !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("error %q: want the echoed key redacted", err)
			}
		})
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 429, RetryAfter: "1"}}})
			defer srv.Close()
			c := newClient(t, w.model, srv, llm.Options{})
			start := time.Now()
			if _, err := c.Complete(context.Background(), hello(w.model)); err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el < time.Second {
				t.Errorf("retried after %v, want at least the 1s Retry-After", el)
			}
			if srv.Requests() != 2 {
				t.Errorf("server saw %d requests, want 2", srv.Requests())
			}
		})
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Status: 429, RetryAfter: "30"}}})
	defer srv.Close()
	c := newClient(t, "openai/gpt-test", srv, llm.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, hello("openai/gpt-test"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want context.DeadlineExceeded", err)
	}
	if srv.Requests() != 1 {
		t.Errorf("server saw %d requests, want 1", srv.Requests())
	}
}

func TestCancelDuringCall(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Latency: 5 * time.Second})
	defer srv.Close()
	c := newClient(t, "anthropic/claude-test", srv, llm.Options{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, hello("anthropic/claude-test"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want context.DeadlineExceeded", err)
	}
	if temp, _ := llm.IsTemporary(err); temp {
		t.Errorf("a call the caller cancelled is reported temporary")
	}
	if srv.Requests() != 1 {
		t.Errorf("server saw %d requests, want 1", srv.Requests())
	}
}

func TestParametersSent(t *testing.T) {
	temp, seed := 0.25, int64(7)
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{APIKey: secret})
			defer srv.Close()
			c := newClient(t, w.model, srv, llm.Options{})
			req := llm.Request{
				Model:  w.model,
				System: "sys",
				Messages: []llm.Message{
					{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a1"}, {Role: "user", Content: "q2"},
				},
				Temperature: &temp, MaxTokens: 123, Seed: &seed,
				Meta: map[string]string{"id": "never-sent"},
			}
			if _, err := c.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			calls := srv.Calls()
			if len(calls) != 1 {
				t.Fatalf("server saw %d calls", len(calls))
			}
			_, name := llm.SplitModel(w.model)
			want := llmtest.Call{Wire: w.name, Model: name, System: "sys", Messages: req.Messages,
				MaxTokens: 123, Temperature: &temp, Seed: &seed}
			if w.name == "anthropic" {
				want.Seed = nil // the Messages API has no seed
			}
			if d := cmp.Diff(want, calls[0], cmpopts.IgnoreFields(llmtest.Call{}, "Body")); d != "" {
				t.Errorf("call (-want +got):\n%s", d)
			}
		})
	}
}

func TestAnthropicDefaultMaxTokens(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	c := newClient(t, "anthropic/claude-test", srv, llm.Options{})
	if _, err := c.Complete(context.Background(), hello("anthropic/claude-test")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Calls()[0].MaxTokens; got != 4096 {
		t.Errorf("max_tokens = %d, want 4096", got)
	}
}

func TestOpenAICompatibleServerWithoutKey(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	c, err := llm.New(context.Background(), "openai/llama3", llm.Options{
		BaseURL: srv.OpenAIBaseURL(),
		Getenv:  func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), hello("openai/llama3"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "echo: hello" {
		t.Errorf("text = %q", resp.Text)
	}
}

func TestNewErrors(t *testing.T) {
	noEnv := llm.Options{Getenv: func(string) string { return "" }}
	tests := []struct {
		model string
		opts  llm.Options
		want  string
	}{
		{"openai/gpt-4o", noEnv, "openai: model gpt-4o: OPENAI_API_KEY is not set"},
		{"anthropic/claude", noEnv, "anthropic: model claude: ANTHROPIC_API_KEY is not set"},
		{"openai/", llm.Options{APIKey: "k"}, "openai: empty model name"},
		{"gemini/x", noEnv, `llm: unknown provider "gemini"`},
		{"reference", noEnv, "reference: no oracle"},
		{"reference/x", noEnv, "llm: unknown model"},
		{"replay/", noEnv, "replay: model \"replay/\" names no file"},
		{"replay/does/not/exist.jsonl", noEnv, "replay: open does/not/exist.jsonl"},
	}
	for _, tt := range tests {
		_, err := llm.New(context.Background(), tt.model, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q) error = %v, want it to contain %q", tt.model, err, tt.want)
		}
	}
}

func TestReference(t *testing.T) {
	oracle := func(ctx context.Context, req llm.Request) (string, error) {
		if req.Meta["id"] == "bad" {
			return "", errors.New("no answer for bad")
		}
		return "answer to " + req.Meta["id"], nil
	}
	c, err := llm.New(context.Background(), "reference", llm.Options{Oracle: oracle})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), llm.Request{Model: "reference", Meta: map[string]string{"id": "x"}})
	if err != nil || resp.Text != "answer to x" {
		t.Errorf("got %q, %v", resp.Text, err)
	}
	if _, err := c.Complete(context.Background(), llm.Request{Model: "reference", Meta: map[string]string{"id": "bad"}}); err == nil || err.Error() != "reference: no answer for bad" {
		t.Errorf("error = %v", err)
	}
}

func TestPrice(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	c := newClient(t, "openai/gpt-test", srv, llm.Options{Price: &llm.Price{InputPerMillion: 1e6, OutputPerMillion: 2e6}})
	resp, err := c.Complete(context.Background(), hello("openai/gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(resp.InputTokens + 2*resp.OutputTokens); resp.Cost != want {
		t.Errorf("cost = %v, want %v for %d in, %d out", resp.Cost, want, resp.InputTokens, resp.OutputTokens)
	}
}

// Many workers, every conversation failing four ways before it succeeds:
// each request completes once, with its own answer, and no conversation is
// sent more often than its script needs. (Timeouts are left out here: on a
// loaded machine a generous timeout could still cut a healthy attempt short
// and make the count depend on timing.)
func TestConcurrentFaults(t *testing.T) {
	faults := []llmtest.Fault{
		{Status: 429, RetryAfterMS: 50},
		{Status: 500},
		{Truncate: true},
		{Drop: true},
	}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Config{Faults: faults})
			defer srv.Close()
			c := newClient(t, w.model, srv, llm.Options{Timeout: time.Minute, Retry: llm.RetryPolicy{MaxAttempts: 10}})
			const n = 48
			errs := make(chan error, n)
			for i := range n {
				go func() {
					req := llm.Request{Model: w.model, Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("case %d", i)}}}
					resp, err := c.Complete(context.Background(), req)
					if err == nil && resp.Text != "echo: "+req.Messages[0].Content {
						err = fmt.Errorf("case %d: got %q", i, resp.Text)
					}
					errs <- err
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			per := map[string]int{}
			for _, call := range srv.Calls() {
				per[call.Messages[0].Content]++
			}
			if len(per) != n {
				t.Errorf("server saw %d conversations, want %d", len(per), n)
			}
			for conv, k := range per {
				if k != len(faults)+1 {
					t.Errorf("%s: %d attempts, want %d", conv, k, len(faults)+1)
				}
			}
		})
	}
}
