package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
)

const sampleDataset = "../../testdata/diffxyz-sample.jsonl"

// readResults returns the rows of a results file, in file order.
func readResults(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// The README's offline job: the reference model on the shipped sample
// scores 1 everywhere, in the paper's four formats (v4a only when asked
// for) and with no table pooled over tasks and formats; score recomputes
// the same; report shows it.
func TestDiffxyzSampleReference(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sample")
	code, stdout, stderr := runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "search-replace") || strings.Contains(stdout, "v4a") || strings.Contains(stdout, "\nall ") || !strings.Contains(stderr, "288 rows") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	rows := readResults(t, filepath.Join(out, "results.jsonl"))
	if len(rows) != 24*3*4 {
		t.Fatalf("%d rows, want %d", len(rows), 24*3*4)
	}
	langs, sizes := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		langs[r["lang"].(string)], sizes[r["size_class"].(string)] = true, true
		if r["em"] != 1.0 || r["failed"] != false {
			t.Errorf("%s: em %v failed %v", r["key"], r["em"], r["failed"])
		}
		if r["task"] == "diffgen" && (r["parsed"] != true || r["applied"] != true) {
			t.Errorf("%s: parsed %v applied %v", r["key"], r["parsed"], r["applied"])
		}
		for _, f := range []string{"id", "task", "format", "prompt", "model", "response", "iou", "latency_ms", "tokens", "cost"} {
			if _, ok := r[f]; !ok {
				t.Errorf("%s: no %s field", r["key"], f)
			}
		}
	}
	if len(langs) != 6 || len(sizes) != 3 {
		t.Errorf("the sample covers languages %v and sizes %v", langs, sizes)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Diff-XYZ: reference", "| diffgen | search-replace | with-format | 24 | 1.000 | 1.000 | 100.0% | 100.0% |",
		"| apply | udiff-l | with-format | kotlin |", "| diffgen | udiff | with-format | large |", "**f1_minus**"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if bytes.Contains(md, []byte("| all |")) || bytes.Contains(md, []byte("| v4a |")) {
		t.Errorf("report.md pools rows or has v4a:\n%s", md)
	}

	// score --from recomputes every row to the same file.
	before, _ := os.ReadFile(filepath.Join(out, "results.jsonl"))
	code, _, stderr = runCLI(t, "", "diffxyz", "score", "--from", out)
	if code != 0 || !strings.Contains(stderr, "rescored 288 of 288 rows (0 changed)") {
		t.Errorf("score: exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if !bytes.Equal(before, after) {
		t.Error("score changed results.jsonl")
	}

	// A second run into the same directory is refused; --resume has
	// nothing left to do; --force starts over.
	code, _, stderr = runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", out)
	if code != 2 || !strings.Contains(stderr, "--resume") {
		t.Errorf("second run: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", out, "--resume")
	if code != 0 || !strings.Contains(stderr, "0 cases run (0 failed, 288 skipped as done)") {
		t.Errorf("resume: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", out, "--force", "--task", "apply", "--format", "v4a", "--prompt", "all")
	if code != 0 || len(readResults(t, filepath.Join(out, "results.jsonl"))) != 48 {
		t.Errorf("force: exit %d: %s", code, stderr)
	}

	// report: one run, and two side by side.
	code, stdout, stderr = runCLI(t, "", "report", out)
	if code != 0 || !strings.Contains(stdout, "By task, format, prompt and size class") || !strings.Contains(stdout, "without-format") {
		t.Errorf("report: exit %d: %s\n%s", code, stderr, stdout)
	}
	other := filepath.Join(t.TempDir(), "other")
	if code, _, stderr := runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", other, "--task", "apply", "--format", "v4a,udiff"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "report", out, other)
	if code != 0 || !strings.Contains(stdout, "sample") || !strings.Contains(stdout, "Δ") || !strings.Contains(stdout, "em (mean)") {
		t.Errorf("report of two runs: exit %d: %s\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runCLI(t, "", "report", "--markdown", out, other)
	if code != 0 || !strings.Contains(stdout, "# By task, format, prompt and language") || !strings.Contains(stdout, "| apply | v4a | with-format |") {
		t.Errorf("report --markdown: exit %d:\n%s", code, stdout)
	}
	if code, _, stderr := runCLI(t, "", "report", t.TempDir()); code != 2 || !strings.Contains(stderr, "report.json") {
		t.Errorf("report of a directory without a report: exit %d: %s", code, stderr)
	}
}

func TestDiffxyzUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"diffxyz", "run", "--model", "reference", "--out", dir}, "--dataset is required"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--out", dir}, "--model is required"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference"}, "--out is required"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", dir, "--task", "fly"}, `unknown task "fly"`},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", dir, "--format", "rtf"}, "rtf"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", dir, "--prompt", "chatty"}, `unknown prompt variant "chatty"`},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "gemini/x", "--out", dir}, `unknown provider "gemini"`},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "openai/", "--out", dir}, "names no model"},
		{[]string{"diffxyz", "run", "--dataset", "nope.jsonl", "--model", "reference", "--out", dir}, "nope.jsonl"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", dir, "--retry-failed"}, "needs --resume"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", dir, "--shard", "3/2"}, "--shard"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--out", dir, "--env-file", "missing.env"}, "missing.env"},
		{[]string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "replay/missing.jsonl", "--out", dir}, "missing.jsonl"},
		{[]string{"diffxyz", "score"}, "--from is required"},
		{[]string{"diffxyz", "score", "--from", dir}, "run.json"},
		{[]string{"diffxyz", "build", "--n", "3"}, "--repo is required"},
		{[]string{"diffxyz", "prompts"}, "--write DIR or --dataset"},
		{[]string{"diffxyz"}, "subcommand"},
		{[]string{"report"}, "give at least one run directory"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) || !strings.HasPrefix(stderr, "patchbench: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// A run with failed cases exits 1 and says how to retry them; the retry
// completes the run.
func TestDiffxyzFailedCasesExit1(t *testing.T) {
	dir := t.TempDir()
	replay := filepath.Join(dir, "replay.jsonl")
	// Answers for one row only: every other case fails.
	first := readResults(t, sampleDataset)[0]
	row, _ := json.Marshal(llm.ReplayRow{ID: first["id"].(string), Response: "```\n" + first["new_code"].(string) + "```\n"})
	os.WriteFile(replay, append(row, '\n'), 0o644)
	out := filepath.Join(dir, "run")
	code, _, stderr := runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "replay/"+replay, "--out", out, "--task", "apply", "--format", "udiff", "--quiet")
	if code != 1 || !strings.Contains(stderr, "23 of 24 cases failed") || !strings.Contains(stderr, "--retry-failed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := readResults(t, filepath.Join(out, "results.jsonl"))
	if len(rows) != 24 {
		t.Errorf("%d rows, want 24", len(rows))
	}
	for _, r := range rows {
		if r["id"] == first["id"] {
			if r["em"] != 1.0 {
				t.Errorf("answered row: %v", r)
			}
		} else if r["failed"] != true || !strings.Contains(r["error"].(string), "no row for id") || r["em"] != nil {
			t.Errorf("unanswered row: %v", r)
		}
	}
	// Recorded answers for every row: the failed cases run again.
	var all bytes.Buffer
	for _, r := range readResults(t, sampleDataset) {
		b, _ := json.Marshal(llm.ReplayRow{ID: r["id"].(string), Response: "```\n" + r["new_code"].(string) + "```\n"})
		all.Write(append(b, '\n'))
	}
	os.WriteFile(replay, all.Bytes(), 0o644)
	code, _, stderr = runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "replay/"+replay, "--out", out, "--task", "apply", "--format", "udiff", "--resume", "--retry-failed", "--quiet")
	if code != 0 || !strings.Contains(stderr, "23 cases run (0 failed, 1 skipped as done); 24 rows") {
		t.Errorf("retry: exit %d: %s", code, stderr)
	}
}

// API keys come from a .env file and are never printed or written, even
// when a server echoes them back.
func TestDiffxyzKeysNeverWritten(t *testing.T) {
	const secret = "sk-test-SECRET-7f3a9c"
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(k, "")
		os.Unsetenv(k) // LoadDotEnv sets only unset variables; t.Setenv restores them
	}
	srv := llmtest.NewServer(llmtest.Config{APIKey: "the-right-key", EchoAuth: true})
	defer srv.Close()
	dir := t.TempDir()
	env := filepath.Join(dir, "keys.env")
	os.WriteFile(env, []byte("OPENAI_API_KEY="+secret+"\n"), 0o600)
	out := filepath.Join(dir, "run")
	code, stdout, stderr := runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "openai/gpt-test", "--base-url", srv.OpenAIBaseURL(),
		"--env-file", env, "--out", out, "--task", "apply", "--format", "udiff", "--limit", "2", "--attempts", "1")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the key is refused): %s", code, stderr)
	}
	if srv.Requests() == 0 {
		t.Fatal("no request reached the server")
	}
	leaks := stdout + stderr
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			leaks += string(b)
		}
		return nil
	})
	if strings.Contains(leaks, secret) || strings.Contains(leaks, "SECRET") {
		t.Errorf("the API key was printed or written")
	}
	rows := readResults(t, filepath.Join(out, "results.jsonl"))
	if len(rows) != 2 || !strings.Contains(fmt.Sprint(rows[0]["error"]), "401") {
		t.Errorf("rows %v", rows)
	}
}

