package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
)

// TestThinkingBudget: a thinking budget goes to the Messages API as its
// thinking parameter, with max_tokens the budget plus the answer's bound
// and no temperature but the API's 1; other temperatures and the OpenAI
// wire refuse it before any request.
func TestThinkingBudget(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	one, zero := 1.0, 0.0
	for _, tt := range []struct {
		name      string
		model     string
		maxTokens int
		temp      *float64
		wantMax   float64 // 0: refused
		wantTemp  any
		wantError string
	}{
		{"default bound", "anthropic/claude-test", 0, nil, 16000 + 4096, nil, ""},
		{"own bound", "anthropic/claude-test", 2000, nil, 18000, nil, ""},
		{"temperature 1", "anthropic/claude-test", 0, &one, 16000 + 4096, 1.0, ""},
		{"temperature 0", "anthropic/claude-test", 0, &zero, 0, nil, "extended thinking takes only temperature 1, not 0"},
		{"openai", "openai/gpt-test", 0, nil, 0, nil, "a thinking budget is Anthropic's parameter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv.ResetCounts()
			req := question(tt.model)
			req.ThinkingBudget, req.MaxTokens, req.Temperature = 16000, tt.maxTokens, tt.temp
			_, err := newClient(t, tt.model, srv, llm.Options{}).Complete(context.Background(), req)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("err = %v, want %q", err, tt.wantError)
				}
				if n := srv.Requests(); n != 0 {
					t.Errorf("%d requests sent, want 0", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body := decodeJSON(t, srv.Calls()[0].Body)
			want := map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 16000.0}, "max_tokens": tt.wantMax, "temperature": tt.wantTemp}
			got := map[string]any{"thinking": body["thinking"], "max_tokens": body["max_tokens"], "temperature": body["temperature"]}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("wire (-want +got):\n%s", diff)
			}
		})
	}
}
