package codesearch

import (
	"math"

	"github.com/patchbench/patchbench/metrics"
)

// FitCase is one issue of a fit: what the signals say about it and the
// files its fix changes.
type FitCase struct {
	Evidence *Evidence
	Gold     []string
}

// FitGrid is the space [FitFusion] searches: every combination of a
// weight from Weights for each of Lists and a constant from Ks. The lists
// not named keep weight 1 (BM25's is the scale the others are weighed
// against).
type FitGrid struct {
	Lists   []string
	Weights []float64
	Ks      []float64
	// At is the k of the objective, file Acc@k.
	At int
}

// FitResult is the best fusion found, its mean file Acc@k and how many
// fusions were tried.
type FitResult struct {
	Fusion Fusion
	Acc    float64
	Tried  int
}

// FitFusion returns the fusion of the grid with the highest mean file
// Acc@k (LocAgent's: every ground-truth file, or k of them, in the first
// k) over cases. Ties go to the simpler fusion: fewer weights other than 1
// (and a constant other than 60 counting as one), then weights nearer 1,
// then a constant nearer 60; the grid's order settles the rest, so the
// fit is deterministic.
func FitFusion(cases []FitCase, g FitGrid) FitResult {
	var best FitResult
	var bestCost [3]float64
	weights := make([]float64, len(g.Lists))
	var walk func(i int)
	walk = func(i int) {
		if i < len(g.Lists) {
			for _, w := range g.Weights {
				weights[i] = w
				walk(i + 1)
			}
			return
		}
		for _, k := range g.Ks {
			f := Fusion{K: k, Weights: map[string]float64{}}
			for j, name := range g.Lists {
				f.Weights[name] = weights[j]
			}
			acc := FitScore(cases, f, g.At)
			cost := fusionCost(f)
			best.Tried++
			if best.Tried == 1 || acc > best.Acc || acc == best.Acc && less(cost, bestCost) {
				best.Fusion, best.Acc, bestCost = f, acc, cost
			}
		}
	}
	walk(0)
	return best
}

// FitFuncs returns the fusion that is base with the functions fused by
// the best of a grid of constants ks and file weights ws (see
// [FuncFusion]), by score (function Acc@10 over the tuning cases, say);
// base's file ranking is left as it is. Ties go to the simpler fusion as
// in [FitFusion], base itself (the functions fused with its K, the
// file's score weighing 1) being the simplest.
func FitFuncs(base Fusion, ks, ws []float64, score func(Fusion) float64) FitResult {
	var best FitResult
	var bestCost [3]float64
	for _, k := range ks {
		for _, w := range ws {
			f := base
			f.Funcs = &FuncFusion{K: k, File: w}
			acc, cost := score(f), fusionCost(f)
			best.Tried++
			if best.Tried == 1 || acc > best.Acc || acc == best.Acc && less(cost, bestCost) {
				best.Fusion, best.Acc, bestCost = f, acc, cost
			}
		}
	}
	return best
}

// FitScore is the mean file Acc@at of f over cases.
func FitScore(cases []FitCase, f Fusion, at int) float64 {
	if len(cases) == 0 {
		return 0
	}
	sum := 0.0
	for _, c := range cases {
		sum += metrics.RankedAt(c.Evidence.fileLists().top(f, at), c.Gold, at, at).Acc
	}
	return sum / float64(len(cases))
}

// fusionCost orders fusions by simplicity: the weights other than 1 (and
// a constant other than 60, and the functions' constant and file weight
// other than K and 1), how far the weights are from 1 (a factor of 2
// counts 1, weight 0 counts 4) and how far the constants are from 60 and
// K.
func fusionCost(f Fusion) [3]float64 {
	var c [3]float64
	for _, w := range f.Weights {
		switch {
		case w == 1:
			continue
		case w == 0:
			c[1] += 4
		default:
			c[1] += math.Abs(math.Log2(w))
		}
		c[0]++
	}
	if f.K != 60 {
		c[0]++
		c[2] = math.Abs(math.Log2(f.K / 60))
	}
	if ff := f.Funcs; ff != nil {
		if ff.File != 1 {
			c[0]++
			c[1] += 4
			if ff.File != 0 {
				c[1] += math.Abs(math.Log2(ff.File)) - 4
			}
		}
		if ff.K != f.K {
			c[0]++
			c[2] += math.Abs(math.Log2(ff.K / f.K))
		}
	}
	return c
}

func less(a, b [3]float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
