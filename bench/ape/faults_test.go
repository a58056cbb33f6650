package ape

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/sandbox"
)

// TestFaults runs candidates and judge through the fake server on the
// OpenAI wire, every conversation's first three attempts answered 429,
// 500 and truncated JSON, and the first of the judge's two votes on each
// candidate without a grade: everything is retried, the vote without a
// grade counts for neither side (the other's Good passes the candidate),
// and the rows and the report count the retries, the statuses and the
// unparsed answer.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	repoDir, tasks := historyTasks(t)
	tasks = tasks[:2] // different prompts: a conversation each
	byPrompt := map[string]*Task{}
	for i := range tasks {
		byPrompt[tasks[i].Instruction] = &tasks[i]
	}
	var mu sync.Mutex
	asked := map[string]int{}
	srv := llmtest.NewServer(llmtest.Config{
		Faults: []llmtest.Fault{{Status: 429}, {Status: 500}, {Truncate: true}},
		Reply: func(_, _ string, msgs []llm.Message) string {
			p := msgs[len(msgs)-1].Content
			if strings.HasPrefix(p, "# Code evaluation request") {
				mu.Lock()
				defer mu.Unlock()
				// The first vote's prompt is answered twice (the truncated
				// attempt, then the answer): no grade either time.
				if asked[p]++; asked[p] <= 2 {
					return "It looks fine to me."
				}
				return "Right.\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}}\n```\n"
			}
			for instr, tk := range byPrompt {
				if strings.Contains(p, "Instruction:\n"+instr+"\n") {
					return "```diff\n" + tk.GoldDiff + "```\n"
				}
			}
			return "no task"
		},
	})
	defer srv.Close()
	mo := runner.ModelOptions{Model: "openai/gpt-test", Cache: runner.CacheOff, LLM: llm.Options{
		BaseURL: srv.OpenAIBaseURL(), APIKey: "k", Timeout: 10 * time.Second,
		Retry: llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
	}}
	jo := mo
	jo.Model = "openai/judge-test"
	out := t.TempDir()
	_, rep, err := Run(ctx, tasks, RunOptions{
		Runner: runner.Options{Out: filepath.Join(out, ResultsFile), Workers: 2}, N: 1, JudgeN: 2,
		Check: CheckOptions{Repo: repoDir, Command: "true", Runner: sandbox.Plain{}},
		Model: mo, Judge: jo,
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		// Two conversations (the candidate, the judge's prompt), four
		// attempts each, and the second vote (the same prompt, past its
		// faults) one: 9 attempts, 6 retries, 2 of them 429, 2 500.
		st, _ := r["model_error_statuses"].(map[string]any)
		if r["judge_pass"] != true || r["model_attempts"] != 9.0 || r["model_retries"] != 6.0 || st["429"] != 2.0 || st["500"] != 2.0 {
			t.Errorf("row %v: want judge pass, 9 attempts, 6 retries, 2×429, 2×500", r)
		}
		if errs, _ := r["judge_errors"].([]any); len(errs) != 1 {
			t.Errorf("row %v: want one unparsed judge answer", r)
		}
	}
	if rep.Retries != 12 || rep.ErrorStatuses["429"] != 4 || rep.ErrorStatuses["500"] != 4 || rep.UnparsedVotes != 2 || rep.Overall["judge_pass@1"] != 1 {
		t.Errorf("report: %+v", rep)
	}
}
