package codesearch

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/repo"
)

// Embedder turns texts into vectors, one per text, all of one length
// (llm.Embedder, through its cache, satisfies it).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Dense ranks an index's chunks by the cosine similarity of their
// embeddings to the query's: the optional dense retriever of the indexed
// search (loc run --embed-model), fused with BM25 and the signals as one
// more list. A chunk is embedded as its path, its name and its lines, cut
// to MaxBytes; the vectors come from Embed, whose cache (keyed by the
// text) makes a chunk that several commits share cost one request.
type Dense struct {
	Embed Embedder
	// MaxBytes bounds the text of a chunk and of the query; 0 means
	// DefaultDenseBytes.
	MaxBytes int
}

// DefaultDenseBytes bounds an embedded text: about 500 tokens of code,
// within what small local embedding models take.
const DefaultDenseBytes = 2000

// denseBatch is the number of chunk texts held and embedded at once, so
// that a large tree's texts are never all in memory.
const denseBatch = 512

// denseTop is the number of chunks the dense list keeps, as BM25's.
const denseTop = 1000

// ListDense names the dense retriever's list in [Evidence] and in
// [Fusion]'s weights.
const ListDense = "dense"

// text cuts s to the byte bound, on a UTF-8 boundary.
func (d *Dense) text(s string) string {
	n := d.MaxBytes
	if n <= 0 {
		n = DefaultDenseBytes
	}
	if len(s) > n {
		// A copy: the cut text must not keep a whole file alive.
		s = strings.Clone(s[:n])
	}
	return strings.ToValidUTF8(s, "")
}

// addTo embeds the query and every chunk of ix (rp at commit), ranks
// them by cosine similarity (files by their best chunk, functions by
// their own) and adds that list to e as ListDense.
func (d *Dense) addTo(ctx context.Context, rp *repo.Repo, commit string, ix *Index, query string, e *Evidence) error {
	qv, err := d.Embed.Embed(ctx, []string{d.text(query)})
	if err != nil {
		return fmt.Errorf("dense: query: %w", err)
	}
	if len(qv) != 1 {
		return fmt.Errorf("dense: query: %d vectors for 1 text", len(qv))
	}
	q := qv[0]
	spans := ix.tables().chunks
	score := make([]float64, len(ix.Chunks))
	var ids []int
	var texts []string
	flush := func() error {
		if len(texts) == 0 {
			return nil
		}
		vs, err := d.Embed.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("dense: chunks: %w", err)
		}
		if len(vs) != len(texts) {
			return fmt.Errorf("dense: chunks: %d vectors for %d texts", len(vs), len(texts))
		}
		for i, v := range vs {
			if len(v) != len(q) {
				return fmt.Errorf("dense: chunk %s: vector of %d dimensions, the query's has %d", ix.Chunks[ids[i]].Path, len(v), len(q))
			}
			score[ids[i]] = cosine(q, v)
		}
		ids, texts = ids[:0], texts[:0]
		return nil
	}
	var ferr error
	err = treeFiles(ctx, rp, commit, nil, func(path, src string, _ *blobEntry, _ string) {
		span, ok := spans[path]
		if !ok || ferr != nil {
			return
		}
		starts := lineStarts(src)
		for i := span[0]; i < span[1]; i++ {
			ids = append(ids, i)
			texts = append(texts, d.text(chunkText(ix.Chunks[i], src, starts)))
		}
		if len(texts) >= denseBatch {
			ferr = flush()
		}
	})
	if err == nil {
		err = ferr
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	order := make([]int, 0, len(score))
	for i, s := range score {
		if s > 0 {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool {
		if score[order[a]] != score[order[b]] {
			return score[order[a]] > score[order[b]]
		}
		return order[a] < order[b]
	})
	l := List{Name: ListDense, Files: ranked{}, Funcs: ranked{}}
	for _, i := range order[:min(len(order), denseTop)] {
		c := ix.Chunks[i]
		if _, ok := l.Files[c.Path]; !ok {
			l.Files[c.Path] = score[i]
		}
		if c.Name != "" {
			id := c.Path + ":" + c.Name
			if _, ok := l.Funcs[id]; !ok {
				l.Funcs[id] = score[i]
				if _, ok := e.chunkOf[id]; !ok {
					e.chunkOf[id] = c
				}
			}
		}
	}
	e.Lists = append(e.Lists, l)
	return nil
}

// chunkText is what a chunk of a file whose text is src (its lines
// starting at starts) is embedded as: its path and name, then its lines
// (a file's chunk: the file from its top, which the byte bound cuts).
func chunkText(c Chunk, src string, starts []int) string {
	var b strings.Builder
	b.WriteString(c.Path)
	b.WriteByte('\n')
	if c.Name != "" {
		b.WriteString(c.Name)
		b.WriteByte('\n')
	}
	if c.Name == "" {
		b.WriteString(src)
		return b.String()
	}
	from, to := max(c.Start, 1)-1, min(c.End, len(starts)-1)
	if from < to {
		b.WriteString(src[starts[from]:starts[to]])
	}
	return b.String()
}

// lineStarts returns the offset of each line of src and len(src) last:
// line l (1-based) is src[starts[l-1]:starts[l]].
func lineStarts(src string) []int {
	starts := []int{0}
	for i := 0; i < len(src); {
		k := strings.IndexByte(src[i:], '\n')
		if k < 0 {
			break
		}
		i += k + 1
		starts = append(starts, i)
	}
	if starts[len(starts)-1] < len(src) {
		starts = append(starts, len(src))
	}
	return starts
}

// cosine is the cosine similarity of a and b (0 when either is zero).
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
