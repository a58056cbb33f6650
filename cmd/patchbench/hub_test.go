package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/hfhub/hubtest"
)

// TestSWEEvalFromHub runs swe eval with --dataset naming a dataset on a
// fake Hub (HF_ENDPOINT) that serves the fixture's dataset as Parquet, as
// a user types it: the split is downloaded into $HF_HOME, every instance
// gets the status it gets from the local file, a second run works offline
// from the cache, and the errors name what exists.
func TestSWEEvalFromHub(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	jsonl, err := os.ReadFile(f.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	pq, err := hubtest.ParquetOfJSONL(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	const commit = "5b0e1c9a0d3f4e2b8a7c6d5e4f3a2b1c0d9e8f7a"
	srv := hubtest.NewServer(&hubtest.Repo{Name: "acme/swe-mini", Commit: commit, Files: []hubtest.File{
		{Path: "README.md", Data: []byte("# swe-mini\n")},
		{Path: "data/test-00000-of-00001.parquet", Data: pq, LFS: true},
		{Path: "data/dev-00000-of-00001.parquet", Data: pq, LFS: true},
	}})
	defer srv.Close()
	home := filepath.Join(dir, "hfhome")
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_TOKEN", "hf_test")
	t.Setenv("HF_HUB_OFFLINE", "")

	eval := func(dataset, out string) (int, string, string) {
		return runCLI(t, "", "swe", "eval", "--no-tests", "--dataset", dataset, "--predictions", f.Predictions,
			"--repos", f.Repos, "--run-id", "hub", "--out", filepath.Join(dir, out))
	}
	code, stdout, stderr := eval("acme/swe-mini", "out")
	if code != 0 {
		t.Fatalf("swe eval --dataset acme/swe-mini: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	cached := filepath.Join(home, "patchbench", "datasets", "acme", "swe-mini", commit, "test", "00000.parquet")
	if !strings.Contains(stderr, "dataset acme/swe-mini@5b0e1c9a0d3f split test: "+cached) {
		t.Errorf("stderr does not say where the dataset is:\n%s", stderr)
	}
	if got, _ := os.ReadFile(cached); string(got) != string(pq) {
		t.Fatalf("cache %s does not hold the Hub's file", cached)
	}
	for _, r := range srv.Requests() {
		if r.Authorization != "Bearer hf_test" {
			t.Errorf("%s %s sent without HF_TOKEN", r.Method, r.Path)
		}
	}
	checkStatuses := func(out string) {
		t.Helper()
		rows := swetest.RowsByID(t, filepath.Join(dir, out))
		if len(rows) != len(f.Expected) {
			t.Fatalf("%s: %d results, want %d", out, len(rows), len(f.Expected))
		}
		for id, exp := range f.Expected {
			if rows[id].Status != exp.Status {
				t.Errorf("%s: %s: status %q, want %q", out, id, rows[id].Status, exp.Status)
			}
		}
	}
	checkStatuses("out")

	// Offline: the cache answers, the Hub is not asked.
	srv.Reset()
	t.Setenv("HF_HUB_OFFLINE", "1")
	if code, stdout, stderr := eval("acme/swe-mini:test", "offline"); code != 0 {
		t.Fatalf("offline swe eval: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkStatuses("offline")
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("offline run made %d requests to the Hub", n)
	}
	t.Setenv("HF_HOME", filepath.Join(dir, "empty"))
	code, _, stderr = eval("acme/swe-mini", "offline-empty")
	if code != 2 || !strings.Contains(stderr, "offline (HF_HUB_OFFLINE): acme/swe-mini@main is not in the cache") {
		t.Fatalf("offline with an empty cache: exit %d, stderr:\n%s", code, stderr)
	}
	t.Setenv("HF_HUB_OFFLINE", "")
	code, _, stderr = eval("acme/swe-mini:validation", "nosplit")
	if code != 2 || !strings.Contains(stderr, `acme/swe-mini has no split "validation"; its splits: dev, test`) {
		t.Fatalf("missing split: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = eval("acme/missing", "nodataset")
	if code != 2 || !strings.Contains(stderr, "no dataset acme/missing at "+srv.URL) {
		t.Fatalf("missing dataset: exit %d, stderr:\n%s", code, stderr)
	}
	for _, out := range []string{"offline-empty", "nosplit", "nodataset"} {
		if _, err := os.Stat(filepath.Join(dir, out)); !os.IsNotExist(err) {
			t.Errorf("a failed run left %s: %v", out, err)
		}
	}
}

// TestSWEEvalInstanceIDs selects instances as the official harness's
// --instance_ids does, from the flag and from a file, with --max-workers
// as --workers; an id not in the dataset is a usage error naming it.
func TestSWEEvalInstanceIDs(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	var ids []string
	for id := range f.Expected {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) < 4 {
		t.Fatalf("fixture has %d instances", len(ids))
	}
	idsFile := filepath.Join(dir, "ids.txt")
	if err := os.WriteFile(idsFile, []byte("# chosen\n"+ids[2]+"\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "", "swe", "eval", "--no-tests", "--dataset", f.Dataset, "--predictions", f.Predictions,
		"--repos", f.Repos, "--run-id", "ids", "--out", out, "--max-workers", "2",
		"--instance-ids", ids[0]+","+ids[1], "--instance-ids-file", idsFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rows := swetest.RowsByID(t, out)
	var got []string
	for id, r := range rows {
		got = append(got, id)
		if r.Status != f.Expected[id].Status {
			t.Errorf("%s: status %q, want %q", id, r.Status, f.Expected[id].Status)
		}
	}
	sort.Strings(got)
	if diff := cmp.Diff(ids[:3], got); diff != "" {
		t.Errorf("instances evaluated (-want +got):\n%s", diff)
	}
	var run struct {
		Workers     int      `json:"workers"`
		InstanceIDs []string `json:"instance_ids"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "run.json"))), &run); err != nil {
		t.Fatal(err)
	}
	if run.Workers != 2 || !cmp.Equal(run.InstanceIDs, ids[:3]) {
		t.Errorf("run.json: workers %d, instance_ids %q", run.Workers, run.InstanceIDs)
	}

	code, _, stderr = runCLI(t, "", "swe", "eval", "--no-tests", "--dataset", f.Dataset, "--predictions", f.Predictions,
		"--repos", f.Repos, "--run-id", "ids", "--out", filepath.Join(dir, "bad"),
		"--instance-ids", ids[0]+",nope__x-1", "--instance-ids", "nope__y-2")
	if code != 2 || !strings.Contains(stderr, "--instance-ids: 2 not in the dataset") || !strings.Contains(stderr, "nope__x-1, nope__y-2") {
		t.Fatalf("unknown ids: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "swe", "eval", "--no-tests", "--dataset", f.Dataset, "--predictions", f.Predictions,
		"--repos", f.Repos, "--run-id", "ids", "--out", filepath.Join(dir, "bad2"), "--workers", "3", "--max-workers", "2")
	if code != 2 || !strings.Contains(stderr, "--workers 3 and --max-workers 2") {
		t.Fatalf("--workers and --max-workers differing: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestSWEErrorsHarnessClasses checks the official harness's and SWE4CC's
// class beside each status in errors.json and errors.md, and that the
// patches classed as git refusals are refused by git apply itself with
// the words those classes come from.
func TestSWEErrorsHarnessClasses(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := runCLI(t, "", "swe", "eval", "--no-tests", "--dataset", f.Dataset, "--predictions", f.Predictions,
		"--repos", f.Repos, "--run-id", "classes", "--out", out); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var ea swe.ErrorAnalysis
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "errors.json"))), &ea); err != nil {
		t.Fatal(err)
	}
	want := map[string]swe.HarnessClass{
		"malformed":        {Report: "error_ids", Log: ">>>>> Patch Apply Failed", SWE4CC: "Malformed Patch"},
		"apply_failed":     {Report: "error_ids", Log: ">>>>> Patch Apply Failed", SWE4CC: "Patch Apply Failed"},
		"empty_patch":      {Report: "empty_patch_ids", SWE4CC: "Empty Patch"},
		"applied":          {Report: "incomplete_ids", Log: ">>>>> Applied Patch", SWE4CC: "Patch Applied (not tested)"},
		"applied_repaired": {Report: "incomplete_ids", Log: ">>>>> Applied Patch", SWE4CC: "Patch Applied (not tested)"},
	}
	for st, hc := range ea.Harness {
		if w, ok := want[st]; ok && w != hc {
			t.Errorf("errors.json harness[%s] = %+v, want %+v", st, hc, w)
		}
	}
	byID := map[string]swe.FailedEntry{}
	for _, fe := range ea.Failed {
		byID[fe.InstanceID] = fe
	}
	preds := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, f.Predictions)), "\n") {
		var p struct {
			ID    string `json:"instance_id"`
			Patch string `json:"model_patch"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		preds[p.ID] = p.Patch
	}
	counts := map[string]int{}
	seen := map[string]bool{}
	for id, exp := range f.Expected {
		counts[swe.HarnessClassOf(exp.Status).SWE4CC]++
		if !swe.IsFailure(exp.Status) {
			continue
		}
		fe, ok := byID[id]
		if !ok || fe.Harness != swe.HarnessClassOf(exp.Status) {
			t.Errorf("%s (%s): failed entry %+v", id, exp.Status, fe)
		}
		var p swetest.Project
		for _, pr := range f.Projects {
			if strings.HasPrefix(id, strings.ReplaceAll(pr.Repo, "/", "__")+"-") {
				p = pr
			}
		}
		gitSays := map[string]string{"malformed": "No valid patches in input", "apply_failed": "patch does not apply"}[exp.Status]
		if gitSays == "" {
			continue
		}
		seen[exp.Status] = true
		err := swetest.GitApplyCheck(t, p.Dir, p.Base, preds[id])
		if err == nil || !strings.Contains(err.Error(), gitSays) {
			t.Errorf("%s (%s, %s): git apply --check: %v; want %q", id, exp.Status, fe.Harness.SWE4CC, err, gitSays)
		}
	}
	if !seen["malformed"] || !seen["apply_failed"] {
		t.Fatalf("fixture lacks malformed or apply_failed instances: %v", seen)
	}
	if diff := cmp.Diff(counts, ea.BySWE4CC); diff != "" {
		t.Errorf("errors.json by_swe4cc (-want +got):\n%s", diff)
	}
	md := readFile(t, filepath.Join(out, "errors.md"))
	for _, line := range []string{
		"| malformed | " + strconv.Itoa(ea.ByStatus["malformed"]) + " | Malformed Patch | error_ids | `>>>>> Patch Apply Failed` |",
		"| apply_failed | " + strconv.Itoa(ea.ByStatus["apply_failed"]) + " | Patch Apply Failed | error_ids | `>>>>> Patch Apply Failed` |",
		"| empty_patch | " + strconv.Itoa(ea.ByStatus["empty_patch"]) + " | Empty Patch | empty_patch_ids | `(not run)` |",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("errors.md lacks %q:\n%s", line, md)
		}
	}
}

// TestSWEEvalOfficialImages runs the Go project's instances with --sandbox
// docker --image swebench against a fake docker client (testdata/fakedocker:
// there is no Docker engine here) whose images hold the repository at
// /testbed: each instance runs in its official image, named as the
// harness names it, with the eval script's steps; the verdicts are the
// ones the tests give, and an instance whose image cannot be pulled is a
// test_error naming the image.
func TestSWEEvalOfficialImages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go in PATH")
	}
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	goProj := f.Projects[1]
	images := filepath.Join(dir, "images")
	var ids []string
	for id, exp := range f.Expected {
		if !strings.HasPrefix(id, "acme__gocalc-") || exp.PatchStatus == "" {
			continue
		}
		ids = append(ids, id)
		if strings.HasSuffix(id, "-wrong") {
			continue // no image: its pull fails
		}
		tb := filepath.Join(images, strings.NewReplacer("/", "_", ":", "_").Replace(swe.OfficialImageName(id)))
		swetest.Git(t, dir, "clone", "--quiet", goProj.Dir, tb)
		swetest.Git(t, tb, "checkout", "--quiet", goProj.Base)
	}
	sort.Strings(ids)
	if len(ids) < 4 {
		t.Fatalf("fixture has %d applied Go instances", len(ids))
	}
	fake, err := filepath.Abs("testdata/fakedocker")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "docker.log")
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKEDOCKER_LOG", log)
	t.Setenv("FAKEDOCKER_IMAGES", images)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "", "swe", "eval", "--sandbox", "docker", "--image", "swebench",
		"--dataset", f.Dataset, "--predictions", f.Predictions, "--repos", f.Repos, "--run-id", "official", "--out", out,
		"--test-cmd", f.GoTestCmd, "--instance-ids", strings.Join(ids, ","), "--workers", "2")
	if code != 1 { // the instance without an image is an infrastructure failure
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "tests in docker") {
		t.Errorf("stdout does not name docker:\n%s", stdout)
	}
	rows := swetest.RowsByID(t, out)
	for _, id := range ids {
		r := rows[id]
		want := f.Expected[id].WithTests
		if strings.HasSuffix(id, "-wrong") {
			want = "test_error"
			if !strings.Contains(r.Reason, "pull access denied for swebench/sweb.eval.x86_64.acme_1776_gocalc-wrong") {
				t.Errorf("%s: reason %q does not name the image that could not be pulled", id, r.Reason)
			}
		}
		if r.Status != want {
			t.Errorf("%s: status %q, want %q (reason %q)", id, r.Status, want, r.Reason)
		}
		if want != "test_error" && (r.Test == nil || r.Test.Image != swe.OfficialImageName(id)) {
			t.Errorf("%s: test run %+v does not name its image", id, r.Test)
		}
	}
	// What docker was asked: each instance in its own image, without a
	// network, the eval script's steps inside.
	var runs [][]string
	for _, inv := range strings.Split(readFile(t, log), "\x1e") {
		args := strings.Split(strings.TrimSuffix(inv, "\x00"), "\x00")
		if len(args) > 0 && args[0] == "run" {
			runs = append(runs, args)
		}
	}
	// One run per instance with an image, and a second for those whose
	// files under the official apply chain differ from the tolerant
	// applier's (the harness's verdict: harness_test).
	wantRuns := len(ids) - 1
	var twice []string
	for _, id := range ids {
		if rows[id].HarnessTest != nil {
			twice = append(twice, "swebench/sweb.eval.x86_64."+strings.ReplaceAll(id, "__", "_1776_")+":latest")
			wantRuns++
		}
	}
	if len(runs) != wantRuns {
		t.Fatalf("docker run %d times, want %d", len(runs), wantRuns)
	}
	var ran []string
	for _, args := range runs {
		i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "swebench/sweb.eval.x86_64.") })
		if i < 0 || len(args) != i+4 || args[i+1] != "/bin/bash" || args[i+2] != "-c" {
			t.Fatalf("docker run %q", args)
		}
		ran = append(ran, args[i])
		if !slices.Contains(args[:i], "none") {
			t.Errorf("docker run without --network none: %q", args[:i])
		}
		script := args[i+3]
		for _, step := range []string{"source /opt/miniconda3/bin/activate\nconda activate testbed\ncd /testbed\n", "git apply -v ", "git checkout " + goProj.Base + " ", "echo '>>>>> Start Test Output'\ngo test -v -count=1 -run "} {
			if !strings.Contains(script, step) {
				t.Errorf("script lacks %q:\n%s", step, script)
			}
		}
	}
	var want []string
	for _, id := range ids {
		if !strings.HasSuffix(id, "-wrong") {
			want = append(want, "swebench/sweb.eval.x86_64."+strings.ReplaceAll(id, "__", "_1776_")+":latest")
		}
	}
	want = append(want, twice...)
	sort.Strings(want)
	sort.Strings(ran)
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("images run (-want +got):\n%s", diff)
	}
}
