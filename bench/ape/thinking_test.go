package ape

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/sandbox"
)

// TestJudgeThinking: a judge with a thinking budget (APE-Bench's is Claude
// 3.7 Sonnet with thinking) is asked with Anthropic's thinking parameter
// and without a temperature (the API takes only its default with
// thinking); the budget is part of the cache key, so a rerun asks nothing
// and another budget asks every vote again.
func TestJudgeThinking(t *testing.T) {
	ctx := context.Background()
	repoDir, tasks := historyTasks(t)
	tasks = tasks[:1]
	srv := sampler(t, tasks)
	caches := t.TempDir()
	const n, judgeN = 2, 2
	run := func(budget int) {
		t.Helper()
		mo := runner.ModelOptions{Model: "openai/gpt-test", Cache: filepath.Join(caches, "cache.db"),
			LLM: llm.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"}}
		jo := runner.ModelOptions{Model: "anthropic/judge-test", Cache: filepath.Join(caches, "judge-cache.db"),
			LLM: llm.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "k"}}
		zero := 0.0
		_, rep, err := Run(ctx, tasks, RunOptions{
			Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile), Workers: 2}, N: n, JudgeN: judgeN,
			Check: CheckOptions{Repo: repoDir, Command: "true", Runner: sandbox.Plain{}},
			Model: mo, Judge: jo, JudgeTemperature: &zero, JudgeThinkingBudget: budget,
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.JudgePass != n {
			t.Errorf("budget %d: %d candidates passed the judge, want %d", budget, rep.JudgePass, n)
		}
	}
	run(2048)
	votes := 0
	for _, c := range srv.Calls() {
		if c.Model != "judge-test" {
			continue
		}
		votes++
		var body struct {
			Thinking    map[string]any `json:"thinking"`
			Temperature *float64       `json:"temperature"`
			MaxTokens   int            `json:"max_tokens"`
		}
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Thinking["type"] != "enabled" || body.Thinking["budget_tokens"] != 2048.0 || body.Temperature != nil || body.MaxTokens <= 2048 {
			t.Errorf("judge request: thinking %v, temperature %v, max_tokens %d; want enabled with 2048, none, above 2048", body.Thinking, body.Temperature, body.MaxTokens)
		}
	}
	if votes != n*judgeN {
		t.Errorf("%d judge requests, want %d", votes, n*judgeN)
	}
	srv.ResetCounts()
	run(2048)
	if got := srv.Requests(); got != 0 {
		t.Errorf("rerun: %d requests, want 0 (all cached)", got)
	}
	run(4096)
	if got := srv.Requests(); got != n*judgeN {
		t.Errorf("another budget: %d requests, want the %d votes again", got, n*judgeN)
	}
}
