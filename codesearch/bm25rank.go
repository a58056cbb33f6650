package codesearch

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// The signals the indexed search fuses with BM25 over function chunks;
// each can be turned off (loc run --signals) to measure its gain.
const (
	// SignalClean leaves an issue template's lines (checklists, HTML
	// comments) out of the BM25 query.
	SignalClean = "clean"
	// SignalPaths ranks the files the query names: file paths and
	// module paths (a.b.c).
	SignalPaths = "paths"
	// SignalFrames ranks the files of the query's traceback frames,
	// nearest the error first, and the functions holding their lines.
	SignalFrames = "frames"
	// SignalCalls ranks the files defining what the query's code uses
	// through a module: da.map_overlap after "import dask.array as da",
	// keras.layers.Dense, a name of "from a.b import name", followed
	// through the imports that re-export it to the file defining it.
	SignalCalls = "calls"
	// SignalImports ranks the files that import, or are imported by, the
	// files the query names (paths, frames, calls), by their BM25 score.
	SignalImports = "imports"
	// SignalNames ranks the files that define the identifiers the query
	// names (code spans, snake_case, CamelCase, calls), each name
	// weighing 1/(the number of files defining it).
	SignalNames = "names"
	// SignalStems ranks the files whose base name is a word of the
	// query (youtube.py for "[youtube] ... broken").
	SignalStems = "stems"
	// SignalTests ranks test files after the others unless the query's
	// title is about tests.
	SignalTests = "tests"
	// SignalExamples ranks the files of examples, docs, benchmarks and
	// demos directories after the library's code unless the title names
	// them: they call the API an issue names without being where it is
	// fixed.
	SignalExamples = "examples"
	// SignalStubs ranks type stubs (.pyi) and test fixtures after the
	// code they describe unless the title names them.
	SignalStubs = "stubs"
	// SignalFiles adds file-level evidence: files ranked by their chunks'
	// BM25 scores added up, beside the ranking by their best chunk.
	SignalFiles = "files"
)

// Signals are every signal, in ablation order.
var Signals = []string{SignalClean, SignalPaths, SignalFrames, SignalCalls, SignalImports, SignalNames, SignalStems, SignalTests, SignalExamples, SignalStubs, SignalFiles}

// DefaultSignals are the signals on when none are chosen ("default"):
// those that do not lower file Acc@5 on the held-out part of the split in
// scripts/loc-split.sh, and those to which the fit of [DefaultFusion] on
// the tuning part gives a weight. names and stems are off: they helped
// only the issues they were designed on (held out, leaving both out
// lifted file Acc@5 from 0.625 to 0.750; docs/loc.md). examples is off:
// held out it moved one case into the first 5 and one out, and cost one
// at function Acc@5.
const DefaultSignals = "clean,paths,frames,calls,imports,files,tests,stubs"

// ParseSignals reads a comma-separated list of signals: "all", "none",
// "default" ([DefaultSignals]), names, or "all,-name" to leave some out.
func ParseSignals(s string) (map[string]bool, error) {
	on := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "" || f == "none":
		case f == "all":
			for _, x := range Signals {
				on[x] = true
			}
		case f == "default":
			for _, x := range strings.Split(DefaultSignals, ",") {
				on[x] = true
			}
		default:
			name, off := strings.CutPrefix(f, "-")
			known := false
			for _, x := range Signals {
				known = known || x == name
			}
			if !known {
				return nil, fmt.Errorf("unknown signal %q (want %s, all, default or none)", name, strings.Join(Signals, ", "))
			}
			on[name] = !off
		}
	}
	return on, nil
}

// repoTables are what the signals look up in one index: paths by suffix,
// definitions by name, files by base name. Built on first use.
type repoTables struct {
	once     sync.Once
	suffixes map[string][]string // a path suffix on a / boundary → files
	defs     map[string][]int    // a definition's last name, or Class.name → defs
	defList  []def
	stems    map[string][]string // a file's lower-cased stem → files
	chunks   map[string][2]int   // a file → the span of its chunks in Chunks
	dirs     map[string][]string // a directory → its files

	graphOnce sync.Once
	graph     *importGraph
}

// def is a function chunk (chunk ≥ 0) or a class.
type def struct {
	path  string
	name  string
	chunk int
}