// A run killed with SIGKILL mid-way and started again with --resume
// finishes without asking any finished case again.
func TestDiffxyzResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin, err := exec.LookPath("patchbench") // the test binary, set up by TestMain
	if err != nil {
		t.Skip("patchbench is not in PATH")
	}
	srv := llmtest.NewServer(llmtest.Config{Latency: 100 * time.Millisecond})
	defer srv.Close()
	out := t.TempDir()
	results := filepath.Join(out, "results.jsonl")
	args := []string{"diffxyz", "run", "--dataset", sampleDataset, "--model", "openai/gpt-test", "--base-url", srv.OpenAIBaseURL(),
		"--task", "apply,anti-apply", "--format", "udiff,v4a", "--workers", "4", "--out", out, "--cache", "off", "--quiet"}
	const total = 24 * 2 * 2

	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(results)
		if bytes.Count(b, []byte("\n")) >= 10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no 10 rows after 30s: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	first := readFinished(t, results)
	if len(first) >= total {
		t.Fatalf("the run finished (%d rows) before it was killed", len(first))
	}
	srv.ResetCounts()

	cmd = exec.Command(bin, append(args, "--resume")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	for _, c := range srv.Calls() {
		if first["echo: "+c.Messages[len(c.Messages)-1].Content] {
			t.Errorf("a case finished before the kill was asked again")
		}
	}
	if got := srv.Requests(); got != total-len(first) {
		t.Errorf("resume sent %d requests, want %d (%d of %d were done)", got, total-len(first), len(first), total)
	}
	keys := map[string]int{}
	for _, r := range readResults(t, results) {
		keys[r["key"].(string)]++
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("%s: %d rows", k, n)
		}
	}
	if len(keys) != total {
		t.Errorf("%d cases recorded, want %d", len(keys), total)
	}
}

