#!/usr/bin/env bash
# Start-up benchmark of issue 8 §5: `patchbench apply --check` and
# `patchbench diff` on a small real input against `git apply --check` on the
# same input, all in the same run and interleaved so that they share the
# machine's load.
#
# Usage: scripts/startup-bench.sh                  (REPS=50 runs per tool)
#        REPS=200 scripts/startup-bench.sh
#        PATCHBENCH=/path/to/patchbench scripts/startup-bench.sh
#
# The input: this repository's internal/cli/cli.go committed to a fresh
# git repository, edited in three places (a comment, a constant, a line
# inserted), and the edit written by git diff. Each command is run REPS
# times after one warm-up run; the script reports the median wall time
# (fork to wait, measured by a small Go driver) and the median peak RSS of
# 21 runs under /usr/bin/time -f %M, then the ratios to git apply --check. The target: both
# patchbench commands at most 1.5x git apply --check in wall time and in
# memory. The exit status is 1 when a target fails, 2 on a setup error.
#
# Two builds of cmd/patchbench are measured (it links the patch engine only;
# the benchmark commands are handed to patchbench-full): with cgo (`go build
# ./cmd/patchbench`, or the binary PATCHBENCH names), where the net package
# that pflag imports links libc dynamically, and without
# (`CGO_ENABLED=0 go build ./cmd/patchbench`, or NOCGO), the build README
# recommends. The targets are checked for both.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
reps=${REPS:-50}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for tool in go git; do
  command -v "$tool" >/dev/null || { echo "startup-bench: $tool not found" >&2; exit 2; }
done

pb=${PATCHBENCH:-}
if [ -z "$pb" ]; then
  pb=$TMP/patchbench
  go build -o "$pb" ./cmd/patchbench
fi
lean=${NOCGO:-}
if [ -z "$lean" ]; then
  lean=$TMP/patchbench-nocgo
  CGO_ENABLED=0 go build -o "$lean" ./cmd/patchbench
fi

# --- input ------------------------------------------------------------------
repo=$TMP/repo
mkdir -p "$repo"
cp internal/cli/cli.go "$repo/main.go"
git -C "$repo" init -q
git -C "$repo" -c user.name=b -c user.email=b@example.com add main.go
git -C "$repo" -c user.name=b -c user.email=b@example.com commit -qm base
cp "$repo/main.go" "$TMP/old.go"
sed -e 's/^\/\/ Package cli is patchbench/\/\/ Package cli holds patchbench/' \
  -e 's/ExitUsage   = 2/ExitUsage   = 3/' \
  -e 's/^func Run(args \[\]string, sio Stdio, more Commands) int {/func Run(args []string, sio Stdio, more Commands) int {\n\tdebugStart()/' "$TMP/old.go" >"$TMP/new.go"
cp "$TMP/new.go" "$repo/main.go"
git -C "$repo" diff >"$TMP/edit.diff"
git -C "$repo" checkout -q main.go
[ "$(grep -c '^@@' "$TMP/edit.diff")" -ge 2 ] || { echo "startup-bench: the edit has fewer than 2 hunks" >&2; exit 2; }

# --- driver -----------------------------------------------------------------
mkdir -p "$TMP/drv"
cat >"$TMP/drv/main.go" <<'EOF'
// Command drv runs each command line given on standard input (one a line,
// "name<TAB>dir<TAB>arg<TAB>arg...") reps times, interleaved, after one
// warm-up run each, and prints per command the median wall time in
// microseconds and the median peak RSS in KiB. A command that exits non-zero
// is a setup error.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type tool struct {
	name, dir string
	argv      []string
	us, kb    []int64
	cpu       []int64
}

func run(t *tool) (int64, int64, int64) {
	c := exec.Command(t.argv[0], t.argv[1:]...)
	c.Dir = t.dir
	t0 := time.Now()
	out, err := c.CombinedOutput()
	d := time.Since(t0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "drv: %s: %v\n%s", t.name, err, out)
		os.Exit(2)
	}
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := ru.Utime.Sec*1e6 + ru.Utime.Usec + ru.Stime.Sec*1e6 + ru.Stime.Usec
	return d.Microseconds(), ru.Maxrss, cpu
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func main() {
	reps, _ := strconv.Atoi(os.Args[1])
	var tools []*tool
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		tools = append(tools, &tool{name: f[0], dir: f[1], argv: f[2:]})
	}
	for _, t := range tools {
		run(t)
	}
	for i := 0; i < reps; i++ {
		for _, t := range tools {
			us, kb, cpu := run(t)
			t.us = append(t.us, us)
			t.kb = append(t.kb, kb)
			t.cpu = append(t.cpu, cpu)
		}
	}
	for _, t := range tools {
		var sum int64
		for _, c := range t.cpu {
			sum += c
		}
		fmt.Printf("%s %d %d %d\n", t.name, median(t.us), median(t.kb), sum/int64(len(t.cpu)))
	}
}
EOF
(cd "$TMP/drv" && go mod init drv >/dev/null 2>&1 && go build -o drv .)

