#!/usr/bin/env bash
# Restore of a 10,000-file environment by each method against cp -a of the
# same tree (and cp -a --reflink=always where the file system has reflinks),
# as root and as an ordinary user: the figures of docs/envstore.md.
#
#   tree:    a generated package of 5,000 modules, byte-compiled
#            (compileall, hash-checked .pyc): 10,000 files, one commit.
#   root:    on WORKDIR's file system, as this user (root on CI and in
#            containers): env restore (default), --copy, cp -a.
#   nobody:  when run as root, the same store handed to uid 65534 and run
#            through setpriv: env restore (default: hard links), --copy, cp -a.
#   reflink: with REFLINK_DIR set to a directory on XFS or Btrfs (a
#            loop-mounted image will do), the store built there: env restore
#            (default: reflinks), --copy, cp -a, cp -a --reflink=always.
#
# Each figure is the median of $RUNS runs, warm page cache: wall seconds and
# CPU seconds (user + system), and the ratio of the median wall time to
# cp -a's.
#
# Usage: scripts/envstore-restore.sh [WORKDIR]   (RUNS=7, REFLINK_DIR=dir,
#        PATCHBENCH_FULL=binary)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
RUNS=${RUNS:-7}
mkdir -p "$work"
work=$(cd "$work" && pwd)
TMP=$work
rm -rf "$work"/{syn,store,src,out,nobody}
mkdir -p "$work/out"
# shellcheck source=lib/diffxyz-rows.sh
. scripts/lib/diffxyz-rows.sh
pb_full
pb=$bin
py=/usr/bin/python3
[ -x "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')
setup="$py -m compileall -q ."

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed CMD...: run CMD, print "wall:cpu" seconds.
timed() {
  local a b
  a=$(now); /usr/bin/time -f '%U %S' -o "$work/out/cpu" "$@" >/dev/null; b=$(now)
  awk -v a="$a" -v b="$b" '{ printf "%.4f:%.2f\n", b - a, $1 + $2 }' "$work/out/cpu"
}
wall() { printf '%s\n' "$@" | cut -d: -f1 | median; }
cpu() { printf '%s\n' "$@" | cut -d: -f2 | median; }

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
  local as=("$@") auto=() files=() copy=() cpa=() ref=() method
  # An overlay restore is undone by env release, not rm.
  drop() { "${as[@]}" "$pb" env release "$dir/r" >/dev/null 2>&1 || true; rm -rf "$dir/r" "$dir/f" "$dir/c" "$dir/cp" "$dir/ref"; }
  drop
  # The first restore materializes the tree (once per commit) for an overlay.
  "${as[@]}" "$pb" env restore --store "$store" --commit "$c" --json "$dir/r" > "$work/out/$name.json"
  method=$(jq -r .method "$work/out/$name.json")
  for _ in $(seq "$RUNS"); do
    drop
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
  line() { awk -v n="$1" -v w="$2" -v c="$3" -v b="$base" 'BEGIN { printf "  %-34s %7.3f s  (CPU %5.2f s)  %.2fx cp -a\n", n, w, c, w / b }'; }
  echo "$name: $(jq -r '"\(.files) files, \(.bytes) bytes"' "$work/out/$name.json"); default method $method ($(jq -r .method_reason "$work/out/$name.json"))"
  line "env restore (default: $method)" "$(wall "${auto[@]}")" "$(cpu "${auto[@]}")"
  if [ ${#files[@]} -gt 0 ]; then
    line "env restore --no-overlay" "$(wall "${files[@]}")" "$(cpu "${files[@]}")"
  fi
  line "env restore --copy" "$(wall "${copy[@]}")" "$(cpu "${copy[@]}")"
  line "cp -a" "$base" "$(cpu "${cpa[@]}")"
  if [ ${#ref[@]} -gt 0 ]; then
    line "cp -a --reflink=always" "$(wall "${ref[@]}")" "$(cpu "${ref[@]}")"
  fi
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
