package metrics

import (
	"math"
	"sort"
)

// Code localization metrics: the relace-mcp family over files and line
// ranges, and the LocAgent family over ranked lists of files, modules and
// functions.

// LineRange is a 1-based inclusive range of lines [Start, End].
type LineRange struct{ Start, End int }

// Ranges maps a file path to line ranges in it. A path present with no
// ranges names the file and no lines.
type Ranges map[string][]LineRange

// FileRecall is the fraction of ground-truth files that were found. With
// no ground-truth files it is 1 (relace-mcp's convention).
func FileRecall(found, truth Ranges) float64 {
	if len(truth) == 0 {
		return 1
	}
	n := 0
	for p := range truth {
		if _, ok := found[p]; ok {
			n++
		}
	}
	return float64(n) / float64(len(truth))
}

// FilePrecision is the fraction of found files that are in the ground
// truth. With nothing found it is 0.
func FilePrecision(found, truth Ranges) float64 {
	if len(found) == 0 {
		return 0
	}
	n := 0
	for p := range found {
		if _, ok := truth[p]; ok {
			n++
		}
	}
	return float64(n) / float64(len(found))
}

// LineCoverage is the fraction of ground-truth lines (overlaps counted
// once) that lie in found ranges of the same file. With no ground-truth
// lines it is 0, as relace-mcp has it.
func LineCoverage(found, truth Ranges) float64 {
	total, covered := 0, 0
	for p, rs := range truth {
		gt := MergeRanges(rs)
		total += RangeLines(gt)
		covered += Overlap(gt, MergeRanges(found[p]))
	}
	if total == 0 {
		return 0
	}
	return float64(covered) / float64(total)
}

// LinePrecisionMatched is the fraction of found lines that are ground-truth
// lines, counting only files that are in both: a found file outside the
// ground truth does not lower it (file precision says that). With no
// found lines in matched files it is 0.
func LinePrecisionMatched(found, truth Ranges) float64 {
	total, correct := 0, 0
	for p, rs := range found {
		gt, ok := truth[p]
		if !ok {
			continue
		}
		ret := MergeRanges(rs)
		total += RangeLines(ret)
		correct += Overlap(ret, MergeRanges(gt))
	}
	if total == 0 {
		return 0
	}
	return float64(correct) / float64(total)
}

// FunctionTarget is one ground-truth function: its file, the span of its
// definition (first to last line) and the target lines inside it (the lines
// the fix changed).
type FunctionTarget struct {
	Path  string
	Span  LineRange
	Lines []LineRange
}

// FunctionHitRate is relace-mcp's Function Hit Rate: the fraction of
// ground-truth functions hit, a function being hit when any found range of
// its file overlaps its definition span (a range touching only its def
// line counts). With no ground-truth functions it is 0, as relace-mcp has
// it (its mean over cases is then taken over the cases with functions; its
// quality score takes the 0).
func FunctionHitRate(found Ranges, fns []FunctionTarget) float64 {
	return hitRate(found, fns, func(t FunctionTarget) []LineRange { return []LineRange{t.Span} })
}

// FunctionTargetHitRate is the fraction of ground-truth functions with at
// least one target line (a changed line) inside a found range of their
// file: stricter than [FunctionHitRate], an answer elsewhere in the right
// function does not count. With no ground-truth functions it is 0.
func FunctionTargetHitRate(found Ranges, fns []FunctionTarget) float64 {
	return hitRate(found, fns, func(t FunctionTarget) []LineRange { return t.Lines })
}

func hitRate(found Ranges, fns []FunctionTarget, lines func(FunctionTarget) []LineRange) float64 {
	if len(fns) == 0 {
		return 0
	}
	hits := 0
	for _, t := range fns {
		if Overlap(MergeRanges(lines(t)), MergeRanges(found[t.Path])) > 0 {
			hits++
		}
	}
	return float64(hits) / float64(len(fns))
}

// QualityScore is relace-mcp's Quality Score:
// 0.4·file recall + 0.4·line precision (matched) + 0.2·function hit rate,
// the function hit rate being 0 for a case without ground-truth functions
// (so such a case scores at most 0.8).
func QualityScore(fileRecall, linePrecisionMatched, functionHitRate float64) float64 {
	return 0.4*fileRecall + 0.4*linePrecisionMatched + 0.2*functionHitRate
}

