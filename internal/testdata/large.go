package testdata

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LargePair returns a file of n lines of real source, the old code of the
// dev corpus's rows concatenated (repeated when the corpus is shorter), and
// a copy in which about 1% of the lines are deleted, inserted (a line from
// elsewhere in the file), modified or replaced, spread through the file. The
// same n always gives the same pair. Skips when the corpus is absent.
func LargePair(tb testing.TB, n int) (old, new string) {
	tb.Helper()
	rows := Load[Triple](tb, "diffxyz-dev.jsonl.gz")
	lines := make([]string, 0, n)
	for len(lines) < n {
		for _, r := range rows {
			for _, l := range strings.SplitAfter(r.OldCode, "\n") {
				if l == "" || len(lines) == n {
					continue
				}
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
		}
	}
	x := uint64(1)
	rnd := func(k int) int {
		// splitmix64: fixed, so the pair is the same on every machine.
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return int((z ^ (z >> 31)) % uint64(k))
	}
	edited := make([]string, 0, n+n/100)
	mod := 0
	for _, l := range lines {
		switch c := rnd(1000); {
		case c < 3: // deleted
		case c < 6:
			edited = append(edited, lines[rnd(n)], l)
		case c < 8:
			mod++
			edited = append(edited, fmt.Sprintf("%s // edit %d", l, mod))
		case c < 10:
			edited = append(edited, lines[rnd(n)])
		default:
			edited = append(edited, l)
		}
	}
	return strings.Join(lines, "\n") + "\n", strings.Join(edited, "\n") + "\n"
}

// ReportPerLine reports a large-file benchmark's cost per line of its
// n-line file, in wall time and in the process's CPU time since cpu0 (from
// CPUTime when the timer started): on a loaded machine the CPU time still
// shows how the cost grows with the file.
func ReportPerLine(b *testing.B, n int, cpu0 time.Duration) {
	per := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/line")
	b.ReportMetric(float64((CPUTime()-cpu0).Nanoseconds())/per, "cpu-ns/line")
}

// CPUTime is the user and system CPU time the process has used so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
