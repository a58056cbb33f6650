package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
	"github.com/patchbench/patchbench/llm/llmtest"
)

const readFileSchema = `{"type":"object","properties":{"path":{"type":"string","description":"path in the repository"}},"required":["path"],"additionalProperties":false}`

var tools = []llm.Tool{
	{Name: "read_file", Description: "Read a file of the repository.", Parameters: json.RawMessage(readFileSchema)},
}

// script is a three-turn conversation: two calls (one of them refused),
// then one more, then the answer.
var script = []llmtest.Turn{
	{Text: "looking", ToolCalls: []llm.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_b", Name: "read_file", Arguments: `{"path":"../etc/passwd"}`},
	}},
	{
		Results: []llm.ToolResult{
			{CallID: "call_a", Content: "package a"},
			{CallID: "call_b", Content: "error: ../etc/passwd is outside the repository", IsError: true},
		},
		ToolCalls: []llm.ToolCall{{ID: "call_c", Name: "read_file", Arguments: `{"path":"b.go"}`}},
	},
	{Results: []llm.ToolResult{{CallID: "call_c", Content: "package b"}}, Text: "a.go and b.go"},
}

// readFile is the tool executor of the script.
func readFile(files map[string]string) llm.ToolFunc {
	return func(ctx context.Context, call llm.ToolCall) (llm.ToolOutput, error) {
		var args struct{ Path string }
		if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
			return llm.ToolOutput{Content: "error: bad arguments: " + err.Error(), IsError: true}, nil
		}
		if strings.HasPrefix(args.Path, "../") {
			return llm.ToolOutput{Content: "error: " + args.Path + " is outside the repository", IsError: true}, nil
		}
		return llm.ToolOutput{Content: files[args.Path]}, nil
	}
}

var repoFiles = map[string]string{"a.go": "package a", "b.go": "package b"}

func question(model string) llm.Request {
	return llm.Request{Model: model, System: "find the files", Tools: tools,
		Messages: []llm.Message{{Role: "user", Content: "where are a and b?"}}}
}

// wantWire is the last request of the script on each wire, as the
// provider's API documents it.
var wantWire = map[string]string{
	"openai": `{
	"tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file of the repository.",
		"parameters": ` + readFileSchema + `}}],
	"messages": [
		{"role": "system", "content": "find the files"},
		{"role": "user", "content": "where are a and b?"},
		{"role": "assistant", "content": "looking", "tool_calls": [
			{"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.go\"}"}},
			{"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"../etc/passwd\"}"}}]},
		{"role": "tool", "tool_call_id": "call_a", "content": "package a"},
		{"role": "tool", "tool_call_id": "call_b", "content": "error: ../etc/passwd is outside the repository"},
		{"role": "assistant", "tool_calls": [
			{"id": "call_c", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b.go\"}"}}]},
		{"role": "tool", "tool_call_id": "call_c", "content": "package b"}
	]}`,
	"anthropic": `{
	"tools": [{"name": "read_file", "description": "Read a file of the repository.", "input_schema": ` + readFileSchema + `}],
	"messages": [
		{"role": "user", "content": [{"type": "text", "text": "where are a and b?"}]},
		{"role": "assistant", "content": [
			{"type": "text", "text": "looking"},
			{"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.go"}},
			{"type": "tool_use", "id": "call_b", "name": "read_file", "input": {"path": "../etc/passwd"}}]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "call_a", "content": [{"type": "text", "text": "package a"}]},
			{"type": "tool_result", "tool_use_id": "call_b", "is_error": true,
				"content": [{"type": "text", "text": "error: ../etc/passwd is outside the repository"}]}]},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "call_c", "name": "read_file", "input": {"path": "b.go"}}]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "call_c", "content": [{"type": "text", "text": "package b"}]}]}
	]}`,
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return m
}

