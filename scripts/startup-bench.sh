#!/usr/bin/env bash
# Start-up benchmark: `patchbench apply --check` of a one-hunk patch and
# `patchbench diff` against `git apply --check` of the same patch, with a Go
# program that does nothing (the floor Go's runtime sets) and one that only
# runs an empty cobra command (what a CLI library costs, which is why
# patchbench parses its command lines with package cmdline) beside them.
#
# Usage: scripts/startup-bench.sh                  (REPS=200 rounds)
#        REPS=500 scripts/startup-bench.sh
#        PATCHBENCH=/path/to/patchbench NOCGO=/path/to/nocgo-build scripts/startup-bench.sh
#
# The input: this repository's cmd/internal/cli/cli.go committed to a fresh git
# repository, one line changed, the edit written by git diff (one hunk).
# Paired runs: each round runs every command once, in an order rotated from
# round to round, after one warm-up run each; a command's figure is the
# median over the rounds of its time divided by git apply's time in the same
# round (wall time, fork to wait, and CPU time, user + system), so that the
# load of a shared machine falls on both sides of each ratio. Peak RSS is
# the median of 21 runs under /usr/bin/time -f %M. The target: apply --check
# at most 1.3x git apply --check in wall time. The exit status is 1 when
# either build misses it, 2 on a setup error.
#
# Two builds of cmd/patchbench are measured: with cgo (`go build
# ./cmd/patchbench` where a C compiler is installed, or PATCHBENCH), and
# without (`CGO_ENABLED=0 go build ./cmd/patchbench`, or NOCGO), as on a
# machine without a C compiler. They differ only if something that
# patchbench links imports net or os/user, which link libc dynamically
# with cgo (TestLinksNoBenchmarkLibraries keeps them out).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-200}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for tool in go git; do
  command -v "$tool" >/dev/null || { echo "startup-bench: $tool not found" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "startup-bench: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

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
cp cmd/internal/cli/cli.go "$repo/main.go"
git -C "$repo" init -q
git -C "$repo" -c user.name=b -c user.email=b@example.com add main.go
git -C "$repo" -c user.name=b -c user.email=b@example.com commit -qm base
cp "$repo/main.go" "$TMP/old.go"
sed -e 's/ExitUsage   = 2/ExitUsage   = 3/' "$TMP/old.go" >"$TMP/new.go"
cp "$TMP/new.go" "$repo/main.go"
git -C "$repo" diff >"$TMP/edit.diff"
git -C "$repo" checkout -q main.go
[ "$(grep -c '^@@' "$TMP/edit.diff")" -eq 1 ] || { echo "startup-bench: the edit is not one hunk" >&2; exit 2; }

# --- floors -----------------------------------------------------------------
# A Go program that does nothing, and one that runs an empty cobra command
# with one flag (cobra, pflag and their imports initialised, as in
# patchbench), both built without cgo.
mkdir -p "$TMP/nothing" "$TMP/cobra"
printf 'package main\n\nfunc main() {}\n' >"$TMP/nothing/main.go"
(cd "$TMP/nothing" && go mod init nothing >/dev/null 2>&1 && CGO_ENABLED=0 go build -o nothing .)
cat >"$TMP/cobra/main.go" <<'GO'
package main

import "github.com/spf13/cobra"

func main() {
	var dir string
	root := &cobra.Command{Use: "floor", SilenceUsage: true}
	apply := &cobra.Command{Use: "apply", RunE: func(*cobra.Command, []string) error { return nil }}
	apply.Flags().StringVarP(&dir, "directory", "C", ".", "dir")
	root.AddCommand(apply)
	root.SetArgs([]string{"apply", "-C", "."})
	_ = root.Execute()
}
GO
cp go.mod go.sum "$TMP/cobra/"
sed -i 's#^module .*#module floor#' "$TMP/cobra/go.mod"
(cd "$TMP/cobra" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o cobra .) || { echo "startup-bench: cannot build the cobra floor" >&2; exit 2; }

# --- driver -----------------------------------------------------------------
mkdir -p "$TMP/drv"
cat >"$TMP/drv/main.go" <<'GO'
// Command drv runs command lines (stdin: "name<TAB>dir<TAB>argv...") in
// rounds, each round running every command once in turn, and prints per
// command the median wall and CPU time and the median of its per-round
// ratio to the first command (paired).
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
	wall, cpu []float64
}

