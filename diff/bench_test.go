package diff

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// splitmix is a tiny deterministic generator, so that benchmark inputs are
// the same on every run and Go version.
type splitmix uint64

func (r *splitmix) intn(n int) int {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int((z ^ (z >> 31)) % uint64(n))
}

var goSource = sync.OnceValue(func() []string {
	var lines []string
	root := filepath.Join(runtime.GOROOT(), "src")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(lines) > 400000 {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err == nil {
				lines = append(lines, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
			}
		}
		return nil
	})
	return lines
})

// edit returns a copy of old with about rate per mille of its lines
// deleted, inserted (taken from pool) or modified, spread evenly.
func edit(old, pool []string, rate int, seed uint64) []string {
	r := splitmix(seed)
	out := make([]string, 0, len(old)+len(old)/100)
	mod := 0
	for _, l := range old {
		switch x := r.intn(3000); {
		case x < rate:
			// deleted
		case x < 2*rate:
			out = append(out, pool[r.intn(len(pool))], l)
		case x < 3*rate:
			mod++
			out = append(out, fmt.Sprintf("%s // edit %d", l, mod))
		default:
			out = append(out, l)
		}
	}
	return out
}

// benchInputs returns realistic inputs: n lines of Go source with about 1%
// of them edited ("source"); n lines made of one block of real source
// repeated over and over, edited the same way ("repetitive"), the input on
// which git's histogram diff degrades; and n lines of source against the
// same lines shuffled ("shuffled"), a pathological case.
func benchInputs(tb testing.TB, kind string, n int) (a, b []string) {
	src := goSource()
	if len(src) < 2*n {
		tb.Skipf("need %d lines of Go source under GOROOT, have %d", 2*n, len(src))
	}
	switch kind {
	case "source":
		a = src[:n]
	case "repetitive":
		block := src[:min(n/30+1, 5000)]
		for len(a) < n {
			a = append(a, block...)
		}
		a = a[:n]
	case "shuffled":
		// Nothing in order: the Myers search gives up on its cost bound.
		a = src[:n]
		b = append([]string(nil), a...)
		r := splitmix(2)
		for i := len(b) - 1; i > 0; i-- {
			j := r.intn(i + 1)
			b[i], b[j] = b[j], b[i]
		}
		return a, b
	}
	return a, edit(a, src[:2*n], 10, 1)
}

func BenchmarkLines(b *testing.B) {
	for _, kind := range []string{"source", "repetitive", "shuffled"} {
		for _, n := range []int{5000, 150000} {
			if kind == "shuffled" && n > 5000 {
				n = 20000
			}
			x, y := benchInputs(b, kind, n)
			for _, alg := range []Algorithm{Myers, Histogram} {
				b.Run(fmt.Sprintf("%s/%d/%v", kind, n, alg), func(b *testing.B) {
					var es []Edit
					for b.Loop() {
						es = Lines(x, y, alg)
					}
					del, ins := Changed(es)
					b.ReportMetric(float64(del+ins), "changed")
				})
			}
		}
	}
}

// BenchmarkFiles diffs the pairs NAME.old, NAME.new in $DIFF_BENCH_DIR
// (for example those that scripts/bench-diff.sh keeps with KEEP=dir, or
// testdata/pathological), one sub-benchmark per pair; it skips without
// the variable.
func BenchmarkFiles(b *testing.B) {
	dir := os.Getenv("DIFF_BENCH_DIR")
	if dir == "" {
		b.Skip("DIFF_BENCH_DIR not set")
	}
	olds, _ := filepath.Glob(filepath.Join(dir, "*.old"))
	for _, o := range olds {
		name := strings.TrimSuffix(filepath.Base(o), ".old")
		x, err1 := os.ReadFile(o)
		y, err2 := os.ReadFile(strings.TrimSuffix(o, ".old") + ".new")
		if err1 != nil || err2 != nil {
			continue
		}
		a, c := splitText(string(x)), splitText(string(y))
		b.Run(name, func(b *testing.B) {
			var es []Edit
			for b.Loop() {
				es = Lines(a, c, benchAlg)
			}
			del, ins := Changed(es)
			b.ReportMetric(float64(del+ins), "changed")
		})
	}
}

// benchAlg is the algorithm of BenchmarkFiles: $DIFF_BENCH_ALG, else
// Histogram.
var benchAlg, _ = ParseAlgorithm(os.Getenv("DIFF_BENCH_ALG"))
