package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/internal/gittest"
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

// k8sJobs prints the shard Job and the merge Job of the run cmdline in n
// shards with results under root (--results-dir), decodes both strictly into
// batch/v1 Jobs and checks the fields that matter.
func k8sJobs(t *testing.T, cmdline []string, n int, root string) (shards, merge batchv1.Job) {
	t.Helper()
	flags := []string{"k8s", "job", "--shards", fmt.Sprint(n), "--parallelism", "2", "--image", "registry.example/patchbench:test",
		"--results-dir", root, "--secret", "model-keys", "--job-name", "run"}
	for i, j := range []*batchv1.Job{&shards, &merge} {
		args := append(append([]string(nil), flags...), cmdline...)
		if i == 1 {
			args = append(append([]string(nil), flags...), append([]string{"--merge"}, cmdline...)...)
		}
		code, out, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("k8s job: exit %d: %s", code, stderr)
		}
		if err := yaml.UnmarshalStrict([]byte(out), j); err != nil {
			t.Fatalf("k8s job: the manifest does not decode strictly into a batch/v1 Job: %v\n%s", err, out)
		}
		if j.APIVersion != "batch/v1" || j.Kind != "Job" || len(j.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("k8s job: %s %s with %d containers", j.APIVersion, j.Kind, len(j.Spec.Template.Spec.Containers))
		}
		c := j.Spec.Template.Spec.Containers[0]
		vols := j.Spec.Template.Spec.Volumes
		if c.Image != "registry.example/patchbench:test" || len(c.Command) != 1 || c.Command[0] != "patchbench" ||
			len(vols) != 1 || vols[0].HostPath == nil || vols[0].HostPath.Path != root ||
			len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != root || c.VolumeMounts[0].Name != vols[0].Name ||
			j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("k8s job: container or volume not as asked:\n%s", out)
		}
		if strings.Contains(out, "OPENAI_API_KEY=") {
			t.Errorf("k8s job: a credential in the manifest")
		}
	}
	sp := shards.Spec
	if sp.CompletionMode == nil || *sp.CompletionMode != batchv1.IndexedCompletion || sp.Completions == nil || int(*sp.Completions) != n ||
		sp.Parallelism == nil || int(*sp.Parallelism) != min(2, n) || sp.BackoffLimitPerIndex == nil {
		t.Errorf("k8s job: spec %+v", sp)
	}
	c := sp.Template.Spec.Containers[0]
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "model-keys" {
		t.Errorf("k8s job: the Secret is not referenced: %+v", c.EnvFrom)
	}
	if len(c.Env) != 1 || c.Env[0].Name != runner.IndexEnv || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil {
		t.Errorf("k8s job: %s not declared from the completion index: %+v", runner.IndexEnv, c.Env)
	}
	if merge.Spec.CompletionMode != nil || merge.Spec.Completions == nil || *merge.Spec.Completions != 1 ||
		len(merge.Spec.Template.Spec.Containers[0].EnvFrom) != 0 {
		t.Errorf("k8s job: merge Job spec %+v", merge.Spec)
	}
	return shards, merge
}

// podArgs is the command line of the pod with completion index i: the
// kubelet expands $(JOB_COMPLETION_INDEX) from the container's environment.
func podArgs(j batchv1.Job, i int) []string {
	var out []string
	for _, a := range j.Spec.Template.Spec.Containers[0].Args {
		out = append(out, strings.ReplaceAll(a, "$("+runner.IndexEnv+")", fmt.Sprint(i)))
	}
	return out
}

// checkShardsMerge runs the command unsharded, then as n = 1, 3 and 7
// latencyField is a wall-clock figure of a report (loc's avg_latency_ms
// and avg_latency_s, relace's mean time per case): two runs never
// measure the same.
var latencyField = regexp.MustCompile(`"(avg_latency_ms|avg_latency_s)": [0-9.e+-]+`)

// withoutLatency blanks report's wall-clock figures, so that the rest is
// compared byte for byte.
func withoutLatency(report string) string {
	return latencyField.ReplaceAllString(report, `"$1": T`)
}

