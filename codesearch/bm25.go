package codesearch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// indexVersion changes whenever the index format or the chunking does, so
// that an old cached index is rebuilt rather than misread.
const indexVersion = 5

// Chunk is one unit of the index: a function (Name set) or the code of a
// file outside its functions (Name empty, Start and End span the file).
type Chunk struct {
	Path       string
	Name       string
	Start, End int
}

type posting struct {
	Chunk int32
	TF    int32
}

// Index is a BM25 index over the chunks of a repository at one commit.
type Index struct {
	Version int
	Chunks  []Chunk
	// Classes are the classes and types the files define (not chunks:
	// their methods are), for resolving the names a query mentions.
	Classes []Chunk
	// Imports are the files' import statements (see [fileImports]):
	// Path the importing file, Name what it imports, Start its line.
	Imports []Chunk
	DocLen  []int32
	// Terms are the index's terms in sorted order, Postings each one's
	// postings (see [Index.postings]): built in that order from the
	// blob cache's sorted terms and written so, without a map of 80,000
	// terms to fill per build and per read.
	Terms    []string
	Postings [][]posting
	AvgLen   float64
	NumFiles int
	// Blobs are the files' blob ids, in the order of their chunks: what
	// a later run replays unchanged files from (see Indexed's seeding).
	Blobs []string

	tab repoTables // the signals' lookups, built on first use
}

// postings returns term t's postings (nil if no chunk has it).
func (ix *Index) postings(t string) []posting {
	i, ok := slices.BinarySearch(ix.Terms, t)
	if !ok {
		return nil
	}
	return ix.Postings[i]
}

// BuildIndex indexes every file of rp at commit whose language package
// symbols knows: one chunk per function or method and one per file for
// the code outside functions (with the file's path, so a query naming a
// file finds it). The files are read by one "git cat-file --batch" (see
// treeFiles) and chunked on all CPUs.
func BuildIndex(ctx context.Context, rp *repo.Repo, commit string) (*Index, error) {
	return buildIndex(ctx, rp, commit, nil)
}

