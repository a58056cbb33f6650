#!/usr/bin/env bash
# Start-up cost of a test command in the bubblewrap sandbox: the confined
# sandbox (system directories only, what patchbench uses) against the
# earlier one that showed the host's whole root read-only (--ro-bind / /),
# for `true` and `python3 -c pass`, RUNS times each (default 50). Prints the
# median and the mean of each in milliseconds.
#
# Usage: scripts/sandbox-bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
command -v bwrap >/dev/null || { echo "bubblewrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
out=$(go test ./sandbox -run '^$' -bench '^BenchmarkBwrapStartup$' -benchtime "${runs}x" -count 1)
echo "sandbox start-up, $runs runs each (bwrap $(bwrap --version | awk '{print $2}'), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-10s %-8s %10s %10s\n' sandbox command median-ms mean-ms
echo "$out" | awk '/^BenchmarkBwrapStartup\// {
  split($1, p, "/"); sub(/-[0-9]+$/, "", p[3])
  for (i = 2; i <= NF; i++) { if ($(i+1) == "ns/op") mean = $i / 1e6; if ($(i+1) == "median-ms") med = $i }
  printf "%-10s %-8s %10.1f %10.1f\n", p[2], p[3], med, mean
}'
