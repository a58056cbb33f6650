#!/usr/bin/env bash
# Benchmarks applying a git diff of many hunks to one file: patchbench
# apply (default and --strict, the patch named; and `apply -`, the patch
# on a pipe) against GNU patch (the patch named with -i, and on a pipe)
# and git apply, all in the same run, interleaved, at several hunk
# counts.
#
# Usage: scripts/bench-hunks.sh                      (REPS=3, HUNKS="1000 20000 100000")
#        REPS=5 HUNKS="1000 20000" PB=/path/to/patchbench scripts/bench-hunks.sh
#        PB_BEFORE=/path/to/old/patchbench scripts/bench-hunks.sh   (adds it as patchbench-before, and -stdin)
#
# The file has 8n distinct lines ("line i of the file"); every eighth line
# is changed, and the patch is git diff's (three lines of context: n
# hunks), as testdata.ManyHunks makes for `go test -bench ManyHunks
# ./patch ./patch/repair`. Each tool applies it for real (the file is
# copied back before each run); the first result of each must equal the
# new file. A pipe is a FIFO that a cat started before the timing (and
# not the shell's child, so that its CPU time is not counted) fills. Per
# tool and hunk count the script prints the median wall
# time, user+system CPU time (bash's time, to the millisecond, around
# /usr/bin/time, whose own start is counted for every tool alike) and
# peak RSS (/usr/bin/time -f %M), then each patchbench's ratios to GNU
# patch (patchbench-stdin's to GNU patch's on a pipe), its peak RSS
# against the file's and the patch's sizes, and the
# peak RSS of the same binary applying a one-line change to a 6-byte file
# (the start-up floor: the Go runtime and the binary's pages, which no
# apply goes below).
# Targets: at most 2x GNU patch's CPU time (which the machine's load
# distorts less than wall time) at every hunk count, and peak RSS within
# 2x the file; the second is judged, and failed, on the RSS above that
# start-up floor when the file is too small for the floor to fit in 2x
# it (both are printed). git apply is quadratic in the hunks (10 s at
# 20,000 hunks), so it runs only up to GIT_MAX (20000) hunks, and
# patchbench-before up to BEFORE_MAX (20000). The exit status is 1 when
# a target fails, 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-3}
counts=${HUNKS:-1000 20000 100000}
git_max=${GIT_MAX:-20000}
before_max=${BEFORE_MAX:-20000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for tool in go git patch awk /usr/bin/time cmp; do
  command -v "$tool" >/dev/null || { echo "bench-hunks: $tool not found" >&2; exit 2; }
done
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
pb=${PB:-}
if [ -z "$pb" ]; then
  pb=$TMP/patchbench
  go build -o "$pb" ./cmd/patchbench || { echo "bench-hunks: cmd/patchbench does not build" >&2; exit 2; }
fi
. scripts/lib/apply-tools.sh

tool_cmd() { # TOOL DIR PATCH: sets cmd, and in (its standard input)
  in=/dev/null
  case $1 in
    patchbench-before) cmd=("$PB_BEFORE" apply -C "$2" "$3") ;;
    patchbench-before-stdin) cmd=("$PB_BEFORE" apply -C "$2" -) in=$TMP/fifo ;;
    patchbench-stdin) cmd=("$pb" apply -C "$2" -) in=$TMP/fifo ;;
    gnu-patch-stdin) cmd=(patch -s -p1 -d "$2") in=$TMP/fifo ;;
    *) apply_cmd "$1" "$2" "$3" real ;;
  esac
  if [ "$in" != /dev/null ]; then
    # cat runs in a subshell that exits at once: not this shell's child.
    (cat "$3" >"$TMP/fifo" &)
  fi
}
mkfifo "$TMP/fifo"

