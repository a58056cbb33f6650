package report

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func fsum(xs []float64) float64 {
	var s sum
	for _, x := range xs {
		s.add(x)
	}
	return s.total()
}

func TestSumIsExact(t *testing.T) {
	tenth := make([]float64, 10)
	for i := range tenth {
		tenth[i] = 0.1
	}
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{tenth, 1.0}, // a plain loop gives 0.9999999999999999
		{[]float64{1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50}, 1e-100},
		{[]float64{1, 1e-16, 1e-16}, 1.0000000000000002},
		{nil, 0},
		{[]float64{math.Inf(1), 1}, math.Inf(1)},
	} {
		if got := fsum(c.xs); got != c.want {
			t.Errorf("fsum(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if got := fsum([]float64{math.Inf(1), math.Inf(-1)}); !math.IsNaN(got) {
		t.Errorf("inf + -inf = %v, want NaN", got)
	}
}

// The sum of a run's metric does not depend on the order of its rows:
// shards merged in key order report what the run in one piece reported.
func TestSumOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		xs := make([]float64, 1+r.IntN(2000))
		for i := range xs {
			switch r.IntN(3) {
			case 0:
				xs[i] = r.Float64()
			case 1:
				xs[i] = float64(r.IntN(7)) / 9
			default:
				xs[i] = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(30)-15))
			}
		}
		exact := new(big.Float).SetPrec(4000)
		for _, x := range xs {
			exact.Add(exact, new(big.Float).SetFloat64(x))
		}
		want, _ := exact.Float64()
		for range 5 {
			r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
			if got := fsum(xs); got != want {
				t.Fatalf("trial %d: sum %v, exact sum rounded %v", trial, got, want)
			}
		}
	}
}