T=$'\t'
out=$("$TMP/drv/drv" "$reps" <<EOF
git-apply-check${T}$repo${T}git${T}apply${T}--check${T}$TMP/edit.diff
pb-apply-check${T}$repo${T}$pb${T}apply${T}--check${T}$TMP/edit.diff
pb-diff${T}$TMP${T}$pb${T}diff${T}old.go${T}new.go
nocgo-apply-check${T}$repo${T}$lean${T}apply${T}--check${T}$TMP/edit.diff
nocgo-diff${T}$TMP${T}$lean${T}diff${T}old.go${T}new.go
EOF
)

declare -A us=() kb=() cpu=()
while read -r name u k c; do us[$name]=$u cpu[$name]=$c; done <<<"$out"

# Peak memory from /usr/bin/time -f %M, not from the driver: Go's os/exec
# starts children with vfork, and Linux counts the parent's resident set
# into the child's ru_maxrss at exec, so the driver's own size (which grows
# with REPS) would hide the commands' figures.
peak() { # name dir argv...: median of 21 runs
  local name=$1 dir=$2
  shift 2
  kb[$name]=$(for _ in $(seq 21); do (cd "$dir" && /usr/bin/time -f %M -o "$TMP/rss" "$@" >/dev/null 2>&1); cat "$TMP/rss"; done | sort -n | sed -n 11p)
}
[ -x /usr/bin/time ] || { echo "startup-bench: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
peak git-apply-check "$repo" git apply --check "$TMP/edit.diff"
peak pb-apply-check "$repo" "$pb" apply --check "$TMP/edit.diff"
peak pb-diff "$TMP" "$pb" diff old.go new.go
peak nocgo-apply-check "$repo" "$lean" apply --check "$TMP/edit.diff"
peak nocgo-diff "$TMP" "$lean" diff old.go new.go
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
# cpu_ms (mean user+system time) is what the command itself costs; wall
# time on a loaded machine adds the wait for a core, which a program with
# several threads (Go's runtime) pays more often than a single-threaded one.
printf '%-18s %10s %10s %8s %8s %8s %8s\n' command median_ms rss_kib cpu_ms time_x mem_x cpu_x
status=0
for name in git-apply-check pb-apply-check pb-diff nocgo-apply-check nocgo-diff; do
  tx=$(ratio "${us[$name]}" "${us[git-apply-check]}")
  mx=$(ratio "${kb[$name]}" "${kb[git-apply-check]}")
  cx=$(ratio "${cpu[$name]}" "${cpu[git-apply-check]}")
  printf '%-18s %10s %10s %8s %8s %8s %8s\n' "$name" "$(awk -v u="${us[$name]}" 'BEGIN{printf "%.2f", u/1000}')" \
    "${kb[$name]}" "$(awk -v u="${cpu[$name]}" 'BEGIN{printf "%.2f", u/1000}')" "$tx" "$mx" "$cx"
  if [ "$name" != git-apply-check ]; then
    if awk -v r="$tx" 'BEGIN{exit !(r > 1.5)}'; then echo "FAIL: $name takes ${tx}x the time of git apply --check (target <= 1.5x)"; status=1; fi
    if awk -v r="$mx" 'BEGIN{exit !(r > 1.5)}'; then echo "FAIL: $name takes ${mx}x the memory of git apply --check (target <= 1.5x)"; status=1; fi
  fi
done
mb() { ls -l "$1" | awk '{printf "%.1f MB", $5/1e6}'; }
echo "# $reps runs each (medians; memory: 21 runs); input: $(wc -l <"$TMP/old.go") lines, patch of $(grep -c '^@@' "$TMP/edit.diff") hunks; binaries: cgo $(mb "$pb"), no cgo $(mb "$lean"); load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
