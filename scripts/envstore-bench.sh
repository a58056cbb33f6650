#!/usr/bin/env bash
# Benchmark of the environment store (patchbench env, issue 10).
#
#   history:   the last $N first-parent commits of click (../shared/data/repos/
#              click.bundle), each built with its byte-code
#              (compileall, hash-checked .pyc), into one store: stored bytes
#              against the sum of the trees, build time and peak memory.
#   reuse:     $REUSE of those commits built again into fresh stores with and
#              without --no-reuse: the files and bytes git's blob ids saved from
#              hashing, and the snapshot time.
#   restore:   one commit restored $RUNS times (hard links, and --copy) against
#              cp -a of the same tree and git worktree add plus the setup;
#              medians, and restore's peak memory.
#   synthetic: click's trees have a few hundred files, so a generated package
#              of 5,000 modules (10,000 files with their .pyc) is built and
#              timed the same way, for the 10,000-file figure.
#
# Usage: scripts/envstore-bench.sh [WORKDIR]   (DATA=dir, N=120, RUNS=7, REUSE=20)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
N=${N:-120}
RUNS=${RUNS:-7}
REUSE=${REUSE:-20}
mkdir -p "$work"
rm -rf "$work"/{click.git,store,store-reuse,store-noreuse,syn,syn-store,syn-src,src,r,c,cp,wt,out}
mkdir -p "$work/out"

