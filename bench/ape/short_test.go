package ape

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task left with fewer than k evaluated candidates (the others could not
// be evaluated) has no pass@k: it is left out of compile_pass@K and
// judge_pass@K and named, not scored as pass@n under pass@k's name.
func TestReportTaskShortOfK(t *testing.T) {
	dir := t.TempDir()
	rows := strings.Join([]string{
		`{"key":"a|0","id":"a","task":"a","sample":0,"path":"x.go","applied":true,"compile_pass":true,"judge_pass":true}`,
		`{"key":"a|1","id":"a","task":"a","sample":1,"path":"x.go","applied":true,"compile_pass":false,"judge_pass":false}`,
		`{"key":"a|2","id":"a","task":"a","sample":2,"path":"x.go","applied":true,"compile_pass":false,"judge_pass":false}`,
		`{"key":"b|0","id":"b","task":"b","sample":0,"path":"y.go","applied":true,"compile_pass":true,"judge_pass":true}`,
		`{"key":"b|1","id":"b","task":"b","sample":1,"path":"y.go","status":"environment-error","not_evaluated":"no environment"}`,
		`{"key":"b|2","id":"b","task":"b","sample":2,"path":"y.go","status":"environment-error","not_evaluated":"no environment"}`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := WriteReport(dir, 3, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Task a: 1 of 3 compiles, pass@2 = 1 - C(2,2)/C(3,2) = 2/3. Task b
	// has 1 evaluated candidate: no pass@2.
	want := 2.0 / 3
	if got := rep.Overall["compile_pass@2"]; math.Abs(got-want) > 1e-12 || rep.Overall["tasks"] != 1 {
		t.Errorf("compile_pass@2 %v over %v tasks, want %v over 1", got, rep.Overall["tasks"], want)
	}
	if len(rep.ShortOfK) != 1 || !strings.HasPrefix(rep.ShortOfK[0], "b: 1 of 3 candidates evaluated") {
		t.Errorf("short of k: %q, want task b named", rep.ShortOfK)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "b: 1 of 3 candidates evaluated") {
		t.Errorf("report.md does not name task b:\n%s", md)
	}
}
