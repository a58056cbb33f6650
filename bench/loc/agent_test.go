package loc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// agentRepo makes a repository with two Python files and a secret beside
// it, and returns it opened with the commit.
func agentRepo(t *testing.T) (*repo.Repo, string) {
	t.Helper()
	gittest.Need(t)
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	files := map[string]string{
		"pkg/core/add.py": "class Add:\n    def flatten(self):\n        return needle(self)\n",
		"pkg/core/mul.py": "def needle(x):\n    return x * 2\n",
		"../secret.txt":   "SECRET\n",
	}
	gittest.CommitFiles(t, dir, files)
	r, err := repo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	commit, err := r.ResolveCommit(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return r, commit
}

func openModel(t *testing.T, srv *llmtest.Server, wire, cache string) *runner.Model {
	t.Helper()
	o := runner.ModelOptions{Model: wire + "/fake-model", Cache: cache,
		LLM: llm.Options{APIKey: "k", Price: &llm.Price{InputPerMillion: 1e6, OutputPerMillion: 1e6}}}
	if wire == "openai" {
		o.LLM.BaseURL = srv.OpenAIBaseURL()
	} else {
		o.LLM.BaseURL = srv.AnthropicBaseURL()
	}
	m, err := runner.OpenModel(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAgentScripted runs the whole loop against a scripted model in both
// wire formats: every tool called, errors for bad arguments, a path
// outside the repository and an unknown tool, a malformed report_back
// refused and a good one parsed; then the rerun is served from the cache.
func TestAgentScripted(t *testing.T) {
	r, commit := agentRepo(t)
	c := Case{ID: "c1", Repo: "t/repo", BaseCommit: commit, Query: "flatten returns the wrong value"}
	script := []llmtest.Turn{
		{Text: "Looking around.", ToolCalls: []llm.ToolCall{
			{ID: "a1", Name: "view_directory", Arguments: `{"path":"pkg","depth":2}`},
			{ID: "a2", Name: "grep_search", Arguments: `{"pattern":"def (flatten|needle)","path_glob":"*.py"}`},
			{ID: "a3", Name: "find_symbol", Arguments: `{"name":"Add.flatten"}`},
			{ID: "a4", Name: "view_file", Arguments: `{"path":"pkg/core/add.py","start_line":2,"end_line":3}`},
			{ID: "a5", Name: "view_file", Arguments: `{"path":"../secret.txt"}`},
			{ID: "a6", Name: "view_file", Arguments: `{"path":7}`},
			{ID: "a7", Name: "rm_rf", Arguments: `{}`},
		}},
		{ToolCalls: []llm.ToolCall{{ID: "b1", Name: "report_back", Arguments: `{"files":{"/etc/passwd":[[1,2]]}}`}}},
		{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "report_back", Arguments: `{"files":{"pkg/core/mul.py":[[1,1]],"pkg/core/add.py":[[3,3],[2,2]]}}`}}},
	}
	wantResults := []struct {
		contains string
		isError  bool
	}{
		{"pkg/core/add.py\npkg/core/mul.py\n", false},
		{"2 matches:\npkg/core/add.py:2:     def flatten(self):\npkg/core/mul.py:1: def needle(x):\n", false},
		{"pkg/core/add.py:2-3 method Add.flatten", false},
		{"2\t    def flatten(self):\n3\t        return needle(self)\n", false},
		{"path outside the repository", true},
		{"bad arguments", true},
		{`no tool "rm_rf" here`, true},
	}
	want := Found{
		Files:     []string{"pkg/core/mul.py", "pkg/core/add.py"},
		Ranges:    map[string][]Range{"pkg/core/mul.py": {{1, 1}}, "pkg/core/add.py": {{2, 3}}},
		Functions: []string{"pkg/core/mul.py:needle", "pkg/core/add.py:Add.flatten"},
		Modules:   []string{"pkg/core/mul.py:needle", "pkg/core/add.py:Add"},
	}
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{Script: script})
			defer srv.Close()
			cache := filepath.Join(t.TempDir(), "cache.db")
			temp := 0.0
			for run := 1; run <= 2; run++ {
				m := openModel(t, srv, wire, cache)
				a, err := NewAgentic(AgentOptions{Model: m, MaxTurns: 5, Temperature: &temp})
				if err != nil {
					t.Fatal(err)
				}
				var calls runner.ModelCalls
				ans, err := a.Search(context.Background(), c, r, &calls)
				m.Close()
				if err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				if diff := cmp.Diff(want, ans.Found); diff != "" {
					t.Errorf("run %d: found (-want +got):\n%s", run, diff)
				}
				if ans.Turns != 3 || calls.Tokens == 0 || calls.Cost == 0 {
					t.Errorf("run %d: %d turns, %d tokens, $%g; want 3 turns and the usage", run, ans.Turns, calls.Tokens, calls.Cost)
				}
				if run == 2 && (!calls.Cached || calls.Usage().Tokens != 0) {
					t.Errorf("rerun: cached=%v, spent %+v; want every turn from the cache", calls.Cached, calls.Usage())
				}
				if got := srv.Requests(); got != 3 {
					t.Errorf("run %d: the server has had %d requests, want 3 (the rerun sends none)", run, got)
				}
			}
			calls := srv.Calls()
			if len(calls) != 3 {
				t.Fatalf("%d calls", len(calls))
			}
			first := calls[0]
			if first.Temperature == nil || *first.Temperature != 0 || !strings.Contains(first.Messages[0].Content, c.Query) {
				t.Errorf("first request: temperature %v, message %q", first.Temperature, first.Messages[0].Content)
			}
			var names []string
			for _, tool := range first.Tools {
				names = append(names, tool.Name)
			}
			if diff := cmp.Diff([]string{"view_file", "view_directory", "grep_search", "find_symbol", "report_back"}, names); diff != "" {
				t.Errorf("tools offered (-want +got):\n%s", diff)
			}
			msgs := calls[1].Messages
			results := msgs[len(msgs)-1].ToolResults
			if len(results) != len(wantResults) {
				t.Fatalf("turn 2 brings %d tool results, want %d: %+v", len(results), len(wantResults), results)
			}
			for i, w := range wantResults {
				got := results[i]
				if !strings.Contains(got.Content, w.contains) || strings.Contains(got.Content, "SECRET") {
					t.Errorf("result %d: %q, want it to hold %q", i+1, got.Content, w.contains)
				}
				// Only the Anthropic wire carries the error flag.
				if wire == "anthropic" && got.IsError != w.isError {
					t.Errorf("result %d: is_error %v, want %v", i+1, got.IsError, w.isError)
				}
			}
			msgs = calls[2].Messages
			if r := msgs[len(msgs)-1].ToolResults; len(r) != 1 || !strings.Contains(r[0].Content, "report_back: files:") || !strings.Contains(r[0].Content, "unsafe path") {
				t.Errorf("the bad report_back got %+v, want an error naming the path", r)
			}
		})
	}
}

