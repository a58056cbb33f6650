package main

import (
	"strings"
	"testing"
)

// TestSummarize: package lines and a failed test's output are printed, a
// passing test's are not, and a skip keeps its reason.
func TestSummarize(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: quiet\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: want 1, got 2\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:5: corpus.gz not found\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- SKIP: TestC (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
not json: a build error
`
	var out strings.Builder
	sum := summarize(strings.NewReader(in), &out)
	want := "    b_test.go:3: want 1, got 2\nFAIL\tp\t0.1s\nnot json: a build error\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if len(sum.skips) != 1 || sum.skips[0] != "p TestC: c_test.go:5: corpus.gz not found" {
		t.Errorf("skips %q", sum.skips)
	}
	// TestA passed, TestB failed, TestC skipped; package lines are no test.
	if got, want := sum.counts(), "1 passed, 1 failed, 1 skipped"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
}

// TestSummarizeTimeout: a package whose binary timed out while a test ran
// has that test counted as failed, with go test's panic printed.
func TestSummarizeTimeout(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestSlow"}
{"Action":"output","Package":"p","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"p","Test":"TestSlow","Output":"panic: test timed out after 45m0s\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t2700.1s\n"}
{"Action":"fail","Package":"p"}
`
	var out strings.Builder
	sum := summarize(strings.NewReader(in), &out)
	if !strings.Contains(out.String(), "--- FAIL: TestSlow (did not finish)\n=== RUN   TestSlow\npanic: test timed out after 45m0s\n") {
		t.Errorf("printed %q, want TestSlow's panic", out.String())
	}
	if got, want := sum.counts(), "1 passed, 1 failed, 0 skipped"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
}
