package codesearch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestIndexFile writes an index built from a real repository, reads it
// back equal, writes the same bytes again, and refuses every truncation
// of the file and a trailing byte; Indexed rebuilds from a damaged file.
func TestIndexFile(t *testing.T) {
	r, _, commit := rankRepo(t)
	ix, err := BuildIndex(context.Background(), r, commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Chunks) < 3 || len(ix.Terms) < 5 {
		t.Fatalf("index too small to test: %d chunks, %d terms", len(ix.Chunks), len(ix.Terms))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.idx")
	if err := writeIndex(path, ix); err != nil {
		t.Fatal(err)
	}
	got, err := readIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ix, got, cmp.AllowUnexported(posting{}), cmpopts.IgnoreUnexported(Index{})); diff != "" {
		t.Fatalf("read back (-built +read):\n%s", diff)
	}
	again := filepath.Join(dir, "b.idx")
	if err := writeIndex(again, got); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Errorf("the same index wrote different bytes (%d and %d)", len(a), len(b))
	}
	for n := 0; n < len(a); n++ {
		bad := filepath.Join(dir, "cut.idx")
		os.WriteFile(bad, a[:n], 0o644)
		if _, err := readIndex(bad); err == nil {
			t.Fatalf("a file cut to %d of %d bytes was read", n, len(a))
		} else if n >= len(indexMagic) && !errors.Is(err, errIndexFile) {
			t.Fatalf("cut to %d bytes: %v, want a damaged index file", n, err)
		}
	}
	os.WriteFile(filepath.Join(dir, "long.idx"), append(a, 0), 0o644)
	if _, err := readIndex(filepath.Join(dir, "long.idx")); !errors.Is(err, errIndexFile) {
		t.Errorf("trailing byte: %v, want a damaged index file", err)
	}

	// A damaged cache file is rebuilt and replaced.
	s := NewIndexed(filepath.Join(dir, "cache"))
	cached := s.cachePath(r, commit)
	os.MkdirAll(filepath.Dir(cached), 0o755)
	os.WriteFile(cached, a[:len(a)/2], 0o644)
	ix2, err := s.Index(context.Background(), r, commit)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Built != 1 || st.Loaded != 0 {
		t.Errorf("stats %+v: want the damaged file rebuilt", st)
	}
	if diff := cmp.Diff(ix, ix2, cmp.AllowUnexported(posting{}), cmpopts.IgnoreUnexported(Index{})); diff != "" {
		t.Errorf("rebuilt index differs:\n%s", diff)
	}
	if c, _ := os.ReadFile(cached); !bytes.Equal(c, a) {
		t.Errorf("the damaged cache file was not replaced")
	}
}

// TestIndexFilesIdentical: index files are the same bytes whatever made
// them: two cold builds into two directories on one CPU and on four, and a
// build in a later run that replays the files an earlier run's index of
// another commit holds (the index cache reused across runs and commits),
// and the second of two builds in one run.
// That later build chunks only the two files the commit changed.
func TestIndexFilesIdentical(t *testing.T) {
	r, dir, first := rankRepo(t)
	ctx := context.Background()
	second := commitTwo(t, r, dir)
	build := func(dir string, procs int, commits ...string) (*Indexed, []byte) {
		t.Helper()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		s := NewIndexed(dir)
		for _, c := range commits {
			if _, err := s.Index(ctx, r, c); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(s.cachePath(r, commits[len(commits)-1]))
		if err != nil {
			t.Fatal(err)
		}
		return s, data
	}
	_, one := build(t.TempDir(), 1, second)
	_, four := build(t.TempDir(), 4, second)
	if !bytes.Equal(one, four) {
		t.Errorf("cold builds on 1 and 4 CPUs differ: %d and %d bytes", len(one), len(four))
	}
	// One run building both commits: the second build replays the
	// first's files from memory and takes its terms in the first's order.
	if _, both := build(t.TempDir(), 2, first, second); !bytes.Equal(one, both) {
		t.Errorf("the second build of one run differs from a cold one: %d and %d bytes", len(both), len(one))
	}
	shared := t.TempDir()
	build(shared, 2, first)
	later, seeded := build(shared, 2, second) // a new Indexed: a later run
	if !bytes.Equal(one, seeded) {
		t.Errorf("the build replaying an earlier run's files differs from a cold one: %d and %d bytes", len(seeded), len(one))
	}
	st := later.Stats()
	// 8 code files now: 6 unchanged since the first commit's index.
	if st.Seeded != 1 || st.Reused != 6 || st.Chunked != 2 {
		t.Errorf("later run: %d index files seeded, %d files reused, %d chunked; want 1, 6, 2", st.Seeded, st.Reused, st.Chunked)
	}
}

// TestSortTerms: a build's terms come out sorted by their strings whatever
// the last build of the repository held: terms it had and this one lacks,
// new terms before, between and after its, and none at all.
func TestSortTerms(t *testing.T) {
	interned := []string{"zeta", "alpha", "mid", "beta", "omega", "gamma", "aa", "zz"}
	for _, tc := range []struct {
		name       string
		prev, used []int32
	}{
		{"first build", nil, []int32{0, 1, 2, 3}},
		{"same terms", []int32{1, 3, 2, 0}, []int32{0, 2, 1, 3}},
		{"some gone, some new", []int32{1, 3, 5, 2, 0}, []int32{6, 0, 4, 2, 7, 1}},
		{"all new", []int32{3, 2}, []int32{7, 6, 4}},
		{"none", []int32{1, 0}, nil},
	} {
		c := newBlobCache(0)
		counts := make([]int32, len(interned))
		c.sorted = map[string][]int32{"repo": tc.prev}
		for _, g := range tc.used {
			counts[g] = 3
		}
		got := c.sortTerms("repo", tc.used, counts, interned)
		var gotS, want []string
		for _, g := range got {
			gotS = append(gotS, interned[g])
		}
		for _, g := range tc.used {
			want = append(want, interned[g])
		}
		slices.Sort(want)
		if !slices.Equal(gotS, want) {
			t.Errorf("%s: %q, want %q", tc.name, gotS, want)
		}
		for g, n := range counts {
			if want := int32(0); slices.Contains(tc.used, int32(g)) {
				want = 3
				if n != want {
					t.Errorf("%s: count of %s %d after the sort, want %d", tc.name, interned[g], n, want)
				}
			} else if n != want {
				t.Errorf("%s: count of %s %d after the sort, want 0", tc.name, interned[g], n)
			}
		}
		if !slices.Equal(c.sorted["repo"], got) {
			t.Errorf("%s: the order kept for the next build is %v, want %v", tc.name, c.sorted["repo"], got)
		}
	}
}