// QualityScoreV2 is the quality score of relace-mcp's later runner, which
// adds file precision: with ground-truth functions
// 0.3·file recall + 0.2·file precision + 0.3·line precision (matched) +
// 0.2·function hit rate; without them the function weight goes to the
// others in proportion: 0.375·file recall + 0.25·file precision +
// 0.375·line precision (matched).
func QualityScoreV2(fileRecall, filePrecision, linePrecisionMatched, functionHitRate float64, withFunctions bool) float64 {
	fw := 0.0
	if withFunctions {
		fw = 0.2
	}
	rest := 1 - fw
	return rest*3/8*fileRecall + rest*2/8*filePrecision + rest*3/8*linePrecisionMatched + fw*functionHitRate
}

// MergeRanges sorts ranges and merges those that overlap or touch. Ranges
// with End < Start are dropped.
func MergeRanges(rs []LineRange) []LineRange {
	out := make([]LineRange, 0, len(rs))
	for _, r := range rs {
		if r.End >= r.Start {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && r.Start <= merged[n-1].End+1 {
			merged[n-1].End = max(merged[n-1].End, r.End)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// RangeLines counts the lines of merged (non-overlapping) ranges.
func RangeLines(rs []LineRange) int {
	n := 0
	for _, r := range rs {
		n += r.End - r.Start + 1
	}
	return n
}

// Overlap counts the lines two lists of merged ranges share.
func Overlap(a, b []LineRange) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].Start, b[j].Start), min(a[i].End, b[j].End)
		if hi >= lo {
			n += hi - lo + 1
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return n
}

// Ranked holds the LocAgent metrics of one ranked list at one k.
type Ranked struct {
	Acc, Recall, Precision, NDCG, MAP float64
}

// RankedAt scores a ranked prediction list against the ground-truth items
// at cut-off k as LocAgent's evaluation/eval_metric.py does, for one case.
// Only the first maxK predictions count (LocAgent: the largest k
// evaluated) and the ground truth is seen as min(|gold|, maxK) relevant
// places:
//
//   - Acc@k is 1 when the top k hold min(k, |gold|) gold items, else 0;
//   - Recall@k is the gold items in the top k over min(|gold|, maxK);
//   - P@k is the gold items in the top k over k;
//   - NDCG@k is the DCG of the top k over the DCG of an ideal list;
//   - MAP@k sums the precision at each rank ≤ k holding a gold item and
//     divides by k (not by the number of gold items).
//
// Repeated predictions count once, at their first rank. LocAgent leaves
// cases with no ground truth out of its means; with empty gold every
// score here is 0 and callers should leave the case out too.
func RankedAt(pred, gold []string, k, maxK int) Ranked {
	if k <= 0 || len(gold) == 0 {
		return Ranked{}
	}
	maxK = max(maxK, k)
	gs := toSet(gold)
	top := topK(pred, maxK)
	rel := make([]float64, maxK)
	for i, p := range top {
		if _, ok := gs[p]; ok {
			rel[i] = 1
		}
	}
	ideal := make([]float64, maxK)
	for i := 0; i < len(gs) && i < maxK; i++ {
		ideal[i] = 1
	}
	var r Ranked
	hits, idealK, dcg, idcg, ap := 0.0, 0.0, 0.0, 0.0, 0.0
	for i := 0; i < k; i++ {
		disc := 1 / math.Log2(float64(i)+2)
		dcg += rel[i] * disc
		idcg += ideal[i] * disc
		idealK += ideal[i]
		if rel[i] == 1 {
			hits++
			ap += hits / float64(i+1)
		}
	}
	if hits == idealK {
		r.Acc = 1
	}
	r.Recall = hits / math.Min(float64(len(gs)), float64(maxK))
	r.Precision = hits / float64(k)
	if idcg > 0 {
		r.NDCG = dcg / idcg
	}
	r.MAP = ap / float64(k)
	return r
}
