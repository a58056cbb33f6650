#!/usr/bin/env bash
# Benchmarks `patchbench diff` against GNU diff and git diff (histogram and
# myers) on two large inputs built deterministically from the Go source
# tree, all tools in the same run, and checks the diff package's targets.
#
# Usage: scripts/bench-diff.sh            (REPS=7 runs per tool and pair)
#        REPS=15 KEEP=/tmp/pairs scripts/bench-diff.sh
#
# Pair A: 150,000+ lines of Go source (files under $(go env GOROOT)/src in
#         path order) with about 1% of the lines deleted, inserted (copies of
#         other source lines) or modified, spread through the file.
# Pair B: the same amount of source in which lines recur many times: the
#         first source files (5,000 lines) concatenated about 30 times in a
#         shuffled order, so that "}", "return nil", "if err != nil {" recur
#         thousands of times and whole files tens of times; edited the same
#         way. This is the input on which git's histogram diff collapses
#         (150,000+ changed lines instead of about 2,000).
#
# pb-lines is a lean driver around diff.Lines (no CLI start-up, plain
# reading and printing), reported beside the CLI to separate the algorithm's
# cost from the command's.
#
# For each tool it reports the median wall time, the median peak RSS
# (/usr/bin/time -f %M) and the changed-line count (+/- lines of the
# unified diff), then the ratios patchbench/GNU and patchbench/git. The
# targets: on both pairs patchbench takes at most 1.0x the time of GNU diff
# and changes no more lines than the best of GNU diff and git. The exit
# status is 1 when a target fails, 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
reps=${REPS:-7}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for tool in go git diff /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench-diff: $tool not found" >&2; exit 2; }
done
src=$(go env GOROOT)/src

# --- inputs ---------------------------------------------------------------
mkdir -p "$TMP/gen"
cat >"$TMP/gen/main.go" <<'EOF'
// Command gen writes the benchmark pairs. Everything is deterministic: files
// in path order, a fixed-seed splitmix64 generator.
package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

type rng uint64

func (r *rng) intn(n int) int {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int((z ^ (z >> 31)) % uint64(n))
}

const size = 150000 // lines per old file, at least

func main() {
	src, out := os.Args[1], os.Args[2]
	var files [][]string // Go source files in path order, testdata skipped
	total := 0
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || total >= 2*size {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return nil
		}
		ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		files = append(files, ls)
		total += len(ls)
		return nil
	})
	var all []string
	for _, f := range files {
		all = append(all, f...)
	}
	if len(all) < 2*size {
		fmt.Fprintf(os.Stderr, "gen: only %d lines of Go source under %s\n", len(all), src)
		os.Exit(1)
	}

	// Pair A: real source, lightly edited.
	a := all[:size]
	r := rng(1)
	write(out+"/A.old", a)
	write(out+"/A.new", edit(a, all, &r))

	// Pair B: the files holding the first 5,000 lines, each repeated about
	// 30 times in a shuffled order; insertions are copies of lines of the
	// old file.
	r = rng(1)
	var pool [][]string
	for n := 0; n < size/30; n += len(files[len(pool)]) {
		pool = append(pool, files[len(pool)])
	}
	var b []string
	for len(b) < size {
		b = append(b, pool[r.intn(len(pool))]...)
	}
	write(out+"/B.old", b)
	write(out+"/B.new", edit(b, b, &r))
}

// edit deletes, inserts (a line of pool) or modifies about 1% of the lines.
func edit(old, pool []string, r *rng) []string {
	out := make([]string, 0, len(old)+len(old)/100)
	mod := 0
	for _, l := range old {
		switch x := r.intn(1000); {
		case x < 3: // deleted
		case x < 6:
			out = append(out, pool[r.intn(len(pool))], l)
		case x < 8:
			mod++
			out = append(out, fmt.Sprintf("%s // edit %d", l, mod))
		case x < 10:
			out = append(out, pool[r.intn(len(pool))])
		default:
			out = append(out, l)
		}
	}
	return out
}

