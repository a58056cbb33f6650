package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
)

// TestApeKilledRunResumes kills `ape run` (SIGKILL, as a lost node does)
// after some candidates are recorded, resumes it, and checks that nothing
// recorded is generated, compiled or judged again: the resumed run asks
// the model only for the candidates left, and the recorded rows are kept
// byte for byte.
func TestApeKilledRunResumes(t *testing.T) {
	dir := t.TempDir()
	repoDir, tasks := apeTasks(t, dir)
	// Every candidate applies and compiles (a comment after the package
	// line); the judge grades it Good. Each answer takes 150 ms.
	srv := llmtest.NewServer(llmtest.Config{Latency: 150 * time.Millisecond, Reply: func(_, _ string, msgs []llm.Message) string {
		if strings.HasPrefix(msgs[len(msgs)-1].Content, "# Code evaluation request") {
			return "Fine.\nError category: none\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}}\n```\n"
		}
		return "<<<<<<< SEARCH\npackage calc\n=======\npackage calc\n\n// edited\n>>>>>>> REPLACE\n"
	}})
	defer srv.Close()
	out := filepath.Join(dir, "run")
	args := []string{"ape", "run", "--dataset", tasks, "--repo", repoDir, "--model", "openai/fake", "--judge-model", "openai/fake",
		"--base-url", srv.OpenAIBaseURL(), "--cache", "off", "--n", "3", "--judge-n", "1", "--workers", "1", "--out", out, "--quiet"}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestShardProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "PATCHBENCH_SHARD_PROCESS=1", "OPENAI_API_KEY=k")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(out, "results.jsonl")
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, _ := runner.ReadRows(results)
		if len(rows) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no 3 rows after 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	before, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := runner.ReadRows(results)
	if err != nil {
		t.Fatal(err)
	}
	asked := srv.Requests()
	if len(kept) >= 9 {
		t.Fatalf("the run finished before it was killed (%d rows)", len(kept))
	}
	runShardProcess(t, -1, append(append([]string(nil), args...), "--resume")...)
	after, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	// The rows recorded before the kill are untouched (a last line cut
	// short by the kill is dropped and done again).
	whole := string(before[:strings.LastIndex(string(before), "\n")+1])
	if !strings.HasPrefix(string(after), whole) {
		t.Errorf("the rows recorded before the kill changed")
	}
	rows, err := runner.ReadRows(results)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d candidates after resuming, want 9", len(rows))
	}
	for _, r := range rows {
		if r["compile_pass"] != true || r["judge_pass"] != true {
			t.Errorf("candidate %v: compile %v, judge %v", r["key"], r["compile_pass"], r["judge_pass"])
		}
	}
	// Two requests (generate, one judge vote) per candidate left.
	if got, want := srv.Requests()-asked, 2*(9-len(kept)); got != want {
		t.Errorf("the resumed run asked %d requests, want %d for the %d candidates left", got, want, 9-len(kept))
	}
}
