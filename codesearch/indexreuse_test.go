package codesearch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
)

// TestIndexFilesIdentical: index files are the same bytes whatever made
// them: two cold builds into two directories on one CPU and on four, and a
// build in a later run that replays the files an earlier run's index of
// another commit holds (the index cache reused across runs and commits).
// That later build chunks only the two files the commit changed.
func TestIndexFilesIdentical(t *testing.T) {
	r, dir, first := rankRepo(t)
	ctx := context.Background()
	os.WriteFile(filepath.Join(dir, "pkg/array/core.py"), []byte("def compute(x):\n    return x * 2\n\n\ndef spill(y):\n    return y\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg/array/new.py"), []byte("class New:\n    def make(self):\n        return compute(1)\n"), 0o644)
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "two"}} {
		if _, err := gittest.Run(t, dir, "", args...); err != nil {
			t.Fatal(err)
		}
	}
	second, err := r.ResolveCommit(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
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
