package metrics

import "math"

// PassAtK returns the unbiased estimate of pass@k from n samples of which c
// passed: the probability that at least one of k samples drawn without
// replacement from the n passes, 1 - C(n-c, k) / C(n, k) (Chen et al. 2021,
// "Evaluating Large Language Models Trained on Code").
//
// The ratio of binomials is computed as the product ∏_{i=n-c+1}^{n} (1 - k/i),
// which neither overflows nor loses precision for large n. The result is 1
// when n-c < k (every draw of k holds a passing sample).
//
// The arguments must satisfy 0 ≤ c ≤ n and 1 ≤ k ≤ n; otherwise the result is
// NaN.
func PassAtK(n, c, k int) float64 {
	if n < 1 || c < 0 || c > n || k < 1 || k > n {
		return math.NaN()
	}
	if n-c < k {
		return 1
	}
	fail := 1.0
	for i := n - c + 1; i <= n; i++ {
		fail *= 1 - float64(k)/float64(i)
	}
	return 1 - fail
}

// Mean returns the arithmetic mean of xs, or NaN when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// KFromRatio returns the k of pass@k for n samples and a ratio such as 0.8
// (APE-Bench reports pass@16 of 20): ⌊ratio·n⌋, at least 1 and at most n.
// A tiny tolerance keeps 0.8·20 at 16 despite binary rounding.
func KFromRatio(n int, ratio float64) int {
	k := int(math.Floor(ratio*float64(n) + 1e-9))
	return min(max(k, 1), max(n, 1))
}

// SemanticDrop returns the percentage of the compile pass rate the judge
// takes away, (compile − judge) / compile × 100: APE-Bench's relative gap
// between syntactic and semantic success (compile 0.5 and judge 0.25 give
// 50). It is 0 when compile is 0 (nothing to drop). The absolute
// difference is compile − judge.
func SemanticDrop(compile, judge float64) float64 {
	if compile == 0 {
		return 0
	}
	return (compile - judge) / compile * 100
}