// TestAgentMaxTurns: a model that never reports is stopped after
// --max-turns answers; the case is answered with nothing found and a
// reason (scored 0, not a failed row left out of the means).
func TestAgentMaxTurns(t *testing.T) {
	r, commit := agentRepo(t)
	var script []llmtest.Turn
	for range 10 {
		script = append(script, llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "view_directory", Arguments: `{}`}}})
	}
	for _, wire := range []string{"openai", "anthropic"} {
		srv := llmtest.NewServer(llmtest.Config{Script: script})
		m := openModel(t, srv, wire, runner.CacheOff)
		a, err := NewAgentic(AgentOptions{Model: m, MaxTurns: 3, Tools: []string{"view_directory"}})
		if err != nil {
			t.Fatal(err)
		}
		var calls runner.ModelCalls
		ans, err := a.Search(context.Background(), Case{ID: "x", BaseCommit: commit, Query: "q"}, r, &calls)
		if err != nil || ans.Turns != 3 || srv.Requests() != 3 || len(ans.Found.Files) != 0 ||
			!strings.Contains(ans.NoAnswer, "no report_back within 3 turns") {
			t.Errorf("%s: err %v, %d turns, %d requests, found %v, no_answer %q; want nothing found after 3, saying why",
				wire, err, ans.Turns, srv.Requests(), ans.Found.Files, ans.NoAnswer)
		}
		m.Close()
		srv.Close()
	}
}

