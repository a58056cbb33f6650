package metrics

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStrippedLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n\n  \n\t\n", nil},
		{"a\n\nb\n", []string{"a", "b"}},
		{"  a  \n", []string{"  a  "}},
		{"a\r\n\r\nb", []string{"a\r", "b"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, StrippedLines(tt.in)); diff != "" {
			t.Errorf("StrippedLines(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestStrippedEM(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"identical", "a\nb\n", "a\nb\n", true},
		{"both empty", "", "", true},
		{"empty vs blank lines", "", "\n \n\t\n", true},
		{"blank lines dropped", "a\n\n\nb", "\na\nb\n\n", true},
		{"whitespace-only line dropped", "a\n   \nb", "a\nb", true},
		{"trailing newline ignored", "a\nb", "a\nb\n", true},
		{"indentation counts", "  a\nb", "a\nb", false},
		{"trailing space counts", "a \nb", "a\nb", false},
		{"order counts", "a\nb", "b\na", false},
		{"repetition counts", "a\na", "a", false},
		{"crlf is not lf", "a\r\nb\r\n", "a\nb\n", false},
		{"crlf on both", "a\r\nb\r\n", "a\r\n\r\nb\r\n", true},
		{"missing line", "a\nb\nc", "a\nc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StrippedEM(tt.a, tt.b); got != tt.want {
				t.Errorf("StrippedEM(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := StrippedEM(tt.b, tt.a); got != tt.want {
				t.Errorf("StrippedEM(%q, %q) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestStrippedIoU(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want float64
	}{
		{"both empty", "", "\n  \n", 1},
		{"one empty", "a\n", "", 0},
		{"identical", "a\nb\n", "a\nb\n", 1},
		{"disjoint", "a\nb", "c\nd", 0},
		// {a,b,c} vs {b,c,d}: 2 shared of 4 distinct.
		{"half", "a\nb\nc", "b\nc\nd", 0.5},
		// {a,b} vs {a}: 1 of 2.
		{"subset", "a\n\nb", "a", 0.5},
		// Sets: order and repetition do not count.
		{"order and repeats", "a\nb\na\nb", "b\n\na", 1},
		// {x,y,z} vs {x}: 1 of 3.
		{"third", "x\ny\nz\n", "x\n", 1.0 / 3},
		// "a\r" and "a" are different lines.
		{"crlf", "a\r\nb\n", "a\nb\n", 1.0 / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StrippedIoU(tt.a, tt.b); !approxEqual(got, tt.want) {
				t.Errorf("StrippedIoU(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := StrippedIoU(tt.b, tt.a); !approxEqual(got, tt.want) {
				t.Errorf("StrippedIoU(%q, %q) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestSetMetrics(t *testing.T) {
	tests := []struct {
		name             string
		pred, ref        []string
		prec, rec, score float64 // score is F1
	}{
		{"both empty", nil, nil, 1, 1, 1},
		{"both empty slices", []string{}, []string{}, 1, 1, 1},
		{"pred empty", nil, []string{"a"}, 0, 0, 0},
		{"ref empty", []string{"a"}, nil, 0, 0, 0},
		{"identical", []string{"a", "b"}, []string{"b", "a"}, 1, 1, 1},
		{"disjoint", []string{"a"}, []string{"b"}, 0, 0, 0},
		// pred {a,b,c,d}, ref {a,b}: P=2/4, R=2/2, F1=2*2/(4+2)=2/3.
		{"over-predict", []string{"a", "b", "c", "d"}, []string{"a", "b"}, 0.5, 1, 2.0 / 3},
		// pred {a}, ref {a,b,c}: P=1, R=1/3, F1=2*1/(1+3)=1/2.
		{"under-predict", []string{"a"}, []string{"a", "b", "c"}, 1, 1.0 / 3, 0.5},
		// Duplicates collapse: pred {a,b}, ref {a,c}: P=1/2, R=1/2, F1=1/2.
		{"duplicates", []string{"a", "a", "b"}, []string{"a", "c", "c"}, 0.5, 0.5, 0.5},
		// pred {a,b,c}, ref {b,c,d,e}: P=2/3, R=2/4, F1=4/7.
		{"partial", []string{"a", "b", "c"}, []string{"b", "c", "d", "e"}, 2.0 / 3, 0.5, 4.0 / 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Precision(tt.pred, tt.ref); !approxEqual(got, tt.prec) {
				t.Errorf("Precision = %v, want %v", got, tt.prec)
			}
			if got := Recall(tt.pred, tt.ref); !approxEqual(got, tt.rec) {
				t.Errorf("Recall = %v, want %v", got, tt.rec)
			}
			if got := F1(tt.pred, tt.ref); !approxEqual(got, tt.score) {
				t.Errorf("F1 = %v, want %v", got, tt.score)
			}
		})
	}
}

func TestRankedMetrics(t *testing.T) {
	ranked := []string{"a.go", "b.go", "a.go", "c.go", "d.go"}
	tests := []struct {
		name     string
		ranked   []string
		ref      []string
		k        int
		rec, acc float64
	}{
		// top1 {a}: 1 of {a,c}.
		{"k1", ranked, []string{"a.go", "c.go"}, 1, 0.5, 0},
		// top2 {a,b}: the repeated a.go does not take a place.
		{"k2", ranked, []string{"a.go", "c.go"}, 2, 0.5, 0},
		// top3 {a,b,c}.
		{"k3", ranked, []string{"a.go", "c.go"}, 3, 1, 1},
		{"k beyond list", ranked, []string{"a.go", "e.go"}, 10, 0.5, 0},
		{"k zero", ranked, []string{"a.go"}, 0, 0, 0},
		{"empty ref, empty top", nil, nil, 5, 1, 1},
		{"empty ref, some top", ranked, nil, 5, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RecallAtK(tt.ranked, tt.ref, tt.k); !approxEqual(got, tt.rec) {
				t.Errorf("RecallAtK = %v, want %v", got, tt.rec)
			}
			if got := AccuracyAtK(tt.ranked, tt.ref, tt.k); got != tt.acc {
				t.Errorf("AccuracyAtK = %v, want %v", got, tt.acc)
			}
		})
	}
}

func TestPassAtK(t *testing.T) {
	tests := []struct {
		n, c, k int
		want    float64
	}{
		{5, 0, 1, 0},
		{5, 5, 1, 1},
		// 1 - C(4,1)/C(5,1) = 1 - 4/5.
		{5, 1, 1, 0.2},
		// pass@1 is c/n.
		{200, 37, 1, 37.0 / 200},
		// 1 - C(3,2)/C(5,2) = 1 - 3/10.
		{5, 2, 2, 0.7},
		// 1 - C(7,5)/C(10,5) = 1 - 21/252 = 11/12.
		{10, 3, 5, 11.0 / 12},
		// n-c < k: every draw of k holds a passing sample.
		{4, 3, 2, 1},
		{4, 0, 4, 0},
		{1, 1, 1, 1},
		// n = 20 as in APE-Bench (k = 0.8·n = 16), values by hand.
		// pass@1 = c/n = 5/20.
		{20, 5, 1, 0.25},
		// 1 - C(17,5)/C(20,5) = 1 - 6188/15504.
		{20, 3, 5, 1 - 6188.0/15504},
		// 1 - C(18,16)/C(20,16) = 1 - 153/4845.
		{20, 2, 16, 1 - 153.0/4845},
		// 1 - C(19,16)/C(20,16) = 1 - 969/4845 = 0.8.
		{20, 1, 16, 0.8},
		// c = 0, c = n and n-c < k (15 < 16).
		{20, 0, 16, 0},
		{20, 0, 1, 0},
		{20, 20, 16, 1},
		{20, 20, 1, 1},
		{20, 5, 16, 1},
		// n-c = k: exactly one draw misses every pass, 1 - 1/C(20,16).
		{20, 4, 16, 1 - 1.0/4845},
	}
	for _, tt := range tests {
		if got := PassAtK(tt.n, tt.c, tt.k); !approxEqual(got, tt.want) {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", tt.n, tt.c, tt.k, got, tt.want)
		}
	}
}

// TestPassAtKLarge checks the product form against log-gamma binomials where
// the plain ratio C(n-c,k)/C(n,k) would overflow float64.
func TestPassAtKLarge(t *testing.T) {
	lchoose := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c
	}
	for _, tt := range []struct{ n, c, k int }{{2000, 3, 100}, {5000, 10, 1000}, {1000, 1, 999}} {
		want := 1 - math.Exp(lchoose(tt.n-tt.c, tt.k)-lchoose(tt.n, tt.k))
		got := PassAtK(tt.n, tt.c, tt.k)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", tt.n, tt.c, tt.k, got, want)
		}
	}
}

func TestPassAtKInvalid(t *testing.T) {
	for _, tt := range []struct{ n, c, k int }{
		{0, 0, 1}, {5, -1, 1}, {5, 6, 1}, {5, 1, 0}, {5, 1, 6}, {-1, 0, 1},
	} {
		if got := PassAtK(tt.n, tt.c, tt.k); !math.IsNaN(got) {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want NaN", tt.n, tt.c, tt.k, got)
		}
	}
}

func TestKFromRatio(t *testing.T) {
	for _, tt := range []struct {
		n     int
		ratio float64
		want  int
	}{
		{20, 0.8, 16}, {10, 0.8, 8}, {5, 0.8, 4}, {1, 0.8, 1}, {3, 0.1, 1}, {4, 1, 4}, {4, 2, 4}, {7, 0.5, 3},
	} {
		if got := KFromRatio(tt.n, tt.ratio); got != tt.want {
			t.Errorf("KFromRatio(%d, %v) = %d, want %d", tt.n, tt.ratio, got, tt.want)
		}
	}
}

func TestSemanticDrop(t *testing.T) {
	for _, tt := range []struct{ compile, judge, want float64 }{
		{0.5, 0.25, 50}, // the percentage, not the difference 0.25
		{0.5, 0.5, 0},
		{0.8, 0, 100},
		{0, 0, 0}, // nothing compiled: nothing to drop
		{1, 0.9, 10},
	} {
		if got := SemanticDrop(tt.compile, tt.judge); !approxEqual(got, tt.want) {
			t.Errorf("SemanticDrop(%v, %v) = %v, want %v", tt.compile, tt.judge, got, tt.want)
		}
	}
	// Compile pass@16 of 20 with c = 2 against judge pass@16 with c = 1:
	// compile 4692/4845, judge 0.8.
	c := PassAtK(20, 2, 16)
	if got, want := SemanticDrop(c, PassAtK(20, 1, 16)), (4692.0/4845-0.8)/(4692.0/4845)*100; !approxEqual(got, want) {
		t.Errorf("SemanticDrop = %v, want %v", got, want)
	}
}

func TestMean(t *testing.T) {
	if got := Mean(nil); !math.IsNaN(got) {
		t.Errorf("Mean(nil) = %v, want NaN", got)
	}
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{1, 2, 3, 4}, 2.5},
		{[]float64{1, 0, 0}, 1.0 / 3},
		{[]float64{-1, 1}, 0},
	}
	for _, tt := range tests {
		if got := Mean(tt.in); !approxEqual(got, tt.want) {
			t.Errorf("Mean(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func approxEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
