package codesearch

import (
	"sort"
	"strings"
)

// ListBM25 names the list of BM25 over the chunks in [Evidence] and in
// [Fusion]'s weights.
const ListBM25 = "bm25"

// Evidence is what the signals say about one query before they are fused:
// one ranked list of files and of functions per signal that is on, and
// which kinds of file go last. A retriever added later (a dense one, say)
// adds its list here under its own name and gets its weight in [Fusion].
type Evidence struct {
	Lists []List
	// chunkOf is the chunk of each function id ("path:name") the lists
	// rank.
	chunkOf map[string]Chunk
	// demoteTests, demoteStubs and demoteExamples move test files, stubs
	// and fixtures, and examples after the others, once fused.
	demoteTests, demoteStubs, demoteExamples bool
}

// List is one signal's ranking: a score per file and per function id
// ("path:name"), higher first; only the order counts in the fusion.
type List struct {
	Name         string
	Files, Funcs ranked
}

// Fusion weighs the lists in reciprocal rank fusion (Cormack et al.
// 2009): a list's item at rank r adds Weights[list]/(K + r).
type Fusion struct {
	K float64
	// Weights holds a weight per list name; a list it does not name
	// weighs 1.
	Weights map[string]float64
}

// weight returns the weight of list name.
func (f Fusion) weight(name string) float64 {
	if w, ok := f.Weights[name]; ok {
		return w
	}
	return 1
}

// DefaultFusion is the fusion of the indexed search: reciprocal rank
// fusion's published constant, every list weighing the same.
var DefaultFusion = Fusion{K: 60}

// ranked is a score per item, turned into a ranking.
type ranked map[string]float64

// order returns the items best first (ties by name, for determinism).
func (r ranked) order() []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if r[out[i]] != r[out[j]] {
			return r[out[i]] > r[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// fuse adds each item's weighted reciprocal rank in r to into; items that
// tie in a list share its rank.
func fuse(into map[string]float64, r ranked, f Fusion, w float64) {
	if w == 0 {
		return
	}
	rank := 0
	prev := -1.0
	for i, k := range r.order() {
		if r[k] != prev {
			rank, prev = i+1, r[k]
		}
		into[k] += w / (f.K + float64(rank))
	}
}

// Ranking is the fused answer of the indexed search: files and function
// chunks, best first.
type Ranking struct {
	Files     []string
	Functions []Chunk
}

// Fuse ranks the files and functions of e's lists by f.
func (e *Evidence) Fuse(f Fusion) Ranking {
	fileScore := map[string]float64{}
	funcScore := map[string]float64{}
	for _, l := range e.Lists {
		w := f.weight(l.Name)
		fuse(fileScore, l.Files, f, w)
		fuse(funcScore, l.Funcs, f, w)
	}
	// A function also gets its file's fused score: the functions of the
	// files the signals agree on come first.
	for id := range funcScore {
		p, _, _ := strings.Cut(id, ":")
		funcScore[id] += fileScore[p]
	}
	r := Ranking{Files: ranked(fileScore).order()}
	for _, id := range ranked(funcScore).order() {
		r.Functions = append(r.Functions, e.chunkOf[id])
	}
	if e.demoteExamples {
		r.Files = demote(r.Files, isExamplePath)
		r.Functions = demote(r.Functions, func(c Chunk) bool { return isExamplePath(c.Path) })
	}
	if e.demoteStubs {
		r.Files = demote(r.Files, isStubPath)
		r.Functions = demote(r.Functions, func(c Chunk) bool { return isStubPath(c.Path) })
	}
	if e.demoteTests {
		r.Files = demote(r.Files, isTestPath)
		r.Functions = demote(r.Functions, func(c Chunk) bool { return isTestPath(c.Path) })
	}
	return r
}

// rank fuses BM25 over the chunks with the signals that are on, by
// [DefaultFusion].
func (ix *Index) rank(query string, on map[string]bool) Ranking {
	return ix.evidence(query, on).Fuse(DefaultFusion)
}
