#!/usr/bin/env bash
# Restore of a 10,000-file environment by each method against cp -a of the
# same tree (and cp -a --reflink=always where the file system has reflinks),
# as root and as an ordinary user: the figures of docs/envstore.md.
#
#   tree:    a generated package of 5,000 modules, byte-compiled
#            (compileall, hash-checked .pyc): 10,000 files, one commit.
#   root:    on WORKDIR's file system, as this user (root on CI and in
#            containers): env restore (default: an overlay where this
#            process can mount one, after a first restore that makes the
#            commit's tree in the store), --no-overlay, --copy, cp -a, and
#            patchbench --version (the binary's start-up).
#   nobody:  when run as root, the same store handed to uid 65534 and run
#            through setpriv: env restore (default: hard links), --copy, cp -a.
#   reflink: with REFLINK_DIR set to a directory on XFS or Btrfs (a
#            loop-mounted image will do), the store built there: env restore
#            (default: reflinks), --copy, cp -a, cp -a --reflink=always.
#
# Commands run as a user types them: patchbench, with patchbench-full
# installed beside it. Each figure is over $RUNS runs, warm page cache: the
# median and the maximum of the wall time (the shell's clock before and
# after, no process in between), the median CPU time (user + system, from
# the shell's times), and the ratio of the median wall time to cp -a's.
#
# Usage: scripts/envstore-restore.sh [WORKDIR]   (RUNS=7, REFLINK_DIR=dir,
#        PATCHBENCH=binary with patchbench-full beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
RUNS=${RUNS:-7}
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work"/{syn,store,src,out,nobody}
mkdir -p "$work/out"
pb=${PATCHBENCH:-}
if [ -z "$pb" ]; then
  mkdir -p "$work/bin"
  go build -o "$work/bin/" ./cmd/patchbench ./cmd/patchbench-full
  pb=$work/bin/patchbench
fi
chmod 755 "$(dirname "$pb")"
py=/usr/bin/python3
[ -x "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')
setup="$py -m compileall -q ."

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { sort -g | tail -n 1; }
# cpu: the children's user + system seconds so far of this shell (a
# timed's subshell), from its times builtin, as "m s m s".
cpu() {
  local u s
  times > "$work/out/times.$BASHPID"
  { read -r _ _; read -r u s; } < "$work/out/times.$BASHPID"
  u=${u%s} s=${s%s}
  CPU="${u%%m*} ${u#*m} ${s%%m*} ${s#*m}"
}
# timed CMD...: run CMD, print "wall:cpu" seconds. Called as $(timed ...),
# so the command is the only child of its subshell.
timed() {
  local a b c0
  cpu; c0=$CPU
  a=$EPOCHREALTIME
  "$@" >/dev/null
  b=$EPOCHREALTIME
  cpu
  awk -v a="$a" -v b="$b" -v c0="$c0" -v c1="$CPU" 'BEGIN {
    split(c0, x, " "); split(c1, y, " ")
    printf "%.4f:%.3f\n", b - a, (y[1] - x[1]) * 60 + y[2] - x[2] + (y[3] - x[3]) * 60 + y[4] - x[4] }'
}
wall() { printf '%s\n' "$@" | cut -d: -f1 | median; }
wallmax() { printf '%s\n' "$@" | cut -d: -f1 | maximum; }
cpus() { printf '%s\n' "$@" | cut -d: -f2 | median; }

# The tree: 100 packages of 50 modules, and their byte-code.
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
c=$(git -C "$work/syn" rev-parse HEAD)

