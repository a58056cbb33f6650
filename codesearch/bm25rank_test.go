package codesearch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/repo"
)

func TestParseIssue(t *testing.T) {
	q := "[MiTele] `from_zarr` fails in dask.array.core\n" +
		"<!-- Please fill in the template: see docs/guide.py -->\n" +
		"- [X] I have checked the_checklist_item\n" +
		"Calling da.map_blocks() on a DataFrame:\n" +
		"```python\nx = reshape_blockwise(arr)\n```\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/usr/lib/python3/site-packages/dask/array/core.py\", line 120, in from_zarr\n" +
		"  File \"dask/utils.py\", line 7, in <lambda>\n" +
		"See dask/array/overlap.py and www.example.com.\n"
	is := parseIssue(q, true)
	if want := []frame{{"/usr/lib/python3/site-packages/dask/array/core.py", 120, "from_zarr"}, {"dask/utils.py", 7, "<lambda>"}}; !cmp.Equal(is.frames, want, cmp.AllowUnexported(frame{})) {
		t.Errorf("frames = %+v, want %+v", is.frames, want)
	}
	// The frames' paths are frames, not paths; the template comment's
	// path is not the issue's.
	if want := []string{"dask/array/overlap.py"}; !cmp.Equal(is.paths, want) {
		t.Errorf("paths = %q, want %q", is.paths, want)
	}
	for _, m := range []string{"dask.array.core", "da.map_blocks"} {
		if !strings.Contains(strings.Join(is.modules, " "), m) {
			t.Errorf("modules %q lack %q", is.modules, m)
		}
	}
	if strings.Contains(strings.Join(is.modules, " "), "www.") {
		t.Errorf("modules %q hold a host name", is.modules)
	}
	names := map[string]bool{}
	for _, n := range is.names {
		names[n] = true
	}
	for _, n := range []string{"from_zarr", "map_blocks", "reshape_blockwise", "arr", "DataFrame", "MiTele"} {
		if !names[n] {
			t.Errorf("names %q lack %q", is.names, n)
		}
	}
	// Prose words, a fence's language tag and checklist lines are not
	// names.
	for _, n := range []string{"Calling", "fails", "python", "the_checklist_item"} {
		if names[n] {
			t.Errorf("names %q hold %q", is.names, n)
		}
	}
	for _, w := range []string{"mitele", "mi", "tele", "zarr", "fromzarr"} {
		if !is.words[w] {
			t.Errorf("words lack %q", w)
		}
	}
	if strings.Contains(is.text, "the_checklist_item") || strings.Contains(is.text, "fill in the template") {
		t.Errorf("cleaned text keeps template lines: %q", is.text)
	}
	if raw := parseIssue(q, false); raw.text != q {
		t.Errorf("without cleaning the text changed")
	}
	if is.aboutTests || is.title == nil || !is.title.words["mitele"] || is.title.words["reshape"] {
		t.Errorf("title: aboutTests %v, words %v", is.aboutTests, is.title)
	}
	if !parseIssue("test_overlap fails on Windows\nbody", true).aboutTests {
		t.Errorf("a title naming a test is about tests")
	}
}

func FuzzParseIssue(f *testing.F) {
	f.Add("[youtube] broken\n```\nFile \"a/b.py\", line 3, in f\n```\nsee a.b.c and `x_y`")
	f.Add("<!-- x --> - [ ] y\nFile \"\", line 0, in \n`")
	f.Fuzz(func(t *testing.T, q string) {
		is := parseIssue(q, true)
		for _, n := range is.names {
			if n == "" || !utf8.ValidString(n) || strings.ContainsAny(n, " \n\t") {
				t.Fatalf("name %q", n)
			}
		}
		for _, fr := range is.frames {
			if fr.line < 0 || fr.path == "" {
				t.Fatalf("frame %+v", fr)
			}
		}
		if is.title == nil {
			t.Fatal("no title")
		}
	})
}

