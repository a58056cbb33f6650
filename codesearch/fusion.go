package codesearch

import (
	"slices"
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

	// files is the lists' files in a form fused fast, made on first use
	// (a fit fuses one case's evidence thousands of times).
	files *fileLists
}

// List is one signal's ranking: a score per file and per function id
// ("path:name"), higher first; only the order counts in the fusion.
type List struct {
	Name         string
	Files, Funcs ranked
}

// rankedItem is an item of a list and its rank (items that tie share it).
type rankedItem struct {
	key  string
	rank int
}

// ranks returns r's items best first with their ranks; items that tie
// share a rank.
func (r ranked) ranks() []rankedItem {
	order := r.order()
	out := make([]rankedItem, len(order))
	rank, prev := 0, -1.0
	for i, k := range order {
		if r[k] != prev {
			rank, prev = i+1, r[k]
		}
		out[i] = rankedItem{k, rank}
	}
	return out
}

// Fusion weighs the lists in reciprocal rank fusion (Cormack et al.
// 2009): a list's item at rank r adds Weights[list]/(K + r).
type Fusion struct {
	K float64
	// Weights holds a weight per list name; a list it does not name
	// weighs 1.
	Weights map[string]float64
	// Funcs, when set, fuses the functions otherwise: their lists with
	// its own constant, and their file's fused score weighed; nil fuses
	// them with K, the file's score weighing 1.
	Funcs *FuncFusion
}

// FuncFusion is how functions are fused (see [Fusion.Funcs]).
type FuncFusion struct {
	K float64
	// File weighs a function's file's fused score in the function's.
	File float64
}

// weight returns the weight of list name.
func (f Fusion) weight(name string) float64 {
	if w, ok := f.Weights[name]; ok {
		return w
	}
	return 1
}

// DefaultFusion is the fusion of the indexed search, fitted on the tuning
// part of scripts/loc-split.sh alone (the 47 Loc-Bench_V1 issues of
// yt-dlp and dask) by scripts/locfit (codesearch.FitFusion): every
// combination of the weights 0, 0.25, 0.5, 1, 2, 4 for the lists of the
// signals default,calls,imports,files (BM25's weighing 1) and k in 10,
// 30, 60, 120, for the best file Acc@5, ties going to the fusion with the
// fewest weights other than 1 and k other than 60, then to the smallest
// changes. 0.787 on the tuning part (equal weights, k=60: 0.617). Then,
// that file ranking kept, the functions' constant (10, 30, 60, 120) and
// their file's weight (the same weights) for the best function Acc@10:
// the file's score weighing 0.5 lifts it from 0.532 to 0.553. The
// held-out part was measured once with it (docs/loc.md).
var DefaultFusion = Fusion{K: 10, Weights: map[string]float64{
	SignalCalls: 1, SignalFiles: 1, SignalFrames: 1, SignalImports: 0.5, SignalPaths: 1},
	Funcs: &FuncFusion{K: 10, File: 0.5}}

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

