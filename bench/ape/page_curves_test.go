package ape

import (
	"math"
	"testing"
)

// The report page's pass@k curves estimate each task from its own
// candidates: a task with 4 candidates of which 2 compile has
// compile_pass@1 0.5 however few candidates another task has.
func TestPageCurvesPerTaskN(t *testing.T) {
	st := &pageStats{run: "r", tasks: map[string]*pageCounts{
		"a": {n: 4, compile: 2, judge: 1},
		"b": {n: 2, compile: 2, judge: 0},
	}}
	for _, c := range []struct {
		k             int
		compile, judg float64
	}{
		{1, (0.5 + 1) / 2, (0.25 + 0) / 2},
		{2, (1 - 1.0/6 + 1) / 2, (0.5 + 0) / 2},
	} {
		cm, jm := st.passAt([]string{"a", "b"}, c.k)
		if math.Abs(cm-c.compile) > 1e-12 || math.Abs(jm-c.judg) > 1e-12 {
			t.Errorf("k %d: compile %v judge %v, want %v %v", c.k, cm, jm, c.compile, c.judg)
		}
	}
}
