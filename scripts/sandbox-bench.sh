#!/usr/bin/env bash
# Start-up cost of a test command in the bubblewrap sandbox: the confined
# sandbox (system directories only, what patchbench uses) against the
# earlier one that showed the host's whole root read-only (--ro-bind / /),
# for `true` and `python3 -c pass`, RUNS times each (default 50), the two
# sandboxes alternating. Prints the median of each in milliseconds.
#
# Usage: scripts/sandbox-bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
command -v bwrap >/dev/null || { echo "bubblewrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
out=$(go test ./sandbox -run '^$' -bench '^BenchmarkBwrapStartup$' -benchtime "${runs}x" -count 1)
echo "sandbox start-up, median of $runs runs each (bwrap $(bwrap --version | awk '{print $2}'), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-8s %12s %12s %10s\n' command confined-ms rootfs-ms difference
echo "$out" | awk '/^BenchmarkBwrapStartup\// {
  split($1, p, "/"); sub(/-[0-9]+$/, "", p[2])
  for (i = 2; i < NF; i++) { if ($(i+1) == "confined-ms") c = $i; if ($(i+1) == "rootfs-ms") r = $i }
  printf "%-8s %12.1f %12.1f %+9.1f\n", p[2], c, r, c - r
}'
