//go:build !nosdk

package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openaiClient calls the chat completions endpoint of an OpenAI-compatible
// server through the official SDK, with the SDK's own retries disabled.
type openaiClient struct {
	model   string // full provider/model name
	name    string // model name sent to the server
	sdk     openai.Client
	secret  string
	timeout time.Duration
	// maxCompletionTokens sends the answer bound as max_completion_tokens
	// (what api.openai.com wants) instead of max_tokens (what most
	// OpenAI-compatible servers read).
	maxCompletionTokens bool
}

func newOpenAI(model, name string, cfg resolved) (*openaiClient, error) {
	if name == "" {
		return nil, fmt.Errorf("openai: empty model name in %q", model)
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(cfg.httpClient),
		option.WithMaxRetries(0),
	}
	if cfg.baseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.baseURL))
	}
	if cfg.apiKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.apiKey))
	} else if cfg.baseURL == "" {
		return nil, fmt.Errorf("openai: model %s: OPENAI_API_KEY is not set", name)
	} else {
		// Local servers (llama.cpp, Ollama, vLLM) take any key.
		opts = append(opts, option.WithAPIKey("none"))
	}
	return &openaiClient{
		model:               model,
		name:                name,
		sdk:                 openai.NewClient(opts...),
		secret:              cfg.apiKey,
		timeout:             cfg.timeout,
		maxCompletionTokens: cfg.baseURL == "" || cfg.baseURL == "https://api.openai.com/v1" || cfg.baseURL == "https://api.openai.com/v1/",
	}, nil
}

// Complete sends one chat completion.
func (c *openaiClient) Complete(ctx context.Context, req Request) (Response, error) {
	const op = "openai: chat completion"
	if err := checkMessages(req); err != nil {
		return Response{}, fmt.Errorf("%s for model %s: %w", op, c.name, err)
	}
	if req.ThinkingBudget > 0 {
		return Response{}, fmt.Errorf("%s for model %s: a thinking budget is Anthropic's parameter; this API has none", op, c.name)
	}
	params := openai.ChatCompletionNewParams{Model: c.name}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, openaiMessages(m)...)
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openaiTool(t))
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if c.maxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Seed != nil {
		params.Seed = openai.Int(*req.Seed)
	}

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var res *http.Response
	start := time.Now()
	out, err := c.sdk.Chat.Completions.New(actx, params,
		option.WithResponseInto(&res), option.WithRequestTimeout(c.timeout))
	latency := time.Since(start)
	if err == nil && (out == nil || len(out.Choices) == 0) {
		err = errors.New("response has no choices")
	}
	if err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.Message != "" {
			// The SDK's summary leaves out the server's explanation
			// ("model not found", "context length exceeded").
			err = fmt.Errorf("%w: %s", err, apiErr.Message)
		}
		return Response{}, callError(ctx, op, c.name, c.timeout, res, err, c.secret)
	}
	choice := out.Choices[0]
	resp := Response{
		Text:         choice.Message.Content,
		StopReason:   choice.FinishReason,
		InputTokens:  int(out.Usage.PromptTokens),
		OutputTokens: int(out.Usage.CompletionTokens),
		Latency:      latency,
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return resp, nil
}

// openaiMessages converts one message; a tool message becomes one "tool"
// message per result, as the wire format wants.
func openaiMessages(m Message) []openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case "user":
		return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(m.Content)}
	case "system":
		return []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(m.Content)}
	case "tool":
		var out []openai.ChatCompletionMessageParamUnion
		for _, r := range m.ToolResults {
			out = append(out, openai.ToolMessage(r.Content, r.CallID))
		}
		return out
	}
	if len(m.ToolCalls) == 0 {
		return []openai.ChatCompletionMessageParamUnion{openai.AssistantMessage(m.Content)}
	}
	a := &openai.ChatCompletionAssistantMessageParam{}
	if m.Content != "" {
		a.Content.OfString = openai.String(m.Content)
	}
	for _, tc := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
			},
		})
	}
	return []openai.ChatCompletionMessageParamUnion{{OfAssistant: a}}
}

func openaiTool(t Tool) openai.ChatCompletionToolUnionParam {
	fn := openai.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	if t.Parameters != nil {
		// checkMessages has made sure the schema is an object.
		schema, _ := schemaObject(t.Parameters)
		fn.Parameters = schema
	}
	return openai.ChatCompletionFunctionTool(fn)
}

// openaiEmbedder posts to the embeddings endpoint of an OpenAI-compatible
// server through the official SDK, with the SDK's own retries disabled.
type openaiEmbedder struct {
	model, name string
	sdk         openai.Client
	secret      string
	timeout     time.Duration
}

func newOpenAIEmbedder(model, name string, cfg resolved) (*openaiEmbedder, error) {
	oc, err := newOpenAI(model, name, cfg)
	if err != nil {
		return nil, err
	}
	return &openaiEmbedder{model: model, name: name, sdk: oc.sdk, secret: oc.secret, timeout: oc.timeout}, nil
}

func (c *openaiEmbedder) embed(ctx context.Context, texts []string) ([][]float32, int, error) {
	const op = "openai: embeddings"
	params := openai.EmbeddingNewParams{
		Model:          c.name,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var res *http.Response
	out, err := c.sdk.Embeddings.New(actx, params, option.WithResponseInto(&res), option.WithRequestTimeout(c.timeout))
	var vecs [][]float32
	if err == nil {
		index := make([]int64, len(out.Data))
		raw := make([][]float32, len(out.Data))
		for i, d := range out.Data {
			index[i] = d.Index
			raw[i] = make([]float32, len(d.Embedding))
			for j, x := range d.Embedding {
				raw[i][j] = float32(x)
			}
		}
		// A 2xx answer that does not hold one vector per text is a
		// broken body: temporary, as a truncated one is.
		vecs, err = checkEmbeddings(len(texts), index, raw)
	}
	if err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.Message != "" {
			err = fmt.Errorf("%w: %s", err, apiErr.Message)
		}
		return nil, 0, callError(ctx, op, c.name, c.timeout, res, err, c.secret)
	}
	return vecs, int(out.Usage.PromptTokens), nil
}
