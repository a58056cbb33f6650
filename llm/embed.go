package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Embedder turns texts into vectors: one per text, in order, all of one
// length. Implementations are safe for concurrent use.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedderFunc adapts a function to the Embedder interface.
type EmbedderFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Embed calls f(ctx, texts).
func (f EmbedderFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

// DefaultEmbedBatch is the number of texts [NewEmbedder]'s embedder sends
// in one request when EmbedOptions.Batch is 0: OpenAI takes up to 2,048
// inputs a request, local servers (llama.cpp, TEI) far fewer.
const DefaultEmbedBatch = 64

// EmbedOptions configure [NewEmbedder].
type EmbedOptions struct {
	Options
	// Batch is the number of texts sent in one request; 0 means
	// DefaultEmbedBatch.
	Batch int
}

// NewEmbedder returns the Embedder of a provider/model name:
// "openai/MODEL" posts to the embeddings endpoint of any OpenAI-compatible
// server (OPENAI_BASE_URL, OPENAI_API_KEY, as [New] reads them; a local
// server takes no key). Texts go in batches of opts.Batch, one request at
// a time per call; each request waits for the rate limiter and is retried
// as [New]'s clients are (429 with its Retry-After, 5xx, timeouts, broken
// bodies). A vector whose length differs from the first one's fails the
// call, as a model that changed under the run would.
func NewEmbedder(ctx context.Context, model string, opts EmbedOptions) (Embedder, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("llm: embedding model %s: %w", model, err)
	}
	provider, name, cfg := resolve(model, opts.Options)
	if provider != ProviderOpenAI {
		return nil, fmt.Errorf("llm: embedding model %q: unknown provider %q (want openai/NAME: any OpenAI-compatible embeddings endpoint)", model, provider)
	}
	raw, err := newOpenAIEmbedder(model, name, cfg)
	if err != nil {
		return nil, err
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = DefaultEmbedBatch
	}
	return &embedder{model: model, raw: raw, limiter: NewLimiter(opts.Limits), policy: opts.Retry.withDefaults(),
		rnd: rand.Int64N, batch: batch}, nil
}

// rawEmbedder sends one request: the vectors of texts and the input
// tokens the server counted (0 if it did not say).
type rawEmbedder interface {
	embed(ctx context.Context, texts []string) ([][]float32, int, error)
}

type embedder struct {
	model   string
	raw     rawEmbedder
	limiter *Limiter
	policy  RetryPolicy
	rnd     func(int64) int64
	batch   int

	mu   sync.Mutex
	dims int // the first vector's length; 0 before any
}

// Embed implements [Embedder].
func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		part := texts[start:min(len(texts), start+e.batch)]
		var vecs [][]float32
		err := e.policy.do(ctx, e.rnd, func() error {
			var err error
			vecs, err = e.once(ctx, part)
			return err
		})
		if err != nil {
			return nil, err
		}
		if err := e.checkDims(vecs, start); err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// once sends one batch through the rate limiter.
func (e *embedder) once(ctx context.Context, texts []string) ([][]float32, error) {
	est := 1
	for _, t := range texts {
		est += len(t)/4 + 1
	}
	if err := e.limiter.Wait(ctx, est); err != nil {
		return nil, fmt.Errorf("%s: %w", e.model, err)
	}
	vecs, used, err := e.raw.embed(ctx, texts)
	if err == nil && used > 0 {
		e.limiter.Adjust(est, used)
	}
	var le *Error
	if errors.As(err, &le) && le.StatusCode == http.StatusTooManyRequests && le.RetryAfter > 0 {
		e.limiter.Pause(time.Now().Add(le.RetryAfter))
	}
	return vecs, err
}

// checkDims refuses vectors of another length than the first the
// embedder got (first is the index of vecs[0] in the call, for the
// message).
func (e *embedder) checkDims(vecs [][]float32, first int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, v := range vecs {
		if e.dims == 0 {
			e.dims = len(v)
		}
		if len(v) != e.dims {
			return fmt.Errorf("openai: embeddings for model %s: text %d: vector of %d dimensions, earlier ones had %d", e.model, first+i, len(v), e.dims)
		}
	}
	return nil
}

// checkEmbeddings checks a response's vectors against its request: one per
// text, each index once, none empty. It returns them in the texts' order.
func checkEmbeddings(n int, index []int64, vecs [][]float32) ([][]float32, error) {
	if len(vecs) != n {
		return nil, fmt.Errorf("%d vectors for %d texts", len(vecs), n)
	}
	out := make([][]float32, n)
	for k, i := range index {
		if i < 0 || i >= int64(n) || out[i] != nil {
			return nil, fmt.Errorf("vector index %d out of range or repeated (%d texts)", i, n)
		}
		if len(vecs[k]) == 0 {
			return nil, fmt.Errorf("empty vector for text %d", i)
		}
		out[i] = vecs[k]
	}
	return out, nil
}
