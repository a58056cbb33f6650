package cache

import (
	"testing"

	"github.com/patchbench/patchbench/llm"
)

// TestThinkingBudgetInKey: a request with a thinking budget is another
// request (its own key per budget); one without keeps the key it had
// before budgets existed.
func TestThinkingBudgetInKey(t *testing.T) {
	req := llm.Request{Model: "anthropic/claude-test", Messages: []llm.Message{{Role: "user", Content: "hi"}}}
	plain := Key(req)
	if got := string(canonical(req, "")); got != `{"v":1,"provider":"anthropic","model":"claude-test","temperature":null,"max_tokens":0,"seed":null,"system":"","messages":[{"role":"user","content":"hi"}]}` {
		t.Errorf("key document without a budget changed: %s", got)
	}
	req.ThinkingBudget = 16000
	a := Key(req)
	req.ThinkingBudget = 8000
	b := Key(req)
	if a == plain || b == plain || a == b {
		t.Errorf("keys: none %s, 16000 %s, 8000 %s; want three different keys", plain, a, b)
	}
}
