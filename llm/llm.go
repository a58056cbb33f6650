// Package llm calls language models behind one small interface.
//
// A model is named provider/model, the convention Inspect and LiteLLM use:
//
//	openai/gpt-4o-mini          OpenAI chat completions (any OpenAI-compatible
//	                            server: OpenRouter, vLLM, llama.cpp, Ollama)
//	anthropic/claude-sonnet-4-0 Anthropic Messages API
//	replay/runs/answers.jsonl   canned responses read from a JSONL file
//	reference                   the correct answer, computed by a caller-supplied oracle
//
// [New] resolves a name to a [Client]. Network clients are wrapped in a
// rate limiter ([Limiter]) and a retry policy ([RetryPolicy]); the response
// cache lives in the subpackage llm/cache and wraps any Client. Benchmarks
// do not assemble these themselves: runner.OpenModel puts them together,
// once for all of them.
//
// Package llm knows nothing about benchmarks: a Request carries the
// conversation, the sampling parameters, the tools the model may call, and
// an opaque Meta map that only the replay and reference clients read.
//
// # Tool calling
//
// A Request may offer [Tool]s: functions with a JSON-schema for their
// arguments. The model answers with text, or with [ToolCall]s (in
// Response.ToolCalls); the caller runs them and sends the conversation
// again with the assistant's message ([Response.Message]) and a "tool"
// message holding one [ToolResult] per call. Both wire formats carry this:
// OpenAI chat completions (tools, tool_calls, role "tool" messages with
// tool_call_id) and Anthropic messages (tools with input_schema, tool_use
// and tool_result blocks). [RunAgent] runs such a conversation to its end.
// Each turn is a separate request, so the response cache (llm/cache) keys
// every turn by the whole history and a rerun of an agent sends nothing.
//
// API keys come from Options or the environment (see [LoadDotEnv] for .env
// files). They are never logged, and errors returned by this package never
// contain them.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Message is one turn of a conversation. Role is "user", "assistant" or
// "tool" (a "system" message is also accepted and sent as a system
// instruction). An assistant message may carry the ToolCalls the model
// made; a tool message carries the ToolResults of the calls of the
// assistant message before it, and no Content.
type Message struct {
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema of the arguments, an object schema
	// ({"type": "object", "properties": ...}); nil means none.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is the model's request to call a tool.
type ToolCall struct {
	// ID names the call; its result refers to it. [RunAgent] fills in
	// an ID a server left empty.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object of arguments as the model wrote it. It
	// may be invalid JSON or miss required fields: check it.
	Arguments string `json:"arguments"`
}

// ToolResult is the outcome of a ToolCall, sent back to the model.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	// IsError marks a failed call. The Anthropic wire sends it as
	// is_error; the OpenAI wire has no such field, so Content should say
	// what went wrong.
	IsError bool `json:"is_error,omitempty"`
}

// Request is one call to a model.
type Request struct {
	// Model is the full provider/model name, for example "openai/gpt-4o".
	Model string
	// System is the system prompt; empty for none.
	System string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Temperature is the sampling temperature; nil leaves the provider default.
	Temperature *float64
	// MaxTokens bounds the length of the answer; 0 leaves the provider
	// default (Anthropic requires a bound; 4096 is sent then).
	MaxTokens int
	// Seed asks for deterministic sampling where the provider supports it.
	Seed *int64
	// ThinkingBudget, when above 0, turns on Anthropic's extended
	// thinking with that many tokens (the API's minimum is 1024). The API
	// then takes only its default temperature: Temperature must be nil
	// or 1, and max_tokens is sent as the budget plus the answer's bound
	// (MaxTokens, else the default), as APE-Bench adds them. Other
	// providers refuse a request that sets it.
	ThinkingBudget int
	// Tools are the functions the model may call; nil offers none.
	Tools []Tool
	// Sample names one draw among requests that are otherwise the same:
	// the n samples of one prompt carry n different values (APE: "3" for
	// a task's fourth candidate, "3/1" for the second judge vote on it).
	// It is part of the response cache key, so that n samples are n
	// requests the first time and none on a rerun; it is not sent to the
	// provider. Empty for a request that is made once.
	Sample string
	// Meta describes the case a request belongs to (for example id, task,
	// format, prompt). Only the replay and reference clients read it, and it
	// is not part of the cache key.
	Meta map[string]string
}

