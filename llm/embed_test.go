//go:build !nosdk

package llm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
)

// TestEmbedder runs NewEmbedder's embedder against a fake server speaking
// OpenAI's /v1/embeddings wire format: batches, the faults it retries and
// the answers it refuses.
func TestEmbedder(t *testing.T) {
	texts := []string{"alpha beta", "gamma", "delta epsilon", "zeta", "eta theta"}
	want := make([][]float32, len(texts))
	for i, s := range texts {
		want[i] = llmtest.HashEmbedding(s, 16)
	}
	short := func(_, text string) []float32 {
		if text == "zeta" {
			return llmtest.HashEmbedding(text, 8)
		}
		return llmtest.HashEmbedding(text, 16)
	}
	tests := []struct {
		name     string
		faults   []llmtest.Fault
		embed    func(model, text string) []float32
		requests int    // HTTP requests the server gets
		err      string // "" for success
	}{
		{name: "three batches of two", requests: 3},
		{name: "429 then answered", faults: []llmtest.Fault{{Status: 429, RetryAfter: "0.01"}}, requests: 6},
		{name: "500 then answered", faults: []llmtest.Fault{{Status: 500}}, requests: 6},
		{name: "truncated body then answered", faults: []llmtest.Fault{{Truncate: true}}, requests: 6},
		{name: "broken body every time", faults: []llmtest.Fault{{Truncate: true}, {Truncate: true}, {Truncate: true}},
			requests: 3, err: "invalid response body"},
		{name: "400 is not retried", faults: []llmtest.Fault{{Status: 400}}, requests: 1, err: "status 400"},
		{name: "wrong dimension count", embed: short, requests: 2, err: "text 3: vector of 8 dimensions, earlier ones had 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{Faults: tt.faults, Embed: tt.embed, APIKey: "sk-secret-1"})
			defer srv.Close()
			e, err := llm.NewEmbedder(context.Background(), "openai/emb-small", llm.EmbedOptions{Batch: 2, Options: llm.Options{
				BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-secret-1",
				Retry: llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
			}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), texts)
			if n := srv.Requests(); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "sk-secret-1") {
					t.Errorf("error shows the API key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			for _, c := range srv.Calls() {
				if c.Wire != "embeddings" || c.Model != "emb-small" || len(c.Inputs) > 2 {
					t.Errorf("request %s %s with %d inputs, want embeddings of emb-small, at most 2", c.Wire, c.Model, len(c.Inputs))
				}
				if !strings.Contains(string(c.Body), `"encoding_format":"float"`) {
					t.Errorf("request asks no float encoding: %s", c.Body)
				}
			}
		})
	}
}

// TestEmbedderBadAnswers: a 2xx answer without one vector per text is a
// broken body, retried and then refused.
func TestEmbedderBadAnswers(t *testing.T) {
	for _, tt := range []struct{ name, body, err string }{
		{"one vector for two texts", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,2]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
			"1 vectors for 2 texts"},
		{"an index twice", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,2]},{"object":"embedding","index":0,"embedding":[3,4]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
			"index 0 out of range or repeated"},
		{"an empty vector", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[]},{"object":"embedding","index":1,"embedding":[3,4]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
			"empty vector for text 0"},
		{"not JSON", `<html>502 Bad Gateway</html>`, "invalid response body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n++
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			e, err := llm.NewEmbedder(context.Background(), "openai/m", llm.EmbedOptions{Options: llm.Options{BaseURL: srv.URL,
				Retry: llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "gave up after 2 attempts") {
				t.Fatalf("error %v, want one containing %q after 2 attempts", err, tt.err)
			}
			if n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

// TestEmbedderTimeout: an attempt that outlives the request timeout is
// retried, and the second attempt's answer is used.
func TestEmbedderTimeout(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Faults: []llmtest.Fault{{Delay: 2 * time.Second}}})
	defer srv.Close()
	e, err := llm.NewEmbedder(context.Background(), "openai/m", llm.EmbedOptions{Options: llm.Options{BaseURL: srv.OpenAIBaseURL(),
		Timeout: 100 * time.Millisecond, Retry: llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), []string{"one two"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{llmtest.HashEmbedding("one two", 16)}, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
}

func TestEmbedderProviders(t *testing.T) {
	for _, m := range []string{"anthropic/x", "replay/f.jsonl", "reference"} {
		if _, err := llm.NewEmbedder(context.Background(), m, llm.EmbedOptions{}); err == nil || !strings.Contains(err.Error(), "want openai/NAME") {
			t.Errorf("%s: error %v, want one naming openai/NAME", m, err)
		}
	}
}
