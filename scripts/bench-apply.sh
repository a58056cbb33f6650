#!/usr/bin/env bash
# Benchmarks applying a large patch: `patchbench apply --check` (tolerant and
# --strict) against `git apply --check` and GNU `patch --dry-run`, all tools
# in the same run, and checks the targets of issue 18.
#
# Usage: scripts/bench-apply.sh                 (REPS=7 runs per tool and pair)
#        REPS=11 LINES=150000 KEEP=/tmp/pairs PB=/path/to/patchbench scripts/bench-apply.sh
#
# The inputs are real source files: the git bundles under
# ../shared/data/repos are cloned to a temporary directory and the Python,
# Go and Markdown files of several versions of each (every 200th first-parent
# commit) are concatenated in a fixed order.
#
# Pair A: the first LINES lines (150,000) of that text, and a copy in which
#         about 1% of the lines are deleted, inserted (a line from elsewhere
#         in the text), modified or replaced, spread through the file.
# Pair B: the same amount of text in which lines recur a lot: the files
#         holding the first 5,000 lines, repeated about 30 times in a shuffled
#         order ("}", "return nil", "def __init__(self):", whole functions
#         recur hundreds of times), edited the same way.
#
# The patch is GNU diff -u between the two (with a/ b/ names). Each tool
# checks it against the old file; each also applies it once for real, and
# the result must equal the new file. For every tool the script prints the
# median wall time and the median peak RSS (/usr/bin/time -f %M), then the
# ratios of patchbench to git apply and to GNU patch. Targets: on both pairs
# patchbench (both modes) takes at most 1.0x git apply's wall time and at
# most 2x its peak memory. The exit status is 1 when a target fails, 2 on a
# setup error. PB names a patchbench binary to measure instead of one built
# from this checkout.
#
# Beside them: patchbench-startup (the CLI applying a one-line change to a
# three-line file: its start-up alone) and pb-engine (a lean driver around
# repair.Repair and patch.Apply, without the CLI), to tell the engine's
# cost from the binary's.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
reps=${REPS:-7}
size=${LINES:-150000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for tool in go git diff patch awk /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench-apply: $tool not found" >&2; exit 2; }
done
repos=$root/../shared/data/repos
ls "$repos"/*.bundle >/dev/null 2>&1 || { echo "bench-apply: no bundles under $repos" >&2; exit 2; }

# --- inputs ---------------------------------------------------------------
# src.txt is the text; files.txt gives each file's line count, in order.
mkdir -p "$TMP/src"
: >"$TMP/src.txt"
: >"$TMP/files.txt"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
for b in "$repos"/*.bundle; do
  r=$TMP/src/$(basename "$b" .bundle)
  git clone -q "$b" "$r" 2>/dev/null
  for rev in $(git -C "$r" rev-list --first-parent HEAD | awk 'NR % 200 == 1'); do
    rm -rf "$TMP/tree" && mkdir "$TMP/tree"
    git -C "$r" archive "$rev" | tar -x -C "$TMP/tree"
    # One awk reads every file: it prints the lines (each file ends with a
    # newline) and each file's line count; empty files count for nothing.
    (cd "$TMP/tree" && find . -type f \( -name '*.py' -o -name '*.go' -o -name '*.md' \) | LC_ALL=C sort |
      tr '\n' '\0' | xargs -0 awk -v counts="$TMP/files.txt" '
        FNR == 1 && NR > 1 { print n >>counts; n = 0 }
        { print; n++ }
        END { if (NR) print n >>counts }') >>"$TMP/src.txt"
  done
done
have=$(wc -l <"$TMP/src.txt")
if [ "$have" -lt "$size" ]; then
  echo "bench-apply: only $have lines of source in the bundles, $size wanted" >&2
  exit 2
fi

pairs=${KEEP:-$TMP/pairs}
mkdir -p "$pairs"
# A deterministic generator that every awk computes alike: MINSTD
# (x*48271 mod 2^31-1 stays exact in a double).
gen='
function rnd(n) { seed = (seed * 48271) % 2147483647; return seed % n }
# edit deletes, inserts, modifies or replaces about 1% of the lines of old
# (1..n), taking new lines from pool (1..np).
function edit(old, n, pool, np, out,   i, x, k, mod) {
  k = 0; mod = 0
  for (i = 1; i <= n; i++) {
    x = rnd(1000)
    if (x < 3) continue
    if (x < 6) { out[++k] = pool[1 + rnd(np)]; out[++k] = old[i]; continue }
    if (x < 8) { out[++k] = old[i] " // edit " (++mod); continue }
    if (x < 10) { out[++k] = pool[1 + rnd(np)]; continue }
    out[++k] = old[i]
  }
  return k
}
function write(name, a, n,   i) { for (i = 1; i <= n; i++) print a[i] >name; close(name) }
'
awk -v size="$size" -v out="$pairs" "$gen"'
FNR == NR { count[++nf] = $1; next }
{ all[++na] = $0 }
END {
  seed = 1
  for (i = 1; i <= size; i++) a[i] = all[i]
  write(out "/A.old", a, size)
  n = edit(a, size, all, na, e); write(out "/A.new", e, n)

  # Pair B: the files that hold the first 5,000 lines, in shuffled repeats.
  seed = 1; start = 1
  for (f = 1; start <= 5000; f++) { first[f] = start; len[f] = count[f]; start += count[f] }
  nfiles = f - 1; m = 0
  while (m < size) {
    f = 1 + rnd(nfiles)
    for (i = 0; i < len[f] && m < size; i++) b[++m] = all[first[f] + i]
  }
  write(out "/B.old", b, m)
  n = edit(b, m, b, m, e2); write(out "/B.new", e2, n)
}' "$TMP/files.txt" "$TMP/src.txt"

for pair in A B; do
  set +e
  diff -u --label a/f.txt --label b/f.txt "$pairs/$pair.old" "$pairs/$pair.new" >"$pairs/$pair.patch"
  [ $? -eq 1 ] || { echo "bench-apply: diff failed on pair $pair" >&2; exit 2; }
  set -e
done

# --- tools ----------------------------------------------------------------
pb=${PB:-}
if [ -z "$pb" ]; then
  pb=$TMP/patchbench
  go build -o "$pb" ./cmd/patchbench || { echo "bench-apply: cmd/patchbench does not build" >&2; exit 2; }
fi
# pb-engine is a lean driver around repair.Repair and patch.Apply (no CLI
# start-up): it shows the engine's time and memory apart from the binary's.
mkdir -p "$TMP/lean"
gover=$(go env GOVERSION | sed 's/^go//; s/[^0-9.].*//')
printf 'module lean\n\ngo %s\n' "$gover" >"$TMP/lean/go.mod"
cat >"$TMP/lean/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

type dirFS string

func (d dirFS) ReadFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(name)))
}

