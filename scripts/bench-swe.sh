#!/usr/bin/env bash
# Benchmark of the swe patch stage (patchbench swe eval --no-tests) on
# instances built offline from real history: for each of the six
# repositories of ../shared/data/diffxyz-dev.jsonl.gz, a git repository whose
# history commits each row's old file, one commit per row; each row is an
# instance with git's diff as model_patch, and each malformed-dev case one
# more with its malformed patch (584 + 425 = 1009 instances).
#
#   cold: --repos is empty, so every repository is cloned (from the local
#         build, --clone-from) and opened; the page cache is dropped first
#         when this user may do so.
#   warm: the same run again, repositories in place and the OS cache warm.
#
# Usage: scripts/bench-swe.sh [WORKDIR]   (DATA=dir overrides ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
rm -rf "$work/bench" "$work/repos" "$work/cold" "$work/warm"

go build -o "$work/" ./cmd/patchbench ./cmd/patchbench-full
go run ./bench/swe/internal/mkbench -data "$data" -out "$work/bench"
pb=$work/patchbench
b=$work/bench

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

cache="page cache kept (cannot drop it here)"
sync
if echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then cache="page cache dropped"; fi

run() { # out-dir
  "$pb" swe eval --no-tests --dataset "$b/dataset.jsonl" --predictions "$b/predictions.jsonl" \
    --repos "$work/repos" --clone-from "$b/repos" --run-id bench --out "$1" >"$1.log" 2>&1
}
mkdir -p "$work/repos"
t0=$(now); run "$work/cold"; t1=$(now)
t2=$(now); run "$work/warm"; t3=$(now)

instances=$(wc -l <"$b/predictions.jsonl")
repos=$(find "$b/repos" -mindepth 2 -maxdepth 2 -type d | wc -l)
echo "swe patch stage: $instances instances, $repos repositories"
echo "  cold (clone + open every repository, $cache): $(elapsed "$t0" "$t1") s"
echo "  warm (second run):                             $(elapsed "$t2" "$t3") s"
echo "statuses (warm run):"
sed -n '/^[0-9]* instances/,/^report:/p' "$work/warm.log" | sed '1d;$d'
echo "work directory: $work"
