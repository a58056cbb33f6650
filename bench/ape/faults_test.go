package ape

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/sandbox"
)

// TestFaults runs candidates and judge through the fake server on the
// OpenAI wire, every conversation's first three attempts answered 429,
// 500 and truncated JSON, and the judge's first answer to each candidate
// without a grade: everything is retried, the candidates pass, and the
// rows and the report count the retries, the statuses and the unparsed
// answer.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	repoDir := history(t)
	tasks, err := Build(ctx, repoDir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	tasks = tasks[:2] // different prompts: a conversation each
	byPrompt := map[string]*Task{}
	for i := range tasks {
		byPrompt[tasks[i].Instruction] = &tasks[i]
	}
	srv := llmtest.NewServer(llmtest.Config{
		Faults: []llmtest.Fault{{Status: 429}, {Status: 500}, {Truncate: true}},
		Reply: func(_, _ string, msgs []llm.Message) string {
			p := msgs[len(msgs)-1].Content
			if strings.HasPrefix(p, "You review") {
				if !strings.HasSuffix(p, " ") { // the first asking: no grade
					return "It looks fine to me."
				}
				return "Reason: right.\nGrade: Good\n"
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
		Runner: runner.Options{Out: filepath.Join(out, ResultsFile), Workers: 2}, N: 1, JudgeN: 1,
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
		// Three conversations (candidate, judge, judge asked again), four
		// attempts each: 12 attempts, 9 retries, 3 of them 429, 3 500.
		st, _ := r["model_error_statuses"].(map[string]any)
		if r["judge_pass"] != true || r["model_attempts"] != 12.0 || r["model_retries"] != 9.0 || st["429"] != 3.0 || st["500"] != 3.0 {
			t.Errorf("row %v: want judge pass, 12 attempts, 9 retries, 3×429, 3×500", r)
		}
		if errs, _ := r["judge_errors"].([]any); len(errs) != 1 {
			t.Errorf("row %v: want one unparsed judge answer", r)
		}
	}
	if rep.Retries != 18 || rep.ErrorStatuses["429"] != 6 || rep.ErrorStatuses["500"] != 6 || rep.UnparsedVotes != 2 || rep.Overall["judge_pass@1"] != 1 {
		t.Errorf("report: %+v", rep)
	}
}