// shards exactly as the pods of the k8s job manifest would (separate
// processes, JOB_COMPLETION_INDEX set, the manifest's arguments), merges
// each set with the merge Job's command, and compares report.json byte for
// byte and the cases of results.jsonl.
func checkShardsMerge(t *testing.T, cmdline []string, results string) {
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	runShardProcess(t, -1, append(cmdline, "--out", single)...)
	wantReport := withoutLatency(readFile(t, filepath.Join(single, "report.json")))
	wantRows, err := runner.ReadRows(filepath.Join(single, results))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7} {
		root := filepath.Join(dir, fmt.Sprint(n))
		job, mergeJob := k8sJobs(t, cmdline, n, root)
		var dirs []string
		for i := range n {
			args := podArgs(job, i)
			runShardProcess(t, i, args...)
			dirs = append(dirs, args[len(args)-1])
		}
		margs := podArgs(mergeJob, 0)
		if want := append([]string{"merge", "--out", filepath.Join(root, "run", "merged")}, dirs...); strings.Join(margs, " ") != strings.Join(want, " ") {
			t.Fatalf("n=%d: merge Job runs %q, want %q", n, margs, want)
		}
		merged := margs[2]
		if code, _, stderr := runCLI(t, "", margs...); code != 0 {
			t.Fatalf("n=%d: merge: exit %d: %s", n, code, stderr)
		}
		if got := withoutLatency(readFile(t, filepath.Join(merged, "report.json"))); got != wantReport {
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
	if !strings.Contains(info, `"dataset_sha256": "`) {
		t.Fatalf("%s/run.json records no dataset_sha256:\n%s", other, info)
	}
	writeFile(t, filepath.Join(other, "run.json"), strings.Replace(info, `"dataset_sha256": "`, `"dataset_sha256": "0`, 1))
	expect("other run", "differ in dataset_sha256", dirs[0], other, dirs[2])
	// The same dataset at another path (another machine's shard) merges,
	// as a resume from there would go on.
	moved := filepath.Join(root, "moved")
	copyDir(t, dirs[1], moved)
	writeFile(t, filepath.Join(moved, "run.json"), strings.Replace(info, `"dataset": "`, `"dataset": "/elsewhere`, 1))
	if code, _, stderr := runCLI(t, "", "merge", "--out", filepath.Join(root, "merged-moved"), dirs[0], moved, dirs[2]); code != 0 {
		t.Errorf("merge of a shard whose dataset lay elsewhere: exit %d: %s", code, stderr)
	}
	// A shard given twice.
	twin := filepath.Join(root, "twin")
	copyDir(t, dirs[1], twin)
	expect("shard given twice", "shard 2/3 given twice", dirs[0], dirs[1], twin, dirs[2])
	// Overlapping shards: a case of one shard in another's results. (A
	// case belongs to one shard by its key, so two rows of one case can
	// only meet this way or as a shard given twice.)
	from := -1
	for i, d := range dirs {
		if strings.TrimSpace(readFile(t, filepath.Join(d, "results.jsonl"))) != "" {
			from = i
			break
		}
	}
	if from < 0 {
		t.Fatalf("every shard is empty")
	}
	to := (from + 1) % len(dirs)
	stray := filepath.Join(root, "stray")
	copyDir(t, dirs[to], stray)
	res := readFile(t, filepath.Join(dirs[from], "results.jsonl"))
	writeFile(t, filepath.Join(stray, "results.jsonl"), readFile(t, filepath.Join(stray, "results.jsonl"))+res[:strings.Index(res, "\n")+1])
	overlapping := slices.Clone(dirs)
	overlapping[to] = stray
	expect("overlapping shards", fmt.Sprintf("does not belong to shard %d/%d", to+1, len(dirs)), overlapping...)
	// A shard whose run was killed before its end: its last row missing.
	// It is not held (the kernel dropped the lock), and looks like a run.
	cut := filepath.Join(root, "cut")
	copyDir(t, dirs[from], cut)
	lines := strings.SplitAfter(strings.TrimSuffix(res, "\n"), "\n")
	writeFile(t, filepath.Join(cut, "results.jsonl"), strings.Join(lines[:len(lines)-1], ""))
	unfinished := slices.Clone(dirs)
	unfinished[from] = cut
	expect("unfinished shard", fmt.Sprintf("cut (shard %d/%d) holds %d of its %d cases: its run did not finish", from+1, len(dirs), len(lines)-1, len(lines)), unfinished...)
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

func TestLocShardsMerge(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repos", "acme", "shapes")
	git := initRepo(t, repoDir)
	// Twelve fix commits, each changing one function of one of three
	// modules: twelve cases, so that 7 shards hold 0 to several each.
	funcs := map[string][]string{}
	for i := range 12 {
		mod := fmt.Sprintf("mod%d.py", i%3)
		funcs[mod] = append(funcs[mod], fmt.Sprintf("def area_%d(w, h):\n    return w * h\n", i))
		var b strings.Builder
		for j, f := range funcs[mod] {
			if j == len(funcs[mod])-1 && i >= 3 {
				f = strings.Replace(f, "w * h", fmt.Sprintf("max(w, 0) * max(h, %d)", i), 1)
			}
			b.WriteString(f + "\n")
		}
		writeFile(t, filepath.Join(repoDir, mod), b.String())
		git("add", "-A")
		git("commit", "-q", "-m", fmt.Sprintf("Fix area_%d for negative sizes", i))
	}
	cases := filepath.Join(dir, "cases.jsonl")
	if code, _, stderr := runCLI(t, "", "loc", "build", "--repo", repoDir, "--commits", "main", "--name", "acme/shapes",
		"--kind", "fix", "--out", cases); code != 0 {
		t.Fatalf("loc build: exit %d: %s", code, stderr)
	}
	if n := strings.Count(readFile(t, cases), "\n"); n < 8 {
		t.Fatalf("%d cases built, want at least 8", n)
	}
	checkShardsMerge(t, []string{"loc", "run", "--dataset", cases, "--repos", filepath.Join(dir, "repos"),
		"--index-cache", filepath.Join(dir, "index"), "--mode", "indexed", "--quiet"}, "results.jsonl")
}

func TestApeShardsMerge(t *testing.T) {
	dir := t.TempDir()
	repoDir, tasks := apeTasks(t, dir)
	checkShardsMerge(t, []string{"ape", "run", "--dataset", tasks, "--repo", repoDir, "--model", "reference",
		"--judge-model", "reference", "--n", "2", "--judge-n", "1", "--quiet"}, "results.jsonl")
}

// apeTasks makes a Go module under dir with three commits after a tag c0,
// builds their three APE tasks, and returns the repository and the tasks
// file. It skips the test without git or go.
func apeTasks(t *testing.T, dir string) (repoDir, tasks string) {
	t.Helper()
	gittest.Need(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is needed to compile the candidates")
	}
	repoDir = filepath.Join(dir, "repo")
	git := initRepo(t, repoDir)
	writeFile(t, filepath.Join(repoDir, "go.mod"), "module example.com/calc\n\ngo 1.21\n")
	src := "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	writeFile(t, filepath.Join(repoDir, "calc.go"), src)
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	git("tag", "c0")
	for i, name := range []string{"Sub", "Mul", "Neg"} {
		src += fmt.Sprintf("\nfunc %s(a, b int) int { return a + b*%d }\n", name, i)
		writeFile(t, filepath.Join(repoDir, "calc.go"), src)
		git("commit", "-q", "-am", "add "+name)
	}
	tasks = filepath.Join(dir, "tasks.jsonl")
	if code, _, stderr := runCLI(t, "", "ape", "build", "--repo", repoDir, "--commits", "c0..main", "--out", tasks); code != 0 {
		t.Fatalf("ape build: exit %d: %s", code, stderr)
	}
	return repoDir, tasks
}

// initRepo makes an empty git repository at dir (branch main) and returns
// a function that runs git in it, failing the test on an error.
func initRepo(t *testing.T, dir string) func(args ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		if out, err := gittest.Run(t, dir, "", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	return git
}

// TestMergeRefusesAShardStillRunning: a shard whose run directory another
// run holds has not all its rows yet; merge refuses it (exit 2, naming the
// holder) and writes nothing, then merges it once the run has ended.
func TestMergeRefusesAShardStillRunning(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "s1")
	if code, _, stderr := runCLI(t, "", "diffxyz", "run", "--dataset", sampleDataset, "--model", "reference", "--task", "apply", "--format", "udiff", "--shard", "1/1", "--out", shard, "--quiet"); code != 0 {
		t.Fatalf("diffxyz run: exit %d: %s", code, stderr)
	}
	held, err := runner.OpenDir(shard, runner.DirOptions{Command: "patchbench diffxyz run", ResultsFile: "results.jsonl", Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(dir, "merged")
	code, _, stderr := runCLI(t, "", "merge", "--out", merged, shard)
	if code != 2 || !strings.Contains(stderr, "s1 is in use by pid") || !strings.Contains(stderr, "merge it when its run has ended") {
		t.Errorf("merge of a held shard: exit %d, stderr %q; want 2 naming the holder", code, stderr)
	}
	if _, err := os.Stat(merged); !os.IsNotExist(err) {
		t.Errorf("a refused merge made %s: %v", merged, err)
	}
	held.Release()
	if code, _, stderr := runCLI(t, "", "merge", "--out", merged, shard); code != 0 {
		t.Errorf("merge after the run ended: exit %d: %s", code, stderr)
	}
}
