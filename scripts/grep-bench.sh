#!/usr/bin/env bash
# grep_search (package codesearch) against `git grep -n -E PATTERN COMMIT`
# on the same patterns of the sympy tree at sympy__sympy-20590 (about 1,500
# files), in the same run: median of COUNT runs of each, in milliseconds.
# Usage: scripts/grep-bench.sh [COUNT]   (default 7)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-7}
bundle=../shared/data/swebench-lite-dev.bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --bare "$bundle" "$work/sympy.git"
rev=$(git --git-dir "$work/sympy.git" rev-parse --verify -q sympy__sympy-20590 ||
  git --git-dir "$work/sympy.git" for-each-ref --format='%(objectname)' 'refs/*/sympy__sympy-20590' | head -1)
echo "sympy at $rev: $(git --git-dir "$work/sympy.git" ls-tree -r --name-only "$rev" | wc -l) files; git $(git --version | cut -d' ' -f3); $(nproc) cores"
GREP_BENCH_REPO="$work/sympy.git" GREP_BENCH_REV="$rev" \
  go test ./codesearch -run '^$' -bench BenchmarkGrepSearch -benchtime 1x -count "$count" >"$work/out.txt"
# One line per pattern: the median of each tool's runs.
awk '/^BenchmarkGrepSearch\// {
  split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); key = p[2] SUBSEP p[3]
  n[key]++; v[key, n[key]] = $3 / 1e6; pats[p[2]] = 1
}
function median(key,   i, j, t, m) {
  m = n[key]
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[key, j] < v[key, i]) { t = v[key, i]; v[key, i] = v[key, j]; v[key, j] = t }
  return (m % 2) ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2
}
END {
  printf "%-12s %16s %14s %8s\n", "pattern", "grep_search ms", "git grep ms", "ratio"
  for (q in pats) {
    a = median(q SUBSEP "grep_search"); g = median(q SUBSEP "git_grep")
    printf "%-12s %16.1f %14.1f %8.2f\n", q, a, g, a / g
  }
}' "$work/out.txt"