func (ix *Index) tables() *repoTables {
	t := &ix.tab
	t.once.Do(func() {
		// Sized for the index: growing them was a fifth of their time.
		t.suffixes, t.defs, t.stems = make(map[string][]string, 3*ix.NumFiles), make(map[string][]int, len(ix.Chunks)+len(ix.Classes)), make(map[string][]string, ix.NumFiles)
		t.chunks, t.dirs = make(map[string][2]int, ix.NumFiles), map[string][]string{}
		t.defList = make([]def, 0, len(ix.Chunks)+len(ix.Classes))
		addDef := func(d def) {
			t.defList = append(t.defList, d)
			id := len(t.defList) - 1
			// The last name and the last two (Class.name), cut from the
			// name: splitting each name took a third of the tables' time.
			last := strings.LastIndexByte(d.name, '.')
			t.defs[d.name[last+1:]] = append(t.defs[d.name[last+1:]], id)
			if last >= 0 {
				q := d.name[strings.LastIndexByte(d.name[:last], '.')+1:]
				t.defs[q] = append(t.defs[q], id)
			}
		}
		for i, c := range ix.Chunks {
			span, ok := t.chunks[c.Path]
			if !ok {
				span[0] = i
			}
			span[1] = i + 1
			t.chunks[c.Path] = span
			if c.Name != "" {
				addDef(def{c.Path, c.Name, i})
				continue
			}
			// The file chunk: one per file.
			dir := path.Dir(c.Path)
			t.dirs[dir] = append(t.dirs[dir], c.Path)
			p := c.Path
			for {
				t.suffixes[p] = append(t.suffixes[p], c.Path)
				_, rest, ok := strings.Cut(p, "/")
				if !ok {
					break
				}
				p = rest
			}
			base := path.Base(c.Path)
			stem := strings.ToLower(strings.TrimLeft(strings.TrimSuffix(base, path.Ext(base)), "_"))
			if len(stem) > 2 && !stopWords[stem] {
				t.stems[stem] = append(t.stems[stem], c.Path)
			}
		}
		for _, c := range ix.Classes {
			addDef(def{c.Path, c.Name, -1})
		}
	})
	return t
}

// resolvePath returns the files a mentioned path names: the longest
// suffix of it, on a / boundary, that ends some file paths.
// A mention with directories matched by its base name alone
// (site-packages/numpy/__init__.py against every __init__.py) resolves
// only to a file whose base name no other file has.
func (t *repoTables) resolvePath(p string) []string {
	p = strings.TrimLeft(strings.ReplaceAll(p, "\\", "/"), "/")
	hasDir := strings.Contains(p, "/")
	for {
		if fs := t.suffixes[p]; len(fs) > 0 {
			if hasDir && !strings.Contains(p, "/") && len(fs) > 1 {
				return nil
			}
			return fs
		}
		_, rest, ok := strings.Cut(p, "/")
		if !ok {
			return nil
		}
		p = rest
	}
}

