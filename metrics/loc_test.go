package metrics

import (
	"fmt"
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// Values in these tables were computed by hand; the comments show the sums.
// fh is relace-mcp's function hit rate (a definition span overlapped), th
// ours on the changed lines (function_target_hit_rate).
func TestRelaceFamily(t *testing.T) {
	truth := Ranges{
		"a.py": {{10, 19}, {15, 24}}, // overlapping: lines 10-24, 15 lines
		"b.py": {{1, 5}},             // 5 lines; 20 in all
	}
	// Three functions: two in a.py (defined at lines 10 and 17), one in b.py.
	fns := []FunctionTarget{
		{"a.py", LineRange{10, 16}, []LineRange{{12, 13}}},
		{"a.py", LineRange{17, 24}, []LineRange{{22, 22}}},
		{"b.py", LineRange{1, 5}, []LineRange{{2, 3}}},
	}
	type want struct{ fr, fp, lc, lpm, fh, th, q, q2 float64 }
	for _, tc := range []struct {
		name  string
		found Ranges
		truth Ranges
		fns   []FunctionTarget
		want  want
	}{{
		// a.py found (1 of 2 truth files); c.py is outside the truth.
		// a.py: found 20-29 (10 lines) ∩ truth 10-24 = 20-24, 5 lines.
		// coverage 5/20; matched precision 5/10; 20-29 overlaps the span
		// 17-24 and its changed line 22: 1 of 3 both ways.
		// q = .4·.5+.4·.5+.2/3; q2 = .3·.5+.2·.5+.3·.5+.2/3
		name:  "partial with a file outside the truth",
		found: Ranges{"a.py": {{20, 29}}, "c.py": {{1, 10}}}, truth: truth, fns: fns,
		want: want{0.5, 0.5, 0.25, 0.5, 1.0 / 3, 1.0 / 3, 0.4666667, 0.4666667},
	}, {
		// Only the def line of the second function: relace's hit (its span
		// 17-24 is overlapped), not ours (its changed line is 22).
		// coverage 1/20, matched precision 1/1; q = .4·.5+.4·1+.2/3;
		// q2 = .3·.5+.2·1+.3·1+.2/3
		name:  "overlap at the def line only",
		found: Ranges{"a.py": {{17, 17}}}, truth: truth, fns: fns,
		want: want{0.5, 1, 0.05, 1, 1.0 / 3, 0, 0.6666667, 0.7166667},
	}, {
		name:  "empty answer",
		found: Ranges{}, truth: truth, fns: fns,
		want: want{0, 0, 0, 0, 0, 0, 0, 0},
	}, {
		name:  "exact answer",
		found: truth, truth: truth, fns: fns,
		want: want{1, 1, 1, 1, 1, 1, 1, 1},
	}, {
		// found ranges overlap each other: 10-15 ∪ 12-20 = 10-20, 11 lines;
		// truth a.py 15-24 (10 lines): shared 15-20, 6 lines.
		// q = .4·1+.4·6/11+.2·1; q2 = .3+.2+.3·6/11+.2
		name:  "overlapping found ranges",
		found: Ranges{"a.py": {{10, 15}, {12, 20}}}, truth: Ranges{"a.py": {{15, 24}}},
		fns:  []FunctionTarget{{"a.py", LineRange{14, 24}, []LineRange{{16, 16}}}},
		want: want{1, 1, 0.6, 6.0 / 11, 1, 1, 0.8181818, 0.8636364},
	}, {
		// a file named with no lines: found as a file, no lines to count.
		// q = .4·.5; q2 = .3·.5+.2·1
		name:  "file without ranges",
		found: Ranges{"b.py": nil}, truth: truth, fns: fns,
		want: want{0.5, 1, 0, 0, 0, 0, 0.2, 0.35},
	}, {
		// nothing expected: recall 1, coverage and precision 0, no
		// function: hit rate 0. q = .4·1; q2 = 3/8·1 (no function weight)
		name:  "empty truth and answer",
		found: Ranges{}, truth: Ranges{}, fns: nil,
		want: want{1, 0, 0, 0, 0, 0, 0.4, 0.375},
	}, {
		// a change outside any function (a config file), found exactly:
		// relace's quality score stops at 0.8; q2 gives the function
		// weight to the other terms.
		name:  "exact answer without functions",
		found: Ranges{"setup.cfg": {{3, 4}}}, truth: Ranges{"setup.cfg": {{3, 4}}}, fns: nil,
		want: want{1, 1, 1, 1, 0, 0, 0.8, 1},
	}, {
		// the same, half right: a.cfg found with 1-4 against truth 3-4;
		// lpm 2/4, coverage 1, file precision 1/2 (b.cfg is not in the truth).
		// q = .4·1+.4·.5; q2 = 3/8·1+2/8·.5+3/8·.5
		name:  "partial answer without functions",
		found: Ranges{"a.cfg": {{1, 4}}, "b.cfg": {{1, 1}}}, truth: Ranges{"a.cfg": {{3, 4}}}, fns: nil,
		want: want{1, 0.5, 1, 0.5, 0, 0, 0.6, 0.6875},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fr := FileRecall(tc.found, tc.truth)
			fp := FilePrecision(tc.found, tc.truth)
			lc := LineCoverage(tc.found, tc.truth)
			lpm := LinePrecisionMatched(tc.found, tc.truth)
			fh := FunctionHitRate(tc.found, tc.fns)
			th := FunctionTargetHitRate(tc.found, tc.fns)
			got := want{fr, fp, lc, lpm, fh, th, QualityScore(fr, lpm, fh), QualityScoreV2(fr, fp, lpm, fh, len(tc.fns) > 0)}
			for i, pair := range [][2]float64{
				{got.fr, tc.want.fr}, {got.fp, tc.want.fp}, {got.lc, tc.want.lc}, {got.lpm, tc.want.lpm},
				{got.fh, tc.want.fh}, {got.th, tc.want.th}, {got.q, tc.want.q}, {got.q2, tc.want.q2},
			} {
				if !near(pair[0], pair[1]) {
					names := []string{"file_recall", "file_precision", "line_coverage", "line_precision_matched",
						"function_hit_rate", "function_target_hit_rate", "quality_score", "quality_score_v2"}
					t.Errorf("%s = %.6f, want %.6f", names[i], pair[0], pair[1])
				}
			}
		})
	}
}

