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
// cache lives in the subpackage llm/cache and wraps any Client.
//
// Package llm knows nothing about benchmarks: a Request carries the
// conversation and the sampling parameters, and an opaque Meta map that only
// the replay and reference clients read.
//
// API keys come from Options or the environment (see [LoadDotEnv] for .env
// files). They are never logged, and errors returned by this package never
// contain them.
package llm

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Message is one turn of a conversation. Role is "user" or "assistant"
// (a "system" message is also accepted and sent as a system instruction).
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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
	// Meta describes the case a request belongs to (for example id, task,
	// format, prompt). Only the replay and reference clients read it, and it
	// is not part of the cache key.
	Meta map[string]string
}

// Response is a model's answer.
type Response struct {
	// Text is the answer's text content.
	Text string
	// InputTokens and OutputTokens are the usage the provider reported.
	InputTokens, OutputTokens int
	// Cost is the price in US dollars when known, else 0.
	Cost float64
	// Cached reports that the response came from the response cache and no
	// request was sent; tokens and cost are then those of the original call.
	Cached bool
	// Latency is the time the call took (for a cached response, the lookup).
	Latency time.Duration
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
	for _, m := range req.Messages {
		n += len(m.Content) + 4
	}
	return n/4 + 1 + req.MaxTokens
}

func checkRoles(req Request) error {
	for i, m := range req.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return nil
}