// pb-engine tolerant|strict DIR PATCH checks PATCH against the files in DIR.
func main() {
	b, err := os.ReadFile(os.Args[3])
	if err == nil && os.Args[1] == "strict" {
		var p *patch.Patch
		if p, err = patch.Parse(string(b), patch.UDiff, patch.ParseOptions{Strip: 1}); err == nil {
			_, err = patch.Apply(p, dirFS(os.Args[2]), patch.ApplyOptions{})
		}
	} else if err == nil {
		_, err = repair.Repair(string(b), repair.Options{FS: dirFS(os.Args[2])})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
GO
printf 'go %s\n\nuse (\n\t%s\n\t%s\n)\n' "$gover" "$TMP/lean" "$root" >"$TMP/go.work"
(cd "$TMP/lean" && GOWORK="$TMP/go.work" go build -o "$TMP/pb-engine" .) || {
  echo "bench-apply: cannot build the engine driver" >&2
  exit 2
}
tools=(patchbench patchbench-strict git-apply gnu-patch)
# patchbench-startup applies a one-line change to a three-line file: the
# binary's own start-up time and memory, shown beside the others.
mkdir -p "$TMP/tiny"
printf 'a\nb\nc\n' >"$TMP/tiny/f.txt"
printf -- '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' >"$TMP/tiny.patch"
. scripts/lib/apply-tools.sh
# cmd_of TOOL DIR PATCH [real] sets cmd to the command that checks (with
# real, applies) PATCH in DIR.
cmd_of() {
  case $1 in
    patchbench-startup) cmd=("$pb" apply --check -C "$TMP/tiny" "$TMP/tiny.patch") ;;
    pb-engine) cmd=("$TMP/pb-engine" tolerant "$2" "$3") ;;
    pb-engine-strict) cmd=("$TMP/pb-engine" strict "$2" "$3") ;;
    *) apply_cmd "$@" ;;
  esac
}

