#!/usr/bin/env bash
# Vendors the minified Vega, Vega-Lite and Vega-Embed bundles that
# report/html embeds (go:embed) into every HTML report, with their licences.
# The bundles are committed so that builds and tests need no network; run this
# script only to change versions.
#
# To update: change the versions below, run `bash scripts/vendor-vega.sh`,
# check that vega-lite's and vega-embed's peer dependencies accept the vega
# version (npm view vega-lite@X peerDependencies), run
# `go test ./report/html/...` (the browser tests draw every chart), and commit
# report/html/assets.
set -euo pipefail
cd "$(dirname "$0")/.."

VEGA=6.4.0
VEGA_LITE=6.5.0
VEGA_EMBED=7.3.0

out=report/html/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() { # name version bundle-path-in-package
  local name=$1 version=$2 bundle=$3
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
  mkdir -p "$tmp/$name"
  tar -xzf "$tmp/$name-$version.tgz" -C "$tmp/$name"
  cp "$tmp/$name/package/$bundle" "$out/$name.min.js"
  cp "$tmp/$name/package/LICENSE" "$out/$name.LICENSE"
  echo "$name $version $(sha256sum "$out/$name.min.js" | cut -d' ' -f1)"
}

{
  echo "# name version sha256-of-bundle (written by scripts/vendor-vega.sh)"
  fetch vega "$VEGA" build/vega.min.js
  fetch vega-lite "$VEGA_LITE" build/vega-lite.min.js
  fetch vega-embed "$VEGA_EMBED" build/vega-embed.min.js
} >"$out/VERSIONS.tmp"
mv "$out/VERSIONS.tmp" "$out/VERSIONS"
cat "$out/VERSIONS"
