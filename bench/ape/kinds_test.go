package ape

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestParseCategory(t *testing.T) {
	for answer, want := range map[string]string{
		"Reason: r\nError category: wrong-logic\nGrade: Poor":         "wrong-logic",
		"Reason: r\n**Error category:** Incomplete\nGrade: Poor":      "incomplete",
		"Reason: r\nCategory: none.\nGrade: Excellent":                "none",
		"Reason: r\nError category: bad-vibes\nGrade: Poor":           "",
		"Reason: r\nGrade: Good":                                      "",
		"Category: style\nthen\nError category: off-target\nGrade: x": "off-target",
	} {
		if got := ParseCategory(answer); got != want {
			t.Errorf("ParseCategory(%q) = %q, want %q", answer, got, want)
		}
	}
	for _, tt := range []struct {
		cats []string
		want string
	}{
		{[]string{"none", "none", "style"}, "none"},
		{[]string{"none", "wrong-logic"}, "wrong-logic"}, // a tie goes to the error
		{[]string{"incomplete", "style", "style", "incomplete"}, "incomplete"},
		{[]string{"", ""}, ""},
	} {
		if got := MajorityCategory(tt.cats); got != tt.want {
			t.Errorf("MajorityCategory(%q) = %q, want %q", tt.cats, got, tt.want)
		}
	}
}

// Diagnostics as the compilers print them (go build, python3 -m
// py_compile, pyflakes, rustc, javac, lean).
func TestErrorKind(t *testing.T) {
	for msg, want := range map[string]string{
		"./calc.go:5:28: undefined: c":                                            "undefined name",
		"./calc.go:5:37: syntax error: unexpected newline in composite literal":   "syntax",
		`  File "calc.py", line 3` + "\n    def f(:\nSyntaxError: invalid syntax": "syntax",
		"calc.py:4:12: undefined name 'total'":                                    "undefined name",
		"./calc.go:3:8: \"os\" imported and not used":                             "unused",
		"./calc.go:7:9: cannot use s (variable of type string) as int value":      "type",
		"./calc.go:9:1: missing return":                                           "missing return",
		"error[E0425]: cannot find value `x` in this scope":                       "undefined name",
		"Calc.java:3: error: cannot find symbol":                                  "undefined name",
		"calc.lean:3:2: unknown identifier 'foo'":                                 "undefined name",
		"calc.go:1:1: something else went wrong":                                  "other",
		// The Go check without the modules the environment should hold:
		// no candidate can do better.
		"calc.go:3:8: example.com/dep@v1.0.0: module lookup disabled by GOPROXY=off": "environment",
		"go: inconsistent vendoring in /tmp/tree:":                                   "environment",
		// A candidate's import no required module provides is its own.
		"calc.go:3:8: no required module provides package example.com/nope; to add it:":                             "import",
		"calc.go:3:8: cannot find module providing package example.com/nope: import lookup disabled by -mod=vendor": "import",
	} {
		if got := ErrorKind(msg, false); got != want {
			t.Errorf("ErrorKind(%q) = %q, want %q", msg, got, want)
		}
	}
	if got := ErrorKind("anything", true); got != "timeout" {
		t.Errorf("a timed-out check is %q, want timeout", got)
	}
	for file, want := range map[string]string{"a/b.go": "go", "x.PY": "python", "Mathlib/A.lean": "lean", "README": "other"} {
		if got := LanguageOf(file); got != want {
			t.Errorf("LanguageOf(%q) = %q, want %q", file, got, want)
		}
	}
}

