package ape

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/sandbox"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// history makes a Go module with five commits; commits 2-5 modify calc.go.
func history(t *testing.T) string {
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/calc\n\ngo 1.21\n")
	body := "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"
	write("calc.go", body)
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "initial")
	for _, step := range []struct{ msg, add string }{
		{"add Sub", "\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"},
		{"add Mul", "\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n"},
		{"fix: add Neg", "\n// Neg negates.\nfunc Neg(a int) int { return -a }\n"},
		{"refactor: add Twice", "\n// Twice doubles.\nfunc Twice(a int) int { return Add(a, a) }\n"},
	} {
		body += step.add
		write("calc.go", body)
		gitT(t, dir, "commit", "-qam", step.msg)
	}
	return dir
}

// historyTasks makes history's repository and its tasks.
func historyTasks(t *testing.T) (string, []Task) {
	t.Helper()
	dir := history(t)
	tasks, _, err := Build(context.Background(), dir, "HEAD", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, tasks
}

func TestEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	ctx := context.Background()
	repoDir := history(t)
	tasks, _, err := Build(ctx, repoDir, "HEAD", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 4 {
		t.Fatalf("built %d tasks, want 4 (one per modifying commit)", len(tasks))
	}
	if tasks[2].Category != "Bug Fix" || tasks[3].Category != "Refactor" || tasks[0].Category != "Feature" || tasks[0].Difficulty != "Easy" {
		t.Errorf("classification: %+v", tasks)
	}
	tf := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := WriteTasks(tf, tasks); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTasks(tf)
	if err != nil || len(back) != 4 || back[1].GoldDiff != tasks[1].GoldDiff {
		t.Fatalf("tasks do not read back: %v", err)
	}
	check := CheckOptions{Repo: repoDir, Runner: sandbox.Plain{}}

	// Reference candidates and judge: everything compiles and passes.
	out := t.TempDir()
	_, rep, err := Run(ctx, tasks, RunOptions{
		Runner: runner.Options{Out: filepath.Join(out, ResultsFile), Workers: 2}, N: 2, JudgeN: 2, Check: check,
		Model: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
		Judge: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.K != 1 || rep.Overall["compile_pass@1"] != 1 || rep.Overall["judge_pass@1"] != 1 || rep.Overall["semantic_drop"] != 0 {
		t.Errorf("reference report: %+v", rep)
	}

	// The same from an environment store built for the tasks' commits:
	// every reference candidate compiles and passes in the restored
	// environments, and a check that needs what the setup made passes
	// there and fails on a plain checkout.
	store, err := envstore.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(ctx, repoDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var commits []string
	for _, tk := range tasks {
		if !slices.Contains(commits, tk.CommitHash) {
			commits = append(commits, tk.CommitHash)
		}
	}
	built, err := store.Build(ctx, r, commits, envstore.BuildOptions{Setup: "echo built > .pb-env-built", Runner: sandbox.Plain{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if b.Status != "built" {
			t.Fatalf("env build of %s: %s %s", b.Commit, b.Status, b.Reason)
		}
	}
	withStore := CheckOptions{Repo: repoDir, Store: store, Runner: sandbox.Plain{}}
	_, rep, err = Run(ctx, tasks, RunOptions{
		Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile), Workers: 2}, N: 2, JudgeN: 1, Check: withStore,
		Model: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
		Judge: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
	})
	if err != nil || rep.Compiled != 8 || rep.JudgePass != 8 || rep.Overall["judge_pass@1"] != 1 {
		t.Fatalf("reference from the store: %+v, %v; want 8 of 8 compiled and passed", rep, err)
	}
	// --env-commit parent: the first task's parent is not in the store.
	// Its candidates are not evaluated, are named, and are left out of
	// pass@k; they are no failed candidates.
	parentEnv := withStore
	parentEnv.EnvCommit = EnvCommitParent
	_, rep, err = Run(ctx, tasks, RunOptions{
		Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile), Workers: 2}, N: 2, JudgeN: 1, Check: parentEnv,
		Model: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
		Judge: runner.ModelOptions{Model: "reference", Cache: runner.CacheOff},
	})
	if err != nil || len(rep.NotEvaluated) != 2 || rep.Failed != 0 || rep.Compiled != 6 || rep.Overall["tasks"] != 3 || rep.Overall["compile_pass@1"] != 1 ||
		!strings.Contains(rep.NotEvaluated[0], tasks[0].ID+" sample 0: environment-error: ") || !strings.Contains(rep.NotEvaluated[0], "no environment for commit "+tasks[0].ParentCommit) {
		t.Errorf("parent environments, one missing: %+v, %v; want 2 candidates of %s not evaluated, 3 tasks at compile_pass@1 1", rep, err, tasks[0].ID)
	}
	if md := rep.Markdown(); !strings.Contains(md, "Not evaluated (left out of pass@k): 2 candidates") || !strings.Contains(md, "Judge: "+ExactMatchJudge) {
		t.Errorf("report.md does not name the candidates not evaluated and the exact-match judge:\n%s", md)
	}
	for name, opts := range map[string]CheckOptions{"store": withStore, "checkout": check} {
		opts.Command = "test -f .pb-env-built"
		c, err := Compile(ctx, &tasks[0], tasks[0].ContentAfter, opts)
		if err != nil || c.Pass != (name == "store") {
			t.Errorf("%s: the setup's file seen %v (%v), want %v", name, c.Pass, err, name == "store")
		}
	}

	// Replayed candidates for task 0 (n = 5): 0 good, 1 syntax error,
	// 2 undefined name, 3 and 4 good. Judge votes: sample 0 Good Good Poor
	// Excellent (3 positive, 1 negative: pass), 3 Good Good Poor Poor (2
	// against 2: fail, majority Good, worst Poor), 4 Excellent x4.
	task := tasks[0]
	good := "```diff\n" + task.GoldDiff + "```"
	syntax := strings.Replace(good, "return a - b }", "return a - b", 1)
	undef := strings.Replace(good, "return a - b }", "return a - c }", 1)
	dir := t.TempDir()
	var cand, judge strings.Builder
	for s, r := range []string{good, syntax, undef, good, good} {
		b, _ := json.Marshal(map[string]any{"id": task.ID, "sample": s, "response": r})
		cand.Write(append(b, '\n'))
	}
	for s, votes := range map[int][]string{0: {"Good", "Good", "Poor", "Excellent"}, 3: {"Good", "Good", "Poor", "Poor"}, 4: {"Excellent", "Excellent", "Excellent", "Excellent"}} {
		for v, g := range votes {
			b, _ := json.Marshal(map[string]any{"id": task.ID, "sample": s, "vote": v, "response": "Reason: r\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"" + g + "\"}}\n```"})
			judge.Write(append(b, '\n'))
		}
	}
	cf, jf := filepath.Join(dir, "cand.jsonl"), filepath.Join(dir, "judge.jsonl")
	os.WriteFile(cf, []byte(cand.String()), 0o644)
	os.WriteFile(jf, []byte(judge.String()), 0o644)
	out2 := t.TempDir()
	_, rep, err = Run(ctx, tasks[:1], RunOptions{
		Runner: runner.Options{Out: filepath.Join(out2, ResultsFile), Workers: 2}, N: 5, JudgeN: 4, Check: check,
		Model: runner.ModelOptions{Model: "replay/" + cf, Cache: runner.CacheOff},
		Judge: runner.ModelOptions{Model: "replay/" + jf, Cache: runner.CacheOff},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := runner.ReadRows(filepath.Join(out2, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	bySample := map[int]map[string]any{}
	for _, r := range rows {
		bySample[int(r["sample"].(float64))] = r
	}
	errs := func(s int) string { return fmt.Sprint(bySample[s]["compile_errors"]) }
	if bySample[1]["compile_pass"] != false || !strings.Contains(errs(1), "calc.go:") || !strings.Contains(errs(1), "expected") {
		t.Errorf("syntax error row: %v", bySample[1])
	}
	if bySample[2]["compile_pass"] != false || !strings.Contains(errs(2), "undefined: c") {
		t.Errorf("undefined name row: %v", bySample[2])
	}
	for s, want := range map[int]struct {
		grade, worst string
		pass         bool
	}{0: {"Good", "Poor", true}, 3: {"Good", "Poor", false}, 4: {"Excellent", "Excellent", true}} {
		if r := bySample[s]; r["grade"] != want.grade || r["worst_grade"] != want.worst || r["judge_pass"] != want.pass {
			t.Errorf("sample %d: grade %v, worst %v, pass %v; want %+v", s, r["grade"], r["worst_grade"], r["judge_pass"], want)
		}
	}
	// n = 5, k = 4: compile c = 3, judge c = 2. Compile: n-c = 2 < 4, so 1.
	// Judge: n-c = 3 < 4, so 1. pass@1 by hand: 3/5 and 2/5.
	if rep.K != 4 || rep.Overall["compile_pass@4"] != 1 || rep.Overall["judge_pass@4"] != 1 {
		t.Errorf("report k=4: %+v", rep)
	}
	rep1, err := WriteReport(out2, 5, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c, j := rep1.Overall["compile_pass@1"], rep1.Overall["judge_pass@1"]; math.Abs(c-0.6) > 1e-12 || math.Abs(j-0.4) > 1e-12 || math.Abs(rep1.Overall["compile_judge_gap"]-0.2) > 1e-12 {
		t.Errorf("pass@1 = %v, %v, gap %v; want 0.6, 0.4, 0.2", c, j, rep1.Overall["compile_judge_gap"])
	}
	// semantic_drop is the percentage of compile_pass the judge takes away:
	// (0.6 - 0.4) / 0.6 × 100.
	if d := rep1.Overall["semantic_drop"]; math.Abs(d-100.0/3) > 1e-9 {
		t.Errorf("semantic_drop = %v, want 33.33 (percent)", d)
	}
	// k = 2: compile 1 - C(2,2)/C(5,2) = 0.9; judge 1 - C(3,2)/C(5,2) = 0.7.
	rep2, _ := WriteReport(out2, 5, 2, 0)
	if c, j := rep2.Overall["compile_pass@2"], rep2.Overall["judge_pass@2"]; math.Abs(c-0.9) > 1e-12 || math.Abs(j-0.7) > 1e-12 {
		t.Errorf("pass@2 = %v, %v, want 0.9, 0.7", c, j)
	}
}
