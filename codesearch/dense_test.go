package codesearch

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// conceptEmbedder is a stand-in embedding model that knows one synonym
// BM25 cannot: texts about keeping results in memory (persist) point one
// way, every other text another.
type conceptEmbedder struct {
	mu    sync.Mutex
	texts []string
}

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.texts = append(e.texts, texts...)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		if strings.Contains(s, "persist") || strings.Contains(s, "kept in memory") {
			out[i] = []float32{1, 0.1}
		} else {
			out[i] = []float32{0, 1}
		}
	}
	return out, nil
}

// TestDenseRank: the dense list puts first the function that only the
// embedding model relates to the query, through Indexed's hook into the
// fusion; every chunk is embedded once per search, within the byte bound.
func TestDenseRank(t *testing.T) {
	r, _, commit := rankRepo(t)
	ctx := context.Background()
	query := "Results are not kept in memory between calls\nWe expected them to stay around. " + strings.Repeat("x", 300)
	plain := NewIndexed("")
	without, err := plain.Rank(ctx, r, commit, query)
	if err != nil {
		t.Fatal(err)
	}
	if len(without.Functions) > 0 && without.Functions[0].Name == "persist" {
		t.Fatalf("BM25 alone finds persist first: the test does not test the dense list")
	}
	emb := &conceptEmbedder{}
	dense := NewIndexed("")
	dense.Dense = &Dense{Embed: emb, MaxBytes: 120}
	got, err := dense.Rank(ctx, r, commit, query)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) == 0 || got.Files[0] != "pkg/array/core.py" {
		t.Errorf("files = %q, want pkg/array/core.py first", got.Files)
	}
	if len(got.Functions) == 0 || got.Functions[0].Path+":"+got.Functions[0].Name != "pkg/array/core.py:persist" {
		t.Errorf("functions = %+v, want pkg/array/core.py:persist first", got.Functions)
	}
	ev, err := dense.Evidence(ctx, r, commit, query)
	if err != nil || ev.Lists[len(ev.Lists)-1].Name != ListDense {
		t.Errorf("evidence %+v (%v), want the dense list last", ev, err)
	}
	emb.texts = emb.texts[:len(emb.texts)/2] // the second search's texts
	ix, _ := dense.Index(ctx, r, commit)
	if want := 1 + len(ix.Chunks); len(emb.texts) != want {
		t.Errorf("%d texts embedded, want %d (the query and each chunk once)", len(emb.texts), want)
	}
	for _, s := range emb.texts {
		if len(s) > 120 {
			t.Errorf("text of %d bytes over the bound 120: %.40q", len(s), s)
		}
	}
	if emb.texts[0] != query[:120] {
		t.Errorf("query sent as %q", emb.texts[0])
	}
	var persist string
	for _, s := range emb.texts {
		if strings.HasPrefix(s, "pkg/array/core.py\npersist\n") {
			persist = s
		}
	}
	if want := "pkg/array/core.py\npersist\ndef persist(x):\n    return x\n"; persist != want {
		t.Errorf("persist embedded as %q, want %q", persist, want)
	}
}

// TestDenseErrors: a failing model or one whose vectors do not fit the
// query's fails the search, naming what went wrong.
func TestDenseErrors(t *testing.T) {
	r, _, commit := rankRepo(t)
	for _, tc := range []struct {
		name string
		emb  func(texts []string) ([][]float32, error)
		err  string
	}{
		{"model fails", func([]string) ([][]float32, error) { return nil, errFake }, "dense: query: fake failure"},
		{"dimensions differ", func(texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i, s := range texts {
				out[i] = []float32{1, 2}
				if strings.HasPrefix(s, "pkg/") {
					out[i] = []float32{1, 2, 3}
				}
			}
			return out, nil
		}, "vector of 3 dimensions, the query's has 2"},
		{"too few vectors", func(texts []string) ([][]float32, error) { return make([][]float32, len(texts)-1), nil }, "0 vectors for 1 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewIndexed("")
			s.Dense = &Dense{Embed: embedFunc(tc.emb)}
			_, err := s.Rank(context.Background(), r, commit, "query")
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

type embedFunc func([]string) ([][]float32, error)

func (f embedFunc) Embed(_ context.Context, texts []string) ([][]float32, error) { return f(texts) }

type fakeErr struct{}

func (fakeErr) Error() string { return "fake failure" }

var errFake error = fakeErr{}

func TestChunkText(t *testing.T) {
	src := "a = 1\ndef f():\n    return 2\n\ndef g():\n    pass"
	starts := lineStarts(src)
	for _, tc := range []struct {
		c    Chunk
		want string
	}{
		{Chunk{Path: "m.py", Name: "f", Start: 2, End: 3}, "m.py\nf\ndef f():\n    return 2\n"},
		{Chunk{Path: "m.py", Name: "g", Start: 5, End: 6}, "m.py\ng\ndef g():\n    pass"},
		{Chunk{Path: "m.py", Start: 1, End: 5}, "m.py\n" + src},
		{Chunk{Path: "m.py", Name: "h", Start: 9, End: 12}, "m.py\nh\n"},
	} {
		if got := chunkText(tc.c, src, starts); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}