// readFinished returns the responses of the whole rows of a results file
// (a killed run may leave a last line cut short).
func readFinished(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		var r struct{ Response string }
		if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &r) != nil {
			continue
		}
		out[r.Response] = true
	}
	return out
}

// benchDataset writes n rows of 60-line files, each with a different edit.
func benchDataset(b *testing.B, n int) string {
	b.Helper()
	var buf bytes.Buffer
	for i := range n {
		var old, nw strings.Builder
		for j := range 60 {
			fmt.Fprintf(&old, "value_%d = compute(%d, %d)\n", j, i, j)
			if j == i%60 || j == (i*7+3)%60 {
				fmt.Fprintf(&nw, "value_%d = compute(%d, %d) + 1\n", j, i, j)
			} else {
				fmt.Fprintf(&nw, "value_%d = compute(%d, %d)\n", j, i, j)
			}
		}
		row, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("bench%04d", i), "path": "m.py", "lang": "python", "old_code": old.String(), "new_code": nw.String()})
		buf.Write(append(row, '\n'))
	}
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// The benchmark, through the CLI: a fake OpenAI server answering
// after 200 ms, 1000 cases (100 rows × apply, anti-apply × 5 formats), 64
// workers. The ideal wall time is 1000 × 0.2 s / 64 = 3.125 s; the target
// is at most 1.3× that. Then the same 1000 cases again into another
// directory, answered from the first run's cache: the target is at most
// 2 s, with zero requests. Both times include loading the dataset, making
// the format columns, rendering prompts, scoring and writing the report.
//
//	go test ./cmd/patchbench -run '^$' -bench DiffxyzFakeServer -benchtime 1x
func BenchmarkDiffxyzFakeServer(b *testing.B) {
	const (
		cases   = 1000
		workers = 64
		latency = 200 * time.Millisecond
	)
	ideal := time.Duration(cases) * latency / workers
	srv := llmtest.NewServer(llmtest.Config{Latency: latency, Reply: func(model, system string, msgs []llm.Message) string {
		return "```\nvalue_0 = compute(0, 0)\n```\n"
	}})
	defer srv.Close()
	data := benchDataset(b, cases/10)
	var wall, cached time.Duration
	for range b.N {
		srv.ResetCounts()
		out, out2 := filepath.Join(b.TempDir(), "run"), filepath.Join(b.TempDir(), "rerun")
		args := []string{"diffxyz", "run", "--dataset", data, "--model", "openai/bench", "--base-url", srv.OpenAIBaseURL(),
			"--task", "apply,anti-apply", "--workers", fmt.Sprint(workers), "--quiet"}
		start := time.Now()
		if code, _, stderr := runCLI(b, "", append(args, "--out", out)...); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
		wall += time.Since(start)
		if got := srv.Requests(); got != cases {
			b.Fatalf("server saw %d requests, want %d", got, cases)
		}
		srv.ResetCounts()
		start = time.Now()
		if code, _, stderr := runCLI(b, "", append(args, "--out", out2, "--cache", filepath.Join(out, "cache.db"))...); code != 0 {
			b.Fatalf("cached rerun: exit %d: %s", code, stderr)
		}
		cached += time.Since(start)
		if got := srv.Requests(); got != 0 {
			b.Fatalf("cached rerun: server saw %d requests, want 0", got)
		}
	}
	wall /= time.Duration(b.N)
	cached /= time.Duration(b.N)
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(ideal.Seconds(), "ideal-s")
	b.ReportMetric(float64(wall)/float64(ideal), "x-ideal")
	b.ReportMetric(cached.Seconds(), "cached-s")
}

// TestScoreRefusesARunStillRunning: diffxyz score --from a run another
// process still writes, into another --out, would report part of the run
// as the whole; it is refused (exit 2, naming the holder), nothing made.
func TestScoreRefusesARunStillRunning(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--task", "apply", "--format", "udiff", "--out", from, "--quiet"); code != 0 {
		t.Fatalf("diffxyz run: exit %d: %s", code, stderr)
	}
	held, err := runner.OpenDir(from, runner.DirOptions{Command: "patchbench diffxyz run", ResultsFile: "results.jsonl", Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "scored")
	code, _, stderr := runCLI(t, "", "diffxyz", "score", "--from", from, "--out", out)
	if code != 2 || !strings.Contains(stderr, "--from "+from+" is in use by pid") || !strings.Contains(stderr, "rescore it when its run has ended") {
		t.Errorf("score of a held run: exit %d, stderr %q; want 2 naming the holder", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused score made %s: %v", out, err)
	}
	held.Release()
	if code, _, stderr := runCLI(t, "", "diffxyz", "score", "--from", from, "--out", out); code != 0 {
		t.Errorf("score after the run ended: exit %d: %s", code, stderr)
	}
}
