#!/usr/bin/env bash
# The bounds of loc run's indexed search (issue 41, item 4) on every
# localization case of the dev corpus: the 79 Loc-Bench_V1 issues of
# loc_bench_v1_sample and loc_bench_v1_tune (10 repositories) and the 5
# SWE-bench Lite dev instances (flask, sympy), 84 commits in all.
#
#   cold  : loc run with an empty index cache (every index built);
#   cold2 : the same into a second empty cache: its index files must be
#           byte-identical to the first's (cmp), as must the answers;
#   warm  : loc run again on the first cache (every index loaded);
#   bm25  : a plain whole-file BM25 (scripts/lib/bm25_files.py, Python), in
#           the same run: it reads and indexes each case's tree, no cache.
#
# Wall time, CPU time (user + system) and peak RSS (/usr/bin/time %M) of
# each, and the indexed runs' times over the plain BM25's. The bounds asked
# for: a cold run at most 1 GB peak and at most 0.5 of the plain BM25's time.
#
# Usage: scripts/loc-bounds.sh [WORKDIR]   (DATA=dir overrides ../shared/data;
#        WORKERS=n sets loc run --workers, default 8 as loc run's own)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
workers=${WORKERS:-8}
. scripts/lib/loc-repos.sh
loc_setup "$work"
locbench_parts "$work" "$data"
lite_repos "$repos" "$data"
"$pb" loc build --dataset "$data/swebench-lite-dev.jsonl" --repos "$repos" --out "$work/lite.jsonl" 2>/dev/null
cat "$work/tuning.jsonl" "$work/heldout.jsonl" "$work/lite.jsonl" > "$work/all.jsonl"
echo "$(wc -l < "$work/all.jsonl") cases, $(nproc) cores, loc run --workers $workers"

measure() { # name command...
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" ||
    { cat "$work/$name.err" >&2; exit 1; }
  read -r wall user sys rss < "$work/$name.time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  eval "wall_$name=$wall cpu_$name=$cpu"
  printf "| %s | %.1f s | %s s | %d MB |\n" "$name" "$wall" "$cpu" $((rss / 1024))
}
run=("$pb" loc run --dataset "$work/all.jsonl" --repos "$repos" --workers "$workers" --force --quiet)
rm -rf "$work/index" "$work/index2"
echo
echo "| run | wall | CPU | peak RSS |"
echo "| --- | ---: | ---: | ---: |"
measure cold "${run[@]}" --index-cache "$work/index" --out "$work/run-cold"
measure cold2 "${run[@]}" --index-cache "$work/index2" --out "$work/run-cold2"
measure warm "${run[@]}" --index-cache "$work/index" --out "$work/run-warm"
measure bm25 python3 "$root/scripts/lib/bm25_files.py" "$work/all.jsonl" "$repos"
echo
awk -v a="$wall_cold" -v b="$wall_bm25" -v c="$cpu_cold" -v d="$cpu_bm25" -v e="$wall_warm" -v f="$cpu_warm" 'BEGIN {
  printf "cold / plain BM25: wall %.2f, CPU %.2f\nwarm / plain BM25: wall %.2f, CPU %.2f\n", a / b, c / d, e / b, f / d }'
grep -h 'indexes:' "$work/cold.err" "$work/warm.err" || true
echo "index cache: $(ls "$work/index" | grep -c '\.idx$') index files, $(du -sm "$work/index" | cut -f1) MB"
if diff -r -q "$work/index" "$work/index2" >/dev/null; then
  echo "two cold runs: index files byte-identical"
else
  echo "two cold runs: index files DIFFER:"; diff -r -q "$work/index" "$work/index2" | head
fi
python3 - "$work/run-cold/results.jsonl" "$work/run-cold2/results.jsonl" <<'PY'
import json, sys
a, b = ({r["id"]: r.get("found") for r in map(json.loads, open(p))} for p in sys.argv[1:])
print("two cold runs: answers", "identical" if a == b else "DIFFER", f"({len(a)} cases)")
PY
echo "indexed (cold): $(cat "$work/cold.out")"
echo "plain whole-file BM25: $(cat "$work/bm25.out")"