// resolveModule returns the files of a dotted module path (a.b.c →
// a/b/c.py or a/b/c/__init__.py), dropping trailing attributes, and keeps
// at least two parts of the path.
func (t *repoTables) resolveModule(m string) []string {
	parts := strings.Split(m, ".")
	for n := len(parts); n >= 2; n-- {
		p := strings.Join(parts[:n], "/")
		for _, cand := range []string{p + ".py", p + "/__init__.py"} {
			var out []string
			for _, f := range t.suffixes[cand] {
				// The whole module path, not a suffix of a longer one.
				if f == cand || strings.HasSuffix(f, "/"+cand) {
					out = append(out, f)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	return nil
}

// isTestPath reports whether a path is a test file: in a test directory or
// named as test runners find tests.
func isTestPath(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		switch strings.ToLower(dir) {
		case "test", "tests", "testing", "__tests__", "spec", "testdata":
			return true
		}
	}
	base := strings.ToLower(path.Base(p))
	stem := strings.TrimSuffix(base, path.Ext(base))
	return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || stem == "conftest"
}

// isExamplePath reports whether a path lies in a directory of examples,
// documentation, benchmarks or demos.
func isExamplePath(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		switch strings.ToLower(dir) {
		case "example", "examples", "doc", "docs", "documentation", "benchmark", "benchmarks",
			"bench", "asv_bench", "demo", "demos", "sample", "samples", "tutorial", "tutorials":
			return true
		}
	}
	return false
}

// isStubPath reports whether a path is a type stub (.pyi) or lies in a
// directory of stubs or test fixtures.
func isStubPath(p string) bool {
	if path.Ext(p) == ".pyi" {
		return true
	}
	for _, dir := range strings.Split(path.Dir(p), "/") {
		switch strings.ToLower(dir) {
		case "fixture", "fixtures", "stubs", "typeshed":
			return true
		}
	}
	return false
}

// evidence reads what each signal that is on says about query: one
// ranked list per signal (BM25 over the chunks first), for [Evidence.Fuse].
func (ix *Index) evidence(query string, on map[string]bool) *Evidence {
	is := parseIssue(query, on[SignalClean])
	t := ix.tables()
	e := &Evidence{chunkOf: map[string]Chunk{},
		demoteTests:    on[SignalTests] && !is.aboutTests,
		demoteStubs:    on[SignalStubs] && !is.aboutStubs,
		demoteExamples: on[SignalExamples] && !is.aboutExamples,
	}
	add := func(name string, files, funcs ranked) {
		e.Lists = append(e.Lists, List{Name: name, Files: files, Funcs: funcs})
	}

	// BM25: a file scores its best chunk, so a large file's many chunks
	// do not add up.
	hits := ix.Search(is.text, 1000)
	bmFiles, bmFuncs := ranked{}, ranked{}
	for _, h := range hits {
		if _, ok := bmFiles[h.Chunk.Path]; !ok {
			bmFiles[h.Chunk.Path] = h.Score
		}
		if h.Chunk.Name != "" {
			id := h.Chunk.Path + ":" + h.Chunk.Name
			if _, ok := bmFuncs[id]; !ok {
				bmFuncs[id], e.chunkOf[id] = h.Score, h.Chunk
			}
		}
	}
	add(ListBM25, bmFiles, bmFuncs)
	if on[SignalFiles] {
		sums := ranked{}
		for _, h := range hits {
			sums[h.Chunk.Path] += h.Score
		}
		add(SignalFiles, sums, nil)
	}

	if on[SignalFrames] {
		// The frames nearest the error first.
		files, funcs := ranked{}, ranked{}
		n := 0
		for i := len(is.frames) - 1; i >= 0; i-- {
			f := is.frames[i]
			for _, p := range t.resolvePath(f.path) {
				n++
				if _, ok := files[p]; !ok {
					files[p] = 1 / float64(n)
				}
				if c, ok := ix.innermost(p, f.line); ok {
					id := c.Path + ":" + c.Name
					if _, ok := funcs[id]; !ok {
						funcs[id], e.chunkOf[id] = 1/float64(n), c
					}
				}
			}
		}
		add(SignalFrames, files, funcs)
	}
	if on[SignalPaths] {
		// Paths and modules in the order the query names them.
		files := ranked{}
		n := 0
		named := func(fs []string) {
			for _, f := range fs {
				if _, ok := files[f]; !ok {
					n++
					files[f] = 1 / float64(n)
				}
			}
		}
		for _, p := range is.paths {
			named(t.resolvePath(p))
		}
		for _, m := range is.modules {
			named(t.resolveModule(m))
		}
		add(SignalPaths, files, nil)
	}
	if on[SignalCalls] {
		files, funcs := t.called(ix, &is, e.chunkOf)
		add(SignalCalls, files, funcs)
	}
	if on[SignalImports] {
		add(SignalImports, t.neighbours(ix, &is, bmFiles), nil)
	}

	// Names and file names count twice from the title: once as a part
	// of the whole query, once as what the title is about.
	for _, src := range []*issue{&is, is.title} {
		if on[SignalNames] {
			files, funcs := t.named(ix, src, e.chunkOf)
			add(SignalNames, files, funcs)
		}
		if on[SignalStems] {
			files := ranked{}
			for w := range src.words {
				fs := t.stems[w]
				for _, f := range fs {
					files[f] += 1 / float64(len(fs))
				}
			}
			add(SignalStems, files, nil)
		}
	}
	return e
}

// named ranks the files and functions that define the names of is: a
// name defined in n files weighs 1/n in each.
func (t *repoTables) named(ix *Index, is *issue, chunkOf map[string]Chunk) (files, funcs ranked) {
	files, funcs = ranked{}, ranked{}
	names := is.names
	for _, m := range is.modules {
		// Class.method names a method more precisely than its name.
		parts := strings.Split(m, ".")
		names = append(names, strings.Join(parts[len(parts)-2:], "."), parts[len(parts)-1])
	}
	done := map[string]bool{}
	for _, n := range names {
		ids := t.defs[n]
		if done[n] || len(ids) == 0 {
			continue
		}
		done[n] = true
		defFiles := map[string]bool{}
		for _, id := range ids {
			defFiles[t.defList[id].path] = true
		}
		w := 1 / float64(len(defFiles))
		for f := range defFiles {
			files[f] += w
		}
		for _, id := range ids {
			d := t.defList[id]
			if d.chunk >= 0 {
				fid := d.path + ":" + d.name
				funcs[fid] += w
				chunkOf[fid] = ix.Chunks[d.chunk]
			}
		}
	}
	return files, funcs
}

// demote moves the items bad reports to the end, keeping both parts' order.
func demote[T any](xs []T, bad func(T) bool) []T {
	out := make([]T, 0, len(xs))
	var tail []T
	for _, x := range xs {
		if bad(x) {
			tail = append(tail, x)
		} else {
			out = append(out, x)
		}
	}
	return append(out, tail...)
}

// innermost returns the function chunk of file p holding line l, the
// shortest when functions nest.
func (ix *Index) innermost(p string, l int) (Chunk, bool) {
	span := ix.tables().chunks[p]
	var best Chunk
	found := false
	for i := span[0]; i < span[1]; i++ {
		c := ix.Chunks[i]
		if c.Name != "" && c.Start <= l && l <= c.End && (!found || c.End-c.Start < best.End-best.Start) {
			best, found = c, true
		}
	}
	return best, found
}