// TestAgentReportTwiceAndTestbed: two report_back calls in one answer:
// the first good one is the answer, the second is told so; a path under
// /testbed/ (where SWE-bench images hold the repository) names the
// repository's file; a model that stops without report_back has a reason.
func TestAgentReportTwiceAndTestbed(t *testing.T) {
	r, commit := agentRepo(t)
	script := []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{
			{ID: "r1", Name: "report_back", Arguments: `{"files":{"/testbed/pkg/core/mul.py":[[1,1]]},"functions":["/testbed/pkg/core/mul.py:needle"]}`},
			{ID: "r2", Name: "report_back", Arguments: `{"files":{"pkg/core/add.py":[[2,3]]}}`},
		}},
	}
	srv := llmtest.NewServer(llmtest.Config{Script: script})
	defer srv.Close()
	m := openModel(t, srv, "openai", runner.CacheOff)
	defer m.Close()
	a, err := NewAgentic(AgentOptions{Model: m, MaxTurns: 3})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := a.Search(context.Background(), Case{ID: "x", BaseCommit: commit, Query: "q"}, r, &runner.ModelCalls{})
	if err != nil {
		t.Fatal(err)
	}
	want := Found{Files: []string{"pkg/core/mul.py"}, Ranges: map[string][]Range{"pkg/core/mul.py": {{1, 1}}},
		Functions: []string{"pkg/core/mul.py:needle"}, Modules: []string{"pkg/core/mul.py:needle"}}
	if diff := cmp.Diff(want, ans.Found); diff != "" || ans.NoAnswer != "" {
		t.Errorf("(-want +got):\n%s\nno_answer %q", diff, ans.NoAnswer)
	}

	// No report_back and no JSON in the text: nothing found, and why.
	srv2 := llmtest.NewServer(llmtest.Config{Script: []llmtest.Turn{{Text: "I give up."}}})
	defer srv2.Close()
	m2 := openModel(t, srv2, "openai", runner.CacheOff)
	defer m2.Close()
	a2, _ := NewAgentic(AgentOptions{Model: m2, MaxTurns: 3})
	ans, err = a2.Search(context.Background(), Case{ID: "y", BaseCommit: commit, Query: "q"}, r, &runner.ModelCalls{})
	if err != nil || len(ans.Found.Files) != 0 || !strings.Contains(ans.NoAnswer, "without report_back") {
		t.Errorf("err %v, found %v, no_answer %q; want nothing found, saying why", err, ans.Found.Files, ans.NoAnswer)
	}
}

func TestAgentOptions(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	m := openModel(t, srv, "openai", runner.CacheOff)
	defer m.Close()
	for _, o := range []AgentOptions{
		{Model: m, Tools: []string{"view_file", "rm_rf"}},
		{Model: m, Tools: []string{"definition"}},
		{Model: m, LSP: "sometimes"},
		{Model: m, MaxTurns: -1},
		{},
	} {
		if _, err := NewAgentic(o); err == nil {
			t.Errorf("NewAgentic(%+v): no error", o)
		}
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "p.yaml")
	os.WriteFile(good, []byte("system: Be brief.\ntools:\n  grep_search: Search it.\n  report_back: Answer.\n"), 0o644)
	p, err := LoadAgentPrompt(good)
	if err != nil || p.System != "Be brief." || p.Tools["grep_search"] != "Search it." {
		t.Errorf("LoadAgentPrompt: %+v, %v", p, err)
	}
	for _, bad := range []string{"system: x\ncolour: red\n", "tools:\n  rm_rf: x\n", "system: [\n"} {
		f := filepath.Join(dir, "bad.yaml")
		os.WriteFile(f, []byte(bad), 0o644)
		if _, err := LoadAgentPrompt(f); err == nil {
			t.Errorf("LoadAgentPrompt(%q): no error", bad)
		}
	}
}

func TestParseReport(t *testing.T) {
	f, err := parseReport(`{"files":{"b.py":[[5,9],[1,2],[3,4],[20,21]],"./a.go":[]},"functions":["b.py:C.m","a.go:f"]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Found{Files: []string{"b.py", "a.go"}, Ranges: map[string][]Range{"b.py": {{1, 9}, {20, 21}}},
		Functions: []string{"b.py:C.m", "a.go:f"}, Modules: []string{"b.py:C", "a.go:f"}}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	f, err = parseReport(`{"files":{"/testbed/b.py":[[1,1]],"/testbed/./c/d.py":[]},"functions":["/testbed/b.py:f"]}`)
	if err != nil || !slices.Equal(f.Files, []string{"b.py", "c/d.py"}) || !slices.Equal(f.Functions, []string{"b.py:f"}) {
		t.Errorf("/testbed/ paths: %+v, %v; want b.py, c/d.py and b.py:f", f, err)
	}
	for _, bad := range []string{`{}`, `{"files":[]}`, `{"files":{"/testbed":[[1,1]]}}`, `{"files":{"/testbed/../etc/passwd":[[1,1]]}}`,
		`{"files":{"/usr/lib/a.py":[[1,1]]}}`, `{"files":{"testbed/../../a.py":[[1,1]]}}`, `{"files":{"a":[[2,1]]}}`, `{"files":{"a":[[0,1]]}}`, `{"files":{"a":[[1]]}}`,
		`{"files":{"../a":[[1,1]]}}`, `{"files":{".git/config":[[1,1]]}}`, `{"files":{}, "x":1}`, `{"files":{},"functions":["nopath"]}`, `nope`} {
		if _, err := parseReport(bad); err == nil {
			t.Errorf("parseReport(%s): no error", bad)
		}
	}
}