func write(name string, lines []string) {
	f, err := os.Create(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	f.Close()
}
EOF
pairs=${KEEP:-$TMP/pairs}
mkdir -p "$pairs"
(cd "$TMP/gen" && GOFLAGS= GOWORK=off go run main.go "$src" "$pairs")

# --- patchbench -----------------------------------------------------------
# patchbench is the real CLI when it builds. pb-lines is a lean driver that
# reads both files, calls diff.Lines (histogram) and prints a unified diff:
# it shows the algorithm's cost apart from the CLI's start-up, reading and
# printing. When the CLI does not build (or has no diff command yet), the
# driver stands in for it.
mkdir -p "$TMP/lean"
gover=$(go env GOVERSION | sed 's/^go//; s/[^0-9.].*//')
printf 'module lean\n\ngo %s\n' "$gover" >"$TMP/lean/go.mod"
cat >"$TMP/lean/main.go" <<'EOF'
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/diff"
)

// lines splits a file into lines; a last line without a newline keeps a
// "\n" so that it differs from the same text with one.
func lines(name string) []string {
	// A strings.Builder takes the file without the copy of string([]byte).
	f, err := os.Open(name)
	var sb strings.Builder
	if err == nil {
		if fi, err := f.Stat(); err == nil {
			sb.Grow(int(fi.Size()) + 1)
		}
		_, err = io.Copy(&sb, f)
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s := sb.String()
	ls := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			ls = append(ls, s+"\n")
			break
		}
		ls = append(ls, s[:i])
		s = s[i+1:]
	}
	return ls
}

func main() {
	const ctx = 3
	a, b := lines(os.Args[1]), lines(os.Args[2])
	es := diff.Lines(a, b, diff.Histogram)
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer w.Flush()
	if len(es) == 0 {
		return
	}
	w.WriteString("--- " + os.Args[1] + "\n+++ " + os.Args[2] + "\n")
	line := func(prefix byte, l string) {
		w.WriteByte(prefix)
		w.WriteString(strings.TrimSuffix(l, "\n"))
		w.WriteByte('\n')
	}
	for i := 0; i < len(es); {
		j := i
		for j+1 < len(es) && es[j+1].OldStart-es[j].OldEnd <= 2*ctx {
			j++
		}
		a0, a1 := max(es[i].OldStart-ctx, 0), min(es[j].OldEnd+ctx, len(a))
		b0, b1 := es[i].NewStart-(es[i].OldStart-a0), es[j].NewEnd+(a1-es[j].OldEnd)
		w.WriteString("@@ -" + strconv.Itoa(a0+1) + "," + strconv.Itoa(a1-a0) +
			" +" + strconv.Itoa(b0+1) + "," + strconv.Itoa(b1-b0) + " @@\n")
		p := a0
		for _, e := range es[i : j+1] {
			for ; p < e.OldStart; p++ {
				line(' ', a[p])
			}
			for _, l := range a[e.OldStart:e.OldEnd] {
				line('-', l)
			}
			for _, l := range b[e.NewStart:e.NewEnd] {
				line('+', l)
			}
			p = e.OldEnd
		}
		for ; p < a1; p++ {
			line(' ', a[p])
		}
		i = j + 1
	}
}
EOF
printf 'go %s\n\nuse (\n\t%s\n\t%s\n)\n' "$gover" "$TMP/lean" "$root" >"$TMP/go.work"
(cd "$TMP/lean" && GOWORK="$TMP/go.work" go build -o "$TMP/pb-lines" .) || {
  echo "bench-diff: cannot build the diff.Lines driver" >&2
  exit 2
}
pb=("$TMP/patchbench" diff -U3)
if ! go build -o "$TMP/patchbench" ./cmd/patchbench 2>"$TMP/build.log" ||
  ! "$TMP/patchbench" diff -U3 "$pairs/A.old" "$pairs/A.old" >/dev/null 2>&1; then
  echo "bench-diff: cmd/patchbench does not build or has no diff command; the diff.Lines driver stands in" >&2
  pb=("$TMP/pb-lines")
