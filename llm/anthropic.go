package llm

import (
	"context"
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
	if err := checkRoles(req); err != nil {
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
		switch m.Role {
		case "user":
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case "assistant":
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		case "system":
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
		}
	}
	if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
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
	for _, b := range out.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	return Response{
		Text:         text.String(),
		InputTokens:  int(out.Usage.InputTokens),
		OutputTokens: int(out.Usage.OutputTokens),
		Latency:      latency,
	}, nil
}
