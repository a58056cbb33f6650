package diff

import (
	"math/rand"
	"testing"
)

// applyEdits rebuilds b from a and the script, checking the script's shape.
func applyEdits(t *testing.T, a, b []string, es []Edit) []string {
	t.Helper()
	var out []string
	last := 0
	for i, e := range es {
		if e.OldStart < last || e.OldEnd < e.OldStart || e.NewEnd < e.NewStart {
			t.Fatalf("edit %d malformed: %+v", i, e)
		}
		if i > 0 && e.OldStart == last && e.NewStart == es[i-1].NewEnd {
			t.Fatalf("edit %d touches the previous one: %+v", i, e)
		}
		out = append(out, a[last:e.OldStart]...)
		out = append(out, b[e.NewStart:e.NewEnd]...)
		last = e.OldEnd
	}
	return append(out, a[last:]...)
}

func cost(es []Edit) int {
	n := 0
	for _, e := range es {
		n += e.OldEnd - e.OldStart + e.NewEnd - e.NewStart
	}
	return n
}

// lcsCost is the minimal number of changed lines, by dynamic programming.
func lcsCost(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return len(a) + len(b) - 2*dp[0][0]
}

func TestMyersRandomIsMinimal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alpha := []string{"a", "b", "c", "d"}
	for n := 0; n < 500; n++ {
		a := make([]string, r.Intn(12))
		b := make([]string, r.Intn(12))
		for i := range a {
			a[i] = alpha[r.Intn(len(alpha))]
		}
		for i := range b {
			b[i] = alpha[r.Intn(len(alpha))]
		}
		es := Lines(a, b, Myers)
		got := applyEdits(t, a, b, es)
		if len(got) != len(b) {
			t.Fatalf("%v -> %v: rebuilt %v", a, b, got)
		}
		for i := range got {
			if got[i] != b[i] {
				t.Fatalf("%v -> %v: rebuilt %v", a, b, got)
			}
		}
		if c, want := cost(es), lcsCost(a, b); c != want {
			t.Fatalf("%v -> %v: cost %d, minimal %d", a, b, c, want)
		}
	}
}
