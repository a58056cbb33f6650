package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchbench/patchbench/bench/ape"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
)

// apeFixture makes a two-commit Go repository (tags c1, c2: c2 adds Sub to
// calc.go) and a dataset of n tasks on it whose instructions differ, so
// that the fake server tells their conversations apart.
func apeFixture(t *testing.T, n int) (repo, dataset string, gold ape.Task) {
	t.Helper()
	repo = t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("go.mod", "module example.com/calc\n\ngo 1.21\n")
	write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	git("add", ".")
	git("commit", "-qm", "initial")
	git("tag", "c1")
	write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n")
	git("commit", "-qam", "add Sub")
	git("tag", "c2")
	tasks, _, err := ape.Build(t.Context(), repo, "c1..c2", ape.BuildOptions{})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("build: %d tasks, %v", len(tasks), err)
	}
	gold = tasks[0]
	var all []ape.Task
	for i := range n {
		tk := gold
		tk.ID = fmt.Sprintf("t%02d", i)
		tk.Instruction = fmt.Sprintf("add Sub (task %d)", i)
		all = append(all, tk)
	}
	dataset = filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := ape.WriteTasks(dataset, all); err != nil {
		t.Fatal(err)
	}
	return repo, dataset, gold
}

// apeReply answers candidate requests with the gold patch and judge
// requests with an Excellent grade.
func apeReply(gold ape.Task) func(string, string, []llm.Message) string {
	return func(_, _ string, msgs []llm.Message) string {
		if strings.HasPrefix(msgs[len(msgs)-1].Content, "# Code evaluation request") {
			return "It adds Sub.\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Excellent\"}}\n```\n"
		}
		return "```diff\n" + gold.GoldDiff + "```\n"
	}
}

// TestApeResumeAfterSIGKILL kills a real ape run mid-run and resumes it:
// the candidates recorded before the kill are neither generated, compiled
// nor judged again (each candidate is one case: its generation, compile and
// judge votes happen together and its row is written after them, so a
// finished candidate sends no request on resume), and every candidate ends
// with exactly one row.
func TestApeResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin, err := exec.LookPath("patchbench") // the test binary, set up by TestMain
	if err != nil {
		t.Skip("patchbench is not in PATH")
	}
	const tasks, votes = 12, 2
	repo, dataset, gold := apeFixture(t, tasks)
	srv := llmtest.NewServer(llmtest.Config{Latency: 100 * time.Millisecond, Reply: apeReply(gold)})
	defer srv.Close()
	out := t.TempDir()
	results := filepath.Join(out, ape.ResultsFile)
	args := []string{"ape", "run", "--dataset", dataset, "--repo", repo, "--model", "openai/gpt-test", "--judge-model", "openai/judge-test",
		"--base-url", srv.OpenAIBaseURL(), "--n", "1", "--judge-n", fmt.Sprint(votes), "--check-cmd", "true",
		"--workers", "2", "--out", out, "--cache", "off", "--quiet"}

	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(results)
		if bytes.Count(b, []byte("\n")) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no 3 rows after 60s: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	done := map[string]bool{}
	for _, r := range readResults(t, results) {
		done[r["task"].(string)] = true
	}
	if len(done) >= tasks {
		t.Fatalf("the run finished (%d rows) before it was killed", len(done))
	}
	srv.ResetCounts()

	cmd = exec.Command(bin, append(args, "--resume")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	for _, c := range srv.Calls() {
		for id := range done {
			n := strings.TrimPrefix(id, "t")
			if strings.Contains(c.Messages[len(c.Messages)-1].Content, "(task "+strings.TrimPrefix(n, "0")+")") {
				t.Errorf("task %s, finished before the kill, was asked again (%s)", id, c.Model)
			}
		}
	}
	// One candidate request and `votes` judge requests per remaining task.
	if got, want := srv.Requests(), (tasks-len(done))*(1+votes); got != want {
		t.Errorf("resume sent %d requests, want %d (%d of %d tasks were done)", got, want, len(done), tasks)
	}
	rows := readResults(t, results)
	keys := map[string]int{}
	for _, r := range rows {
		keys[r["key"].(string)]++
		if r["judge_pass"] != true {
			t.Errorf("%s did not pass: %v", r["key"], r)
		}
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("%s: %d rows", k, n)
		}
	}
	if len(keys) != tasks {
		t.Errorf("%d candidates recorded, want %d", len(keys), tasks)
	}
}

// TestApeJudgeRefusesARunStillRunning: ape judge --from a run another
// process still writes judged the candidates written so far (none) and
// exited 0; it is refused (exit 2, naming the holder), nothing made.
func TestApeJudgeRefusesARunStillRunning(t *testing.T) {
	repo, dataset, _ := apeFixture(t, 1)
	from := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "", "ape", "run", "--dataset", dataset, "--repo", repo, "--model", "reference", "--n", "1", "--out", from, "--quiet"); code != 0 {
		t.Fatalf("ape run: exit %d: %s", code, stderr)
	}
	held, err := runner.OpenDir(from, runner.DirOptions{Command: "patchbench ape run", ResultsFile: ape.ResultsFile, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "ape", "judge", "--from", from, "--judge-model", "reference", "--quiet")
	if code != 2 || !strings.Contains(stderr, "--from "+from+" is in use by pid") || !strings.Contains(stderr, "judge it when its run has ended") {
		t.Errorf("judge of a held run: exit %d, stderr %q; want 2 naming the holder", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(from, "judge-reference")); !os.IsNotExist(err) {
		t.Errorf("a refused judge made its directory: %v", err)
	}
	held.Release()
	if code, _, stderr := runCLI(t, "", "ape", "judge", "--from", from, "--judge-model", "reference", "--quiet"); code != 0 {
		t.Errorf("judge after the run ended: exit %d: %s", code, stderr)
	}
}