# --- runs -----------------------------------------------------------------
status=0
printf '%-5s %-18s %10s %10s\n' pair tool median_ms rss_kb
for pair in A B; do
  patchfile=$pairs/$pair.patch
  # Each tool applies for real once; the result must be the new file.
  for tool in "${tools[@]}"; do
    d=$TMP/real.$tool
    rm -rf "$d" && mkdir -p "$d" && cp "$pairs/$pair.old" "$d/f.txt"
    cmd_of "$tool" "$d" "$patchfile" real
    if ! "${cmd[@]}" >"$TMP/real.log" 2>&1 || ! cmp -s "$d/f.txt" "$pairs/$pair.new"; then
      echo "bench-apply: $tool does not turn $pair.old into $pair.new:" >&2
      head -5 "$TMP/real.log" >&2
      exit 2
    fi
  done
  d=$TMP/work
  rm -rf "$d" && mkdir -p "$d" && cp "$pairs/$pair.old" "$d/f.txt"
  declare -A ms=() kb=()
  for ((i = 0; i < reps; i++)); do
    # Interleave the tools so that they share the machine's load.
    for tool in "${tools[@]}" patchbench-startup pb-engine pb-engine-strict; do
      cmd_of "$tool" "$d" "$patchfile"
      t0=$(date +%s%N)
      if ! /usr/bin/time -f %M -o "$TMP/rss" "${cmd[@]}" >/dev/null 2>"$TMP/err"; then
        echo "bench-apply: $tool refused pair $pair:" >&2
        head -5 "$TMP/err" >&2
        exit 2
      fi
      t1=$(date +%s%N)
      ms[$tool]+="$(((t1 - t0) / 1000)) "
      kb[$tool]+="$(tail -1 "$TMP/rss") "
    done
  done
  for tool in "${tools[@]}" patchbench-startup pb-engine pb-engine-strict; do
    m=$(tr ' ' '\n' <<<"${ms[$tool]}" | grep . | median)
    ms[$tool]=$(awk -v u="$m" 'BEGIN{printf "%.1f", u/1000}')
    kb[$tool]=$(tr ' ' '\n' <<<"${kb[$tool]}" | grep . | median)
    printf '%-5s %-18s %10s %10s\n' "$pair" "$tool" "${ms[$tool]}" "${kb[$tool]}"
  done
  for tool in pb-engine pb-engine-strict; do
    printf '%-5s %-18s time/git %sx, time/GNU patch %sx, memory/git %sx (no target)\n' "$pair" "$tool" \
      "$(ratio "${ms[$tool]}" "${ms[git-apply]}")" "$(ratio "${ms[$tool]}" "${ms[gnu-patch]}")" "$(ratio "${kb[$tool]}" "${kb[git-apply]}")"
  done
  for tool in patchbench patchbench-strict; do
    tg=$(ratio "${ms[$tool]}" "${ms[git-apply]}")
    tp=$(ratio "${ms[$tool]}" "${ms[gnu-patch]}")
    mg=$(ratio "${kb[$tool]}" "${kb[git-apply]}")
    printf '%-5s %-18s time/git %sx, time/GNU patch %sx, memory/git %sx\n' "$pair" "$tool" "$tg" "$tp" "$mg"
    if awk -v r="$tg" 'BEGIN{exit !(r > 1.0)}'; then
      echo "$pair FAIL: $tool takes ${tg}x git apply's time (target <= 1.0x)"
      status=1
    fi
    if awk -v r="$mg" 'BEGIN{exit !(r > 2.0)}'; then
      echo "$pair FAIL: $tool takes ${mg}x git apply's memory (target <= 2.0x)"
      status=1
    fi
  done
  unset ms kb
done
for pair in A B; do
  printf '# %s: %s lines, %s hunks\n' "$pair" "$(wc -l <"$pairs/$pair.old")" "$(grep -c '^@@ ' "$pairs/$pair.patch")"
done
exit $status
