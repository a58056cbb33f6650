package metrics

// The set metrics treat their arguments as sets: duplicates count once and
// order does not matter. For ranked predictions see [RecallAtK] and
// [AccuracyAtK].
//
// Empty sets follow one convention for all of them: when both pred and ref
// are empty the score is 1 (nothing was expected and nothing was produced);
// when exactly one of them is empty the score is 0.

// Precision returns |pred ∩ ref| / |pred|, the share of predicted items that
// are in the reference. It is 1 when both sets are empty and 0 when exactly
// one is.
func Precision(pred, ref []string) float64 {
	p, r := toSet(pred), toSet(ref)
	if v, ok := emptyCase(len(p), len(r)); ok {
		return v
	}
	return float64(intersection(p, r)) / float64(len(p))
}

// Recall returns |pred ∩ ref| / |ref|, the share of reference items that were
// predicted. It is 1 when both sets are empty and 0 when exactly one is.
func Recall(pred, ref []string) float64 {
	p, r := toSet(pred), toSet(ref)
	if v, ok := emptyCase(len(p), len(r)); ok {
		return v
	}
	return float64(intersection(p, r)) / float64(len(r))
}

// F1 returns the harmonic mean of [Precision] and [Recall]:
// 2·|pred ∩ ref| / (|pred| + |ref|). It is 1 when both sets are empty, 0 when
// exactly one is, and 0 when the sets are disjoint.
func F1(pred, ref []string) float64 {
	p, r := toSet(pred), toSet(ref)
	if v, ok := emptyCase(len(p), len(r)); ok {
		return v
	}
	return 2 * float64(intersection(p, r)) / float64(len(p)+len(r))
}

// RecallAtK returns [Recall] of the first k distinct items of the ranked
// prediction list against ref. Duplicates in ranked do not use up the k
// places. A k larger than the number of distinct predictions uses all of
// them; k ≤ 0 uses none.
func RecallAtK(ranked, ref []string, k int) float64 {
	return Recall(topK(ranked, k), ref)
}

// AccuracyAtK returns 1 when every item of ref is among the first k distinct
// items of ranked, and 0 otherwise (the Acc@k of code localization
// benchmarks). With an empty ref it is 1 when the top k is empty too and 0
// otherwise, like the set metrics.
func AccuracyAtK(ranked, ref []string, k int) float64 {
	if RecallAtK(ranked, ref, k) == 1 {
		return 1
	}
	return 0
}

// topK returns the first k distinct items of ranked.
func topK(ranked []string, k int) []string {
	seen := make(map[string]bool)
	var out []string
	for _, s := range ranked {
		if len(out) >= k {
			break
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// emptyCase applies the empty-set convention to set sizes np and nr.
func emptyCase(np, nr int) (float64, bool) {
	switch {
	case np == 0 && nr == 0:
		return 1, true
	case np == 0 || nr == 0:
		return 0, true
	}
	return 0, false
}

func toSet(xs []string) map[string]struct{} {
	s := make(map[string]struct{}, len(xs))
	for _, x := range xs {
		s[x] = struct{}{}
	}
	return s
}

func intersection(a, b map[string]struct{}) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for x := range a {
		if _, ok := b[x]; ok {
			n++
		}
	}
	return n
}