// The report counts compile error kinds over the candidates that applied
// and did not compile, the judge's majority categories, and gives figures
// by language, against values counted by hand.
func TestReportKindsAndLanguages(t *testing.T) {
	dir := t.TempDir()
	rows := strings.Join([]string{
		`{"key":"a|0","id":"a","task":"a","sample":0,"path":"x.go","applied":true,"compile_pass":true,"judge_pass":true,"judge_error_category":"none"}`,
		`{"key":"a|1","id":"a","task":"a","sample":1,"path":"x.go","applied":true,"compile_pass":false,"compile_errors":["./x.go:3:1: undefined: y"],"judge_pass":false}`,
		`{"key":"b|0","id":"b","task":"b","sample":0,"path":"y.py","applied":true,"compile_pass":true,"judge_pass":false,"judge_error_category":"wrong-logic"}`,
		`{"key":"b|1","id":"b","task":"b","sample":1,"path":"y.py","applied":true,"compile_pass":false,"compile_errors":["SyntaxError: invalid syntax"],"judge_pass":false}`,
		`{"key":"c|0","id":"c","task":"c","sample":0,"path":"z.py","applied":false,"compile_pass":false,"judge_pass":false}`,
		`{"key":"c|1","id":"c","task":"c","sample":1,"path":"z.py","applied":true,"compile_pass":false,"compile_timed_out":true,"judge_pass":false}`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := WriteReport(dir, 2, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := map[string]int{"undefined name": 1, "syntax": 1, "timeout": 1}
	if len(rep.CompileErrorKinds) != 3 || rep.CompileErrorKinds["undefined name"] != 1 || rep.CompileErrorKinds["syntax"] != 1 || rep.CompileErrorKinds["timeout"] != 1 {
		t.Errorf("compile error kinds %v, want %v", rep.CompileErrorKinds, wantKinds)
	}
	if len(rep.JudgeErrorCategories) != 2 || rep.JudgeErrorCategories["none"] != 1 || rep.JudgeErrorCategories["wrong-logic"] != 1 {
		t.Errorf("judge categories %v", rep.JudgeErrorCategories)
	}
	// go: task a, 1 of 2 compiles and passes: pass@1 = 1/2 each.
	// python: b compiles 1 of 2, passes 0; c compiles 0: compile 1/4, judge 0.
	goF, pyF := rep.ByLanguage["go"], rep.ByLanguage["python"]
	if goF["compile_pass@1"] != 0.5 || goF["judge_pass@1"] != 0.5 || pyF["compile_pass@1"] != 0.25 || pyF["judge_pass@1"] != 0 {
		t.Errorf("by language: go %v, python %v", goF, pyF)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| language go | 0.5000 | 0.5000 |", "| undefined name | 1 |", "| wrong-logic | 1 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

// apeParquetRow has the columns of the published APE-Bench I data that the
// tasks read, and one they do not.
type apeParquetRow struct {
	CommitHash     string `parquet:"commit_hash"`
	ParentCommit   string `parquet:"parent_commit_hash"`
	FilePathBefore string `parquet:"file_path_before"`
	FilePathAfter  string `parquet:"file_path_after"`
	ContentBefore  string `parquet:"content_before"`
	ContentAfter   string `parquet:"content_after"`
	GoldDiff       string `parquet:"gold_diff"`
	Instruction    string `parquet:"full_instruction"`
	AddedLines     int64  `parquet:"added_lines"`
	Category       string `parquet:"majority_task_category"`
	Difficulty     string `parquet:"majority_difficulty"`
	Other          string `parquet:"exact_match_rate,optional"`
}

// Tasks read from Parquet as from JSONL: the published file as it is.
func TestReadTasksParquet(t *testing.T) {
	in := []apeParquetRow{
		{CommitHash: "0123456789abcdef", ParentCommit: "fedcba9876543210", FilePathBefore: "Mathlib/A.lean", FilePathAfter: "Mathlib/A.lean",
			ContentBefore: "theorem a : True := trivial\n", ContentAfter: "theorem a : True := by trivial\n", GoldDiff: "--- a/Mathlib/A.lean\n",
			Instruction: "Use tactic mode.", AddedLines: 1, Category: "Refactor", Difficulty: "Easy", Other: "0.5"},
		{CommitHash: "1111111111111111", FilePathAfter: "Mathlib/B.lean", ContentAfter: "def b := 1\n", Instruction: "Add b.", Category: "Feature"},
	}
	path := filepath.Join(t.TempDir(), "train.parquet")
	if err := parquet.WriteFile(path, in); err != nil {
		t.Fatal(err)
	}
	tasks, err := ReadTasks(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].ID != "0123456789ab:Mathlib/A.lean" || tasks[0].ParentCommit != "fedcba9876543210" ||
		tasks[0].ContentBefore != in[0].ContentBefore || tasks[0].Instruction != "Use tactic mode." || tasks[0].AddedLines != 1 ||
		tasks[0].Category != "Refactor" || tasks[1].Path() != "Mathlib/B.lean" || tasks[1].Instruction != "Add b." {
		t.Errorf("tasks %+v", tasks)
	}
	if LanguageOf(tasks[0].Path()) != "lean" {
		t.Errorf("language %q", LanguageOf(tasks[0].Path()))
	}
}

func TestParseDimensions(t *testing.T) {
	got := ParseDimensions("Correctness: Good\n**Completeness:** poor\nScope: Great\nReason: r\nGrade: Poor")
	if len(got) != 2 || got["correctness"] != "Good" || got["completeness"] != "Poor" {
		t.Errorf("dimensions %v, want correctness Good, completeness Poor (Scope's grade is not a grade)", got)
	}
	if ParseDimensions("Reason: r\nGrade: Good") != nil {
		t.Errorf("an answer without dimensions has some")
	}
}
