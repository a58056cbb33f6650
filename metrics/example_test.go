package metrics_test

import (
	"fmt"

	"github.com/patchbench/patchbench/metrics"
)

func ExampleStrippedEM() {
	want := "def f():\n    return 1\n"
	got := "\ndef f():\n\n    return 1\n\n"
	fmt.Println(metrics.StrippedEM(got, want))
	fmt.Println(metrics.StrippedEM("def f():\n  return 1\n", want))
	// Output:
	// true
	// false
}

func ExampleStrippedIoU() {
	// {a, b, c} and {b, c, d} share 2 of 4 distinct lines.
	fmt.Println(metrics.StrippedIoU("a\nb\nc\n", "b\n\nc\nd\n"))
	// Output: 0.5
}

func ExampleF1() {
	pred := []string{"a.go", "b.go", "c.go", "d.go"}
	ref := []string{"a.go", "b.go"}
	fmt.Printf("precision %.2f recall %.2f f1 %.2f\n",
		metrics.Precision(pred, ref), metrics.Recall(pred, ref), metrics.F1(pred, ref))
	fmt.Println(metrics.F1(nil, nil), metrics.F1(nil, ref))
	// Output:
	// precision 0.50 recall 1.00 f1 0.67
	// 1 0
}

func ExampleRecallAtK() {
	ranked := []string{"x.go", "a.go", "y.go", "b.go"}
	ref := []string{"a.go", "b.go"}
	fmt.Println(metrics.RecallAtK(ranked, ref, 2), metrics.AccuracyAtK(ranked, ref, 2))
	fmt.Println(metrics.RecallAtK(ranked, ref, 4), metrics.AccuracyAtK(ranked, ref, 4))
	// Output:
	// 0.5 0
	// 1 1
}

func ExamplePassAtK() {
	// 10 samples, 3 pass: pass@1 is 3/10, pass@5 is 1 - C(7,5)/C(10,5).
	fmt.Printf("%.4f %.4f\n", metrics.PassAtK(10, 3, 1), metrics.PassAtK(10, 3, 5))
	// Output: 0.3000 0.9167
}

func ExampleMean() {
	fmt.Println(metrics.Mean([]float64{1, 0, 1, 1}))
	// Output: 0.75
}

func ExampleFunctionHitRate() {
	// One ground-truth function, defined at lines 10-20, its fix at line 15.
	fns := []metrics.FunctionTarget{{Path: "a.py", Span: metrics.LineRange{Start: 10, End: 20}, Lines: []metrics.LineRange{{Start: 15, End: 15}}}}
	defLine := metrics.Ranges{"a.py": {{Start: 10, End: 10}}}
	// relace-mcp's hit: the answer overlaps the definition; ours on the
	// changed line does not count it.
	fmt.Println(metrics.FunctionHitRate(defLine, fns), metrics.FunctionTargetHitRate(defLine, fns))
	fmt.Printf("%.2f\n", metrics.QualityScore(1, 0, metrics.FunctionHitRate(defLine, fns)))
	// Output:
	// 1 0
	// 0.60
}
