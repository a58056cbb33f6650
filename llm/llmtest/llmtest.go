// Package llmtest provides a fake model server for tests: one httptest
// server that speaks the OpenAI chat completions wire format
// (POST .../chat/completions) and the Anthropic Messages wire format
// (POST .../messages), and can be scripted to fail the first attempts of
// every conversation with 429s, 5xx errors, slow answers, truncated JSON or
// dropped connections before it answers.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/llm"
)

// Fault is what the server does to one attempt instead of answering it.
// Fields combine: Delay is served first, then the headers, then Status,
// Truncate or Drop.
type Fault struct {
	// Status, when not 0, is sent with a JSON error body.
	Status int
	// RetryAfter is sent as the Retry-After header when not empty.
	RetryAfter string
	// RetryAfterMS is sent as the retry-after-ms header when not 0.
	RetryAfterMS int
	// Delay is waited before anything is sent (or the client hangs up).
	// With Status, Truncate and Drop unset the attempt then succeeds.
	Delay time.Duration
	// Truncate answers 200 with the first half of a valid JSON body.
	Truncate bool
	// Drop closes the connection without an answer.
	Drop bool
}

// Config scripts a Server.
type Config struct {
	// Latency is waited before every answer, faults included.
	Latency time.Duration
	// Faults are applied per conversation: the n-th attempt of a
	// conversation (same model, system prompt and messages) gets Faults[n];
	// later attempts are answered.
	Faults []Fault
	// Reply computes the answer; nil answers "echo: " and the last message.
	Reply func(model, system string, messages []llm.Message) string
	// APIKey, when set, is required (Authorization: Bearer or x-api-key);
	// other requests get 401.
	APIKey string
	// EchoAuth puts the credentials a request carried into the 401 body,
	// as a badly behaved proxy might, to test that clients redact them.
	EchoAuth bool
}

// Call is one request the server decoded.
type Call struct {
	Wire        string // "openai" or "anthropic"
	Model       string
	System      string
	Messages    []llm.Message
	MaxTokens   int // max_tokens or max_completion_tokens
	Temperature *float64
	Seed        *int64
}

// Server is a fake model server. Close it when done.
type Server struct {
	*httptest.Server
	cfg Config

	mu       sync.Mutex
	requests int
	calls    []Call
	attempts map[string]int
}

// NewServer starts a Server.
func NewServer(cfg Config) *Server {
	s := &Server{cfg: cfg, attempts: make(map[string]int)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// OpenAIBaseURL is the base URL to give an OpenAI client.
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// AnthropicBaseURL is the base URL to give an Anthropic client.
func (s *Server) AnthropicBaseURL() string { return s.URL }

// Requests returns the number of HTTP requests the server has received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Calls returns the requests the server decoded, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ResetCounts forgets the requests seen so far and restarts the fault
// script of every conversation.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = 0
	s.calls = nil
	s.attempts = make(map[string]int)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()

	var wire string
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		wire = "openai"
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
		wire = "anthropic"
	default:
		http.NotFound(w, r)
		return
	}
	if s.cfg.APIKey != "" {
		got := r.Header.Get("X-Api-Key")
		if wire == "openai" {
			got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if got != s.cfg.APIKey {
			msg := "invalid api key"
			if s.cfg.EchoAuth {
				msg += ": " + got
			}
			writeError(w, wire, http.StatusUnauthorized, msg)
			return
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	call, err := decode(wire, body)
	if err != nil {
		writeError(w, wire, http.StatusBadRequest, "bad request: "+err.Error())
		return
	}
	key, _ := json.Marshal([]any{call.Wire, call.Model, call.System, call.Messages})
	s.mu.Lock()
	s.calls = append(s.calls, call)
	n := s.attempts[string(key)]
	s.attempts[string(key)] = n + 1
	s.mu.Unlock()

	var f Fault
	if n < len(s.cfg.Faults) {
		f = s.cfg.Faults[n]
	}
	if !sleep(r, s.cfg.Latency+f.Delay) {
		return
	}
	if f.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMS != 0 {
		w.Header().Set("retry-after-ms", strconv.Itoa(f.RetryAfterMS))
	}
	if f.Status != 0 {
		writeError(w, wire, f.Status, fmt.Sprintf("scripted fault %d on attempt %d", f.Status, n+1))
		return
	}
	text := "echo: "
	if s.cfg.Reply != nil {
		text = s.cfg.Reply(call.Model, call.System, call.Messages)
	} else if len(call.Messages) > 0 {
		text += call.Messages[len(call.Messages)-1].Content
	}
	out := encode(call, text)
	if f.Truncate {
		out = out[:len(out)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

// sleep waits d or until the client hangs up; it reports whether to go on.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeError(w http.ResponseWriter, wire string, status int, msg string) {
	var body any
	typ := "api_error"
	if status == http.StatusTooManyRequests {
		typ = "rate_limit_error"
	}
	if wire == "openai" {
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil, "param": nil}}
	} else {
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// text reads message content that is either a string or a list of parts.
func text(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func decode(wire string, body []byte) (Call, error) {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		System              json.RawMessage `json:"system"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
		Temperature         *float64        `json:"temperature"`
		Seed                *int64          `json:"seed"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Call{}, err
	}
	c := Call{Wire: wire, Model: in.Model, Temperature: in.Temperature, Seed: in.Seed}
	if in.MaxTokens != nil {
		c.MaxTokens = *in.MaxTokens
	}
	if in.MaxCompletionTokens != nil {
		c.MaxTokens = *in.MaxCompletionTokens
	}
	sys, err := text(in.System)
	if err != nil {
		return Call{}, fmt.Errorf("system: %w", err)
	}
	c.System = sys
	for i, m := range in.Messages {
		t, err := text(m.Content)
		if err != nil {
			return Call{}, fmt.Errorf("message %d: %w", i, err)
		}
		if wire == "openai" && (m.Role == "system" || m.Role == "developer") {
			c.System += t
			continue
		}
		c.Messages = append(c.Messages, llm.Message{Role: m.Role, Content: t})
	}
	if c.Model == "" {
		return Call{}, fmt.Errorf("no model")
	}
	return c, nil
}

func encode(c Call, text string) []byte {
	in := len(c.System) / 4
	for _, m := range c.Messages {
		in += len(m.Content) / 4
	}
	in++
	out := len(text)/4 + 1
	var body any
	if c.Wire == "openai" {
		body = map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": c.Model,
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": text},
			}},
			"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
		}
	} else {
		body = map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "model": c.Model,
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out},
		}
	}
	b, _ := json.Marshal(body)
	return b
}