func TestMergeAndOverlap(t *testing.T) {
	m := MergeRanges([]LineRange{{5, 7}, {1, 2}, {3, 3}, {9, 8}, {6, 10}})
	if fmt.Sprint(m) != "[{1 3} {5 10}]" {
		t.Errorf("MergeRanges = %v, want [{1 3} {5 10}] (touching merged, empty dropped)", m)
	}
	if n := Overlap(m, []LineRange{{3, 6}, {10, 12}}); n != 4 {
		t.Errorf("Overlap = %d, want 4 (line 3, 5-6, 10)", n)
	}
	if n := RangeLines(m); n != 9 {
		t.Errorf("RangeLines = %d, want 9", n)
	}
}

func TestRankedAt(t *testing.T) {
	gold3 := []string{"g1", "g2", "g3"}
	var gold12, pred10 []string
	for i := 1; i <= 12; i++ {
		gold12 = append(gold12, fmt.Sprintf("g%d", i))
	}
	pred10 = gold12[:10]
	const l3, l5 = 0.6309298, 0.4306766 // 1/log2(3), 1/log2(5)
	for _, tc := range []struct {
		name       string
		pred, gold []string
		k          int
		want       Ranked
	}{
		{"miss at 1", []string{"x", "g1", "y", "g2"}, gold3, 1, Ranked{}},
		// one hit at rank 2; 3 relevant; ideal DCG 1+l3+.5; AP (1/2)/3
		{"hit at 2, k=3", []string{"x", "g1", "y", "g2"}, gold3, 3,
			Ranked{Acc: 0, Recall: 1.0 / 3, Precision: 1.0 / 3, NDCG: l3 / (1 + l3 + 0.5), MAP: 0.5 / 3}},
		// hits at ranks 2 and 4; AP (1/2+2/4)/5
		{"hits at 2 and 4, k=5", []string{"x", "g1", "y", "g2"}, gold3, 5,
			Ranked{Acc: 0, Recall: 2.0 / 3, Precision: 0.4, NDCG: (l3 + l5) / (1 + l3 + 0.5), MAP: 1.0 / 5}},
		{"hits at 2 and 4, k=10", []string{"x", "g1", "y", "g2"}, gold3, 10,
			Ranked{Acc: 0, Recall: 2.0 / 3, Precision: 0.2, NDCG: (l3 + l5) / (1 + l3 + 0.5), MAP: 1.0 / 10}},
		// Acc@1 needs min(1, 2) = 1 gold item in the top 1
		{"acc counts min(k, |gold|)", []string{"g1"}, []string{"g1", "g2"}, 1,
			Ranked{Acc: 1, Recall: 0.5, Precision: 1, NDCG: 1, MAP: 1}},
		{"one of two at k=3", []string{"g1"}, []string{"g1", "g2"}, 3,
			Ranked{Acc: 0, Recall: 0.5, Precision: 1.0 / 3, NDCG: 1 / (1 + l3), MAP: 1.0 / 3}},
		// the repeated g1 takes no place: top = g1, g2
		{"duplicates count once", []string{"g1", "g1", "g2"}, []string{"g1", "g2"}, 3,
			Ranked{Acc: 1, Recall: 1, Precision: 2.0 / 3, NDCG: 1, MAP: 2.0 / 3}},
		// 12 gold items, only maxK=10 places: recall over min(12, 10)
		{"more gold than maxK", pred10, gold12, 10, Ranked{Acc: 1, Recall: 1, Precision: 1, NDCG: 1, MAP: 1}},
		{"empty prediction", nil, gold3, 5, Ranked{}},
		{"outside the truth only", []string{"x", "y"}, gold3, 3, Ranked{}},
		{"empty gold", []string{"x"}, nil, 5, Ranked{}},
	} {
		got := RankedAt(tc.pred, tc.gold, tc.k, 10)
		for _, p := range []struct {
			name      string
			got, want float64
		}{{"acc", got.Acc, tc.want.Acc}, {"recall", got.Recall, tc.want.Recall},
			{"precision", got.Precision, tc.want.Precision}, {"ndcg", got.NDCG, tc.want.NDCG}, {"map", got.MAP, tc.want.MAP}} {
			if !near(p.got, p.want) {
				t.Errorf("%s: %s@%d = %.6f, want %.6f", tc.name, p.name, tc.k, p.got, p.want)
			}
		}
	}
}
