//go:build !nosdk

package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// defaultAnthropicMaxTokens is sent when a request sets no bound: the
// Messages API requires one.
const defaultAnthropicMaxTokens = 4096

// anthropicClient calls the Anthropic Messages API through the official
// SDK, with the SDK's own retries disabled.
type anthropicClient struct {
	model   string
	name    string
	sdk     anthropic.Client
	secret  string
	timeout time.Duration
}

func newAnthropic(model, name string, cfg resolved) (*anthropicClient, error) {
	if name == "" {
		return nil, fmt.Errorf("anthropic: empty model name in %q", model)
	}
	if cfg.apiKey == "" {
		return nil, fmt.Errorf("anthropic: model %s: ANTHROPIC_API_KEY is not set", name)
	}
	opts := []option.RequestOption{
		// Credentials and base URL are resolved here, from Options and the
		// environment; the SDK must not add profiles or tokens of its own.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(cfg.httpClient),
		option.WithMaxRetries(0),
		option.WithAPIKey(cfg.apiKey),
	}
	if cfg.baseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.baseURL))
	}
	return &anthropicClient{
		model:   model,
		name:    name,
		sdk:     anthropic.NewClient(opts...),
		secret:  cfg.apiKey,
		timeout: cfg.timeout,
	}, nil
}

// Complete sends one Messages API request.
func (c *anthropicClient) Complete(ctx context.Context, req Request) (Response, error) {
	const op = "anthropic: messages"
	if err := checkMessages(req); err != nil {
		return Response{}, fmt.Errorf("%s for model %s: %w", op, c.name, err)
	}
	params := anthropic.MessageNewParams{
		Model:     c.name,
		MaxTokens: defaultAnthropicMaxTokens,
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		params.System = append(params.System, anthropic.TextBlockParam{Text: req.System})
	}
	for _, m := range req.Messages {
		if m.Role == "system" {
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			continue
		}
		role, blocks := anthropicBlocks(m)
		// Tool results and the user's next words travel in one user
		// message: the API wants the roles to alternate.
		if n := len(params.Messages); n > 0 && params.Messages[n-1].Role == role {
			params.Messages[n-1].Content = append(params.Messages[n-1].Content, blocks...)
			continue
		}
		params.Messages = append(params.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, anthropicTool(t))
	}
	if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	if req.ThinkingBudget > 0 {
		if req.Temperature != nil && *req.Temperature != 1 {
			return Response{}, fmt.Errorf("%s for model %s: extended thinking takes only temperature 1, not %g", op, c.name, *req.Temperature)
		}
		// The budget counts against max_tokens, which must exceed it:
		// the answer keeps its own bound on top.
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(req.ThinkingBudget))
		params.MaxTokens += int64(req.ThinkingBudget)
	}
	// The Messages API has no seed; Request.Seed is ignored here.

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var res *http.Response
	start := time.Now()
	out, err := c.sdk.Messages.New(actx, params,
		option.WithResponseInto(&res), option.WithRequestTimeout(c.timeout))
	latency := time.Since(start)
	if err == nil && out == nil {
		err = errors.New("empty response")
	}
	if err != nil {
		return Response{}, callError(ctx, op, c.name, c.timeout, res, err, c.secret)
	}
	var text strings.Builder
	var calls []ToolCall
	for _, b := range out.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		}
	}
	return Response{
		Text:         text.String(),
		ToolCalls:    calls,
		StopReason:   string(out.StopReason),
		InputTokens:  int(out.Usage.InputTokens),
		OutputTokens: int(out.Usage.OutputTokens),
		Latency:      latency,
	}, nil
}

// anthropicBlocks converts a user, assistant or tool message to the role
// and content blocks of a Messages API message. Empty text blocks are left
// out: the API refuses them.
func anthropicBlocks(m Message) (anthropic.MessageParamRole, []anthropic.ContentBlockParamUnion) {
	var blocks []anthropic.ContentBlockParamUnion
	if m.Content != "" || (len(m.ToolCalls) == 0 && len(m.ToolResults) == 0) {
		blocks = append(blocks, anthropic.NewTextBlock(m.Content))
	}
	switch m.Role {
	case "assistant":
		for _, tc := range m.ToolCalls {
			input := json.RawMessage(tc.Arguments)
			if !isObject(input) {
				// The model wrote broken arguments; the call's error
				// result says so, and the API takes only an object here.
				input = json.RawMessage("{}")
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
		}
		return anthropic.MessageParamRoleAssistant, blocks
	case "tool":
		for _, r := range m.ToolResults {
			b := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
			if r.Content != "" {
				b.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Content}}}
			}
			if r.IsError {
				b.IsError = anthropic.Bool(true)
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &b})
		}
	}
	return anthropic.MessageParamRoleUser, blocks
}

// anthropicTool converts a tool; the schema's properties and required
// fields have their own places in input_schema, the rest rides along.
func anthropicTool(t Tool) anthropic.ToolUnionParam {
	tp := &anthropic.ToolParam{Name: t.Name}
	if t.Description != "" {
		tp.Description = anthropic.String(t.Description)
	}
	if t.Parameters != nil {
		// checkMessages has made sure the schema is an object.
		schema, _ := schemaObject(t.Parameters)
		tp.InputSchema.Properties = schema["properties"]
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					tp.InputSchema.Required = append(tp.InputSchema.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k == "properties" || k == "required" || k == "type" {
				continue
			}
			if tp.InputSchema.ExtraFields == nil {
				tp.InputSchema.ExtraFields = map[string]any{}
			}
			tp.InputSchema.ExtraFields[k] = v
		}
	}
	return anthropic.ToolUnionParam{OfTool: tp}
}

// isObject reports whether b is a valid JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
