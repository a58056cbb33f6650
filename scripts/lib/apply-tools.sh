# Shared by the apply benchmarks (bench-apply.sh, bench-repeated.sh);
# sourced, not run. Needs $pb (the patchbench binary).

# apply_cmd TOOL DIR PATCH [real] sets cmd to the command with which TOOL
# (patchbench, patchbench-strict, git-apply or gnu-patch) checks PATCH in
# DIR, or with real applies it.
apply_cmd() {
  local check=--check dry=--dry-run
  [ "${4:-}" = real ] && check= dry=
  case $1 in
    patchbench) cmd=("$pb" apply $check -C "$2" "$3") ;;
    patchbench-strict) cmd=("$pb" apply --strict $check -C "$2" "$3") ;;
    git-apply) cmd=(git -C "$2" apply $check "$3") ;;
    gnu-patch) cmd=(patch -s -p1 $dry -d "$2" -i "$3") ;;
    *) echo "apply_cmd: unknown tool $1" >&2; return 2 ;;
  esac
}
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