# bench NAME STORE SRC DIR [RUNAS...]: time the restores of $c from STORE
# into DIR and cp -a of SRC (the same tree as plain files) into DIR, each as
# RUNAS (a command prefix), and print one line per method.
bench() {
  local name=$1 store=$2 src=$3 dir=$4; shift 4
  local as=("$@") auto=() files=() copy=() cpa=() ref=() start=() method
  # An overlay restore is undone by env release, not rm.
  drop() { "${as[@]}" "$pb" env release "$dir/r" >/dev/null 2>&1 || true; rm -rf "$dir/r" "$dir/f" "$dir/c" "$dir/cp" "$dir/ref"; }
  drop
  # The first restore materializes the tree (once per commit) for an overlay,
  # making its objects loose (decompressed) first: timed once.
  local first
  first=$(timed "${as[@]}" "$pb" env restore --store "$store" --commit "$c" "$dir/r")
  drop
  "${as[@]}" "$pb" env restore --store "$store" --commit "$c" --json "$dir/r" > "$work/out/$name.json"
  method=$(jq -r .method "$work/out/$name.json")
  for _ in $(seq "$RUNS"); do
    drop
    start+=("$(timed "${as[@]}" "$pb" --version)")
    auto+=("$(timed "${as[@]}" "$pb" env restore --store "$store" --commit "$c" "$dir/r")")
    if [ "$method" = overlay ]; then
      files+=("$(timed "${as[@]}" "$pb" env restore --store "$store" --commit "$c" --no-overlay "$dir/f")")
    fi
    copy+=("$(timed "${as[@]}" "$pb" env restore --store "$store" --commit "$c" --copy "$dir/c")")
    cpa+=("$(timed "${as[@]}" cp -a "$src" "$dir/cp")")
    if [ "$name" = reflink ]; then
      ref+=("$(timed "${as[@]}" cp -a --reflink=always "$src" "$dir/ref")")
    fi
  done
  drop
  local base
  base=$(wall "${cpa[@]}")
  line() {
    local n=$1; shift
    awk -v n="$n" -v w="$(wall "$@")" -v m="$(wallmax "$@")" -v c="$(cpus "$@")" -v b="$base" \
      'BEGIN { printf "  %-34s %8.1f ms (max %8.1f ms)  CPU %7.1f ms  %.3fx cp -a\n", n, w * 1000, m * 1000, c * 1000, w / b }'
  }
  echo "$name: $(jq -r '"\(.files) files, \(.bytes) bytes"' "$work/out/$name.json"); default method $method ($(jq -r .method_reason "$work/out/$name.json"))"
  line "env restore, first (once)" "$first"
  line "env restore (default: $method)" "${auto[@]}"
  if [ ${#files[@]} -gt 0 ]; then
    line "env restore --no-overlay" "${files[@]}"
  fi
  line "env restore --copy" "${copy[@]}"
  line "cp -a" "${cpa[@]}"
  if [ ${#ref[@]} -gt 0 ]; then
    line "cp -a --reflink=always" "${ref[@]}"
  fi
  line "patchbench --version (start-up)" "${start[@]}"
}

{
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); WORKDIR on $(df -T "$work" | awk 'NR == 2 { print $2 }'), user $(id -un); median of $RUNS"

# As this user, on WORKDIR's file system.
"$pb" env build --store "$work/store" --repo "$work/syn" --commits "$c" --setup "$setup" > /dev/null
"$pb" env restore --store "$work/store" --commit "$c" --copy "$work/src" > /dev/null
bench "$(id -un)" "$work/store" "$work/src" "$work"

# As nobody, on a copy of the store nobody owns.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$work/nobody"
  cp -a "$work/store" "$work/src" "$work/nobody/"
  chown -R 65534:65534 "$work/nobody"
  chmod 755 "$work"
  bench nobody "$work/nobody/store" "$work/nobody/src" "$work/nobody" setpriv --reuid=65534 --regid=65534 --clear-groups
  rm -rf "$work/nobody"
fi

# On a file system with reflinks.
if [ -n "${REFLINK_DIR:-}" ]; then
  rdir=$(mktemp -d "$REFLINK_DIR/envstore-restore-XXXXXX")
  "$pb" env build --store "$rdir/store" --repo "$work/syn" --commits "$c" --setup "$setup" > /dev/null
  "$pb" env restore --store "$rdir/store" --commit "$c" --copy "$rdir/src" > /dev/null
  bench reflink "$rdir/store" "$rdir/src" "$rdir"
  rm -rf "$rdir"
fi
} | tee "$work/out/summary.txt"
