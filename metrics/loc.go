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

// FunctionTarget is one ground-truth function: its file and the target
// lines inside it.
type FunctionTarget struct {
	Path   string
	Ranges []LineRange
}

// FunctionHitRate is the fraction of target functions with at least one
// target line in a found range of their file. ok is false when there are
// no targets: as relace-mcp does, such a case has no function hit rate
// (leave it out of the mean) and its quality scores spread the function
// weight over the other terms.
func FunctionHitRate(found Ranges, targets []FunctionTarget) (rate float64, ok bool) {
	if len(targets) == 0 {
		return 0, false
	}
	hits := 0
	for _, t := range targets {
		if Overlap(MergeRanges(t.Ranges), MergeRanges(found[t.Path])) > 0 {
			hits++
		}
	}
	return float64(hits) / float64(len(targets)), true
}

// QualityScore is relace-mcp's quality score (v1):
// 0.4·file recall + 0.4·line precision (matched) + 0.2·function hit rate;
// without target functions (withFunctions false) the function weight is
// spread over the other two terms in proportion: 0.5·file recall +
// 0.5·line precision (matched).
func QualityScore(fileRecall, linePrecisionMatched, functionHitRate float64, withFunctions bool) float64 {
	if !withFunctions {
		return 0.5*fileRecall + 0.5*linePrecisionMatched
	}
	return 0.4*fileRecall + 0.4*linePrecisionMatched + 0.2*functionHitRate
}

// QualityScoreV2 is relace-mcp's quality score v2: 0.3·file recall +
// 0.2·file precision + 0.3·line coverage + 0.2·function hit rate; without
// target functions 0.375·file recall + 0.25·file precision + 0.375·line
// coverage (the same weights over 0.8).
func QualityScoreV2(fileRecall, filePrecision, lineCoverage, functionHitRate float64, withFunctions bool) float64 {
	if !withFunctions {
		return (0.3*fileRecall + 0.2*filePrecision + 0.3*lineCoverage) / 0.8
	}
	return 0.3*fileRecall + 0.2*filePrecision + 0.3*lineCoverage + 0.2*functionHitRate
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
