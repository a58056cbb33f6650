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