# The start-up floor: the peak RSS of the binary applying a one-line
# change to a three-line file.
mkdir -p "$TMP/floor"
printf 'diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' >"$TMP/floor/p.diff"
basekb=$(for i in 1 2 3 4 5; do
  printf 'a\nb\nc\n' >"$TMP/floor/f"
  /usr/bin/time -f %M "$pb" apply -C "$TMP/floor" "$TMP/floor/p.diff" 2>&1 >/dev/null | tail -1
done | median)
echo "start-up floor: $pb apply of a one-line change to a 6-byte file peaks at $basekb KB"
status=0
TIMEFORMAT='%3U %3S'
printf '%-8s %-18s %10s %10s %10s\n' hunks tool wall_ms cpu_ms rss_kb
for n in $counts; do
  d=$TMP/h$n
  mkdir -p "$d/repo"
  awk -v n="$n" -v old="$d/old" -v new="$d/new" 'BEGIN {
    for (i = 0; i < 8 * n; i++) {
      l = "line " i " of the file"
      print l >old
      print (i % 8 == 4 ? "changed " i : l) >new
    }
  }'
  (cd "$d" && git diff --no-index --no-color --no-ext-diff old new >p.diff) || true
  sed -i 's|^diff --git a/old b/new|diff --git a/f b/f|; s|^--- a/old|--- a/f|; s|^+++ b/new|+++ b/f|' "$d/p.diff"
  got=$(grep -c '^@@ ' "$d/p.diff")
  [ "$got" -eq "$n" ] || { echo "bench-hunks: git diff made $got hunks, $n wanted" >&2; exit 2; }
  tools=(patchbench patchbench-strict patchbench-stdin gnu-patch gnu-patch-stdin)
  [ "$n" -le "$git_max" ] && tools+=(git-apply)
  [ -n "${PB_BEFORE:-}" ] && [ "$n" -le "$before_max" ] && tools+=(patchbench-before patchbench-before-stdin)
  declare -A wall=() cpu=() kb=()
  for ((i = 0; i < reps; i++)); do
    for tool in "${tools[@]}"; do
      cp "$d/old" "$d/repo/f"
      tool_cmd "$tool" "$d/repo" "$d/p.diff"
      t0=$(date +%s%N)
      if ! { time /usr/bin/time -f '%M' -o "$TMP/rss" "${cmd[@]}" <"$in" >/dev/null 2>"$TMP/err"; } 2>"$TMP/time"; then
        echo "bench-hunks: $tool refused $n hunks:" >&2
        head -5 "$TMP/err" >&2
        exit 2
      fi
      t1=$(date +%s%N)
      if [ "$i" -eq 0 ] && ! cmp -s "$d/repo/f" "$d/new"; then
        echo "bench-hunks: $tool does not turn old into new at $n hunks" >&2
        exit 2
      fi
      read -r u s <"$TMP/time"
      wall[$tool]+="$(((t1 - t0) / 1000000)) "
      cpu[$tool]+="$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%d", (u + s) * 1000}') "
      kb[$tool]+="$(tail -1 "$TMP/rss") "
    done
  done
  for tool in "${tools[@]}"; do
    wall[$tool]=$(tr ' ' '\n' <<<"${wall[$tool]}" | grep . | median)
    cpu[$tool]=$(tr ' ' '\n' <<<"${cpu[$tool]}" | grep . | median)
    kb[$tool]=$(tr ' ' '\n' <<<"${kb[$tool]}" | grep . | median)
    printf '%-8s %-18s %10s %10s %10s\n' "$n" "$tool" "${wall[$tool]}" "${cpu[$tool]}" "${kb[$tool]}"
  done
  filekb=$(($(wc -c <"$d/old") / 1024))
  patchkb=$(($(wc -c <"$d/p.diff") / 1024))
  for tool in patchbench patchbench-strict patchbench-stdin; do
    peer=gnu-patch
    [ "$tool" = patchbench-stdin ] && peer=gnu-patch-stdin
    # A CPU time under 1 ms is below bash's resolution: count it as 1.
    c=$(awk -v a="${cpu[$tool]}" 'BEGIN{print (a < 1 ? 1 : a)}')
    g=$(awk -v a="${cpu[$peer]}" 'BEGIN{print (a < 1 ? 1 : a)}')
    tr=$(ratio "${wall[$tool]}" "${wall[$peer]}")
    cr=$(ratio "$c" "$g")
    m=${kb[$tool]}
    net=$(awk -v m="$m" -v b="$basekb" 'BEGIN{print (m > b ? m - b : 0)}')
    printf '%-8s %-18s wall/%s %sx, cpu/%s %sx, memory/%s %sx\n' "$n" "$tool" \
      "$peer" "$tr" "$peer" "$cr" "$peer" "$(ratio "$m" "${kb[$peer]}")"
    printf '%-8s %-18s memory/file %sx (file %s KB), memory/patch %sx (patch %s KB); above the start-up floor (%s KB): %s KB, %sx the file\n' "$n" "$tool" \
      "$(ratio "$m" "$filekb")" "$filekb" "$(ratio "$m" "$patchkb")" "$patchkb" "$basekb" "$net" "$(ratio "$net" "$filekb")"
    if awk -v r="$cr" 'BEGIN{exit !(r > 2.0)}'; then
      echo "$n FAIL: $tool takes ${cr}x $peer's CPU time (target <= 2.0x)"
      status=1
    fi
    if awk -v m="$m" -v b="$basekb" -v f="$filekb" 'BEGIN{exit !(m > 2 * f && (b < 2 * f || m - b > 2 * f))}'; then
      echo "$n FAIL: $tool peaks at ${m} KB, over 2x the file's ${filekb} KB (target: within 2x the file)"
      status=1
    fi
  done
  unset wall cpu kb
done
exit $status
