package codesearch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/repo"
)

// grepBenchPatterns are the patterns of scripts/grep-bench.sh: a rare
// identifier, a common word, a regular expression, each with and without a
// path glob.
var grepBenchPatterns = []struct{ name, pattern, glob string }{
	{"rare", `def _eval_is_extended_real`, ""},
	{"common", `import`, ""},
	{"regex", `class \w+\(Expr\)`, ""},
	{"regex-glob", `def (simplify|expand)\(`, "*.py"},
}

// BenchmarkGrepSearch compares grep_search with git grep on the same
// patterns of the repository GREP_BENCH_REPO at GREP_BENCH_REV; it is
// skipped without them (scripts/grep-bench.sh sets them).
func BenchmarkGrepSearch(b *testing.B) {
	dir, rev := os.Getenv("GREP_BENCH_REPO"), os.Getenv("GREP_BENCH_REV")
	if dir == "" || rev == "" {
		b.Skip("GREP_BENCH_REPO and GREP_BENCH_REV not set: see scripts/grep-bench.sh")
	}
	ctx := context.Background()
	r, err := repo.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	s, err := OpenCommit(ctx, r, rev)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, p := range grepBenchPatterns {
		args, _ := json.Marshal(map[string]string{"pattern": p.pattern, "path_glob": p.glob})
		b.Run(p.name+"/grep_search", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Call(ctx, GrepSearch, args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.name+"/git_grep", func(b *testing.B) {
			cmdArgs := []string{"--git-dir", r.GitDir(), "grep", "-n", "-E", p.pattern, rev}
			if p.glob != "" {
				cmdArgs = append(cmdArgs, "--", p.glob)
			}
			for b.Loop() {
				// Exit status 1 is "no match"; the output is read whole.
				exec.Command("git", cmdArgs...).Output()
			}
		})
	}
}

// BenchmarkBuildIndex builds the index of a generated repository of 200
// Python files: cold (every file read and chunked) and again with the
// blob cache of an earlier build of a commit that changed one file (every
// other file replayed), the two costs of a cold loc run.
func BenchmarkBuildIndex(b *testing.B) {
	gittest.Need(b)
	dir := b.TempDir()
	files := map[string]string{}
	for i := range 200 {
		var src strings.Builder
		fmt.Fprintf(&src, "import os\nfrom pkg.mod%d import helper%d\n\n\nclass Thing%d:\n", (i+1)%200, i, i)
		for j := range 20 {
			fmt.Fprintf(&src, "    def parseHTTPRequest%d_%d(self, value_%d):\n        # getResponseCode for item %d of the batch\n        return self.value_%d + helper%d(value_%d)\n\n", i, j, j, j, j, i, j)
		}
		files[fmt.Sprintf("pkg/mod%d.py", i)] = src.String()
	}
	gittest.CommitFiles(b, dir, files)
	ctx := context.Background()
	r, err := repo.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	first, err := r.ResolveCommit(ctx, "HEAD")
	if err != nil {
		b.Fatal(err)
	}
	gittest.WriteFiles(b, dir, map[string]string{"pkg/mod0.py": "def changed():\n    return 1\n"})
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "two"}} {
		if _, err := gittest.Run(b, dir, "", args...); err != nil {
			b.Fatal(err)
		}
	}
	second, err := r.ResolveCommit(ctx, "HEAD")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := BuildIndex(ctx, r, second); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replayed", func(b *testing.B) {
		blobs := newBlobCache(1 << 30)
		if _, err := buildIndex(ctx, r, first, blobs); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := buildIndex(ctx, r, second, blobs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
