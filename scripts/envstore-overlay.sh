#!/usr/bin/env bash
# Overlay restores of trees of 1,000, 10,000 and 100,000 files against cp -a
# of the same trees, in one run: the constant-time figures of
# docs/envstore.md. Needs root (or another process that can mount an
# overlay); elsewhere env restore makes files and says why.
#
#   tree:    a one-file repository whose setup writes N files of 200 to
#            1,190 bytes, 100 to a directory (N/100 directories).
#   first:   the first env restore of the commit, which materializes its tree
#            in the store (hard links to the objects, once per commit).
#   restore: env restore of the materialized tree (an overlay mount), then
#            env release (not timed).
#   cp -a:   of the same tree as plain files.
#   start:   patchbench env --help, the cost of starting the binary, which
#            an overlay restore adds little to.
#
# Each figure is the median of $RUNS runs, warm page cache: wall seconds
# (date before and after), CPU seconds (user + system) and peak resident
# memory (/usr/bin/time -f %M, kilobytes) of the process.
#
# Usage: scripts/envstore-overlay.sh [WORKDIR]   (RUNS=7, SIZES="1000 10000 100000",
#        PATCHBENCH_FULL=binary)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
RUNS=${RUNS:-7}
SIZES=${SIZES:-1000 10000 100000}
mkdir -p "$work"
work=$(cd "$work" && pwd)
TMP=$work
rm -rf "$work"/{repo,out} "$work"/store-* "$work"/src-* "$work"/r "$work"/cp
mkdir -p "$work/out"
# shellcheck source=lib/diffxyz-rows.sh
. scripts/lib/diffxyz-rows.sh
pb_full
pb=$bin
py=/usr/bin/python3
[ -x "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed CMD...: run CMD, print "wall cpu maxrss_kb".
timed() {
  local a b
  a=$(now); /usr/bin/time -f '%U %S %M' -o "$work/out/time" "$@" >/dev/null; b=$(now)
  awk -v a="$a" -v b="$b" '{ printf "%.4f %.3f %d\n", b - a, $1 + $2, $3 }' "$work/out/time"
}
col() { cut -d' ' -f"$1" | median; }

mkdir -p "$work/repo"
git -C "$work/repo" init -q -b main
cat > "$work/repo/gen.py" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = f"d{i // 100:04d}"
    os.makedirs(d, exist_ok=True)
    body = (f"file {i % 100} of directory {i // 100}\n" * 40)[: 200 + (i % 100) * 10]
    with open(os.path.join(d, f"f{i % 100:03d}.txt"), "w") as out:
        out.write(body)
PY
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=b -c user.email=b@b commit -q -m gen
c=$(git -C "$work/repo" rev-parse HEAD)

{
echo "machine: $(nproc) CPUs, $(uname -r); WORKDIR on $(df -T "$work" | awk 'NR == 2 { print $2 }'), user $(id -un); median of $RUNS"
printf '%-8s %-26s %9s %9s %12s %10s\n' files what wall CPU "peak RSS" "/ cp -a"
for n in $SIZES; do
  store=$work/store-$n src=$work/src-$n
  "$pb" env build --store "$store" --repo "$work/repo" --commits "$c" --setup "$py gen.py $n" > /dev/null
  "$pb" env restore --store "$store" --commit "$c" --no-overlay --copy "$src" > /dev/null
  first=$(timed "$pb" env restore --store "$store" --commit "$c" "$work/r")
  "$pb" env restore --store "$store" --commit "$c" --json "$work/r2" > "$work/out/$n.json"
  "$pb" env release "$work/r" > /dev/null 2>&1 || rm -rf "$work/r"
  "$pb" env release "$work/r2" > /dev/null 2>&1 || rm -rf "$work/r2"
  method=$(jq -r .method "$work/out/$n.json")
  files=$(jq -r .files "$work/out/$n.json")
  restore=() cpa=() start=()
  for _ in $(seq "$RUNS"); do
    start+=("$(timed "$pb" env --help)")
    restore+=("$(timed "$pb" env restore --store "$store" --commit "$c" "$work/r")")
    "$pb" env release "$work/r" > /dev/null 2>&1 || rm -rf "$work/r"
    cpa+=("$(timed cp -a "$src" "$work/cp")")
    rm -rf "$work/cp"
  done
  base=$(printf '%s\n' "${cpa[@]}" | col 1)
  line() {
    awk -v n="$files" -v what="$1" -v w="$2" -v c="$3" -v m="$4" -v b="$base" \
      'BEGIN { printf "%-8s %-26s %7.3f s %7.3f s %9d kB %9.3fx\n", n, what, w, c, m, w / b }'
  }
  line "env restore (first)" "$(echo "$first" | col 1)" "$(echo "$first" | col 2)" "$(echo "$first" | col 3)"
  line "env restore ($method)" "$(printf '%s\n' "${restore[@]}" | col 1)" "$(printf '%s\n' "${restore[@]}" | col 2)" "$(printf '%s\n' "${restore[@]}" | col 3)"
  line "start-up (env --help)" "$(printf '%s\n' "${start[@]}" | col 1)" "$(printf '%s\n' "${start[@]}" | col 2)" "$(printf '%s\n' "${start[@]}" | col 3)"
  line "cp -a" "$base" "$(printf '%s\n' "${cpa[@]}" | col 2)" "$(printf '%s\n' "${cpa[@]}" | col 3)"
  rm -rf "$src"
done
} | tee "$work/out/summary.txt"