// Response is a model's answer.
type Response struct {
	// Text is the answer's text content.
	Text string
	// ToolCalls are the tool calls the answer makes, in order; none when
	// the model is done.
	ToolCalls []ToolCall
	// StopReason is why the model stopped, as the provider said it (for
	// example "stop", "tool_calls", "length"; "end_turn", "tool_use",
	// "max_tokens"); empty when unknown.
	StopReason string
	// InputTokens and OutputTokens are the usage the provider reported.
	InputTokens, OutputTokens int
	// Cost is the price in US dollars when known, else 0.
	Cost float64
	// Cached reports that the response came from the response cache and no
	// request was sent; tokens and cost are then those of the original call.
	Cached bool
	// Latency is the time the call took (for a cached response, the lookup).
	Latency time.Duration
	// Offline reports an answer computed here, without a provider (the
	// reference and replay clients): it has no latency to measure, and
	// its Latency is 0, so that two runs of it report the same.
	Offline bool
}

// Message returns the answer as the assistant message to append to the
// conversation before the results of its tool calls.
func (r Response) Message() Message {
	return Message{Role: "assistant", Content: r.Text, ToolCalls: r.ToolCalls}
}

// Client completes requests. Implementations are safe for concurrent use.
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ClientFunc adapts a function to the Client interface.
type ClientFunc func(ctx context.Context, req Request) (Response, error)

// Complete calls f(ctx, req).
func (f ClientFunc) Complete(ctx context.Context, req Request) (Response, error) {
	return f(ctx, req)
}

// Provider names understood by [New].
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderReplay    = "replay"
	ProviderReference = "reference"
)

// SplitModel splits a provider/model name at its first slash:
// "openai/meta-llama/llama-3" gives "openai" and "meta-llama/llama-3".
// A name without a slash (such as "reference") is all provider.
func SplitModel(model string) (provider, name string) {
	provider, name, _ = strings.Cut(model, "/")
	return provider, name
}

// Cacheable reports whether responses of model may be served from a
// response cache. Replay and reference answers depend on Request.Meta, which
// the cache key leaves out, so they are never cached.
func Cacheable(model string) bool {
	switch p, _ := SplitModel(model); p {
	case ProviderOpenAI, ProviderAnthropic:
		return true
	}
	return false
}

// estimateTokens guesses the token count of a request before it is sent:
// about four characters per token for the prompt, plus the answer bound.
func estimateTokens(req Request) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	for _, m := range req.Messages {
		n += len(m.Content) + 4
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments) + 4
		}
		for _, r := range m.ToolResults {
			n += len(r.CallID) + len(r.Content) + 4
		}
	}
	return n/4 + 1 + req.MaxTokens
}

// checkMessages refuses what neither wire format can carry: unknown roles,
// tool calls outside assistant messages, tool results outside tool
// messages, and tools without a name or with a schema that is not a JSON
// object.
func checkMessages(req Request) error {
	for i, m := range req.Messages {
		switch m.Role {
		case "user", "assistant", "system", "tool":
		default:
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return fmt.Errorf("message %d: tool calls in a %s message", i, m.Role)
		}
		if (len(m.ToolResults) > 0) != (m.Role == "tool") {
			return fmt.Errorf("message %d: a tool message carries tool results and only it does", i)
		}
	}
	for i, t := range req.Tools {
		if t.Name == "" {
			return fmt.Errorf("tool %d: no name", i)
		}
		if t.Parameters != nil {
			if _, err := schemaObject(t.Parameters); err != nil {
				return fmt.Errorf("tool %s: parameters: %w", t.Name, err)
			}
		}
	}
	return nil
}

// schemaObject decodes a tool's JSON schema, which must be an object.
func schemaObject(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	return m, nil
}
