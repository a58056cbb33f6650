#!/usr/bin/env bash
# The largest Loc-Bench dataset that can be built here, offline: the five
# SWE-bench Lite dev instances of ../shared/data (SWE-bench schema) and every
# fix and feature commit of click's and cobra's whole histories (the bundles
# in ../shared/data/repos; at most 5 files and 200 changed lines each, loc
# build's defaults). Validates it, then runs the reference model (a pipeline
# check: 1.0 everywhere) and the indexed mode, and prints the overall means
# and the means per repository.
#
# Usage: scripts/loc-dataset.sh [WORKDIR]   (DATA=dir overrides ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
mkdir -p "$work/repos/pallets" "$work/repos/spf13" "$work/repos/sympy"
go build -o "$work/" ./cmd/patchbench-full
pb=$work/patchbench-full
clone() { [ -d "$2" ] || git clone -q --bare "$1" "$2"; }
clone "$data/repos/click.bundle" "$work/repos/pallets/click"
clone "$data/repos/cobra.bundle" "$work/repos/spf13/cobra"
clone "$data/swebench-lite-dev.bundle" "$work/repos/pallets/flask"
clone "$data/swebench-lite-dev.bundle" "$work/repos/sympy/sympy"

"$pb" loc build --dataset "$data/swebench-lite-dev.jsonl" --repos "$work/repos" --out "$work/lite.jsonl"
"$pb" loc build --repo "$work/repos/pallets/click" --commits HEAD --kind fix,feature --name pallets/click --out "$work/click.jsonl"
"$pb" loc build --repo "$work/repos/spf13/cobra" --commits HEAD --kind fix,feature --name spf13/cobra --out "$work/cobra.jsonl"
cat "$work/lite.jsonl" "$work/click.jsonl" "$work/cobra.jsonl" > "$work/all.jsonl"
"$pb" loc validate --dataset "$work/all.jsonl" --repos "$work/repos"

rm -rf "$work/ref" "$work/idx"
"$pb" loc run --dataset "$work/all.jsonl" --repos "$work/repos" --out "$work/ref" --model reference --quiet
"$pb" loc run --dataset "$work/all.jsonl" --repos "$work/repos" --out "$work/idx" --index-cache "$work/index" --quiet
jq -r '.reports[] | .dims as $d | (.total | "overall n=\(.n)"), "by \($d)", (.groups[] |
  "\(.values) n=\(.n) quality_score=\(.stats.quality_score.value) quality_score_v2=\(.stats.quality_score_v2.value) file_acc@1=\(.stats["file_acc@1"].value) file_acc@5=\(.stats["file_acc@5"].value) function_acc@10=\(.stats["function_acc@10"].value // "-")")' \
  "$work/idx/report.json" | grep -A8 '^by \["repo"\]'