// TestToolConversation runs the script through the full client stack and
// the cache on both wires. Every turn's first four attempts fail (429,
// 500, truncated JSON, dropped connection) and the fifth is slow; the rerun
// is answered from the cache file without a request.
func TestToolConversation(t *testing.T) {
	faults := []llmtest.Fault{
		{Status: http.StatusTooManyRequests, RetryAfterMS: 1},
		{Status: http.StatusInternalServerError},
		{Truncate: true},
		{Drop: true},
		{Delay: 20 * time.Millisecond},
	}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Config{Faults: faults, Script: script, APIKey: secret})
			defer srv.Close()
			path := filepath.Join(t.TempDir(), "cache.db")
			run := func() *llm.Agent {
				t.Helper()
				store, err := cache.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				c := cache.Wrap(newClient(t, w.model, srv, llm.Options{Retry: llm.RetryPolicy{MaxAttempts: 6}}), store)
				a, err := llm.RunAgent(context.Background(), c, question(w.model), readFile(repoFiles), 5)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}

			a := run()
			if a.Text != "a.go and b.go" || a.Turns != 3 || a.ToolCalls != 3 || a.CachedTurns != 0 || a.Stopped {
				t.Errorf("text %q turns %d calls %d cached %d stopped %v, want the answer after 3 turns and 3 calls",
					a.Text, a.Turns, a.ToolCalls, a.CachedTurns, a.Stopped)
			}
			if a.InputTokens == 0 || a.OutputTokens == 0 {
				t.Errorf("usage not counted: %d in, %d out", a.InputTokens, a.OutputTokens)
			}
			// The slow attempt is the answer: five requests a turn.
			if got, want := srv.Requests(), 3*len(faults); got != want {
				t.Errorf("server saw %d requests, want %d (3 turns × %d attempts)", got, want, len(faults))
			}
			calls := srv.Calls()
			last := decodeJSON(t, calls[len(calls)-1].Body)
			want := decodeJSON(t, []byte(wantWire[w.name]))
			for _, k := range []string{"tools", "messages"} {
				if d := cmp.Diff(want[k], last[k]); d != "" {
					t.Errorf("wire %s of the last request (-want +got):\n%s", k, d)
				}
			}
			if got := len(calls[len(calls)-1].Tools); got != 1 {
				t.Errorf("server decoded %d tools, want 1", got)
			}

			srv.ResetCounts()
			b := run()
			if got := srv.Requests(); got != 0 {
				t.Errorf("rerun: server saw %d requests, want 0", got)
			}
			if b.CachedTurns != 3 || b.Turns != 3 {
				t.Errorf("rerun: %d of %d turns cached, want 3 of 3", b.CachedTurns, b.Turns)
			}
			if d := cmp.Diff(a.Messages, b.Messages); d != "" {
				t.Errorf("rerun conversation differs (-first +rerun):\n%s", d)
			}
			if b.InputTokens != a.InputTokens || b.OutputTokens != a.OutputTokens {
				t.Errorf("rerun usage %d/%d, want the first run's %d/%d", b.InputTokens, b.OutputTokens, a.InputTokens, a.OutputTokens)
			}
		})
	}
}

func TestAgentMaxTurnsAndStop(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Script: script})
	defer srv.Close()
	for _, w := range wires {
		c := newClient(t, w.model, srv, llm.Options{})
		a, err := llm.RunAgent(context.Background(), c, question(w.model), readFile(repoFiles), 2)
		if !errors.Is(err, llm.ErrMaxTurns) || a.Turns != 2 || a.ToolCalls != 3 {
			t.Errorf("%s: max 2 turns: err %v, turns %d, calls %d; want ErrMaxTurns after 2 turns and 3 calls", w.name, err, a.Turns, a.ToolCalls)
		}
		stopAtB := func(ctx context.Context, call llm.ToolCall) (llm.ToolOutput, error) {
			out, err := readFile(repoFiles)(ctx, call)
			out.Stop = strings.Contains(call.Arguments, "b.go")
			return out, err
		}
		a, err = llm.RunAgent(context.Background(), c, question(w.model), stopAtB, 0)
		if err != nil || !a.Stopped || a.Turns != 2 || a.Messages[len(a.Messages)-1].Role != "tool" {
			t.Errorf("%s: stop at b.go: err %v stopped %v turns %d; want a stop after 2 turns, ending with the tool results", w.name, err, a.Stopped, a.Turns)
		}
		boom := errors.New("disk on fire")
		_, err = llm.RunAgent(context.Background(), c, question(w.model),
			func(context.Context, llm.ToolCall) (llm.ToolOutput, error) { return llm.ToolOutput{}, boom }, 0)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "tool read_file (call call_a)") {
			t.Errorf("%s: executor failure: err %v, want it wrapped with the tool and call", w.name, err)
		}
	}
}