# patchbench hands env to patchbench-full, installed beside it.
go build -o "$work/patchbench" ./cmd/patchbench
go build -o "$work/patchbench-full" ./cmd/patchbench-full
pb=$work/patchbench
# An interpreter the sandbox shows (it hides home directories, so not pyenv's).
py=/usr/bin/python3
[ -x "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')
setup="$py -m compileall -q --invalidation-mode checked-hash ."

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed CMD...: run CMD, print its wall time and its CPU time (user + system,
# children included) in seconds: on a loaded machine the wall time waits for
# a CPU, the CPU time does not.
timed() {
  local a b
  a=$(now); /usr/bin/time -f '%U %S' -o "$work/out/cpu" "$@" >/dev/null; b=$(now)
  awk -v a="$a" -v b="$b" '{ printf "%.4f:%.2f\n", b - a, $1 + $2 }' "$work/out/cpu"
}
# peak CMD...: run CMD, print its peak resident memory in MB.
peak() { /usr/bin/time -f '%M' -o "$work/out/peak" "$@" >/dev/null; awk '{ printf "%.1f\n", $1 / 1024 }' "$work/out/peak"; }

# --- history ---------------------------------------------------------------
git clone -q --bare "$data/repos/click.bundle" "$work/click.git"
git -C "$work/click.git" rev-list --first-parent -n "$N" HEAD | tac > "$work/commits.txt"
echo "building $(wc -l < "$work/commits.txt") commits of click with: $setup"
a=$(now)
/usr/bin/time -f '%M' -o "$work/out/build-peak" \
  "$pb" env build --store "$work/store" --repo "$work/click.git" --commits "$work/commits.txt" \
  --setup "$setup" --workers 2 --json > "$work/out/build.jsonl"
b=$(now)
build_s=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }')
"$pb" env stats --store "$work/store" --json > "$work/out/stats.json"
"$pb" env verify --store "$work/store" > "$work/out/verify.txt"
built=$(jq -s '[.[] | select(.status == "built")] | length' "$work/out/build.jsonl")
failed=$(jq -s '[.[] | select(.status != "built")] | length' "$work/out/build.jsonl")

# --- reuse -----------------------------------------------------------------
head -n "$REUSE" "$work/commits.txt" > "$work/reuse.txt"
for mode in reuse noreuse; do
  flag=""; [ "$mode" = noreuse ] && flag=--no-reuse
  "$pb" env build --store "$work/store-$mode" --repo "$work/click.git" --commits "$work/reuse.txt" \
    --setup "$setup" --json $flag > "$work/out/$mode.jsonl"
done
sumf() { jq -s "[.[] | .$2 // 0] | add" "$work/out/$1.jsonl"; }

# --- restore of one commit -------------------------------------------------
c=$(tail -n 1 "$work/commits.txt")
restore_link=(); restore_copy=(); cp_a=(); wt_setup=()
"$pb" env restore --store "$work/store" --commit "$c" --copy "$work/src" >/dev/null
files=$(find "$work/src" -type f | wc -l)
for i in $(seq "$RUNS"); do
  rm -rf "$work/r" "$work/c" "$work/cp"
  restore_link+=("$(timed "$pb" env restore --store "$work/store" --commit "$c" "$work/r")")
  restore_copy+=("$(timed "$pb" env restore --store "$work/store" --commit "$c" --copy "$work/c")")
  cp_a+=("$(timed cp -a "$work/src" "$work/cp")")
  git -C "$work/click.git" worktree remove --force "$work/wt" 2>/dev/null || rm -rf "$work/wt"
  git -C "$work/click.git" worktree prune
  wt_setup+=("$(timed sh -c "git -C '$work/click.git' worktree add -q --detach '$work/wt' $c && cd '$work/wt' && $setup")")
done
rm -rf "$work/r"
restore_peak=$(peak "$pb" env restore --store "$work/store" --commit "$c" "$work/r")
build_peak=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/out/build-peak")

# --- synthetic 10,000-file tree --------------------------------------------
mkdir -p "$work/syn"
git -C "$work/syn" init -q -b main
"$py" - "$work/syn" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(100):
    pkg = os.path.join(root, "pkg", f"sub{d:03d}")
    os.makedirs(pkg, exist_ok=True)
    for f in range(50):
        with open(os.path.join(pkg, f"m{f:02d}.py"), "w") as out:
            out.write(f'"""Module {d}.{f}."""\n\n\ndef f{f}(x):\n    return x * {d * 50 + f} + len("{"y" * (f * 7)}")\n')
PY
git -C "$work/syn" add -A
git -C "$work/syn" -c user.name=b -c user.email=b@b commit -q -m synthetic
sc=$(git -C "$work/syn" rev-parse HEAD)
"$pb" env build --store "$work/syn-store" --repo "$work/syn" --commits "$sc" --setup "$setup" --json > "$work/out/syn.jsonl"
"$pb" env restore --store "$work/syn-store" --commit "$sc" --copy "$work/syn-src" >/dev/null
syn_files=$(find "$work/syn-src" -type f | wc -l)
syn_link=(); syn_copy=(); syn_cp=(); syn_wt=()
for i in $(seq "$RUNS"); do
  rm -rf "$work/r" "$work/c" "$work/cp"
  syn_link+=("$(timed "$pb" env restore --store "$work/syn-store" --commit "$sc" "$work/r")")
  syn_copy+=("$(timed "$pb" env restore --store "$work/syn-store" --commit "$sc" --copy "$work/c")")
  syn_cp+=("$(timed cp -a "$work/syn-src" "$work/cp")")
done
for i in $(seq 3); do
  git -C "$work/syn" worktree remove --force "$work/wt" 2>/dev/null || rm -rf "$work/wt"
  git -C "$work/syn" worktree prune
  syn_wt+=("$(timed sh -c "git -C '$work/syn' worktree add -q --detach '$work/wt' $sc && cd '$work/wt' && $setup")")
done
rm -rf "$work/r"
syn_peak=$(peak "$pb" env restore --store "$work/syn-store" --commit "$sc" "$work/r")

# --- report ----------------------------------------------------------------
# m TIMES...: "wall s (CPU s)" medians of timed's outputs.
m() { echo "$(printf '%s\n' "$@" | cut -d: -f1 | median) s (CPU $(printf '%s\n' "$@" | cut -d: -f2 | median) s)"; }
{
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "click: $built commits built, $failed not, in ${build_s}s (2 workers); build peak RSS ${build_peak} MB"
jq -r '"store: \(.commits) commits, \(.files) files, trees \(.logical_bytes) bytes, stored \(.stored_bytes) bytes (\(.objects) objects \(.object_bytes) B, manifests \(.manifest_bytes) B): \(.logical_bytes / .stored_bytes * 10 | floor / 10)x smaller"' "$work/out/stats.json"
echo "store on disk (du, 4 kB blocks): $(du -sb "$work/store" | cut -f1) bytes apparent, $(du -sk "$work/store" | cut -f1) kB allocated"
echo "verify: $(tail -n 1 "$work/out/verify.txt")"
echo "git reuse over $REUSE commits: $(sumf reuse reused_files) files / $(sumf reuse reused_bytes) bytes not read; hashed $(sumf reuse hashed_bytes) bytes vs $(sumf noreuse hashed_bytes) with --no-reuse; snapshot $(sumf reuse snapshot_ms) ms vs $(sumf noreuse snapshot_ms) ms"
echo "restore of one click commit ($files files), median of $RUNS: env restore $(m "${restore_link[@]}"), env restore --copy $(m "${restore_copy[@]}"), cp -a $(m "${cp_a[@]}"), git worktree add + setup $(m "${wt_setup[@]}"); restore peak RSS ${restore_peak} MB"
echo "synthetic ($syn_files files), median of $RUNS: env restore $(m "${syn_link[@]}"), env restore --copy $(m "${syn_copy[@]}"), cp -a $(m "${syn_cp[@]}"), git worktree add + setup (median of 3) $(m "${syn_wt[@]}"); restore peak RSS ${syn_peak} MB"
} | tee "$work/out/summary.txt"
