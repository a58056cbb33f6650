#!/usr/bin/env bash
# Times `patchbench diff`, `git diff --no-index` and `diff -u` on the
# pathological pairs of diff/parity_test.go, interleaved, median of REPS
# runs (default 5), and prints each tool's changed-line count.
#
# Usage: scripts/bench-pathological.sh [PAIR...]
#        PB=/path/to/patchbench REPS=9 scripts/bench-pathological.sh reversed-code
#
# Without PAIR it times the pairs of docs/performance.md's table. The pairs
# are written by `go test ./diff -run TestPathologicalTestdata
# -dump-pathological DIR` (DIR=$PAIRS, default a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pairs=${PAIRS:-$TMP/pairs}
if [ ! -f "$pairs/reversed-code.old" ]; then
  mkdir -p "$pairs"
  go test ./diff -run TestPathologicalTestdata -dump-pathological "$pairs" >/dev/null
fi
pb=${PB:-}
if [ -z "$pb" ]; then
  go build -o "$TMP/patchbench" ./cmd/patchbench
  pb=$TMP/patchbench
fi
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(reversed-code shuffled-20k rand-a2-n30000-20pct rand-a3-n30000-20pct
  rand-a20-n30000-20pct code-2000-funcs-10pct 100k-change-start huge-one-line)
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
changed() { awk '/^@@ /{h=1; next} h && /^[-+]/{n++} END{print n+0}' "$1"; }
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
printf '%-24s %9s %9s %9s   %s\n' pair pb_ms git_ms gnu_ms 'changed: pb git gnu'
for n in "${names[@]}"; do
  old=$pairs/$n.old new=$pairs/$n.new
  declare -A ms=([pb]="" [git]="" [gnu]="")
  for ((i = 0; i < reps; i++)); do
    for tool in pb git gnu; do
      case $tool in
        pb) cmd=("$pb" diff) ;;
        git) cmd=(git diff --no-index --no-color --no-ext-diff) ;;
        gnu) cmd=(diff -u) ;;
      esac
      t0=$(date +%s%N)
      "${cmd[@]}" "$old" "$new" >"$TMP/out.$tool" || true
      t1=$(date +%s%N)
      ms[$tool]+="$(((t1 - t0) / 1000)) "
    done
  done
  row=()
  for tool in pb git gnu; do
    m=$(tr ' ' '\n' <<<"${ms[$tool]}" | grep . | median)
    row+=("$(awk -v u="$m" 'BEGIN{printf "%.1f", u/1000}')")
  done
  printf '%-24s %9s %9s %9s   %s %s %s\n' "$n" "${row[@]}" "$(changed "$TMP/out.pb")" "$(changed "$TMP/out.git")" "$(changed "$TMP/out.gnu")"
  unset ms
done
