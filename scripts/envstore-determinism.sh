#!/usr/bin/env bash
# How much smaller than the trees the store is when setups are
# deterministic: the last $N first-parent commits of click
# (../shared/data/repos/click.bundle), each built with a plain
# "python3 -m compileall -q ." (no invalidation mode given), into two stores:
#
#   default:   env build as it is: SOURCE_DATE_EPOCH is the commit's
#              committer time and the checkout is dated to it, so Python
#              writes hash-checked .pyc files and an unchanged module's
#              byte-code is the same object at every commit;
#   fixed:     --env SOURCE_DATE_EPOCH=1700000000, one time for every
#              commit, set by hand;
#   timestamp: --env SOURCE_DATE_EPOCH= (set, empty: Python ignores it), so
#              the byte-code holds its source's time and differs at every
#              commit whose time differs.
#
# Prints, per store, the trees' bytes, the stored bytes and their ratio
# (env stats), and how many stored .pyc contents there are.
#
# Usage: scripts/envstore-determinism.sh [WORKDIR]   (DATA=dir, N=100,
#        PATCHBENCH_FULL=binary)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
work=${1:-$(mktemp -d)}
N=${N:-100}
mkdir -p "$work"
work=$(cd "$work" && pwd)
TMP=$work
rm -rf "$work"/{click.git,default,fixed,timestamp,out}
mkdir -p "$work/out"
# shellcheck source=lib/diffxyz-rows.sh
. scripts/lib/diffxyz-rows.sh
pb_full
pb=$bin
# An interpreter the sandbox shows (it hides home directories, so not pyenv's).
py=/usr/bin/python3
[ -x "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')
setup="$py -m compileall -q ."

git clone -q --bare "$data/repos/click.bundle" "$work/click.git"
git -C "$work/click.git" rev-list --first-parent -n "$N" HEAD | tac > "$work/commits.txt"
for store in default fixed timestamp; do
  case $store in
  default) flags=() ;;
  fixed) flags=(--env SOURCE_DATE_EPOCH=1700000000) ;;
  timestamp) flags=(--env SOURCE_DATE_EPOCH=) ;;
  esac
  "$pb" env build --store "$work/$store" --repo "$work/click.git" --commits "$work/commits.txt" \
    --setup "$setup" --workers 2 --json "${flags[@]}" > "$work/out/$store.jsonl"
  "$pb" env stats --store "$work/$store" --json > "$work/out/$store-stats.json"
done

{
echo "click, $(wc -l < "$work/commits.txt") first-parent commits, setup: $setup"
for store in default fixed timestamp; do
  built=$(jq -s '[.[] | select(.status == "built")] | length' "$work/out/$store.jsonl")
  pyc=$("$py" - "$work/$store/objects" <<'PY'
import gzip, importlib.util, os, sys
n = 0
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        with (gzip.open if f.endswith(".z") else open)(os.path.join(d, f), "rb") as fh:
            n += fh.read(4) == importlib.util.MAGIC_NUMBER
print(n)
PY
)
  jq -r --arg s "$store" --arg b "$built" --arg p "$pyc" \
    '"\($s): \($b) commits built; trees \(.logical_bytes) bytes, stored \(.stored_bytes) bytes (\(.objects) objects, \($p) of them .pyc, \(.compressed_objects) compressed): \(.logical_bytes / .stored_bytes * 10 | floor / 10)x smaller; every object whole \(.uncompressed_stored_bytes) bytes: \(.logical_bytes / .uncompressed_stored_bytes * 10 | floor / 10)x"' \
    "$work/out/$store-stats.json"
done
} | tee "$work/out/summary.txt"
