package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/internal/cli"
	"github.com/patchbench/patchbench/runner"
)

// TestShardProcess is not a test: with PATCHBENCH_SHARD_PROCESS set it is
// patchbench-full, run as a process of its own by runShardProcess.
func TestShardProcess(t *testing.T) {
	if os.Getenv("PATCHBENCH_SHARD_PROCESS") == "" {
		t.Skip("helper process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, cli.OSStdio()))
}

// runShardProcess runs patchbench args as a separate process with
// JOB_COMPLETION_INDEX set to index (none when index < 0), as a pod of an
// Indexed Job would.
func runShardProcess(t *testing.T, index int, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestShardProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "PATCHBENCH_SHARD_PROCESS=1")
	if index >= 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", runner.IndexEnv, index))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("patchbench %s (index %d): %v\n%s", strings.Join(args, " "), index, err, stderr.String())
	}
}

// shardArgs is the command of one shard: the run's command with
// --shard env/N and the shard's own directory under root, as the k8s job
// manifest writes it.
func shardArgs(run []string, n int, root string) []string {
	return append(append([]string(nil), run...), "--shard", fmt.Sprintf("env/%d", n), "--out", filepath.Join(root, "shard-$(JOB_COMPLETION_INDEX)"))
}

// checkShardsMerge runs the command unsharded and as n = 1, 3 and 7 shards
// (separate processes), merges each set, and compares report.json byte for
// byte and the cases of results.jsonl.
func checkShardsMerge(t *testing.T, cmdline []string, results string) {
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	runShardProcess(t, -1, append(cmdline, "--out", single)...)
	wantReport := maskLatency(readFile(t, filepath.Join(single, "report.json")))
	wantRows, err := runner.ReadRows(filepath.Join(single, results))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7} {
		root := filepath.Join(dir, fmt.Sprint(n))
		var dirs []string
		for i := range n {
			args := shardArgs(cmdline, n, root)
			// The shell of the pod expands $(JOB_COMPLETION_INDEX); here the
			// test does.
			args[len(args)-1] = strings.ReplaceAll(args[len(args)-1], "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i))
			runShardProcess(t, i, args...)
			dirs = append(dirs, args[len(args)-1])
		}
		merged := filepath.Join(root, "merged")
		if code, _, stderr := runCLI(t, "", append([]string{"merge", "--out", merged}, dirs...)...); code != 0 {
			t.Fatalf("n=%d: merge: exit %d: %s", n, code, stderr)
		}
		if got := maskLatency(readFile(t, filepath.Join(merged, "report.json"))); got != wantReport {
			t.Errorf("n=%d: merged report.json differs from the single run's:\n%s\nwant:\n%s", n, got, wantReport)
		}
		rows, err := runner.ReadRows(filepath.Join(merged, results))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(readFile(t, filepath.Join(merged, results)), "\n")
		if len(rows) != len(wantRows) || lines != len(wantRows) {
			t.Errorf("n=%d: merged %d cases in %d lines, single run %d", n, len(rows), lines, len(wantRows))
		}
		want := map[string]bool{}
		for _, r := range wantRows {
			want[r["key"].(string)] = true
		}
		for _, r := range rows {
			if !want[r["key"].(string)] {
				t.Errorf("n=%d: case %v not in the single run", n, r["key"])
			}
		}
		if n == 3 {
			checkMergeRefusals(t, root, dirs)
		}
	}
}

// checkMergeRefusals: a missing shard, shards of different runs and a case
// with different rows are refused with exit 2, naming the problem, and
// nothing is written.
func checkMergeRefusals(t *testing.T, root string, dirs []string) {
	t.Helper()
	out := filepath.Join(root, "refused")
	expect := func(name, want string, dirs ...string) {
		t.Helper()
		code, _, stderr := runCLI(t, "", append([]string{"merge", "--out", out}, dirs...)...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", name, code, stderr, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s written", name, out)
		}
		if ents, _ := filepath.Glob(filepath.Join(root, ".merge-*")); len(ents) > 0 {
			t.Errorf("%s: left %v", name, ents)
		}
	}
	expect("missing shard", "missing shard 2/3", dirs[0], dirs[2])
	// Another run: a copy of shard 2 whose run.json names another dataset.
	other := filepath.Join(root, "other")
	copyDir(t, dirs[1], other)
	info := readFile(t, filepath.Join(other, "run.json"))
	writeFile(t, filepath.Join(other, "run.json"), strings.Replace(info, `"dataset": "`, `"dataset": "/elsewhere`, 1))
	expect("other run", "differ in dataset", dirs[0], other, dirs[2])
	// A case of shard 2 with a different row, given twice.
	twin := filepath.Join(root, "twin")
	copyDir(t, dirs[1], twin)
	res := readFile(t, filepath.Join(twin, "results.jsonl"))
	first := res[:strings.Index(res, "\n")+1]
	var key string
	fmt.Sscanf(first[strings.Index(first, `"key":`)+len(`"key":`):], "%q", &key)
	writeFile(t, filepath.Join(twin, "results.jsonl"), strings.Replace(first, `"elapsed_ms":`, `"elapsed_ms":1`, 1)+res[len(first):])
	expect("shard given twice", "shard 2/3 given twice", dirs[0], dirs[1], twin, dirs[2])
}

// latencyValue matches the mean of latency_ms in report.json.
var latencyValue = regexp.MustCompile(`("latency_ms": \{\s*"value": )[0-9.e+-]+`)

// maskLatency zeroes the means of latency_ms: the wall time of each model
// call, which two runs of the same cases measure differently (0 or 1 ms
// for the reference model) whether or not they are sharded. Everything
// else must be byte-equal.
func maskLatency(report string) string {
	return latencyValue.ReplaceAllString(report, "${1}0")
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

func TestDiffxyzShardsMerge(t *testing.T) {
	sample, err := filepath.Abs("../../testdata/diffxyz-sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkShardsMerge(t, []string{"diffxyz", "run", "--dataset", sample, "--model", "reference", "--quiet", "--workers", "2"}, "results.jsonl")
}

func TestSWEShardsMerge(t *testing.T) {
	f := swetest.Build(t, t.TempDir())
	checkShardsMerge(t, []string{"swe", "eval", "--no-tests", "--dataset", f.Dataset, "--predictions", f.Predictions,
		"--repos", f.Repos, "--run-id", "shards"}, "results.jsonl")
}