// rankRepo is a repository where each signal changes the answer: BM25
// alone prefers bait files full of the issues' words.
func rankRepo(t *testing.T) (*repo.Repo, string, string) {
	t.Helper()
	gittest.Need(t)
	dir := filepath.Join(t.TempDir(), "repo")
	files := map[string]string{
		"pkg/extractor/youtube.py": "class YoutubeIE:\n    def _real_extract(self, url):\n        return self._download_json(url)\n",
		"pkg/extractor/common.py": "class InfoExtractor:\n    def _download_json(self, url):\n" +
			strings.Repeat("        # formats missing when the video download fails, formats again\n", 20) + "        return url\n",
		"pkg/array/overlap.py":  "def map_overlap(x, depth):\n    return x\n\n\ndef trim(x):\n    return x\n",
		"pkg/array/core.py":     "def compute(x):\n    y = x + 1\n    return y\n\n\ndef persist(x):\n    return x\n",
		"pkg/array/chunks.py":   "def normalize(chunks):\n    # chunk smaller than overlap depth fails, chunk chunk\n    return chunks\n\n\ndef compute(x):\n    # chunk smaller than overlap depth fails\n    return x\n",
		"tests/test_overlap.py": "from pkg.array.overlap import map_overlap\n\n\ndef test_map_overlap():\n    map_overlap(1, 2)\n    map_overlap(3, 4)\n    # map_overlap fails when a chunk is smaller than overlap\n",
		"vendor/lib.min.js":     "var zqxmagic=1;" + strings.Repeat("function a(b){return b}", 400) + "\n",
		"assets/logo.png":       "\x89PNG\r\n\x1a\n\x00\x00binary",
	}
	gittest.CommitFiles(t, dir, files)
	r, err := repo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	commit, err := r.ResolveCommit(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return r, dir, commit
}

// TestRankSignals checks that each signal puts the file (and function)
// an issue is about first where BM25 alone does not, and that with the
// signal off the bait wins: the signal, not the words, moved it.
func TestRankSignals(t *testing.T) {
	r, _, commit := rankRepo(t)
	ix, err := BuildIndex(context.Background(), r, commit)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := ParseSignals("all")
	// signal is the signals turned off to see the bait win: a path or a
	// module path also names its file's stem.
	for _, tc := range []struct {
		name, query, signal string
		file, function      string
	}{
		{"stems", "[youtube] formats missing\nThe video download fails: formats missing.", SignalStems,
			"pkg/extractor/youtube.py", ""},
		{"frames", "Crash\nTraceback (most recent call last):\n  File \"/site-packages/pkg/array/core.py\", line 2, in compute\nchunk smaller than overlap depth fails",
			SignalFrames + ",-" + SignalStems, "pkg/array/core.py", "pkg/array/core.py:compute"},
		{"pytest frames", "Crash\n```\npkg/array/core.py:2: in compute\n```\nchunk smaller than overlap depth fails",
			SignalFrames + ",-" + SignalStems, "pkg/array/core.py", "pkg/array/core.py:compute"},
		{"module path", "Slow pkg.array.core import\nchunk smaller than overlap depth fails", SignalPaths + ",-" + SignalStems,
			"pkg/array/core.py", ""},
		{"names", "Wrong result\nCalling `persist` on a chunk smaller than overlap depth fails", SignalNames,
			"pkg/array/core.py", "pkg/array/core.py:persist"},
		{"tests", "Wrong result for a chunk smaller than overlap\nfound by tests/test_overlap.py::test_map_overlap in CI", SignalTests,
			"pkg/array/overlap.py", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ix.rank(tc.query, all)
			if got.Files[0] != tc.file {
				t.Errorf("files = %q, want %s first", got.Files, tc.file)
			}
			if tc.function != "" && (len(got.Functions) == 0 || got.Functions[0].Path+":"+got.Functions[0].Name != tc.function) {
				t.Errorf("functions = %+v, want %s first", got.Functions, tc.function)
			}
			off, _ := ParseSignals("all,-" + tc.signal)
			if without := ix.rank(tc.query, off); len(without.Files) > 0 && without.Files[0] == tc.file {
				t.Errorf("without %s the file is first too: the test does not test the signal", tc.signal)
			}
		})
	}
	// A title about tests keeps test files where the other signals put
	// them.
	q := "test_map_overlap fails\nfound by test_map_overlap in CI, when a chunk is smaller than overlap"
	noTests, _ := ParseSignals("all,-tests")
	if got, want := ix.rank(q, all).Files, ix.rank(q, noTests).Files; !cmp.Equal(got, want) || want[0] != "tests/test_overlap.py" {
		t.Errorf("an issue about tests: files = %q, want %q with the test file first", got, want)
	}
}