// fuse adds each item's weighted reciprocal rank in items to into.
func fuse(into map[string]float64, items []rankedItem, f Fusion, w float64) {
	if w == 0 {
		return
	}
	for _, it := range items {
		into[it.key] += w / (f.K + float64(it.rank))
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
	files, fileScore := e.fuseFiles(f)
	ff := FuncFusion{K: f.K, File: 1}
	if f.Funcs != nil {
		ff = *f.Funcs
	}
	funcScore := map[string]float64{}
	for _, l := range e.Lists {
		fuse(funcScore, l.Funcs.ranks(), Fusion{K: ff.K}, f.weight(l.Name))
	}
	// A function also gets its file's fused score: the functions of the
	// files the signals agree on come first.
	for id := range funcScore {
		p, _, _ := strings.Cut(id, ":")
		funcScore[id] += ff.File * fileScore[p]
	}
	r := Ranking{Files: files}
	for _, id := range ranked(funcScore).order() {
		r.Functions = append(r.Functions, e.chunkOf[id])
	}
	for _, bad := range e.demoted() {
		r.Functions = demote(r.Functions, func(c Chunk) bool { return bad(c.Path) })
	}
	return r
}

// fuseFiles ranks the files of e's lists by f, and returns their fused
// scores.
func (e *Evidence) fuseFiles(f Fusion) ([]string, map[string]float64) {
	d := e.fileLists()
	score, in := d.fuse(f)
	var order []int32
	for id := range d.names {
		if in[id] {
			order = append(order, int32(id))
		}
	}
	sort.Slice(order, func(i, j int) bool { return d.before(score, order[i], order[j]) })
	files := make([]string, len(order))
	scores := make(map[string]float64, len(order))
	for i, id := range order {
		files[i] = d.names[id]
		scores[files[i]] = score[id]
	}
	return files, scores
}

// fileLists is an Evidence's file lists with files as numbers: each
// list's files with their ranks, and each file's kind (0: code, then
// examples, stubs and fixtures, tests, in the order they go last).
type fileLists struct {
	names []string
	kind  []int8
	lists []string // the list names
	items [][]idRank
}

type idRank struct {
	id   int32
	rank int32
}

func (e *Evidence) fileLists() *fileLists {
	if e.files != nil {
		return e.files
	}
	d := &fileLists{}
	ids := map[string]int32{}
	for _, l := range e.Lists {
		var items []idRank
		for _, it := range l.Files.ranks() {
			id, ok := ids[it.key]
			if !ok {
				id = int32(len(d.names))
				ids[it.key] = id
				d.names = append(d.names, it.key)
				d.kind = append(d.kind, e.kindOf(it.key))
			}
			items = append(items, idRank{id, int32(it.rank)})
		}
		d.lists = append(d.lists, l.Name)
		d.items = append(d.items, items)
	}
	e.files = d
	return d
}

// kindOf returns the group a file goes in once fused: 0 the code, then
// examples, then stubs and fixtures, then tests (each when its signal
// moves it).
func (e *Evidence) kindOf(p string) int8 {
	switch {
	case e.demoteTests && isTestPath(p):
		return 3
	case e.demoteStubs && isStubPath(p):
		return 2
	case e.demoteExamples && isExamplePath(p):
		return 1
	}
	return 0
}

// fuse returns each file's fused score and whether a list of non-zero
// weight ranks it (the others are left out of the ranking).
func (d *fileLists) fuse(f Fusion) ([]float64, []bool) {
	score := make([]float64, len(d.names))
	in := make([]bool, len(d.names))
	for i, items := range d.items {
		w := f.weight(d.lists[i])
		if w == 0 {
			continue
		}
		for _, it := range items {
			score[it.id] += w / (f.K + float64(it.rank))
			in[it.id] = true
		}
	}
	return score, in
}

// before orders files by kind, then fused score, then name.
func (d *fileLists) before(score []float64, a, b int32) bool {
	if d.kind[a] != d.kind[b] {
		return d.kind[a] < d.kind[b]
	}
	if score[a] != score[b] {
		return score[a] > score[b]
	}
	return d.names[a] < d.names[b]
}

// top returns the first n files of the fusion by f, as fuseFiles orders
// them, without sorting them all.
func (d *fileLists) top(f Fusion, n int) []string {
	score, in := d.fuse(f)
	best := make([]int32, 0, n+1)
	for id := range d.names {
		if !in[id] {
			continue
		}
		i := len(best)
		for i > 0 && d.before(score, int32(id), best[i-1]) {
			i--
		}
		if i < n {
			best = slices.Insert(best, i, int32(id))
			if len(best) > n {
				best = best[:n]
			}
		}
	}
	out := make([]string, len(best))
	for i, id := range best {
		out[i] = d.names[id]
	}
	return out
}

// demoted returns the kinds of file that go last, in the order they are
// moved: examples, then stubs and fixtures, then tests last of all.
func (e *Evidence) demoted() []func(string) bool {
	var out []func(string) bool
	if e.demoteExamples {
		out = append(out, isExamplePath)
	}
	if e.demoteStubs {
		out = append(out, isStubPath)
	}
	if e.demoteTests {
		out = append(out, isTestPath)
	}
	return out
}

// rank fuses BM25 over the chunks with the signals that are on, by
// [DefaultFusion].
func (ix *Index) rank(query string, on map[string]bool) Ranking {
	return ix.evidence(query, on).Fuse(DefaultFusion)
}
