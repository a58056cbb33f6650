package llm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds one attempt of a network call when Options.Timeout
// is zero.
const DefaultTimeout = 10 * time.Minute

// Options configure [New].
type Options struct {
	// BaseURL overrides the provider's endpoint. Empty means
	// OPENAI_BASE_URL or ANTHROPIC_BASE_URL from the environment, else the
	// provider's public API. With an OpenAI base URL other than OpenAI's
	// own, no API key is needed (llama.cpp, Ollama and vLLM take none).
	BaseURL string
	// APIKey overrides OPENAI_API_KEY or ANTHROPIC_API_KEY.
	APIKey string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(key string) string
	// HTTPClient sends the requests; nil means a client whose transport
	// keeps enough idle connections for many concurrent workers.
	HTTPClient *http.Client
	// Timeout bounds each attempt of a network call; 0 means DefaultTimeout.
	// An attempt that times out is retried.
	Timeout time.Duration
	// Retry is the retry policy of network clients; the zero value means
	// the defaults of RetryPolicy.
	Retry RetryPolicy
	// Limits are the rate limits of network clients; zero means none.
	Limits Limits
	// Oracle answers the model "reference"; New fails for "reference" when
	// it is nil.
	Oracle Oracle
	// Price, when set, is used to fill in Response.Cost of network calls.
	Price *Price
}

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	InputPerMillion, OutputPerMillion float64
}

// Cost returns the price of a call with the given usage.
func (p Price) Cost(inputTokens, outputTokens int) float64 {
	return (float64(inputTokens)*p.InputPerMillion + float64(outputTokens)*p.OutputPerMillion) / 1e6
}

// String describes o without its API key.
func (o Options) String() string {
	key := "unset"
	if o.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("{BaseURL:%q APIKey:%s Timeout:%v Retry:%+v Limits:%+v}", o.BaseURL, key, o.Timeout, o.Retry, o.Limits)
}

// GoString is String, so that %#v does not show the API key either.
func (o Options) GoString() string { return o.String() }

// resolved is Options after defaults and the environment are applied.
type resolved struct {
	baseURL    string
	apiKey     string
	httpClient *http.Client
	timeout    time.Duration
}

// NewHTTPClient returns an HTTP client for model APIs: the default
// transport, with idle connections kept for up to maxConns concurrent
// requests to one host (the standard library keeps two).
func NewHTTPClient(maxConns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = maxConns
	t.MaxIdleConnsPerHost = maxConns
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: t}
}

// New returns the Client for a provider/model name:
//
//   - "openai/MODEL": chat completions with the official openai-go SDK;
//     OPENAI_API_KEY, OPENAI_BASE_URL.
//   - "anthropic/MODEL": the Messages API with the official SDK;
//     ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL.
//   - "replay/PATH": answers read from the JSONL file PATH (see [Replay]).
//   - "reference": the answers of opts.Oracle.
//
// Network clients are wrapped with a [Limiter] for opts.Limits and then
// with opts.Retry, so each attempt, retries included, waits for the rate
// limiter, and a 429's Retry-After holds back every request of the client.
// The SDKs' own retries are off. Wrap the result with the llm/cache package for a
// response cache.
func New(ctx context.Context, model string, opts Options) (Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("llm: model %s: %w", model, err)
	}
	provider, name, cfg := resolve(model, opts)
	var c Client
	switch provider {
	case ProviderOpenAI:
		oc, err := newOpenAI(model, name, cfg)
		if err != nil {
			return nil, err
		}
		c = oc
	case ProviderAnthropic:
		ac, err := newAnthropic(model, name, cfg)
		if err != nil {
			return nil, err
		}
		c = ac
	case ProviderReplay:
		if name == "" {
			return nil, fmt.Errorf("replay: model %q names no file (want replay/PATH)", model)
		}
		return OpenReplay(name)
	case ProviderReference:
		if name != "" {
			return nil, fmt.Errorf("llm: unknown model %q (did you mean reference?)", model)
		}
		if opts.Oracle == nil {
			return nil, fmt.Errorf("reference: no oracle to compute reference answers")
		}
		return reference{oracle: opts.Oracle}, nil
	default:
		return nil, fmt.Errorf("llm: unknown provider %q in model %q (want openai/, anthropic/, replay/ or reference)", provider, model)
	}
	if opts.Price != nil {
		c = withPrice(c, *opts.Price)
	}
	c = WithRateLimit(c, NewLimiter(opts.Limits))
	return WithRetry(c, opts.Retry), nil
}

// resolve splits model and applies the defaults and the environment to
// opts: the provider's base URL and API key variables, the HTTP client,
// the per-attempt timeout.
func resolve(model string, opts Options) (provider, name string, cfg resolved) {
	provider, name = SplitModel(model)
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg = resolved{
		baseURL:    opts.BaseURL,
		apiKey:     opts.APIKey,
		httpClient: opts.HTTPClient,
		timeout:    opts.Timeout,
	}
	if cfg.httpClient == nil {
		cfg.httpClient = NewHTTPClient(256)
	}
	if cfg.timeout <= 0 {
		cfg.timeout = DefaultTimeout
	}
	if cfg.baseURL == "" {
		cfg.baseURL = getenv(baseURLEnv[provider])
	}
	if cfg.apiKey == "" && apiKeyEnv[provider] != "" {
		cfg.apiKey = getenv(apiKeyEnv[provider])
	}
	return provider, name, cfg
}

// apiKeyEnv is the environment variable that holds a provider's API key
// when Options.APIKey is empty.
var apiKeyEnv = map[string]string{ProviderOpenAI: "OPENAI_API_KEY", ProviderAnthropic: "ANTHROPIC_API_KEY"}

// baseURLEnv is the environment variable that names a provider's endpoint
// when Options.BaseURL is empty.
var baseURLEnv = map[string]string{ProviderOpenAI: "OPENAI_BASE_URL", ProviderAnthropic: "ANTHROPIC_BASE_URL"}

// defaultEndpoints are the providers' own endpoints.
var defaultEndpoints = map[string]string{ProviderOpenAI: "https://api.openai.com/v1", ProviderAnthropic: "https://api.anthropic.com"}

// Endpoint returns the base URL that New's client for model sends to, as
// opts and the environment set it, or "" for the provider's own endpoint
// (and for the models that send nothing). A response cache keys answers by
// it: two servers that serve a model of one name may answer differently.
func Endpoint(model string, opts Options) string {
	provider, _ := SplitModel(model)
	env, ok := baseURLEnv[provider]
	if !ok {
		return ""
	}
	u := opts.BaseURL
	if u == "" {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		u = getenv(env)
	}
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	if u == defaultEndpoints[provider] {
		return ""
	}
	return u
}

func withPrice(c Client, p Price) Client {
	return ClientFunc(func(ctx context.Context, req Request) (Response, error) {
		resp, err := c.Complete(ctx, req)
		if err == nil && resp.Cost == 0 {
			resp.Cost = p.Cost(resp.InputTokens, resp.OutputTokens)
		}
		return resp, err
	})
}