func run(t *tool) (float64, float64) {
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
	cpu := float64(ru.Utime.Sec*1e6+ru.Utime.Usec+ru.Stime.Sec*1e6+ru.Stime.Usec) / 1000
	return float64(d.Microseconds()) / 1000, cpu
}

func median(v []float64) float64 {
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
		for k := range tools {
			// Rotate the order each round so that no command always runs
			// right after another.
			t := tools[(k+i)%len(tools)]
			w, c := run(t)
			t.wall = append(t.wall, w)
			t.cpu = append(t.cpu, c)
		}
	}
	base := tools[0]
	fmt.Printf("%-22s %9s %9s %9s %9s\n", "command", "wall_ms", "cpu_ms", "wall_x", "cpu_x")
	for _, t := range tools {
		var rw, rc []float64
		for i := range t.wall {
			rw = append(rw, t.wall[i]/base.wall[i])
			rc = append(rc, t.cpu[i]/max(base.cpu[i], 0.001))
		}
		fmt.Printf("%-22s %9.3f %9.3f %9.2f %9.2f\n", t.name, median(t.wall), median(t.cpu), median(rw), median(rc))
	}
}
GO
(cd "$TMP/drv" && go mod init drv >/dev/null 2>&1 && go build -o drv .)

T=$'\t'
"$TMP/drv/drv" "$reps" >"$TMP/times" <<EOF
git-apply-check${T}$repo${T}git${T}apply${T}--check${T}$TMP/edit.diff
go-nothing${T}$repo${T}$TMP/nothing/nothing
cobra-floor${T}$repo${T}$TMP/cobra/cobra
nocgo-apply-check${T}$repo${T}$lean${T}apply${T}--check${T}$TMP/edit.diff
nocgo-diff${T}$TMP${T}$lean${T}diff${T}old.go${T}new.go
cgo-apply-check${T}$repo${T}$pb${T}apply${T}--check${T}$TMP/edit.diff
cgo-diff${T}$TMP${T}$pb${T}diff${T}old.go${T}new.go
EOF

# Peak memory from /usr/bin/time -f %M, not from the driver: Go's os/exec
# starts children with vfork, and Linux counts the parent's resident set
# into the child's ru_maxrss at exec.
declare -A kb=()
peak() { # name dir argv...: median of 21 runs
  local name=$1 dir=$2
  shift 2
  kb[$name]=$(for _ in $(seq 21); do (cd "$dir" && /usr/bin/time -f %M -o "$TMP/rss" "$@" >/dev/null 2>&1); cat "$TMP/rss"; done | sort -n | sed -n 11p)
}
peak git-apply-check "$repo" git apply --check "$TMP/edit.diff"
peak go-nothing "$repo" "$TMP/nothing/nothing"
peak cobra-floor "$repo" "$TMP/cobra/cobra"
peak nocgo-apply-check "$repo" "$lean" apply --check "$TMP/edit.diff"
peak nocgo-diff "$TMP" "$lean" diff old.go new.go
peak cgo-apply-check "$repo" "$pb" apply --check "$TMP/edit.diff"
peak cgo-diff "$TMP" "$pb" diff old.go new.go

status=0
fail=
while read -r name wall cpu wx cx; do
  if [ "$name" = command ]; then
    printf '%-22s %9s %9s %9s %9s %9s\n' "$name" "$wall" "$cpu" "$wx" "$cx" rss_kib
    continue
  fi
  printf '%-22s %9s %9s %9s %9s %9s\n' "$name" "$wall" "$cpu" "$wx" "$cx" "${kb[$name]}"
  case $name in
  *-apply-check)
    if [ "$name" != git-apply-check ] && awk -v r="$wx" 'BEGIN{exit !(r > 1.3)}'; then
      fail="${fail}FAIL: $name takes ${wx}x the time of git apply --check (target <= 1.3x)"$'\n'
      status=1
    fi
    ;;
  esac
done <"$TMP/times"
[ $status = 0 ] || printf '%s' "$fail"
mb() { ls -l "$1" | awk '{printf "%.1f MB", $5/1e6}'; }
echo "# $reps rounds (median times; x: medians of the per-round ratios to git apply --check; memory: 21 runs); binaries: cgo $(mb "$pb"), no cgo $(mb "$lean"); load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
