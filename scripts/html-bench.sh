#!/usr/bin/env bash
# Measures the HTML report at scale: a page of N generated Diff-XYZ cases
# (default 100,000; each with a diff response), its size and the time until
# it is interactive in headless Chromium (needs the chromium package).
# Targets: under 50 MB, interactive in under 5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
# With RESULTS=FILE, the page of that results file (a real run's) instead.
PATCHBENCH_HTML_RESULTS=${RESULTS:-} PATCHBENCH_HTML_BENCH=${1:-100000} go test ./report/html -run '^TestPageScale$' -count=1 -v -timeout 20m | grep -E '^cases|SKIP|FAIL|ok'
