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
	if err := checkRoles(req); err != nil {
		return Response{}, fmt.Errorf("%s for model %s: %w", op, c.name, err)
	}
	params := openai.ChatCompletionNewParams{Model: c.name}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case "assistant":
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		}
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
	return Response{
		Text:         out.Choices[0].Message.Content,
		InputTokens:  int(out.Usage.PromptTokens),
		OutputTokens: int(out.Usage.CompletionTokens),
		Latency:      latency,
	}, nil
}