// buildIndex is BuildIndex taking the blobs blobs knows from it, and
// putting the others there (nil: a cache of this build alone).
//
// Every file's terms are in the ids of the cache's interned terms: a file
// replayed from the cache is its entry's slices as they are, and the
// build counts postings in a slice indexed by those ids. Translating each
// replayed file into a build's own vocabulary, then into the build's
// global ids through a map, took a fifth of a cold run's CPU over the 84
// dev cases.
func buildIndex(ctx context.Context, rp *repo.Repo, commit string, blobs *blobCache) (*Index, error) {
	if blobs == nil {
		blobs = newBlobCache(0)
	}
	// A slot is one file: a file met before is filled from its cache
	// entry as it is listed; the workers chunk the others. Slots are
	// counted in file order once all are done, so that chunk ids do not
	// depend on which worker chunked a file. (A channel round trip per
	// replayed file, and a merger woken per file, cost more CPU than
	// their work on a loaded machine.)
	type slot struct {
		path, src string
		id        string
		chunks    []Chunk
		classes   []Chunk
		imports   []Chunk
		terms     [][]termCount // per chunk, in the cache's interned ids
		err       error
	}
	work := make(chan *slot, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := newVocab()
			p := symbols.NewParser()
			defer p.Close()
			for f := range work {
				f.chunks, f.terms, f.classes, f.err = chunkFile(ctx, p, v, f.path, f.src)
				if f.err == nil {
					f.imports = fileImports(f.path, f.src)
					detachNames(f.chunks, f.classes, f.imports)
					blobs.put(blobKey(f.id, f.path), f.chunks, f.classes, f.imports, f.terms, v)
				}
				f.src = ""
			}
		}()
	}
	var slots []*slot
	err := treeFiles(ctx, rp, commit, blobs.get, func(path, src string, b *blobEntry, id string) {
		f := &slot{path: path, src: src, id: id}
		slots = append(slots, f)
		if b != nil {
			f.chunks, f.classes, f.imports = b.at(path)
			f.terms = b.terms
			return
		}
		work <- f
	})
	close(work)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	n := len(slots)

	// Each term's postings counted, in the cache's interned ids.
	var (
		// counts is an interned id → its number of postings, sized for
		// the terms interned so far (it grows with new ones).
		counts   = make([]int32, len(blobs.termsNow()))
		used     []int32 // the interned ids met, in the order met
		nChunks  int
		nClasses int
		nImports int
	)
	for _, f := range slots {
		if f.err != nil {
			return nil, f.err
		}
		nChunks += len(f.chunks)
		nClasses += len(f.classes)
		nImports += len(f.imports)
		for _, tcs := range f.terms {
			for _, tc := range tcs {
				if int(tc.term) >= len(counts) {
					counts = append(counts, make([]int32, int(tc.term)+1-len(counts)+len(counts)/2)...)
				}
				if counts[tc.term] == 0 {
					used = append(used, tc.term)
				}
				counts[tc.term]++
			}
		}
	}
	ix := &Index{Version: indexVersion, NumFiles: n}
	interned := blobs.termsNow()
	used = blobs.sortTerms(rp.GitDir(), used, counts, interned)
	// counts becomes an interned id → its place in used and postings.
	// The postings are cut from one array: one allocation rather than
	// one per term (80,000 for sympy), which the collector need not scan.
	postings := make([][]posting, len(used))
	total := 0
	for _, g := range used {
		total += int(counts[g])
	}
	all := make([]posting, total)
	for k, g := range used {
		n := int(counts[g])
		postings[k], all = all[:0:n], all[n:]
		counts[g] = int32(k)
	}
	ix.Chunks = make([]Chunk, 0, nChunks)
	ix.DocLen = make([]int32, 0, nChunks)
	total = 0
	ix.Blobs = make([]string, 0, len(slots))
	ix.Classes, ix.Imports = make([]Chunk, 0, nClasses), make([]Chunk, 0, nImports)
	for _, f := range slots {
		ix.Blobs = append(ix.Blobs, f.id)
		ix.Classes = append(ix.Classes, f.classes...)
		ix.Imports = append(ix.Imports, f.imports...)
		for j, c := range f.chunks {
			id := int32(len(ix.Chunks))
			ix.Chunks = append(ix.Chunks, c)
			n := int32(0)
			for _, tc := range f.terms[j] {
				k := counts[tc.term]
				postings[k] = append(postings[k], posting{id, tc.tf})
				n += tc.tf
			}
			ix.DocLen = append(ix.DocLen, n)
			total += int(n)
		}
	}
	ix.Terms, ix.Postings = make([]string, len(used)), postings
	for k, g := range used {
		ix.Terms[k] = interned[g]
	}
	if len(ix.Chunks) > 0 {
		ix.AvgLen = float64(total) / float64(len(ix.Chunks))
	}
	return ix, nil
}

