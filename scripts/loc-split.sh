#!/usr/bin/env bash
# The indexed search of loc run measured on a tuning part and a held-out
# part of the 79 Loc-Bench_V1 issues of the dev corpus, split by repository
# and fixed here before any result was read:
#
#   tuning   (47): loc_bench_v1_sample — yt-dlp/yt-dlp, dask/dask, the issues
#                  the signals were designed on;
#   held-out (32): loc_bench_v1_tune — UKPLab/sentence-transformers,
#                  keras-team/keras, mesonbuild/meson, huggingface/accelerate,
#                  ranaroussi/yfinance, Chainlit/chainlit, networkx/networkx,
#                  spotify/luigi.
#
# First the fusion's weights are fitted on the tuning part alone
# (scripts/locfit: the grid, the best fusion, each weight swept); the
# held-out part is only evaluated, with equal weights and with the fitted
# codesearch.DefaultFusion. Then, for each part: file and function
# Acc@5/@10 with the default signals, with none, with every signal, with
# each default signal left out (default,-NAME) and each other one added
# (default,NAME), at the fitted weights; and a plain whole-file BM25
# (scripts/lib/bm25_files.py). A signal whose gain shows on the tuning
# part alone is to be dropped from the default.
#
# Usage: scripts/loc-split.sh [WORKDIR]   (DATA=dir overrides ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
go build -o "$work/" ./cmd/patchbench-full ./scripts/locfit
pb=$work/patchbench-full

repos=$work/repos
clone() { # bundle owner/name
  [ -d "$repos/$2" ] || { mkdir -p "$(dirname "$repos/$2")"; git clone -q --bare "$1" "$repos/$2"; }
}
b=$data/repos/locbench
clone "$b/yt-dlp.bundle" yt-dlp/yt-dlp
clone "$b/dask.bundle" dask/dask
clone "$b/sentence-transformers.bundle" UKPLab/sentence-transformers
clone "$b/keras.bundle" keras-team/keras
clone "$b/meson.bundle" mesonbuild/meson
clone "$b/accelerate.bundle" huggingface/accelerate
clone "$b/yfinance.bundle" ranaroussi/yfinance
clone "$b/chainlit.bundle" Chainlit/chainlit
clone "$b/networkx.bundle" networkx/networkx
clone "$b/luigi.bundle" spotify/luigi
"$pb" loc build --dataset "$data/loc_bench_v1_sample.jsonl.gz" --repos "$repos" --out "$work/tuning.jsonl" 2>/dev/null
"$pb" loc build --dataset "$data/loc_bench_v1_tune.jsonl.gz" --repos "$repos" --out "$work/heldout.jsonl" 2>/dev/null

echo "Fit on the tuning part:"
"$work/locfit" -cases "$work/tuning.jsonl" -repos "$repos" -index-cache "$work/index"
echo
echo "Held-out part, evaluated:"
"$work/locfit" -eval -cases "$work/heldout.jsonl" -repos "$repos" -index-cache "$work/index"
echo

metrics() { # report.json
  python3 - "$1" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["reports"][0]["total"]["stats"]
print(" | ".join(f"{st[f'{l}_acc@{k}']['value']:.3f}" for l in ("file", "function") for k in (5, 10)))
PY
}

echo "| part | signals | file Acc@5 | file Acc@10 | function Acc@5 | function Acc@10 |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for part in tuning heldout; do
  for sig in ${SIGNALS:-default none all default,-clean default,-paths default,-frames default,-calls default,-imports default,-files default,-tests default,-stubs default,names default,stems default,examples}; do
    out=$work/abl/$part/$sig
    mkdir -p "$work/abl/$part"
    "$pb" loc run --dataset "$work/$part.jsonl" --repos "$repos" --index-cache "$work/index" \
      --signals "$sig" --out "$out" --force --quiet >/dev/null 2>"$out.err" || { cat "$out.err" >&2; exit 1; }
    echo "| $part | $sig | $(metrics "$out/report.json") |"
  done
  printf "| %s | plain whole-file BM25 (Python) | %s | | |\n" "$part" \
    "$(python3 scripts/lib/bm25_files.py "$work/$part.jsonl" "$repos" | sed 's/file_acc@[13]=[0-9.]* //g; s/file_acc@[0-9]*=//g; s/ / | /g')"
done
