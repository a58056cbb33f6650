#!/usr/bin/env bash
# Benchmark of the compile stage of patchbench ape (issue 11): its overhead
# per candidate without the compiler, i.e. restoring the environment of the
# task's commit, writing the patched file and starting the sandbox, with
# --check-cmd true so that the check itself costs nothing.
#
#   tasks:  ape build on the last $T commits of click (../shared/data/repos/
#           click.bundle); the parents of the tasks' commits are built into an
#           environment store with their byte-code (compileall).
#   run:    ape run with the reference model and judge, --n $N candidates per
#           task, --workers $W (candidates checked in parallel), once from the
#           store (--env-store) and once from git archive (no store).
#   figure: per candidate, compile_setup_ms (restore + write) and compile_ms
#           (sandbox start and `true`) from results.jsonl: medians and means,
#           and the run's wall time divided by the number of candidates.
#
# Usage: scripts/ape-bench.sh [WORKDIR]   (DATA=dir, T=20, N=5, W=4)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
T=${T:-20}
N=${N:-5}
W=${W:-4}
mkdir -p "$work"
rm -rf "$work"/{click.git,store,run-store,run-git,tasks.jsonl,parents.txt}

# patchbench hands ape and env to patchbench-full, installed beside it.
go build -o "$work/patchbench" ./cmd/patchbench
go build -o "$work/patchbench-full" ./cmd/patchbench-full
pb=$work/patchbench
py=/usr/bin/python3

git clone -q --bare "$data/repos/click.bundle" "$work/click.git"
"$pb" ape build --repo "$work/click.git" --commits "HEAD~$T..HEAD" --out "$work/tasks.jsonl"
jq -r .parent_commit_hash "$work/tasks.jsonl" | sort -u > "$work/parents.txt"
echo "$(wc -l < "$work/tasks.jsonl") tasks on $(wc -l < "$work/parents.txt") parent commits"
"$pb" env build --store "$work/store" --repo "$work/click.git" --commits "$work/parents.txt" \
  --setup "$py -m compileall -q --invalidation-mode checked-hash ." --workers 2 >/dev/null

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mean() { awk '{ s += $1 } END { printf "%.1f\n", s / NR }'; }
now() { date +%s.%N; }

for mode in store git; do
  store=(); [ "$mode" = store ] && store=(--env-store "$work/store")
  a=$(now)
  "$pb" ape run --dataset "$work/tasks.jsonl" --repo "$work/click.git" "${store[@]}" \
    --model reference --judge-model reference --n "$N" --judge-n 1 --check-cmd true \
    --workers "$W" --out "$work/run-$mode" --quiet >/dev/null
  b=$(now)
  r=$work/run-$mode/results.jsonl
  c=$(wc -l < "$r")
  pass=$(jq -s '[.[] | select(.compile_pass)] | length' "$r")
  setup_med=$(jq .compile_setup_ms "$r" | median); setup_mean=$(jq .compile_setup_ms "$r" | mean)
  sb_med=$(jq .compile_ms "$r" | median); sb_mean=$(jq .compile_ms "$r" | mean)
  tot_med=$(jq '.compile_setup_ms + .compile_ms' "$r" | median)
  wall=$(awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%.0f", (b - a) * 1000 / c }')
  echo "$mode: $c candidates ($pass compiled), $W workers, load $(cut -d' ' -f1 /proc/loadavg):" \
    "restore+write median ${setup_med} ms (mean ${setup_mean}), sandbox start median ${sb_med} ms (mean ${sb_mean})," \
    "overhead per candidate median ${tot_med} ms; run wall time per candidate ${wall} ms"
done