fi

# --- runs -----------------------------------------------------------------
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
gitdiff=(git -c core.quotepath=off diff --no-index --no-color --no-ext-diff)
tools=(patchbench pb-lines gnu-diff git-histogram git-myers)
cmd_of() {
  case $1 in
    patchbench) echo "${pb[@]}" ;;
    pb-lines) echo "$TMP/pb-lines" ;;
    gnu-diff) echo diff -u ;;
    git-histogram) echo "${gitdiff[@]}" --histogram ;;
    git-myers) echo "${gitdiff[@]}" --diff-algorithm=myers ;;
  esac
}

# changed counts the +/- lines of a unified diff, after its file headers.
changed() { awk '/^@@ /{h=1; next} h && /^[-+]/{n++} END{print n+0}' "$1"; }
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

status=0
printf '%-5s %-14s %10s %10s %9s\n' pair tool median_ms rss_kb changed
for pair in A B; do
  old=$pairs/$pair.old new=$pairs/$pair.new
  declare -A ms=() kb=() ch=()
  for tool in "${tools[@]}"; do ms[$tool]="" kb[$tool]=""; done
  for ((i = 0; i < reps; i++)); do
    # Interleave the tools so that they share the machine's load.
    for tool in "${tools[@]}"; do
      read -r -a cmd <<<"$(cmd_of "$tool")"
      t0=$(date +%s%N)
      set +e
      /usr/bin/time -f %M -o "$TMP/rss" "${cmd[@]}" "$old" "$new" >"$TMP/out.$tool"
      rc=$?
      set -e
      t1=$(date +%s%N)
      if [ "$rc" -gt 1 ]; then
        echo "bench-diff: $tool failed with status $rc" >&2
        exit 2
      fi
      ms[$tool]+="$(((t1 - t0) / 1000)) "
      kb[$tool]+="$(tail -1 "$TMP/rss") "
    done
  done
  for tool in "${tools[@]}"; do
    ch[$tool]=$(changed "$TMP/out.$tool")
    m=$(tr ' ' '\n' <<<"${ms[$tool]}" | grep . | median)
    ms[$tool]=$(awk -v u="$m" 'BEGIN{printf "%.1f", u/1000}')
    kb[$tool]=$(tr ' ' '\n' <<<"${kb[$tool]}" | grep . | median)
    printf '%-5s %-14s %10s %10s %9s\n' "$pair" "$tool" "${ms[$tool]}" "${kb[$tool]}" "${ch[$tool]}"
  done
  best=${ch[gnu-diff]}
  for t in git-histogram git-myers; do [ "${ch[$t]}" -lt "$best" ] && best=${ch[$t]}; done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
  tg=$(ratio "${ms[patchbench]}" "${ms[gnu-diff]}")
  th=$(ratio "${ms[patchbench]}" "${ms[git-histogram]}")
  tm=$(ratio "${ms[patchbench]}" "${ms[git-myers]}")
  tl=$(ratio "${ms[pb-lines]}" "${ms[gnu-diff]}")
  printf '%-5s time patchbench/GNU %sx, /git-histogram %sx, /git-myers %sx (pb-lines/GNU %sx); changed patchbench %s, best of GNU and git %s\n' \
    "$pair" "$tg" "$th" "$tm" "$tl" "${ch[patchbench]}" "$best"
  if awk -v r="$tg" 'BEGIN{exit !(r > 1.0)}'; then
    echo "$pair FAIL: patchbench takes ${tg}x the time of GNU diff (target <= 1.0x)"
    status=1
  fi
  if [ "${ch[patchbench]}" -gt "$best" ]; then
    echo "$pair FAIL: patchbench changes ${ch[patchbench]} lines, best of GNU and git $best"
    status=1
  fi
  unset ms kb ch
done
wc -l "$pairs"/A.old "$pairs"/A.new "$pairs"/B.old "$pairs"/B.new | sed 's/^/# /'
exit $status