// TestBuildIndexSkips: a minified file is indexed by its path alone, a
// binary one not at all, and a blob the repository lacks is skipped
// without failing the build (git archive failed the whole tree).
func TestBuildIndexSkips(t *testing.T) {
	r, dir, commit := rankRepo(t)
	ctx := context.Background()
	ix, err := BuildIndex(ctx, r, commit)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]int{}
	for _, c := range ix.Chunks {
		files[c.Path]++
	}
	if files["vendor/lib.min.js"] != 1 || len(ix.postings("zqxmagic")) != 0 || len(ix.postings("vendor")) == 0 {
		t.Errorf("minified file: %d chunks, content term %v, path term %v", files["vendor/lib.min.js"], ix.postings("zqxmagic"), ix.postings("vendor"))
	}
	if _, ok := files["assets/logo.png"]; ok {
		t.Errorf("a binary file was indexed")
	}
	// Remove the loose object of one code blob and of the binary blob.
	for _, p := range []string{"pkg/array/chunks.py", "assets/logo.png"} {
		id, err := gittest.Run(t, dir, "", "rev-parse", "HEAD:"+p)
		if err != nil {
			t.Fatal(err)
		}
		id = strings.TrimSpace(id)
		if err := os.Remove(filepath.Join(dir, ".git", "objects", id[:2], id[2:])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gittest.Run(t, dir, "", "archive", "HEAD"); err == nil {
		t.Fatal("git archive succeeded without the blobs: the test does not test a missing blob")
	}
	ix2, err := BuildIndex(ctx, r, commit)
	if err != nil {
		t.Fatalf("a missing blob failed the build: %v", err)
	}
	if ix2.NumFiles != ix.NumFiles-1 {
		t.Errorf("files: %d, want %d (one skipped)", ix2.NumFiles, ix.NumFiles-1)
	}
	for _, c := range ix2.Chunks {
		if c.Path == "pkg/array/chunks.py" {
			t.Errorf("the missing blob has a chunk")
		}
	}
}

func TestMachineMade(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"def f():\n    return 1\n", false},
		{"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n", true},
		{"# @generated by a tool\nx = 1\n", true},
		{strings.Repeat("x", maxLineMinified+1) + "\nshort\n" + strings.Repeat("y = 1\n", 10000), true},
		{strings.Repeat("a", 300) + "\n", true},                     // a mean line over maxMeanLine
		{strings.Repeat("x = 1  # a comment\n", 100) + "\n", false}, // many short lines
		{"", false},
	} {
		if got := machineMade(tc.text); got != tc.want {
			t.Errorf("machineMade(%.40q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestIndexedMemoryBudget: with a budget smaller than one index, the
// index of a finished search is dropped, and the next search of its
// commit reads it from the disk cache.
func TestIndexedMemoryBudget(t *testing.T) {
	r, _, commit := rankRepo(t)
	ctx := context.Background()
	s := NewIndexed(t.TempDir())
	s.MaxMemory = 1
	// stems (off by default) puts youtube.py first.
	s.Signals, _ = ParseSignals("all")
	const query = "[youtube] formats missing"
	for i := 0; i < 2; i++ {
		got, err := s.Rank(ctx, r, commit, query)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Files) == 0 || got.Files[0] != "pkg/extractor/youtube.py" {
			t.Fatalf("search %d: files %q", i, got.Files)
		}
	}
	st := s.Stats()
	if st.Built != 1 || st.Loaded != 1 || st.Dropped != 2 {
		t.Errorf("stats %+v, want 1 built, 1 loaded, 2 dropped", st)
	}
	// Without a budget the index stays.
	s = NewIndexed(t.TempDir())
	s.MaxMemory = 0
	for i := 0; i < 2; i++ {
		if _, err := s.Rank(ctx, r, commit, query); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Built != 1 || st.Loaded != 0 || st.Dropped != 0 {
		t.Errorf("no budget: stats %+v", st)
	}
}

// TestBlobCacheSameIndex: an index built from blobs an earlier build
// chunked is the index built from scratch, and the unchanged blobs are not
// read again.
func TestBlobCacheSameIndex(t *testing.T) {
	r, dir, first := rankRepo(t)
	ctx := context.Background()
	second := commitTwo(t, r, dir)
	blobs := newBlobCache(1 << 30)
	if _, err := buildIndex(ctx, r, first, blobs); err != nil {
		t.Fatal(err)
	}
	hits := blobs.hits
	got, err := buildIndex(ctx, r, second, blobs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := BuildIndex(ctx, r, second)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(posting{}), cmpopts.IgnoreUnexported(Index{})); diff != "" {
		t.Fatalf("index from cached blobs (-scratch +cached):\n%s", diff)
	}
	// 8 code files now, 6 of them unchanged.
	if n := blobs.hits - hits; n != 6 {
		t.Errorf("%d blobs reused, want 6", n)
	}
}

// commitTwo commits a change to rankRepo's repository: core.py changed,
// new.py added, 6 of its 8 code files unchanged. It returns the commit.
func commitTwo(t *testing.T, r *repo.Repo, dir string) string {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "pkg/array/core.py"), []byte("def compute(x):\n    return x * 2\n\n\ndef spill(y):\n    return y\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg/array/new.py"), []byte("class New:\n    def make(self):\n        return compute(1)\n"), 0o644)
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "two"}} {
		if _, err := gittest.Run(t, dir, "", args...); err != nil {
			t.Fatal(err)
		}
	}
	second, err := r.ResolveCommit(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return second
}

