package cache_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm/llmtest"
)

// The benchmark: a fake OpenAI server answering after 200ms, 1000
// cases, 64 workers, through the full stack New builds (retry, rate
// limiter without limits) wrapped in the cache. The ideal wall time is
// 1000 × 0.2s / 64 = 3.125s; the target is at most 1.3× that, and at most
// 2s for a rerun served from the cache.
const (
	benchCases   = 1000
	benchWorkers = 64
	benchLatency = 200 * time.Millisecond
	benchModel   = "openai/bench-model"
)

var benchIdeal = time.Duration(benchCases) * benchLatency / benchWorkers

func BenchmarkConcurrentFakeServer(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Config{Latency: benchLatency})
	defer srv.Close()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv.ResetCounts()
		s := open(b, filepath.Join(b.TempDir(), "cache.db"))
		c := stack(b, benchModel, srv, s)
		b.StartTimer()

		start := time.Now()
		runAll(b, c, benchModel, benchCases, benchWorkers)
		total += time.Since(start)

		b.StopTimer()
		if got := srv.Requests(); got != benchCases {
			b.Fatalf("server saw %d requests, want %d", got, benchCases)
		}
		s.Close()
		b.StartTimer()
	}
	wall := total / time.Duration(b.N)
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(benchIdeal.Seconds(), "ideal-s")
	b.ReportMetric(float64(wall)/float64(benchIdeal), "x-ideal")
}

func BenchmarkCachedRerun(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Config{Latency: benchLatency})
	defer srv.Close()
	path := filepath.Join(b.TempDir(), "cache.db")
	warm := open(b, path)
	runAll(b, stack(b, benchModel, srv, warm), benchModel, benchCases, benchWorkers)
	warm.Close()
	srv.ResetCounts()

	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s := open(b, path) // a rerun opens the cache afresh
		out := runAll(b, stack(b, benchModel, srv, s), benchModel, benchCases, benchWorkers)
		s.Close()
		total += time.Since(start)
		for j, r := range out {
			if !r.Cached {
				b.Fatalf("case %d not served from the cache", j)
			}
		}
	}
	b.StopTimer()
	if got := srv.Requests(); got != 0 {
		b.Fatalf("server saw %d requests on cached reruns, want 0", got)
	}
	wall := total / time.Duration(b.N)
	b.ReportMetric(wall.Seconds(), "wall-s")
}
