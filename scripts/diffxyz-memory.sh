#!/usr/bin/env bash
# Memory of a large Diff-XYZ run (issue 17): `diffxyz run --model reference`
# over datasets of ROWS rows, every task and format (15 cases a row), under
# /usr/bin/time -v: wall time, peak RSS and the dataset's size.
#
# The rows are the 584 real single-file commits of
# ../shared/data/diffxyz-dev.jsonl.gz, repeated with the copy's number in
# their id until ROWS rows (10,000 rows: 268 MB of JSONL, 150,000 cases).
#
# Usage: scripts/diffxyz-memory.sh [ROWS...]     (default: 1000 10000)
#        PATCHBENCH_FULL=/path/to/patchbench-full scripts/diffxyz-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(1000 10000)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. scripts/lib/diffxyz-rows.sh
pb_full
printf '%8s %10s %8s %10s %12s %8s\n' rows dataset_MB cases wall_s peak_RSS_MB RSS/input
for n in "${rows[@]}"; do
  ds=$TMP/rows-$n.jsonl
  diffxyz_rows "$n" "$ds"
  out=$TMP/run-$n
  /usr/bin/time -v "$bin" diffxyz run --dataset "$ds" --model reference --format all --quiet --out "$out" \
    > "$TMP/stdout" 2> "$TMP/time-$n" || { cat "$TMP/time-$n" >&2; exit 2; }
  cases=$(wc -l < "$out/results.jsonl")
  size=$(stat -c %s "$ds")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$TMP/time-$n")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$TMP/time-$n")
  awk -v n="$n" -v size="$size" -v cases="$cases" -v wall="$wall" -v rss="$rss" \
    'BEGIN { printf "%8d %10.1f %8d %10.2f %12.1f %8.2f\n", n, size / 1e6, cases, wall, rss / 1024, rss * 1024 / size }'
  rm -rf "$out" "$ds"
done
echo "# $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
