#!/usr/bin/env bash
# Runs every native fuzz target for a given time, two at a time, and reports
# which failed. Usage: scripts/fuzz.sh [DURATION]   (default 10m)
# Crashers land in the package's testdata/fuzz/<Target>/ as regression seeds.
set -uo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10m}
log=${FUZZ_LOG:-/tmp/patchbench-fuzz}
mkdir -p "$log"
targets=(
  ./patch:FuzzParseUDiff ./patch:FuzzParseUDiffH ./patch:FuzzParseUDiffL
  ./patch:FuzzParseSearchReplace ./patch:FuzzParseV4A ./patch:FuzzDetect
  ./patch/extract:FuzzExtract ./patch/repair:FuzzRepair ./patch/extract:FuzzAnswer
  ./diff:FuzzLines ./patch:FuzzBinary
)
run() {
  local pkg=${1%%:*} name=${1##*:}
  local start
  start=$(date +%s)
  if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$dur" -parallel 1 >"$log/$name.log" 2>&1; then
    echo "$name: ok, $(( ($(date +%s) - start) / 60 )) min, $(grep -o 'execs: [0-9]*' "$log/$name.log" | tail -1)"
  else
    echo "$name: FAILED after $(( ($(date +%s) - start) / 60 )) min, see $log/$name.log"
  fi
}
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  run "${targets[i]}" &
  if [ $((i + 1)) -lt ${#targets[@]} ]; then run "${targets[i+1]}" & fi
  wait
done
