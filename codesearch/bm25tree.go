package codesearch

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// maxIndexedFile is the largest file indexed; larger ones are data.
const maxIndexedFile = 1 << 20

// treeFiles streams the code files of commit to fn, in tree order: the
// regular files whose language package symbols knows, up to
// maxIndexedFile bytes each. The tree is listed and the chosen blobs read
// through the repository's long-lived "git cat-file --batch" (see
// [repo.Repo.Files]), so a build starts no git process, a non-code file
// is never read, and a blob the repository lacks (a partial clone) is
// skipped rather than failing the tree, as "git archive" did.
//
// known returns what an earlier build made of a blob (nil if nothing): such
// a blob is not read, and fn gets it with an empty src. A known blob was
// chunked, so it is no larger than maxIndexedFile: the listing needs no
// sizes (ls-tree -l read the header of every blob of the tree).
func treeFiles(ctx context.Context, rp *repo.Repo, commit string, known func(id string) *blobEntry, fn func(path string, src string, b *blobEntry, id string)) error {
	type entry struct {
		id, path string
		known    *blobEntry
	}
	var entries []entry
	tree, err := rp.Files(ctx, commit)
	if err != nil {
		return err
	}
	for _, t := range tree {
		if symbols.LanguageOf(t.Path) == "" {
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
		if ok && len(src) <= maxIndexedFile {
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
	mu    sync.Mutex
	max   int64
	size  int64
	byID  map[string]*blobEntry
	queue []string
	// hits counts the files replayed, chunked those chunked (a file
	// read and found over maxIndexedFile is neither).
	hits    int
	chunked int
	// The terms of the entries, interned: an entry's terms are ids, which
	// a vocab translates through a slice, without hashing a string.
	ids   map[string]int32
	terms []string
	// sorted is, per repository, the interned ids of its last build's
	// terms in the order of their strings (see sortTerms).
	sorted map[string][]int32
}

func newBlobCache(max int64) *blobCache {
	return &blobCache{max: max, byID: map[string]*blobEntry{}, ids: map[string]int32{}}
}

// sortTerms sorts used, the interned ids of one build's terms, by their
// strings (interned). counts is the build's count of each id (> 0 for
// those of used; restored on return). The last build of the same
// repository (key) shares most of its terms: they are taken in that
// build's order, and only the others sorted and merged in. Sorting every
// build's terms anew took 4 % of a cold run's CPU over the 84 dev cases.
func (c *blobCache) sortTerms(key string, used, counts []int32, interned []string) []int32 {
	c.mu.Lock()
	prev := c.sorted[key]
	c.mu.Unlock()
	out := make([]int32, 0, len(used))
	for _, g := range prev {
		// A term of the last build met in this one: marked by its count
		// made negative.
		if int(g) < len(counts) && counts[g] > 0 {
			out = append(out, g)
			counts[g] = -counts[g]
		}
	}
	var fresh []int32
	for _, g := range used {
		if counts[g] > 0 {
			fresh = append(fresh, g)
		}
	}
	for _, g := range out {
		counts[g] = -counts[g]
	}
	less := func(a, b int32) int { return strings.Compare(interned[a], interned[b]) }
	slices.SortFunc(fresh, less)
	merged := make([]int32, 0, len(used))
	i, j := 0, 0
	for i < len(out) && j < len(fresh) {
		if less(out[i], fresh[j]) < 0 {
			merged = append(merged, out[i])
			i++
		} else {
			merged = append(merged, fresh[j])
			j++
		}
	}
	merged = append(append(merged, out[i:]...), fresh[j:]...)
	c.mu.Lock()
	if c.sorted == nil {
		c.sorted = map[string][]int32{}
	}
	c.sorted[key] = merged
	c.mu.Unlock()
	return merged
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
	}
	return b
}

// put keeps what chunkFile made of a blob under key. It turns terms,
// in the ids of v, into the cache's interned ids in place, whether or not
// the entry is kept: the build counts them in those ids.
func (c *blobCache) put(key string, chunks, classes, imports []Chunk, terms [][]termCount, v *vocab) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunked++
	b := c.newBlobEntry(chunks, classes, imports, terms, v)
	if _, ok := c.byID[key]; !ok {
		c.add(key, b)
	}
}

// add keeps b under key, dropping the oldest entries past the budget
// (c.mu held).
func (c *blobCache) add(key string, b *blobEntry) {
	if b.size > c.max {
		return
	}
	c.byID[key] = b
	c.queue = append(c.queue, key)
	c.size += b.size
	for c.size > c.max && len(c.queue) > 0 {
		old := c.queue[0]
		c.queue = c.queue[1:]
		c.size -= c.byID[old].size
		delete(c.byID, old)
	}
}

// intern returns the cache's id of term t, and the bytes a new one
// takes (c.mu held).
func (c *blobCache) intern(t string) (int32, int64) {
	if g, ok := c.ids[t]; ok {
		return g, 0
	}
	g := int32(len(c.terms))
	c.ids[t] = g
	c.terms = append(c.terms, t)
	return g, int64(len(t)) + 40
}

// seed puts what chunking made of each file of ix into the cache, as if
// this process had chunked them: a run that builds another commit of the
// repository then reads and chunks only the files that changed. The terms
// of each chunk come from inverting the postings; their order differs
// from a fresh chunking's, which changes no posting nor score.
func (c *blobCache) seed(ix *Index) {
	if c == nil || len(ix.Blobs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	perChunk := make([][]termCount, len(ix.Chunks))
	var grown int64
	for i, t := range ix.Terms {
		g, n := c.intern(t)
		grown += n
		for _, p := range ix.Postings[i] {
			perChunk[p.Chunk] = append(perChunk[p.Chunk], termCount{g, p.TF})
		}
	}
	classes, imports := byPath(ix.Classes), byPath(ix.Imports)
	// A file's chunks are consecutive, its blob the next of ix.Blobs.
	file := 0
	for start := 0; start < len(ix.Chunks) && file < len(ix.Blobs); file++ {
		path := ix.Chunks[start].Path
		end := start
		for end < len(ix.Chunks) && ix.Chunks[end].Path == path {
			end++
		}
		key := blobKey(ix.Blobs[file], path)
		if _, ok := c.byID[key]; !ok {
			b := &blobEntry{chunks: make([]Chunk, 0, end-start), classes: classes[path], imports: imports[path], terms: perChunk[start:end:end], size: grown}
			grown = 0
			for _, ch := range ix.Chunks[start:end] {
				ch.Path = ""
				b.chunks = append(b.chunks, ch)
				b.size += int64(len(ch.Name)) + 48
			}
			for _, cl := range append(b.classes[:len(b.classes):len(b.classes)], b.imports...) {
				b.size += int64(len(cl.Name)) + 48
			}
			for _, ts := range b.terms {
				b.size += int64(len(ts))*8 + 24
			}
			c.add(key, b)
		}
		start = end
	}
}

// byPath groups chunks by their path, each with its path left out, as a
// blobEntry keeps them.
func byPath(chunks []Chunk) map[string][]Chunk {
	m := map[string][]Chunk{}
	for _, c := range chunks {
		p := c.Path
		c.Path = ""
		m[p] = append(m[p], c)
	}
	return m
}

// newBlobEntry keeps what chunkFile made of a blob, its terms interned
// in place (c.mu held). A vocab's id is looked up by its string once per
// build.
func (c *blobCache) newBlobEntry(chunks, classes, imports []Chunk, terms [][]termCount, v *vocab) *blobEntry {
	b := &blobEntry{chunks: pathless(chunks), classes: pathless(classes), imports: pathless(imports), terms: terms}
	for _, cs := range [][]Chunk{chunks, classes, imports} {
		for _, ch := range cs {
			b.size += int64(len(ch.Name)) + 48
		}
	}
	for len(v.toInterned) < len(v.terms) {
		v.toInterned = append(v.toInterned, -1)
	}
	for _, tcs := range terms {
		for j, tc := range tcs {
			g := v.toInterned[tc.term]
			if g < 0 {
				var n int64
				g, n = c.intern(v.terms[tc.term])
				b.size += n
				v.toInterned[tc.term] = g
			}
			tcs[j].term = g
		}
		b.size += int64(len(tcs))*8 + 24
	}
	return b
}

// pathless copies chunks with their path left out, as a blobEntry keeps
// them.
func pathless(chunks []Chunk) []Chunk {
	out := make([]Chunk, len(chunks))
	for i, c := range chunks {
		c.Path = ""
		out[i] = c
	}
	return out
}

// at gives path's chunks, classes and imports from b, as chunkFile and
// fileImports would have; its terms are b.terms, shared.
func (b *blobEntry) at(path string) (chunks, classes, imports []Chunk) {
	return withPath(b.chunks, path), withPath(b.classes, path), withPath(b.imports, path)
}

// withPath copies chunks with their path set to path.
func withPath(chunks []Chunk, path string) []Chunk {
	out := make([]Chunk, len(chunks))
	for i, c := range chunks {
		c.Path = path
		out[i] = c
	}
	return out
}
