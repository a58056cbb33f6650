package codesearch

import (
	"context"
	"sync"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// maxIndexedFile is the largest file indexed; larger ones are data.
const maxIndexedFile = 1 << 20

// treeFiles streams the code files of commit to fn, in tree order: the
// regular files whose language package symbols knows, up to
// maxIndexedFile bytes each. The tree is listed once (ls-tree with
// sizes) and the chosen blobs read by one "git cat-file --batch", so a
// non-code file is never read, and a blob the repository lacks (a
// partial clone) is skipped rather than failing the tree, as "git
// archive" did.
//
// known returns what an earlier build made of a blob (nil if nothing): such
// a blob is not read, and fn gets it with an empty src.
func treeFiles(ctx context.Context, rp *repo.Repo, commit string, known func(id string) *blobEntry, fn func(path string, src string, b *blobEntry, id string)) error {
	type entry struct {
		id, path string
		known    *blobEntry
	}
	var entries []entry
	tree, err := rp.Tree(ctx, commit)
	if err != nil {
		return err
	}
	for _, t := range tree {
		if !t.Regular() || t.Size < 0 || t.Size > maxIndexedFile || symbols.LanguageOf(t.Path) == "" {
			continue
		}
		e := entry{id: t.ID, path: t.Path}
		if known != nil {
			e.known = known(blobKey(e.id, e.path))
		}
		entries = append(entries, e)
	}
	var toRead []string
	var at []int // the entry of each blob to read
	for i, e := range entries {
		if e.known == nil {
			toRead = append(toRead, e.id)
			at = append(at, i)
		}
	}
	next := 0 // the first entry not yet given to fn
	err = rp.Blobs(ctx, toRead, func(i int, src string, ok bool) error {
		// The known entries before this one first: in tree order with the
		// others, as chunk ids follow it.
		for ; next < at[i]; next++ {
			fn(entries[next].path, "", entries[next].known, entries[next].id)
		}
		next++
		if ok {
			fn(entries[at[i]].path, src, nil, entries[at[i]].id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for ; next < len(entries); next++ {
		fn(entries[next].path, "", entries[next].known, entries[next].id)
	}
	return nil
}

// blobKey is the blob cache's key: a blob's id and its path. A file's
// terms hold its path's, so a blob met under another path is chunked anew
// (keyed by id alone, it replayed the first path's terms, and a case's
// ranks depended on the case run before it).
func blobKey(id, path string) string { return id + "\x00" + path }

// blobEntry is what chunking made of one blob at one path: its chunks and
// classes (the path is given again on replay) and each chunk's terms. Consecutive commits of a repository share most blobs, so a
// run over many commits chunks and tokenizes each blob once.
type blobEntry struct {
	chunks, classes, imports []Chunk
	terms                    [][]termCount // in the ids of the cache's interned terms
	size                     int64
}

// blobCache keeps blobEntries within a byte budget, the oldest dropped
// first. Safe for concurrent use.
type blobCache struct {
	mu     sync.Mutex
	max    int64
	size   int64
	byID   map[string]*blobEntry
	queue  []string
	hits   int
	misses int
	// The terms of the entries, interned: an entry's terms are ids, which
	// a vocab translates through a slice, without hashing a string.
	ids   map[string]int32
	terms []string
}

func newBlobCache(max int64) *blobCache {
	return &blobCache{max: max, byID: map[string]*blobEntry{}, ids: map[string]int32{}}
}

// termsNow returns the interned terms so far (ids only grow).
func (c *blobCache) termsNow() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terms
}

func (c *blobCache) get(id string) *blobEntry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.byID[id]
	if b != nil {
		c.hits++
	} else {
		c.misses++
	}
	return b
}

func (c *blobCache) put(id string, chunks, classes, imports []Chunk, terms [][]termCount, v *vocab) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[id]; ok {
		return
	}
	b := c.newBlobEntry(chunks, classes, imports, terms, v)
	if b.size > c.max {
		return
	}
	c.byID[id] = b
	c.queue = append(c.queue, id)
	c.size += b.size
	for c.size > c.max && len(c.queue) > 0 {
		old := c.queue[0]
		c.queue = c.queue[1:]
		c.size -= c.byID[old].size
		delete(c.byID, old)
	}
}

// newBlobEntry keeps what chunkFile made of a blob, its terms interned
// (c.mu held).
func (c *blobCache) newBlobEntry(chunks, classes, imports []Chunk, terms [][]termCount, v *vocab) *blobEntry {
	b := &blobEntry{chunks: make([]Chunk, len(chunks)), classes: make([]Chunk, len(classes)),
		imports: make([]Chunk, len(imports)), terms: make([][]termCount, len(terms))}
	for i, c := range chunks {
		c.Path = ""
		b.chunks[i] = c
		b.size += int64(len(c.Name)) + 48
	}
	for i, c := range classes {
		c.Path = ""
		b.classes[i] = c
		b.size += int64(len(c.Name)) + 48
	}
	for i, c := range imports {
		c.Path = ""
		b.imports[i] = c
		b.size += int64(len(c.Name)) + 48
	}
	for i, tcs := range terms {
		ts := make([]termCount, len(tcs))
		for j, tc := range tcs {
			t := v.terms[tc.term]
			g, ok := c.ids[t]
			if !ok {
				g = int32(len(c.terms))
				c.ids[t] = g
				c.terms = append(c.terms, t)
				b.size += int64(len(t)) + 40
			}
			ts[j] = termCount{g, tc.tf}
		}
		b.terms[i] = ts
		b.size += int64(len(ts))*8 + 24
	}
	return b
}

// replay gives path's chunks and terms from b, in the ids of v, as
// chunkFile would have: the same terms met in the same order. interned
// are the cache's terms (see termsNow).
func (b *blobEntry) replay(v *vocab, interned []string, path string) (chunks []Chunk, terms [][]termCount, classes, imports []Chunk) {
	chunks = make([]Chunk, len(b.chunks))
	for i, c := range b.chunks {
		c.Path = path
		chunks[i] = c
	}
	classes = make([]Chunk, len(b.classes))
	for i, c := range b.classes {
		c.Path = path
		classes[i] = c
	}
	imports = make([]Chunk, len(b.imports))
	for i, c := range b.imports {
		c.Path = path
		imports[i] = c
	}
	terms = make([][]termCount, len(b.terms))
	for i, ts := range b.terms {
		for _, t := range ts {
			v.addInterned(interned, t.term, t.tf)
		}
		terms[i] = v.take()
	}
	return chunks, terms, classes, imports
}
