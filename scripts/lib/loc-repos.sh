# Sourced by the loc-*.sh scripts: the repositories of the dev corpus's
# localization cases, cloned bare from its bundles into a repos directory.

# clone_bundle BUNDLE DIR clones BUNDLE bare into DIR unless DIR exists.
clone_bundle() {
  [ -d "$2" ] || { mkdir -p "$(dirname "$2")"; git clone -q --bare "$1" "$2"; }
}

# locbench_repos REPOS DATA: the ten repositories of loc_bench_v1_sample
# (yt-dlp, dask) and loc_bench_v1_tune (the other eight).
locbench_repos() {
  local b=$2/repos/locbench
  clone_bundle "$b/yt-dlp.bundle" "$1/yt-dlp/yt-dlp"
  clone_bundle "$b/dask.bundle" "$1/dask/dask"
  clone_bundle "$b/sentence-transformers.bundle" "$1/UKPLab/sentence-transformers"
  clone_bundle "$b/keras.bundle" "$1/keras-team/keras"
  clone_bundle "$b/meson.bundle" "$1/mesonbuild/meson"
  clone_bundle "$b/accelerate.bundle" "$1/huggingface/accelerate"
  clone_bundle "$b/yfinance.bundle" "$1/ranaroussi/yfinance"
  clone_bundle "$b/chainlit.bundle" "$1/Chainlit/chainlit"
  clone_bundle "$b/networkx.bundle" "$1/networkx/networkx"
  clone_bundle "$b/luigi.bundle" "$1/spotify/luigi"
}

# lite_repos REPOS DATA: flask and sympy of the SWE-bench Lite dev instances.
lite_repos() {
  clone_bundle "$2/swebench-lite-dev.bundle" "$1/pallets/flask"
  clone_bundle "$2/swebench-lite-dev.bundle" "$1/sympy/sympy"
}

# loc_setup WORK builds patchbench-full into WORK and sets pb (the binary)
# and repos (WORK/repos).
loc_setup() {
  mkdir -p "$1"
  go build -o "$1/" ./cmd/patchbench-full
  pb=$1/patchbench-full
  repos=$1/repos
}

# locbench_parts WORK DATA clones the ten Loc-Bench_V1 repositories into
# $repos and writes the cases of both parts of the split: WORK/tuning.jsonl
# (loc_bench_v1_sample) and WORK/heldout.jsonl (loc_bench_v1_tune).
locbench_parts() {
  locbench_repos "$repos" "$2"
  "$pb" loc build --dataset "$2/loc_bench_v1_sample.jsonl.gz" --repos "$repos" --out "$1/tuning.jsonl" 2>/dev/null
  "$pb" loc build --dataset "$2/loc_bench_v1_tune.jsonl.gz" --repos "$repos" --out "$1/heldout.jsonl" 2>/dev/null
}
