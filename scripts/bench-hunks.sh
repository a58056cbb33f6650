#!/usr/bin/env bash
# Benchmarks applying a git diff of many hunks to one file: patchbench
# apply (default and --strict) against GNU patch and git apply, all in the
# same run, interleaved, at several hunk counts.
#
# Usage: scripts/bench-hunks.sh                      (REPS=3, HUNKS="1000 20000 100000")
#        REPS=5 HUNKS="1000 20000" PB=/path/to/patchbench scripts/bench-hunks.sh
#        PB_BEFORE=/path/to/old/patchbench scripts/bench-hunks.sh   (adds it as patchbench-before)
#
# The file has 8n distinct lines ("line i of the file"); every eighth line
# is changed, and the patch is git diff's (three lines of context: n
# hunks), as testdata.ManyHunks makes for `go test -bench ManyHunks
# ./patch ./patch/repair`. Each tool applies it for real (the file is
# copied back before each run); the first result of each must equal the
# new file. Per tool and hunk count the script prints the median wall
# time, user+system CPU time and peak RSS (/usr/bin/time -f %M), then each
# patchbench's ratios to GNU patch. Targets: at most 2x GNU patch's time
# (CPU, which the machine's load distorts less than wall time) at every
# hunk count. git apply is quadratic in the hunks (10 s at 20,000 hunks),
# so it runs only up to GIT_MAX (20000) hunks, and patchbench-before up
# to BEFORE_MAX (20000). The exit status is 1 when a target fails, 2 on a
# setup error.
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

tool_cmd() { # TOOL DIR PATCH
  case $1 in
    patchbench-before) cmd=("$PB_BEFORE" apply -C "$2" "$3") ;;
    *) apply_cmd "$1" "$2" "$3" real ;;
  esac
}

status=0
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
  tools=(patchbench patchbench-strict gnu-patch)
  [ "$n" -le "$git_max" ] && tools+=(git-apply)
  [ -n "${PB_BEFORE:-}" ] && [ "$n" -le "$before_max" ] && tools+=(patchbench-before)
  declare -A wall=() cpu=() kb=()
  for ((i = 0; i < reps; i++)); do
    for tool in "${tools[@]}"; do
      cp "$d/old" "$d/repo/f"
      tool_cmd "$tool" "$d/repo" "$d/p.diff"
      t0=$(date +%s%N)
      if ! /usr/bin/time -f '%U %S %M' -o "$TMP/time" "${cmd[@]}" >/dev/null 2>"$TMP/err"; then
        echo "bench-hunks: $tool refused $n hunks:" >&2
        head -5 "$TMP/err" >&2
        exit 2
      fi
      t1=$(date +%s%N)
      if [ "$i" -eq 0 ] && ! cmp -s "$d/repo/f" "$d/new"; then
        echo "bench-hunks: $tool does not turn old into new at $n hunks" >&2
        exit 2
      fi
      read -r u s m <"$TMP/time"
      wall[$tool]+="$(((t1 - t0) / 1000000)) "
      cpu[$tool]+="$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%d", (u + s) * 1000}') "
      kb[$tool]+="$m "
    done
  done
  for tool in "${tools[@]}"; do
    wall[$tool]=$(tr ' ' '\n' <<<"${wall[$tool]}" | grep . | median)
    cpu[$tool]=$(tr ' ' '\n' <<<"${cpu[$tool]}" | grep . | median)
    kb[$tool]=$(tr ' ' '\n' <<<"${kb[$tool]}" | grep . | median)
    printf '%-8s %-18s %10s %10s %10s\n' "$n" "$tool" "${wall[$tool]}" "${cpu[$tool]}" "${kb[$tool]}"
  done
  filekb=$(($(wc -c <"$d/old") / 1024))
  for tool in patchbench patchbench-strict; do
    # A CPU time under 10 ms is below /usr/bin/time's resolution: count it as 10.
    c=$(awk -v a="${cpu[$tool]}" 'BEGIN{print (a < 10 ? 10 : a)}')
    g=$(awk -v a="${cpu[gnu-patch]}" 'BEGIN{print (a < 10 ? 10 : a)}')
    tr=$(ratio "${wall[$tool]}" "${wall[gnu-patch]}")
    cr=$(ratio "$c" "$g")
    printf '%-8s %-18s wall/GNU patch %sx, cpu/GNU patch %sx, memory/GNU patch %sx, memory/file %sx (file %s KB)\n' "$n" "$tool" \
      "$tr" "$cr" "$(ratio "${kb[$tool]}" "${kb[gnu-patch]}")" "$(ratio "${kb[$tool]}" "$filekb")" "$filekb"
    if awk -v r="$cr" 'BEGIN{exit !(r > 2.0)}'; then
      echo "$n FAIL: $tool takes ${cr}x GNU patch's CPU time (target <= 2.0x)"
      status=1
    fi
  done
  unset wall cpu kb
done
exit $status
