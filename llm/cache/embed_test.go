package cache_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
	"github.com/patchbench/patchbench/llm/llmtest"
)

// TestWrapEmbedder: a text is sent once, whatever the call, the process or
// the run that asks for it again; another endpoint's vectors are its own.
func TestWrapEmbedder(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	fake := llm.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, texts...)
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = llmtest.HashEmbedding(s, 8)
		}
		return out, nil
	})
	path := filepath.Join(t.TempDir(), "embeddings.db")
	ctx := context.Background()
	tests := []struct {
		endpoint string
		texts    []string
		sent     []string
	}{
		{"", []string{"a b", "c", "a b"}, []string{"a b", "c"}},
		{"", []string{"c", "d e", "a b"}, []string{"d e"}},
		{"", []string{"a b", "c", "d e"}, nil},
		{"http://other:8080/v1", []string{"a b"}, []string{"a b"}},
	}
	for i, tt := range tests {
		// Each step opens the file anew, as a later run does.
		s, err := cache.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		sent = nil
		got, err := cache.WrapEmbedder(fake, s, "openai/emb", tt.endpoint).Embed(ctx, tt.texts)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]float32, len(tt.texts))
		for j, x := range tt.texts {
			want[j] = llmtest.HashEmbedding(x, 8)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("step %d: vectors (-want +got):\n%s", i, diff)
		}
		if !slices.Equal(sent, tt.sent) {
			t.Errorf("step %d: sent %q, want %q", i, sent, tt.sent)
		}
		if st := s.Stats(); st.WriteErrors+st.ReadErrors != 0 {
			t.Errorf("step %d: %+v", i, st)
		}
		s.Close()
	}
}