// TestBlobCacheMovedBlob: a blob another commit holds under another path
// gives the index built from scratch, its path's terms those of its new
// path. Replaying the first path's terms made a case's ranks depend on the
// case run before it.
func TestBlobCacheMovedBlob(t *testing.T) {
	r, dir, first := rankRepo(t)
	ctx := context.Background()
	for _, args := range [][]string{{"mv", "pkg/array/core.py", "pkg/array/moved.py"}, {"commit", "-q", "-m", "move"}} {
		if _, err := gittest.Run(t, dir, "", args...); err != nil {
			t.Fatal(err)
		}
	}
	second, err := r.ResolveCommit(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	blobs := newBlobCache(1 << 30)
	if _, err := buildIndex(ctx, r, first, blobs); err != nil {
		t.Fatal(err)
	}
	got, err := buildIndex(ctx, r, second, blobs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := BuildIndex(ctx, r, second)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(posting{}), cmpopts.IgnoreUnexported(Index{})); diff != "" {
		t.Fatalf("index from a moved cached blob (-scratch +cached):\n%s", diff)
	}
}

// TestParseSignalsDefault: "default" is DefaultSignals (names and stems
// off), and a list can start from it.
func TestParseSignalsDefault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]bool
	}{
		{"default", map[string]bool{SignalClean: true, SignalPaths: true, SignalFrames: true, SignalCalls: true, SignalImports: true,
			SignalFiles: true, SignalTests: true, SignalStubs: true}},
		{"default,names", map[string]bool{SignalClean: true, SignalPaths: true, SignalFrames: true, SignalCalls: true, SignalImports: true,
			SignalFiles: true, SignalTests: true, SignalStubs: true, SignalNames: true}},
		{"default,-tests,-files", map[string]bool{SignalClean: true, SignalPaths: true, SignalFrames: true, SignalCalls: true, SignalImports: true,
			SignalFiles: false, SignalTests: false, SignalStubs: true}},
		{"all", map[string]bool{SignalClean: true, SignalPaths: true, SignalFrames: true, SignalCalls: true, SignalImports: true,
			SignalNames: true, SignalStems: true, SignalTests: true, SignalExamples: true, SignalStubs: true, SignalFiles: true}},
	} {
		got, err := ParseSignals(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseSignals(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestAsidePaths: which paths the examples and stubs signals rank after
// the library's code, and which titles keep them in place. A directory
// counts only as a whole name; a file named like one does not.
func TestAsidePaths(t *testing.T) {
	for _, tc := range []struct {
		path           string
		example, stubs bool
	}{
		{"examples/applications/search.py", true, false},
		{"docs/conf.py", true, false},
		{"asv_bench/benchmarks/io.py", true, false},
		{"mypy/typeshed/stdlib/os/__init__.pyi", false, true},
		{"pkg/core.pyi", false, true},
		{"tests/fixtures/data.py", false, true},
		// Refused: names that only look like those directories.
		{"pkg/documents/reader.py", false, false},
		{"pkg/examples.py", false, false},
		{"pkg/docstring.py", false, false},
		{"pkg/stubs.py", false, false},
		{"pkg/fixtures_util.py", false, false},
		{"mybench/run.py", false, false},
		{"pkg/core.py", false, false},
	} {
		if got := isExamplePath(tc.path); got != tc.example {
			t.Errorf("isExamplePath(%s) = %v, want %v", tc.path, got, tc.example)
		}
		if got := isStubPath(tc.path); got != tc.stubs {
			t.Errorf("isStubPath(%s) = %v, want %v", tc.path, got, tc.stubs)
		}
	}
	for _, tc := range []struct {
		title           string
		examples, stubs bool
	}{
		{"Example in docs/quickstart.md is broken", true, false},
		{"Benchmark regression in groupby", true, false},
		{"Wrong type in os.pyi stub", false, true},
		{"typeshed sync breaks reveal_type", false, true},
		{"CrossEncoder is not pushed to cuda", false, false},
		{"Fix the docstring of map_overlap", false, false},
		{"Doctest of exampled function fails", false, false},
	} {
		is := parseIssue(tc.title+"\nbody", true)
		if is.aboutExamples != tc.examples || is.aboutStubs != tc.stubs {
			t.Errorf("%q: about examples %v, stubs %v; want %v, %v", tc.title, is.aboutExamples, is.aboutStubs, tc.examples, tc.stubs)
		}
	}
	files := demote(demote(demote([]string{"docs/a.py", "tests/test_a.py", "a.pyi", "a.py", "examples/test_b.py"}, isExamplePath), isStubPath), isTestPath)
	if want := []string{"a.py", "docs/a.py", "a.pyi", "tests/test_a.py", "examples/test_b.py"}; !cmp.Equal(files, want) {
		t.Errorf("demoted: %q, want %q (library, examples, stubs, tests)", files, want)
	}
}

// TestConcurrentBuildsChunkOnce: two builds of one repository asked for at
// once take turns, so each file is chunked once and the second build
// replays the first's (at once, both chunked the files new to the blob
// cache: over the 84 dev cases 11,200 to 13,900 files chunked for 9,896).
func TestConcurrentBuildsChunkOnce(t *testing.T) {
	r, dir, first := rankRepo(t)
	second := commitTwo(t, r, dir)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for range 5 {
		s := NewIndexed("")
		var wg sync.WaitGroup
		for _, c := range []string{first, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Index(context.Background(), r, c); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// 7 code files in the first commit, 8 in the second: 2 of them
		// new, 6 the first's.
		if st := s.Stats(); st.Chunked != 9 || st.Reused != 6 {
			t.Fatalf("two builds at once: %d files chunked, %d reused; want 9 and 6", st.Chunked, st.Reused)
		}
	}
}

// TestBuildIndexLargeFile: a code file over maxIndexedFile is left out
// (the listing has no sizes: the file is measured once read) and is not
// counted as chunked, in the first build and in the next commit's.
func TestBuildIndexLargeFile(t *testing.T) {
	gittest.Need(t)
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.CommitFiles(t, dir, map[string]string{
		"big.py":   strings.Repeat("big_word = 1\n", maxIndexedFile/13+1),
		"edge.py":  strings.Repeat("x", maxIndexedFile-1) + "\n",
		"small.py": "def small():\n    return 1\n",
	})
	r, err := repo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ctx := context.Background()
	s := NewIndexed("")
	for i, content := range []string{"", "def small():\n    return 2\n"} {
		if content != "" {
			gittest.CommitFiles(t, dir, map[string]string{"small.py": content})
		}
		ix, err := s.Index(ctx, r, "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, c := range ix.Chunks {
			if len(paths) == 0 || paths[len(paths)-1] != c.Path {
				paths = append(paths, c.Path)
			}
		}
		if want := []string{"edge.py", "small.py"}; !cmp.Equal(paths, want) || len(ix.postings("big")) != 0 {
			t.Errorf("build %d: files %v, want %v; postings of a term only big.py has: %v", i, paths, want, ix.postings("big"))
		}
		if st := s.Stats(); st.Chunked != 2+i || st.Reused != i {
			t.Errorf("build %d: %d files chunked, %d reused; want %d and %d", i, st.Chunked, st.Reused, 2+i, i)
		}
	}
}