// detachNames copies the names of a file's chunks, classes and imports
// into one string of their own: a name cut from the file's text kept the
// whole text alive as long as the index or the blob cache held its chunk
// (the sources of every chunked file, 100 MB at the end of a cold run over
// the 84 dev cases).
func detachNames(lists ...[]Chunk) {
	n := 0
	for _, l := range lists {
		for _, c := range l {
			n += len(c.Name)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range lists {
		for _, c := range l {
			b.WriteString(c.Name)
		}
	}
	all := b.String()
	for _, l := range lists {
		for i := range l {
			k := len(l[i].Name)
			l[i].Name, all = all[:k], all[k:]
		}
	}
}

// Bounds on what one file puts in the index. A line longer than
// maxLineBytes is tokenized up to that length only; a file with a line
// over maxLineMinified bytes, a mean line over maxMeanLine bytes or a
// generated-file marker near its top is minified or generated code and is
// indexed by its path alone (a query naming it still finds it): one
// 521 KB vega.min.js made a 27 MB index.
const (
	maxLineBytes    = 1000
	maxLineMinified = 4096
	maxMeanLine     = 200
)

// generatedMarkers are the markers of generated files, as code generators
// write them in a file's first lines (lower-cased).
var generatedMarkers = []string{"code generated", "do not edit", "@generated", "autogenerated", "auto-generated"}

// machineMade reports whether text is minified or generated code.
func machineMade(text string) bool {
	head := strings.ToLower(text[:min(len(text), 1024)])
	for _, m := range generatedMarkers {
		if strings.Contains(head, m) {
			return true
		}
	}
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	if len(text)/max(lines, 1) > maxMeanLine {
		return true
	}
	for rest := text; len(rest) > maxLineMinified; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 || i > maxLineMinified {
			return true
		}
		rest = rest[i+1:]
	}
	return false
}

// chunkFile splits one file into chunks and counts each chunk's terms
// (in the ids of v). classes are the file's classes (and types), for the
// definitions a query names; they are not chunks.
func chunkFile(ctx context.Context, p *symbols.Parser, v *vocab, path string, text string) (chunks []Chunk, terms [][]termCount, classes []Chunk, err error) {
	if machineMade(text) {
		v.add(path)
		return []Chunk{{Path: path, Start: 1, End: strings.Count(text, "\n")}}, [][]termCount{v.take()}, nil, nil
	}
	var syms []symbols.Symbol
	if symbols.LanguageOf(path) == symbols.Python {
		syms = pythonDefs(text)
	} else {
		res, err := p.Parse(ctx, path, []byte(text))
		if err != nil {
			return nil, nil, nil, err
		}
		syms = res.Symbols
	}
	// Line l (1-based) is text[starts[l-1]:starts[l]].
	starts := make([]int32, 1, strings.Count(text, "\n")+2)
	for i := 0; i < len(text); {
		k := strings.IndexByte(text[i:], '\n')
		if k < 0 {
			break
		}
		i += k + 1
		starts = append(starts, int32(i))
	}
	if int(starts[len(starts)-1]) < len(text) {
		starts = append(starts, int32(len(text)))
	}
	nLines := len(starts) - 1
	line := func(l int) string {
		s := text[starts[l-1]:starts[l]]
		return s[:min(len(s), maxLineBytes)]
	}
	inFunc := make([]bool, nLines+2)
	for _, s := range syms {
		if s.Kind == symbols.Class {
			classes = append(classes, Chunk{Path: path, Name: s.Name, Start: s.Start, End: s.End})
			continue
		}
		// The qualified name counts once more: a query naming the
		// function should find it.
		v.add(s.Name)
		for l := max(s.Start, 1); l <= s.End && l <= nLines; l++ {
			v.add(line(l))
			inFunc[l] = true
		}
		chunks = append(chunks, Chunk{Path: path, Name: s.Name, Start: s.Start, End: s.End})
		terms = append(terms, v.take())
	}
	v.add(path)
	for l := 1; l <= nLines; l++ {
		if !inFunc[l] {
			v.add(line(l))
		}
	}
	chunks = append(chunks, Chunk{Path: path, Start: 1, End: strings.Count(text, "\n")})
	terms = append(terms, v.take())
	return chunks, terms, classes, nil
}

// termCount is a term's count in one chunk; term is an id of a vocab.
type termCount struct {
	term, tf int32
}

// vocab is an index worker's vocabulary and term counter. A repository
// repeats its identifiers so often that splitting and lower-casing each
// distinct word once, and counting terms by id in a slice rather than by
// string in a map, halved the CPU time of the cold index build of sympy
// (1,449 files). Words and terms are copies: the vocabulary keeps no
// file's text alive.
type vocab struct {
	words   map[string][]int32 // a word → the ids of its terms
	ids     map[string]int32   // a term → its id
	terms   []string           // an id → its term
	counts  []int32            // an id → its count in the current chunk
	touched []int32            // the ids counted in the current chunk
	buf     []byte             // a word's terms, lower-cased (see wordTermBytes)
	// toInterned maps this vocab's ids to the blob cache's interned
	// ids (-1: not interned yet).
	toInterned []int32
}

func newVocab() *vocab {
	return &vocab{words: map[string][]int32{}, ids: map[string]int32{}}
}

// add counts the terms of text (see [Tokenize]) in the current chunk.
func (v *vocab) add(text string) {
	eachWord(text, func(word string) {
		ids, ok := v.words[word]
		if !ok {
			v.buf = wordTermBytes(word, v.buf, func(b []byte) {
				id, ok := v.ids[string(b)]
				if !ok {
					id = int32(len(v.terms))
					t := string(b)
					v.ids[t] = id
					v.terms = append(v.terms, t)
					v.counts = append(v.counts, 0)
				}
				ids = append(ids, id)
			})
			v.words[strings.Clone(word)] = ids
		}
		for _, id := range ids {
			if v.counts[id] == 0 {
				v.touched = append(v.touched, id)
			}
			v.counts[id]++
		}
	})
}

// take returns the current chunk's term counts and starts a new chunk.
func (v *vocab) take() []termCount {
	out := make([]termCount, len(v.touched))
	for i, id := range v.touched {
		out[i] = termCount{id, v.counts[id]}
		v.counts[id] = 0
	}
	v.touched = v.touched[:0]
	return out
}

// Tokenize splits text into search terms the way code is written:
// identifiers and path segments are split at non-alphanumerics, then
// each word also into its camelCase and snake_case parts, all lower-case
// (getHTTPResponse_code → gethttpresponse_code... → get, http, response,
// code). Words shorter than two letters and common English and keyword
// words are dropped.
func Tokenize(text string) []string {
	var out []string
	tokenize(text, func(t string) { out = append(out, t) })
	return out
}

func tokenize(text string, emit func(string)) {
	eachWord(text, func(word string) { wordTerms(word, emit) })
}

// eachWord calls fn with each maximal run of ASCII letters, digits and
// underscores of text.
func eachWord(text string, fn func(string)) {
	for i := 0; i < len(text); {
		if !wordByte[text[i]] {
			i++
			continue
		}
		start := i
		for i < len(text) && wordByte[text[i]] {
			i++
		}
		// A one-letter word has no term (see keep): no need to look it up.
		if i-start > 1 {
			fn(text[start:i])
		}
	}
}

// wordByte marks the bytes of words: ASCII letters, digits, underscore.
var wordByte = func() (t [256]bool) {
	for b := 0; b < 256; b++ {
		t[b] = isAlnum(byte(b)) || b == '_'
	}
	return t
}()

// wordTerms emits the terms of one word: the whole word lower-cased when
// it has several parts, then each part (see [splitIdent]).
func wordTerms(word string, emit func(string)) {
	wordTermBytes(word, nil, func(t []byte) { emit(string(t)) })
}

// wordTermBytes is wordTerms lower-casing into buf (returned, to be used
// again): the index build looks each term up as m[string(t)], which does
// not allocate. word is ASCII (see [eachWord]); t is valid during emit only.
func wordTermBytes(word string, buf []byte, emit func(t []byte)) []byte {
	n := 0
	identParts(word, func(string) { n++ })
	if n > 1 {
		if buf = lowerASCII(buf, word); keep(buf) {
			emit(buf)
		}
	}
	identParts(word, func(p string) {
		if buf = lowerASCII(buf, p); keep(buf) {
			emit(buf)
		}
	})
	return buf
}

// lowerASCII returns s lower-cased in buf's memory.
func lowerASCII(buf []byte, s string) []byte {
	buf = append(buf[:0], s...)
	for i, c := range buf {
		if 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	return buf
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// splitIdent splits an identifier at underscores and case changes:
// parseHTTPRequest2 → parse, HTTP, Request2.
func splitIdent(w string) []string {
	var parts []string
	identParts(w, func(p string) { parts = append(parts, p) })
	return parts
}

// identParts calls fn with each part of w, as splitIdent returns them.
func identParts(w string, fn func(string)) {
	for len(w) > 0 {
		seg := w
		if i := strings.IndexByte(w, '_'); i >= 0 {
			seg, w = w[:i], w[i+1:]
		} else {
			w = ""
		}
		start := 0
		for i := 1; i < len(seg); i++ {
			prev, cur := seg[i-1], seg[i]
			upper := cur >= 'A' && cur <= 'Z'
			switch {
			case upper && prev >= 'a' && prev <= 'z',
				upper && prev >= 'A' && prev <= 'Z' && i+1 < len(seg) && seg[i+1] >= 'a' && seg[i+1] <= 'z':
				fn(seg[start:i])
				start = i
			}
		}
		if start < len(seg) {
			fn(seg[start:])
		}
	}
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for not but are was were this that with from into
		have has had you your can will would should could when then than there their what which who
		how why all any each its it is be as at by of on or to in if an do does did so we our use used
		self def return none true false class import else elif pass var let const func fn new null nil
		end int str`) {
		m[w] = true
	}
	return m
}()

func keep[T string | []byte](t T) bool {
	if len(t) < 2 || stopWords[string(t)] {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return true
		}
	}
	return false // numbers say little
}

// Hit is one scored chunk.
type Hit struct {
	Chunk Chunk
	Score float64
}

// Search ranks the chunks for a query with BM25 (k1 = 1.2, b = 0.75) and
// returns the best n.
func (ix *Index) Search(query string, n int) []Hit {
	const k1, b = 1.2, 0.75
	qtf := map[string]int{}
	tokenize(query, func(t string) { qtf[t]++ })
	scores := map[int32]float64{}
	N := float64(len(ix.Chunks))
	for t := range qtf {
		ps := ix.postings(t)
		if len(ps) == 0 {
			continue
		}
		idf := math.Log(1 + (N-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			tf := float64(p.TF)
			dl := float64(ix.DocLen[p.Chunk])
			scores[p.Chunk] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/ix.AvgLen))
		}
	}
	hits := make([]Hit, 0, len(scores))
	for id, s := range scores {
		hits = append(hits, Hit{ix.Chunks[id], s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		a, b := hits[i].Chunk, hits[j].Chunk
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Start < b.Start
	})
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

// Indexed ranks with BM25 over function-level chunks, no model (loc's
// indexed mode). Indexes are built once per repository commit, kept in
// memory for the run and cached on disk under Dir.
type Indexed struct {
	// Dir caches the indexes, one file per repository commit; empty
	// means no disk cache.
	Dir string
	// Signals are the signals fused with BM25 (see [Signals]); nil
	// means [DefaultSignals].
	Signals map[string]bool
	// Fusion weighs the signals' lists; nil means [DefaultFusion].
	Fusion *Fusion

	// Dense, when set, adds the dense retriever's ranking to the fusion
	// (see [Dense]); nil searches without a model.
	Dense *Dense

	// MaxMemory bounds the memory of the indexes kept between searches
	// (see [DefaultIndexMemory]); 0 keeps every index.
	MaxMemory int64

	mu      sync.Mutex
	indexes map[string]*indexEntry
	tick    int
	stats   IndexStats
	// building, loading and querying clock BuildTime, LoadTime and
	// QueryTime (guarded by mu).
	building, loading, querying busyClock
	// builds bounds the indexes built at once to the CPUs: a build
	// already chunks on every CPU, and each one in flight holds its
	// files' terms (8 workers building at once peaked at 1.4 GB).
	builds chan struct{}
	// repoBuilds holds, per repository, a build in flight: the builds of
	// one repository take turns, so that the second replays the files the
	// first chunked (two at once both chunked the files new to the blob
	// cache: 11,200 to 13,900 files over the 84 dev cases, by timing).
	repoBuilds map[string]chan struct{}
	// blobs keeps what chunking made of each blob, within a budget the
	// size of MaxMemory's default: the commits of one repository share
	// most of their files.
	blobs *blobCache
	// seeded are the repositories whose last index file seeded blobs.
	seeded map[string]bool
}

// IndexStats counts what the indexed searcher did with its indexes.
type IndexStats struct {
	Built, Loaded int
	// Dropped counts the indexes dropped from memory to stay within
	// MaxMemory.
	Dropped int
	// Seeded counts the index files of earlier runs whose files the
	// builds replayed (one per repository at most); Chunked and Reused
	// the files the builds chunked and those they replayed, unchanged
	// since a commit indexed before.
	Seeded, Chunked, Reused int
	// BuildTime and LoadTime are the wall time during which indexes were
	// being built (and written) or loaded, QueryTime that of the Queries
	// searches: time when several workers were at it counts once, so that
	// none is larger than the run's wall time (summed over workers, the
	// build time of a run of 2 workers was larger than the run's).
	BuildTime, LoadTime, QueryTime time.Duration
	Queries                        int
}

type indexEntry struct {
	once sync.Once
	ix   *Index
	err  error
	// size is the index's estimated memory; refs the searches using it;
	// used the tick of its last use (guarded by Indexed.mu).
	size       int64
	refs, used int
}

// DefaultIndexMemory is the memory the indexes kept between searches may
// take: beyond it the least recently used are dropped (and read again from
// the disk cache when a later case needs them), so that a run over many
// commits stays in bounded memory.
// A run's cases are mostly of distinct commits, each index searched once:
// a budget of 128 MB kept indexes no case needed again, and was a third
// of a cold run's peak RSS over the 84 dev cases.
const DefaultIndexMemory = 32 << 20

// blobCacheMemory bounds the blob cache (see [blobCache]): what spares
// the builds of later commits of a repository the chunking of the files
// they share with earlier ones.
const blobCacheMemory = 128 << 20

// NewIndexed returns an indexed searcher caching under dir.
func NewIndexed(dir string) *Indexed {
	return &Indexed{Dir: dir, MaxMemory: DefaultIndexMemory,
		indexes: map[string]*indexEntry{}, builds: make(chan struct{}, runtime.GOMAXPROCS(0)),
		blobs: newBlobCache(blobCacheMemory)}
}

// Stats reports how many indexes were built and loaded from disk.
func (s *Indexed) Stats() IndexStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	if s.blobs != nil {
		s.blobs.mu.Lock()
		st.Chunked, st.Reused = s.blobs.chunked, s.blobs.hits
		s.blobs.mu.Unlock()
	}
	return st
}

// Index returns the index of rp at commit: from memory, from the disk
// cache, or built (and then cached).
func (s *Indexed) Index(ctx context.Context, rp *repo.Repo, commit string) (*Index, error) {
	ix, release, err := s.acquire(ctx, rp, commit)
	release()
	return ix, err
}

// acquire is Index for one search: the index stays in memory until
// release is called.
func (s *Indexed) acquire(ctx context.Context, rp *repo.Repo, commit string) (*Index, func(), error) {
	full, err := rp.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, func() {}, err
	}
	key := rp.GitDir() + "\x00" + full
	s.mu.Lock()
	if s.indexes == nil {
		s.indexes = map[string]*indexEntry{}
	}
	e := s.indexes[key]
	if e == nil {
		e = &indexEntry{}
		s.indexes[key] = e
	}
	e.refs++
	s.mu.Unlock()
	e.once.Do(func() {
		e.ix, e.err = s.load(ctx, rp, full)
		if e.ix != nil {
			s.mu.Lock()
			e.size = e.ix.memSize()
			s.mu.Unlock()
		}
	})
	release := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		e.refs--
		s.tick++
		e.used = s.tick
		s.evict()
	}
	return e.ix, release, e.err
}

// evict drops the least recently used indexes no search holds until the
// others fit in MaxMemory (s.mu held).
func (s *Indexed) evict() {
	if s.MaxMemory <= 0 {
		return
	}
	for {
		var total int64
		var oldest string
		for k, e := range s.indexes {
			total += e.size
			if e.refs == 0 && e.size > 0 && (oldest == "" || e.used < s.indexes[oldest].used) {
				oldest = k
			}
		}
		if total <= s.MaxMemory || oldest == "" {
			return
		}
		delete(s.indexes, oldest)
		s.stats.Dropped++
	}
}

// memSize estimates the memory an index takes: its postings, terms,
// chunks and lengths, and the signals' tables.
func (ix *Index) memSize() int64 {
	n := int64(len(ix.Chunks)+len(ix.Classes)+len(ix.Imports))*(2*16+16+16) + int64(len(ix.DocLen))*4
	for i, t := range ix.Terms {
		// The string and slice headers and the postings.
		n += int64(len(t)) + 16 + 24 + int64(cap(ix.Postings[i]))*8
	}
	// The tables hold about one entry of a few words per chunk and path
	// suffix.
	return n + int64(len(ix.Chunks)+len(ix.Classes))*160
}

// cachePath is the index file of rp at commit: the repository's name
// (see repoTag), the commit and a hash of both and the index version.
func (s *Indexed) cachePath(rp *repo.Repo, commit string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s", indexVersion, rp.Name(), commit)))
	return filepath.Join(s.Dir, repoTag(rp)+"-"+commit[:min(12, len(commit))]+"-"+hex.EncodeToString(h[:8])+".idx")
}

// repoTag is a repository's name as a file name's start: owner__name,
// bytes other than letters, digits, '.', '_' and '-' as '_'.
func repoTag(rp *repo.Repo) string {
	name := strings.ReplaceAll(rp.Name(), "/", "__")
	return strings.Map(func(r rune) rune {
		if r < 128 && (isAlnum(byte(r)) || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, name)
}

// seedFrom gives the blob cache, once per repository and process, the
// files of the index of rp that the disk cache holds last written: a run
// over a commit that no run indexed before then chunks only the files
// that changed since. Blobs are keyed by id and path, so an index of
// another repository whose name shares the tag costs time, never
// correctness; a file that cannot be read is no error (the build reads
// the tree).
func (s *Indexed) seedFrom(rp *repo.Repo) {
	if s.Dir == "" || s.blobs == nil {
		return
	}
	s.mu.Lock()
	if s.seeded == nil {
		s.seeded = map[string]bool{}
	}
	done := s.seeded[rp.Name()]
	s.seeded[rp.Name()] = true
	s.mu.Unlock()
	if done {
		return
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir, repoTag(rp)+"-*.idx"))
	var last string
	var lastTime time.Time
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && (last == "" || fi.ModTime().After(lastTime) || fi.ModTime().Equal(lastTime) && f > last) {
			last, lastTime = f, fi.ModTime()
		}
	}
	if last == "" {
		return
	}
	ix, err := readIndex(last)
	if err != nil {
		return
	}
	s.blobs.seed(ix)
	s.mu.Lock()
	s.stats.Seeded++
	s.mu.Unlock()
}

func (s *Indexed) load(ctx context.Context, rp *repo.Repo, commit string) (*Index, error) {
	var path string
	if s.Dir != "" {
		path = s.cachePath(rp, commit)
		s.clock(&s.loading, true)
		ix, err := readIndex(path)
		s.clock(&s.loading, false)
		if err == nil {
			s.mu.Lock()
			s.stats.Loaded++
			s.mu.Unlock()
			return ix, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			// A damaged or old cache file is rebuilt and replaced.
			_ = os.Remove(path)
		}
	}
	s.mu.Lock()
	if s.repoBuilds == nil {
		s.repoBuilds = map[string]chan struct{}{}
	}
	turn := s.repoBuilds[rp.GitDir()]
	if turn == nil {
		turn = make(chan struct{}, 1)
		s.repoBuilds[rp.GitDir()] = turn
	}
	s.mu.Unlock()
	select {
	case turn <- struct{}{}:
		defer func() { <-turn }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.builds != nil {
		select {
		case s.builds <- struct{}{}:
			defer func() { <-s.builds }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.clock(&s.building, true)
	defer s.clock(&s.building, false)
	s.seedFrom(rp)
	ix, err := buildIndex(ctx, rp, commit, s.blobs)
	if err != nil {
		return nil, fmt.Errorf("index %s at %s: %w", rp.Name(), commit, err)
	}
	if path != "" {
		if err := writeIndex(path, ix); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.stats.Built++
	s.mu.Unlock()
	return ix, nil
}

// busyClock measures the wall time during which at least one of several
// concurrent activities runs.
type busyClock struct {
	active int
	since  time.Time
	total  time.Duration
}

// start and stop mark an activity's start and end at now.
func (b *busyClock) start(now time.Time) {
	if b.active == 0 {
		b.since = now
	}
	b.active++
}

func (b *busyClock) stop(now time.Time) {
	b.active--
	if b.active == 0 {
		b.total += now.Sub(b.since)
	}
}

// clock starts or stops an activity on b and updates the stats.
func (s *Indexed) clock(b *busyClock, start bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if start {
		b.start(time.Now())
		return
	}
	b.stop(time.Now())
	s.stats.BuildTime, s.stats.LoadTime, s.stats.QueryTime = s.building.total, s.loading.total, s.querying.total
}

// Rank ranks the files and function chunks of rp at commit for query
// with BM25 fused with the signals that are on, and counts the query in
// the stats.
func (s *Indexed) Rank(ctx context.Context, rp *repo.Repo, commit, query string) (Ranking, error) {
	e, err := s.Evidence(ctx, rp, commit, query)
	if err != nil {
		return Ranking{}, err
	}
	f := DefaultFusion
	if s.Fusion != nil {
		f = *s.Fusion
	}
	return e.Fuse(f), nil
}

// Evidence returns what each signal that is on says about query at rp's
// commit, before fusion, and counts the query in the stats.
func (s *Indexed) Evidence(ctx context.Context, rp *repo.Repo, commit, query string) (*Evidence, error) {
	ix, release, err := s.acquire(ctx, rp, commit)
	defer release()
	if err != nil {
		return nil, err
	}
	s.clock(&s.querying, true)
	on := s.Signals
	if on == nil {
		on, _ = ParseSignals(DefaultSignals)
	}
	e := ix.evidence(query, on)
	if s.Dense != nil {
		// The commit resolved, as the index's: the dense list reads
		// the same tree.
		full, err := rp.ResolveCommit(ctx, commit)
		if err == nil {
			err = s.Dense.addTo(ctx, rp, full, ix, query, e)
		}
		if err != nil {
			s.clock(&s.querying, false)
			return nil, err
		}
	}
	s.clock(&s.querying, false)
	s.mu.Lock()
	s.stats.Queries++
	s.mu.Unlock()
	return e, nil
}