// TestScriptChecksResults makes sure the fake server refuses a turn whose
// tool results differ from the script's, with a 400 that is not retried.
func TestScriptChecksResults(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Script: script})
	defer srv.Close()
	for _, w := range wires {
		srv.ResetCounts()
		c := newClient(t, w.model, srv, llm.Options{})
		wrong := map[string]string{"a.go": "package z", "b.go": "package b"}
		a, err := llm.RunAgent(context.Background(), c, question(w.model), readFile(wrong), 0)
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "package z") {
			t.Errorf("%s: err %v, want a 400 naming the unexpected result", w.name, err)
		}
		if a.Turns != 1 || srv.Requests() != 2 {
			t.Errorf("%s: turns %d, requests %d; want 1 and 2 (no retry of the 400)", w.name, a.Turns, srv.Requests())
		}
	}
}

// TestToolCallIDsFilledIn: a server that sends tool calls without ids
// (some OpenAI-compatible ones do) still gets results it can match.
func TestToolCallIDsFilledIn(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Script: []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{{Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{Results: []llm.ToolResult{{CallID: "call_1_1", Content: "package a"}}, Text: "done"},
	}})
	defer srv.Close()
	c := newClient(t, "openai/m", srv, llm.Options{})
	a, err := llm.RunAgent(context.Background(), c, question("openai/m"), readFile(repoFiles), 0)
	if err != nil || a.Text != "done" {
		t.Fatalf("err %v text %q", err, a.Text)
	}
}

func TestToolRequestChecks(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	for _, w := range wires {
		c := newClient(t, w.model, srv, llm.Options{})
		for name, req := range map[string]llm.Request{
			"schema not an object": {Model: w.model, Tools: []llm.Tool{{Name: "x", Parameters: json.RawMessage(`[1]`)}},
				Messages: []llm.Message{{Role: "user", Content: "hi"}}},
			"tool without name": {Model: w.model, Tools: []llm.Tool{{}}, Messages: []llm.Message{{Role: "user", Content: "hi"}}},
			"results in a user message": {Model: w.model,
				Messages: []llm.Message{{Role: "user", ToolResults: []llm.ToolResult{{CallID: "x"}}}}},
			"tool message without results": {Model: w.model, Messages: []llm.Message{{Role: "tool"}}},
			"calls in a user message": {Model: w.model,
				Messages: []llm.Message{{Role: "user", ToolCalls: []llm.ToolCall{{ID: "x", Name: "y"}}}}},
		} {
			if _, err := c.Complete(context.Background(), req); err == nil {
				t.Errorf("%s: %s: no error", w.name, name)
			}
		}
		if got := srv.Requests(); got != 0 {
			t.Errorf("%s: %d requests sent for invalid requests, want 0", w.name, got)
		}
	}
}

// TestBrokenArgumentsInHistory: arguments a model wrote that are not a JSON
// object go back verbatim on the OpenAI wire (a string there) and as an
// empty object on the Anthropic wire, which takes nothing else.
func TestBrokenArgumentsInHistory(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	want := map[string]any{
		"openai":    map[string]any{"name": "read_file", "arguments": `{"path":`},
		"anthropic": map[string]any{},
	}
	for _, w := range wires {
		srv.ResetCounts()
		req := question(w.model)
		req.Messages = append(req.Messages,
			llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":`}}},
			llm.Message{Role: "tool", ToolResults: []llm.ToolResult{{CallID: "c1", Content: "bad arguments", IsError: true}}})
		if _, err := newClient(t, w.model, srv, llm.Options{}).Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		msgs := decodeJSON(t, srv.Calls()[0].Body)["messages"].([]any)
		var got any
		for _, m := range msgs {
			m := m.(map[string]any)
			if m["role"] != "assistant" {
				continue
			}
			if w.name == "openai" {
				got = m["tool_calls"].([]any)[0].(map[string]any)["function"]
			} else {
				got = m["content"].([]any)[0].(map[string]any)["input"]
			}
		}
		if d := cmp.Diff(want[w.name], got); d != "" {
			t.Errorf("%s: arguments on the wire (-want +got):\n%s", w.name, d)
		}
	}
}
