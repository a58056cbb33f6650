// Package llmtest provides a fake model server for tests: one httptest
// server that speaks the OpenAI chat completions wire format
// (POST .../chat/completions) and the Anthropic Messages wire format
// (POST .../messages), and can be scripted to fail the first attempts of
// every conversation with 429s, 5xx errors, slow answers, truncated JSON or
// dropped connections before it answers.
//
// Config.Script scripts tool-calling conversations: the server answers a
// request with the turn whose index is the number of assistant messages in
// it, checks the tool results the request brings back, and answers with
// that turn's tool calls or text in the wire format's own shape (tool_calls
// with finish_reason "tool_calls"; tool_use blocks with stop_reason
// "tool_use"). Every turn is a conversation of its own for the fault
// script, so each turn's first attempts fail as configured.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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
	// Script, when set, answers instead of Reply: see the package
	// documentation. A request with more assistant messages than the
	// script has turns, or with other tool results than its turn
	// expects, is answered 400 with what differs.
	Script []Turn
	// APIKey, when set, is required (Authorization: Bearer or x-api-key);
	// other requests get 401.
	APIKey string
	// Embed computes the vector of one text for the embeddings endpoint
	// (POST .../embeddings, OpenAI's wire format); nil means
	// [HashEmbedding] with 16 dimensions.
	Embed func(model, text string) []float32
	// EchoAuth puts the credentials a request carried into the 401 body,
	// as a badly behaved proxy might, to test that clients redact them.
	EchoAuth bool
}

// Turn is one answer of a scripted conversation.
type Turn struct {
	// Results, when not nil, are the tool results the request must end
	// with (call ids and contents, in order; IsError too on the Anthropic
	// wire, which carries it).
	Results []llm.ToolResult
	// Text is the answer's text; ToolCalls the calls it makes.
	Text      string
	ToolCalls []llm.ToolCall
}

