#!/usr/bin/env bash
# Cost of `patchbench merge` (issue 17): a Diff-XYZ run of ROWS rows (every
# task and format: 15 cases a row; the default 6,667 rows make 100,005
# result rows) with the reference model, split into SHARDS shards run one
# after another, then merged; merge's wall time and peak RSS under
# /usr/bin/time -v, and the size of what it read and wrote. The rows are
# the real commits of ../shared/data/diffxyz-dev.jsonl.gz, repeated with
# the copy's number in their id.
#
# Usage: scripts/merge-bench.sh            (ROWS=6667 SHARDS=4)
#        ROWS=1000 SHARDS=3 scripts/merge-bench.sh
#        KEEP=DIR scripts/merge-bench.sh   (the merged run is moved to DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
rows=${ROWS:-6667}
shards=${SHARDS:-4}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. scripts/lib/diffxyz-rows.sh
pb_full
ds=$TMP/rows.jsonl
diffxyz_rows "$rows" "$ds"
dirs=()
for ((i = 1; i <= shards; i++)); do
  "$bin" diffxyz run --dataset "$ds" --model reference --format all --quiet --shard "$i/$shards" --out "$TMP/shard-$i" > /dev/null 2>&1
  dirs+=("$TMP/shard-$i")
done
in_rows=$(cat "${dirs[@]/%//results.jsonl}" | wc -l)
in_mb=$(du -cb "${dirs[@]/%//results.jsonl}" | tail -1 | awk '{printf "%.1f", $1 / 1e6}')
/usr/bin/time -v "$bin" merge --out "$TMP/merged" "${dirs[@]}" 2> "$TMP/time" > /dev/null || { cat "$TMP/time" >&2; exit 2; }
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$TMP/time")
rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$TMP/time")
out_rows=$(wc -l < "$TMP/merged/results.jsonl")
echo "merge of $shards shards: $in_rows result rows ($in_mb MB) -> $out_rows rows, report.json, report.md, report.html"
echo "wall ${wall} s, peak RSS ${rss} MB; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${KEEP:-}" ]; then
  mv "$TMP/merged" "$KEEP"
fi
