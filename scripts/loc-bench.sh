#!/usr/bin/env bash
# Benchmark of loc run --mode indexed on the sympy tree of SWE-bench Lite's
# sympy__sympy-20590 (../shared/data/swebench-lite-dev.bundle, 1,449 Python
# files, 29 MB): one case, run three times with /usr/bin/time:
#
#   cold:  no index cache: the index is built (ls-tree + cat-file, chunking,
#          BM25), written to the cache, and the case's query answered;
#   warm:  the same run again: the index is loaded from the cache;
#   query: the time of the one BM25 query alone, as loc run reports it.
#
# Wall time, CPU time (user + system) and peak RSS of the whole process.
# The machine's load average is printed too: this machine is shared, and
# wall times grow with it.
#
# Usage: scripts/loc-bench.sh [WORKDIR]   (DATA=dir overrides ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
go build -o "$work/" ./cmd/patchbench ./cmd/patchbench-full
pb=$work/patchbench-full

repos=$work/repos
if [ ! -d "$repos/sympy/sympy" ]; then
  mkdir -p "$repos/sympy"
  git clone -q --bare "$data/swebench-lite-dev.bundle" "$repos/sympy/sympy"
fi
grep '"sympy__sympy-20590"' "$data/swebench-lite-dev.jsonl" > "$work/one.jsonl"
"$pb" loc build --dataset "$work/one.jsonl" --repos "$repos" --out "$work/cases.jsonl" 2>/dev/null
files=$(git --git-dir "$repos/sympy/sympy" ls-tree -r --name-only sympy__sympy-20590 | grep -c '\.py$')
echo "sympy__sympy-20590: $files Python files; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # name
  /usr/bin/time -f "%e %U %S %M" -o "$work/$1.time" \
    "$pb" loc run --dataset "$work/cases.jsonl" --repos "$repos" --index-cache "$work/index" \
    --out "$work/$1" --force --quiet >/dev/null 2>"$work/$1.err"
  read -r wall user sys rss < "$work/$1.time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  printf "%-5s wall %6.2f s  cpu %6s s  peak RSS %6d KiB  %s\n" "$1" "$wall" "$cpu" "$rss" \
    "$(grep -o 'indexes: .*' "$work/$1.err")"
}
rm -rf "$work/index"
run cold
run warm
ls -l "$work/index" | awk 'NR > 1 { printf "index file: %.1f MB\n", $5 / 1e6 }'
