#!/usr/bin/env bash
# The indexed search of loc run, signal by signal, on issues: the 47
# Loc-Bench_V1 issues of ../shared/data (yt-dlp, dask) and the 5 SWE-bench
# Lite dev instances (flask, sympy). No model anywhere.
#
# 1. Ablation: file and function Acc@1/3/5/10 per dataset with every
#    signal (--signals all), with none (BM25 over function chunks alone),
#    and with each signal left out (all,-NAME): a signal's gain is "all"
#    minus "all,-NAME". Indexes come from a cache built by the first run.
# 2. Cold runs over the 47 commits (no index cache, 8 workers): wall and
#    CPU time and peak RSS (/usr/bin/time -f %M) of loc run with every
#    signal and with none, and of a plain whole-file BM25 in Python
#    (scripts/lib/bm25_files.py, which also gives its accuracy).
#
# The machine's load average is printed: it is shared, and wall times grow
# with it; CPU times do less.
#
# Usage: scripts/loc-signals.sh [WORKDIR]   (DATA=dir overrides ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
. scripts/lib/loc-repos.sh
loc_setup "$work"
clone_bundle "$data/repos/locbench/yt-dlp.bundle" "$repos/yt-dlp/yt-dlp"
clone_bundle "$data/repos/locbench/dask.bundle" "$repos/dask/dask"
lite_repos "$repos" "$data"
"$pb" loc build --dataset "$data/loc_bench_v1_sample.jsonl.gz" --repos "$repos" --out "$work/locbench47.jsonl" 2>/dev/null
"$pb" loc build --dataset "$data/swebench-lite-dev.jsonl" --repos "$repos" --out "$work/lite5.jsonl" 2>/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"

metrics() { # report.json
  python3 - "$1" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["reports"][0]["total"]["stats"]
print(" | ".join(f"{st[f'{l}_acc@{k}']['value']:.3f}" for l in ("file", "function") for k in (1, 3, 5, 10)))
PY
}

echo
echo "| dataset | signals | file Acc@1 | @3 | @5 | @10 | function Acc@1 | @3 | @5 | @10 |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for ds in locbench47 lite5; do
  for sig in all none all,-clean all,-paths all,-names all,-stems all,-tests; do
    out=$work/abl/$ds/$sig
    mkdir -p "$work/abl/$ds"
    "$pb" loc run --dataset "$work/$ds.jsonl" --repos "$repos" --index-cache "$work/index" \
      --signals "$sig" --out "$out" --force --quiet >/dev/null 2>"$out.err" || { cat "$out.err" >&2; exit 1; }
    echo "| $ds | $sig | $(metrics "$out/report.json") |"
  done
  printf "| %s | plain whole-file BM25 (Python) | %s | | | | |\n" "$ds" \
    "$(python3 "$root/scripts/lib/bm25_files.py" "$work/$ds.jsonl" "$repos" | sed 's/file_acc@[0-9]*=//g; s/ / | /g')"
done

echo
echo "Cold runs over the 47 Loc-Bench_V1 commits:"
cold() { # name command...
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err"
  read -r wall user sys rss < "$work/$name.time"
  printf "%-32s wall %7.1f s  cpu %7.1f s  peak RSS %5d MB\n" "$name" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" $((rss / 1024))
}
rm -rf "$work/cold-index"
cold "loc run (all signals)" "$pb" loc run --dataset "$work/locbench47.jsonl" --repos "$repos" \
  --index-cache "$work/cold-index" --out "$work/cold-all" --force --quiet
rm -rf "$work/cold-index"
cold "loc run (--signals none)" "$pb" loc run --dataset "$work/locbench47.jsonl" --repos "$repos" \
  --index-cache "$work/cold-index" --signals none --out "$work/cold-none" --force --quiet
cold "plain whole-file BM25 (Python)" python3 "$root/scripts/lib/bm25_files.py" "$work/locbench47.jsonl" "$repos"
grep -h 'indexes:' "$work/loc run (all signals).err" || true
