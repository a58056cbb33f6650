#!/usr/bin/env bash
# Peak memory of patchbench mcp --http under N initialize posts on loopback
# (each opens a session), C at a time: the statuses the posts got, and the
# server's peak RSS (VmHWM) and its RSS after the load.
#
# Usage: scripts/mcp-sessions.sh [N] [C]     (default: 40000 8)
#        PATCHBENCH_FULL=/path/to/patchbench-full scripts/mcp-sessions.sh
#        MCP_ARGS='--max-sessions 1000' scripts/mcp-sessions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-40000}
c=${2:-8}
TMP=$(mktemp -d)
bin=${PATCHBENCH_FULL:-}
if [ -z "$bin" ]; then
  bin=$TMP/patchbench-full
  go build -o "$bin" ./cmd/patchbench-full
fi
go build -o "$TMP/mcpload" ./scripts/mcpload
# shellcheck disable=SC2086
"$bin" mcp --root "$TMP" --http 127.0.0.1:0 --lsp-tools false ${MCP_ARGS:-} 2> "$TMP/err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do
  grep -q 'serving' "$TMP/err" && break
  sleep 0.1
done
url=$(grep -o 'http://[^ ]*/mcp' "$TMP/err")
"$TMP/mcpload" -url "$url" -n "$n" -c "$c"
awk '/VmHWM|VmRSS/ {printf "%s %.0f MB\n", $1, $2/1024}' "/proc/$pid/status"
