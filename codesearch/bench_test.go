package codesearch

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

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
