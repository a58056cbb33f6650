package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
)

// Model-call path files and values shared by every benchmark.
const (
	// CacheFile is the response cache's name inside a run directory.
	CacheFile = "cache.db"
	// CacheOff, as ModelOptions.Cache, turns the response cache off.
	CacheOff = "off"
)

// ModelOptions configure [OpenModel]: which model, how to reach it, and
// where its answers are cached.
type ModelOptions struct {
	// Model is the provider/model name (see llm.New).
	Model string
	// Client, when set, answers instead of the client llm.New would make
	// for Model (tests, programs that bring their own client). It is still
	// wrapped in the cache.
	Client llm.Client
	// LLM configures llm.New: base URL, key, retries, rate limits,
	// per-attempt timeout, price, oracle of the reference model.
	LLM llm.Options
	// Cache is the response cache file: "" means Dir/cache.db (none when
	// Dir is empty too), CacheOff none. Replay and reference answers are
	// never cached (see llm.Cacheable).
	Cache string
	// Dir is the run directory that holds the default cache file.
	Dir string
}

// CachePath returns the cache file o selects, "" for none.
func (o ModelOptions) CachePath() string {
	switch {
	case o.Cache == CacheOff || !llm.Cacheable(o.Model):
		return ""
	case o.Cache != "":
		return o.Cache
	case o.Dir != "":
		return filepath.Join(o.Dir, CacheFile)
	}
	return ""
}

// Model is the one path by which benchmarks call a model: the client of
// llm.New (rate limits, then retries, then price) wrapped in the response
// cache. Every benchmark opens one Model per run and shares it between its
// workers; a case records what its calls cost with [ModelCalls]. A Model is
// safe for concurrent use.
type Model struct {
	name   string
	client llm.Client
	cacheFile
}

// cacheFile is the cache a Model or an Embedder keeps its answers in;
// nil store for none.
type cacheFile struct {
	store *cache.Store
}

// OpenModel builds the client for o.Model and opens its cache. Close the
// Model when the run is over.
func OpenModel(ctx context.Context, o ModelOptions) (*Model, error) {
	if o.Model == "" {
		return nil, fmt.Errorf("no model given")
	}
	m := &Model{name: o.Model, client: o.Client}
	if m.client == nil {
		c, err := llm.New(ctx, o.Model, o.LLM)
		if err != nil {
			return nil, err
		}
		m.client = c
	}
	if path := o.CachePath(); path != "" {
		s, err := cache.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		m.store = s
		m.client = cache.WrapAt(m.client, s, llm.Endpoint(o.Model, o.LLM))
	}
	return m, nil
}

// Name returns the provider/model name the Model was opened for.
func (m *Model) Name() string { return m.name }

// Complete sends req (its Model set to the Model's name when empty)
// through the cache, rate limiter and retries.
func (m *Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if req.Model == "" {
		req.Model = m.name
	}
	return m.client.Complete(ctx, req)
}

// Recording returns a Client that calls m and adds every call's usage to u,
// for a case that makes several calls (an agent's turns, see llm.RunAgent).
func (m *Model) Recording(u *ModelCalls) llm.Client {
	return llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		start := time.Now()
		resp, err := m.Complete(ctx, req)
		u.Add(resp, err, time.Since(start))
		return resp, err
	})
}

// CacheStats returns the cache's hits and misses (of requests; of texts
// for an Embedder); zero without a cache.
func (c cacheFile) CacheStats() cache.Stats {
	if c.store == nil {
		return cache.Stats{}
	}
	return c.store.Stats()
}

// Close closes the cache.
func (c cacheFile) Close() error {
	if c.store == nil {
		return nil
	}
	return c.store.Close()
}

// Embedder is an embedding model opened for a run: llm.NewEmbedder's
// client (batches, rate limits, retries) through the embedding cache.
type Embedder struct {
	llm.Embedder
	cacheFile
}

// OpenEmbedder opens the embedding model o.Model; o.Cache is the cache
// file of its vectors (keyed by text, shared by runs and commits): ""
// or CacheOff for none. o.Dir is not read.
func OpenEmbedder(ctx context.Context, o ModelOptions) (*Embedder, error) {
	e, err := llm.NewEmbedder(ctx, o.Model, llm.EmbedOptions{Options: o.LLM})
	if err != nil {
		return nil, err
	}
	out := &Embedder{Embedder: e}
	if o.Cache != "" && o.Cache != CacheOff {
		if err := os.MkdirAll(filepath.Dir(o.Cache), 0o777); err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
		s, err := cache.Open(ctx, o.Cache)
		if err != nil {
			return nil, err
		}
		out.store = s
		out.Embedder = cache.WrapEmbedder(e, s, o.Model, llm.Endpoint(o.Model, o.LLM))
	}
	return out, nil
}

// ModelCalls totals the model calls of one case for its results row; embed
// it in the benchmark's [Result] and its Usage method counts what the case
// spent this time (nothing for answers served from the cache). A case's
// calls are recorded one after another: ModelCalls is not for concurrent
// use.
type ModelCalls struct {
	// LatencyMS is the time the calls took: the provider's latency of each
	// answer (of the attempt that succeeded), or the wall time of a failed
	// call; a cached answer counts its lookup, an offline one (reference,
	// replay) nothing.
	LatencyMS int64 `json:"latency_ms"`
	// Tokens and Cost total input and output tokens and US dollars of
	// every answer, cached ones included (their original call's).
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost"`
	// Cached reports that every answer came from the cache: nothing was
	// sent and nothing paid this time.
	Cached bool `json:"cached"`

	calls, fresh int // calls recorded; of those, failed or not cached
	spent        Usage
}

// Add records one call's answer (or its error) and its wall time.
func (u *ModelCalls) Add(resp llm.Response, err error, elapsed time.Duration) {
	u.calls++
	if err != nil || !resp.Cached {
		u.fresh++
	}
	u.Cached = u.fresh == 0
	if err != nil {
		u.LatencyMS += elapsed.Milliseconds()
		return
	}
	switch {
	case resp.Offline:
		elapsed = 0
	case resp.Latency > 0:
		elapsed = resp.Latency
	}
	u.LatencyMS += elapsed.Milliseconds()
	tokens := int64(resp.InputTokens + resp.OutputTokens)
	u.Tokens += tokens
	u.Cost += resp.Cost
	if !resp.Cached {
		u.spent.Tokens += tokens
		u.spent.Cost += resp.Cost
	}
}

// Usage is what the recorded calls spent this time: their tokens and cost
// less those of answers served from the cache.
func (u *ModelCalls) Usage() Usage { return u.spent }