// Call is one request the server decoded.
type Call struct {
	Wire        string // "openai" or "anthropic"
	Model       string
	System      string
	Messages    []llm.Message // tool results of one turn in one "tool" message
	Tools       []llm.Tool
	MaxTokens   int // max_tokens or max_completion_tokens
	Temperature *float64
	Seed        *int64
	// Inputs are the texts of an embeddings request.
	Inputs []string
	// Body is the request body as sent, for asserting the wire format.
	Body []byte
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
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/embeddings"):
		wire = "embeddings"
	default:
		http.NotFound(w, r)
		return
	}
	if s.cfg.APIKey != "" {
		got := r.Header.Get("X-Api-Key")
		if wire != "anthropic" {
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
	var call Call
	if wire == "embeddings" {
		call, err = decodeEmbeddings(body)
	} else {
		call, err = decode(wire, body)
	}
	if err != nil {
		writeError(w, wire, http.StatusBadRequest, "bad request: "+err.Error())
		return
	}
	key, _ := json.Marshal([]any{call.Wire, call.Model, call.System, call.Messages, call.Inputs})
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
	var out []byte
	if wire == "embeddings" {
		out = s.embeddings(call)
	} else {
		out = s.answer(w, call)
		if out == nil {
			return
		}
	}
	if f.Truncate {
		out = out[:len(out)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

// answer encodes the answer to a chat call, or writes an error and
// returns nil.
func (s *Server) answer(w http.ResponseWriter, call Call) []byte {
	wire := call.Wire
	turn := Turn{Text: "echo: "}
	switch {
	case s.cfg.Script != nil:
		var err error
		if turn, err = scripted(s.cfg.Script, call); err != nil {
			writeError(w, wire, http.StatusBadRequest, "script: "+err.Error())
			return nil
		}
	case s.cfg.Reply != nil:
		turn.Text = s.cfg.Reply(call.Model, call.System, call.Messages)
	case len(call.Messages) > 0:
		turn.Text += call.Messages[len(call.Messages)-1].Content
	}
	return encode(call, turn)
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
	if wire != "anthropic" {
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

// scripted returns the turn of script that answers c.
func scripted(script []Turn, c Call) (Turn, error) {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	if n >= len(script) {
		return Turn{}, fmt.Errorf("request has %d assistant messages; the script has %d turns", n, len(script))
	}
	t := script[n]
	if t.Results == nil {
		return t, nil
	}
	var got []llm.ToolResult
	if k := len(c.Messages); k > 0 && c.Messages[k-1].Role == "tool" {
		got = c.Messages[k-1].ToolResults
	}
	want := t.Results
	if c.Wire == "openai" {
		// The OpenAI wire has no error flag.
		want = append([]llm.ToolResult(nil), want...)
		for i := range want {
			want[i].IsError = false
		}
	}
	if !slices.Equal(got, want) {
		return Turn{}, fmt.Errorf("turn %d: got tool results %+v, want %+v", n+1, got, want)
	}
	return t, nil
}

// wireMessage is a message of either wire format.
type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// block is an Anthropic content block.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func decode(wire string, body []byte) (Call, error) {
	var in struct {
		Model               string          `json:"model"`
		Messages            []wireMessage   `json:"messages"`
		System              json.RawMessage `json:"system"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
		Temperature         *float64        `json:"temperature"`
		Seed                *int64          `json:"seed"`
		Tools               []struct {
			Function    *llm.Tool       `json:"function"` // OpenAI
			Name        string          `json:"name"`     // Anthropic
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Call{}, err
	}
	c := Call{Wire: wire, Model: in.Model, Temperature: in.Temperature, Seed: in.Seed, Body: body}
	if in.MaxTokens != nil {
		c.MaxTokens = *in.MaxTokens
	}
	if in.MaxCompletionTokens != nil {
		c.MaxTokens = *in.MaxCompletionTokens
	}
	for _, t := range in.Tools {
		if t.Function != nil {
			c.Tools = append(c.Tools, *t.Function)
		} else {
			c.Tools = append(c.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		}
	}
	sys, err := text(in.System)
	if err != nil {
		return Call{}, fmt.Errorf("system: %w", err)
	}
	c.System = sys
	for i, m := range in.Messages {
		var msgs []llm.Message
		if wire == "openai" {
			msgs, err = decodeOpenAI(m)
		} else {
			msgs, err = decodeAnthropic(m)
		}
		if err != nil {
			return Call{}, fmt.Errorf("message %d: %w", i, err)
		}
		for _, msg := range msgs {
			k := len(c.Messages)
			switch {
			case msg.Role == "system":
				c.System += msg.Content
			case msg.Role == "tool" && k > 0 && c.Messages[k-1].Role == "tool":
				// One tool message per turn, as package llm has it.
				c.Messages[k-1].ToolResults = append(c.Messages[k-1].ToolResults, msg.ToolResults...)
			default:
				c.Messages = append(c.Messages, msg)
			}
		}
	}
	if c.Model == "" {
		return Call{}, fmt.Errorf("no model")
	}
	return c, nil
}

func decodeOpenAI(m wireMessage) ([]llm.Message, error) {
	t, err := text(m.Content)
	if err != nil {
		return nil, err
	}
	switch m.Role {
	case "developer":
		m.Role = "system"
	case "tool":
		if m.ToolCallID == "" {
			return nil, fmt.Errorf("tool message without tool_call_id")
		}
		return []llm.Message{{Role: "tool", ToolResults: []llm.ToolResult{{CallID: m.ToolCallID, Content: t}}}}, nil
	}
	msg := llm.Message{Role: m.Role, Content: t}
	for _, tc := range m.ToolCalls {
		if tc.Type != "function" || tc.ID == "" {
			return nil, fmt.Errorf("tool call %q of type %q", tc.ID, tc.Type)
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return []llm.Message{msg}, nil
}

// decodeAnthropic splits a message into package llm's shape: tool_result
// blocks become a "tool" message before the rest of a user message.
func decodeAnthropic(m wireMessage) ([]llm.Message, error) {
	var blocks []block
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		t, err := text(m.Content)
		if err != nil {
			return nil, err
		}
		return []llm.Message{{Role: m.Role, Content: t}}, nil
	}
	var results []llm.ToolResult
	msg := llm.Message{Role: m.Role}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			msg.Content += b.Text
		case "tool_use":
			if m.Role != "assistant" || b.ID == "" {
				return nil, fmt.Errorf("tool_use block %q in a %s message", b.ID, m.Role)
			}
			var args bytes.Buffer
			if err := json.Compact(&args, b.Input); err != nil {
				return nil, fmt.Errorf("tool_use %s: input: %w", b.ID, err)
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args.String()})
		case "tool_result":
			if m.Role != "user" || b.ToolUseID == "" {
				return nil, fmt.Errorf("tool_result block for %q in a %s message", b.ToolUseID, m.Role)
			}
			t, err := text(b.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			results = append(results, llm.ToolResult{CallID: b.ToolUseID, Content: t, IsError: b.IsError})
		default:
			return nil, fmt.Errorf("unknown block type %q", b.Type)
		}
	}
	var out []llm.Message
	if results != nil {
		out = append(out, llm.Message{Role: "tool", ToolResults: results})
	}
	if results == nil || msg.Content != "" {
		out = append(out, msg)
	}
	return out, nil
}

func encode(c Call, t Turn) []byte {
	in := len(c.System) / 4
	for _, m := range c.Messages {
		in += len(m.Content) / 4
		for _, r := range m.ToolResults {
			in += len(r.Content) / 4
		}
	}
	in++
	out := len(t.Text)/4 + 1
	for _, tc := range t.ToolCalls {
		out += (len(tc.Name) + len(tc.Arguments)) / 4
	}
	var body any
	if c.Wire == "openai" {
		msg := map[string]any{"role": "assistant", "content": t.Text}
		finish := "stop"
		if len(t.ToolCalls) > 0 {
			finish = "tool_calls"
			var calls []any
			for _, tc := range t.ToolCalls {
				calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
					"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
			}
			msg["tool_calls"] = calls
			if t.Text == "" {
				msg["content"] = nil
			}
		}
		body = map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
			"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
		}
	} else {
		content := []any{}
		if t.Text != "" || len(t.ToolCalls) == 0 {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		stop := "end_turn"
		for _, tc := range t.ToolCalls {
			stop = "tool_use"
			var input any = json.RawMessage(tc.Arguments)
			if !json.Valid([]byte(tc.Arguments)) {
				input = tc.Arguments // a broken call, for tests of the client's checks
			}
			content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
		}
		body = map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "model": c.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out},
		}
	}
	b, _ := json.Marshal(body)
	return b
}

// decodeEmbeddings reads an OpenAI embeddings request: input is a string
// or a list of strings.
func decodeEmbeddings(body []byte) (Call, error) {
	var in struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Call{}, err
	}
	c := Call{Wire: "embeddings", Model: in.Model, Body: body}
	var one string
	if err := json.Unmarshal(in.Input, &one); err == nil {
		c.Inputs = []string{one}
	} else if err := json.Unmarshal(in.Input, &c.Inputs); err != nil {
		return Call{}, fmt.Errorf("input is neither a string nor a list of strings: %w", err)
	}
	if len(c.Inputs) == 0 {
		return Call{}, fmt.Errorf("no input")
	}
	return c, nil
}

// embeddings encodes the answer to an embeddings call, the vectors listed
// last first (their index fields say where they belong, as the wire
// format allows).
func (s *Server) embeddings(c Call) []byte {
	embed := s.cfg.Embed
	if embed == nil {
		embed = func(_, text string) []float32 { return HashEmbedding(text, 16) }
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	tokens := 0
	for i := len(c.Inputs) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, embed(c.Model, c.Inputs[i])})
		tokens += len(strings.Fields(c.Inputs[i]))
	}
	out, _ := json.Marshal(map[string]any{"object": "list", "model": c.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
	return out
}

// HashEmbedding is a stand-in for an embedding model: each lower-cased
// word of text (runs of letters and digits) adds 1 to the dimension its
// hash picks. Texts sharing words point the same way.
func HashEmbedding(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		h := uint32(2166136261)
		for i := 0; i < len(w); i++ {
			h = (h ^ uint32(w[i])) * 16777619
		}
		v[h%uint32(dims)]++
	}
	return v
}
