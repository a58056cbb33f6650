# Shared by the Diff-XYZ scale scripts (diffxyz-memory.sh, merge-bench.sh);
# sourced, not run. Needs $TMP and $data (the ../shared/data directory).

# pb_full sets $bin to patchbench-full: $PATCHBENCH_FULL, or a build into
# $TMP.
pb_full() {
  bin=${PATCHBENCH_FULL:-}
  if [ -z "$bin" ]; then
    bin=$TMP/patchbench-full
    go build -o "$bin" ./cmd/patchbench-full
  fi
}

# diffxyz_rows N FILE writes N rows to FILE: the 584 real commits of
# diffxyz-dev.jsonl.gz, repeated with the copy's number in their id.
diffxyz_rows() {
  local n=$1 out=$2 base k
  [ -f "$TMP/base.jsonl" ] || zcat "$data/diffxyz-dev.jsonl.gz" > "$TMP/base.jsonl"
  base=$(wc -l < "$TMP/base.jsonl")
  : > "$out"
  for ((k = 0; k * base < n; k++)); do
    head -n $((n - k * base)) "$TMP/base.jsonl" | sed "s|^{\"id\": \"|{\"id\": \"copy$k/|" >> "$out"
  done
}
