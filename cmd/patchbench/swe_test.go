package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/sandbox"
)

// checkRepairedPredictions asserts that every patch in
// predictions.repaired.jsonl passes git apply --check at its base commit, and
// that it holds exactly the instances whose edit applied.
func checkRepairedPredictions(t *testing.T, f *swetest.Fixture, out string, wantApplied []string) {
	t.Helper()
	dirs, bases := map[string]string{}, map[string]string{}
	for _, p := range f.Projects {
		for id := range f.Expected {
			if strings.HasPrefix(id, strings.ReplaceAll(p.Repo, "/", "__")+"-") {
				dirs[id], bases[id] = p.Dir, p.Base
			}
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(out, "predictions.repaired.jsonl"))), "\n") {
		var p struct {
			ID    string `json:"instance_id"`
			Model string `json:"model_name_or_path"`
			Patch string `json:"model_patch"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.ID)
		if p.Model != "test-model" {
			t.Errorf("%s: model_name_or_path %q", p.ID, p.Model)
		}
		if err := swetest.GitApplyCheck(t, dirs[p.ID], bases[p.ID], p.Patch); err != nil {
			t.Errorf("%s: git apply --check rejects the repaired patch: %v\n%s", p.ID, err, p.Patch)
		}
	}
	sort.Strings(got)
	sort.Strings(wantApplied)
	if diff := cmp.Diff(wantApplied, got); diff != "" {
		t.Errorf("predictions.repaired.jsonl instances (-want +got):\n%s", diff)
	}
}

// TestSWEEvalEndToEnd evaluates a Python project tested with pytest and a Go
// module tested with go test, eight predictions each, through the CLI with
// the test stage in the sandbox.
func TestSWEEvalEndToEnd(t *testing.T) { sweEvalEndToEnd(t, false) }

// TestSWEEvalEnvStore is TestSWEEvalEndToEnd with the test stage in each base
// commit's environment restored from an env store (built here with "env
// build": byte-compiled Python, the Go module as checked out): the same
// results, every test run marked as restored, and the store unchanged.
func TestSWEEvalEnvStore(t *testing.T) { sweEvalEndToEnd(t, true) }

func sweEvalEndToEnd(t *testing.T, useStore bool) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 (Debian python3-pytest)")
	}
	if exec.Command("/usr/bin/python3", "-c", "import pytest").Run() != nil {
		t.Skip("no pytest for /usr/bin/python3 (apt-get install python3-pytest)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go in PATH")
	}
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	out := filepath.Join(dir, "out")
	// Share the warm build cache of this go, as package sandbox suggests;
	// a cold one costs a minute of compiling the standard library.
	cache := ""
	if b, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		cache = strings.TrimSpace(string(b))
	}
	if st, err := os.Stat(cache); cache == "" || err != nil || !st.IsDir() {
		cache = filepath.Join(dir, "gocache")
		if err := os.Mkdir(cache, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A toolchain file outside the sandbox's system directories: the Go
	// instances' test command reads it, so they pass only if --ro-bind
	// shows it.
	tool := filepath.Join(dir, "toolchain")
	if err := os.Mkdir(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tool, "marker"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"swe", "eval",
		"--dataset", f.Dataset, "--predictions", f.Predictions, "--repos", f.Repos,
		"--run-id", "e2e", "--out", out, "--workers", "2",
		"--test-cmd", "cat " + filepath.Join(tool, "marker") + " >/dev/null && GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local " + f.GoTestCmd,
		"--env", "GOCACHE=" + cache, "--writable", cache, "--timeout", "10m"}
	// A missing --ro-bind path is a usage error, before any instance.
	if code, _, stderr := runCLI(t, "", append(args, "--ro-bind", filepath.Join(dir, "missing"))...); code != 2 || !strings.Contains(stderr, "missing") {
		t.Errorf("swe eval --ro-bind MISSING: exit %d, want 2; stderr:\n%s", code, stderr)
	}
	args = append(args, "--ro-bind", tool)
	store := filepath.Join(dir, "envs")
	if useStore {
		for _, p := range f.Projects {
			code, stdout, stderr := runCLI(t, "", "env", "build", "--store", store, "--repo", p.Dir, "--commits", p.Base,
				"--setup", "if [ -f go.mod ]; then true; else /usr/bin/python3 -m compileall -q --invalidation-mode checked-hash .; fi")
			if code != 0 {
				t.Fatalf("env build %s: exit %d\n%s\n%s", p.Repo, code, stdout, stderr)
			}
		}
		args = append(args, "--env-store", store)
	}
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("swe eval: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	overlay, _ := envstore.OverlayAvailable(dir)
	if useStore {
		if code, stdout, stderr := runCLI(t, "", "env", "verify", "--store", store); code != 0 {
			t.Errorf("env verify after the run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		// Every overlay the run mounted is released.
		if m := storeMounts(t, store); len(m) != 0 {
			t.Errorf("overlays of the store still mounted after the run:\n%s", strings.Join(m, "\n"))
		}
		if recs, _ := filepath.Glob(filepath.Join(store, "mounts", "*.json")); len(recs) != 0 {
			t.Errorf("mount records left after the run: %q", recs)
		}
	}
	want := sandbox.Detect(context.Background()).Name()
	if _, err := exec.LookPath("bwrap"); err == nil && want != "bwrap" {
		t.Errorf("bwrap is installed but sandbox.Detect chose %s", want)
	}
	if !strings.Contains(stdout, "tests in "+want) {
		t.Errorf("summary does not name the sandbox %s:\n%s", want, stdout)
	}
	rows := swetest.RowsByID(t, out)
	if len(rows) != len(f.Expected) {
		t.Errorf("%d rows, want %d", len(rows), len(f.Expected))
	}
	var applied, resolved, harnessResolved []string
	for id, exp := range f.Expected {
		r := rows[id]
		if r.Status != exp.WithTests || r.PatchStatus != exp.PatchStatus {
			t.Errorf("%s: status %s/%s, want %s/%s (reason %q)", id, r.Status, r.PatchStatus, exp.WithTests, exp.PatchStatus, r.Reason)
			if b, err := os.ReadFile(filepath.Join(out, "instances", id, "test_output.txt")); err == nil {
				t.Logf("%s test output:\n%s", id, b)
			}
		}
		if exp.Repairs != nil && !cmp.Equal(r.Repairs, exp.Repairs) {
			t.Errorf("%s: repairs %v, want %v", id, r.Repairs, exp.Repairs)
		}
		if exp.PatchStatus != "" {
			applied = append(applied, id)
			if r.Test == nil || r.Test.Runner != want || r.Test.EnvStore != useStore {
				t.Errorf("%s: test run %+v, want runner %s, env store %v", id, r.Test, want, useStore)
			}
			// Where this process can mount an overlay, each test tree is
			// one (constant time), else files.
			if r.Test != nil && useStore && (r.Test.EnvMethod == "overlay") != overlay {
				t.Errorf("%s: environment restored by %q; overlay available: %v", id, r.Test.EnvMethod, overlay)
			}
		}
		if exp.WithTests == "resolved" {
			resolved = append(resolved, id)
		}
		if r.HarnessStatus == swe.StatusResolved {
			harnessResolved = append(harnessResolved, id)
		}
		// The per-instance report, in SWE-bench's shape.
		var ir map[string]swe.InstanceReport
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "instances", id, "report.json"))), &ir); err != nil {
			t.Fatal(err)
		}
		rep, ok := ir[id]
		if !ok || rep.Resolved != (exp.WithTests == "resolved") || rep.PatchSuccessfullyApplied != (exp.PatchStatus != "") ||
			rep.PatchIsNone != (exp.Status == "empty_patch") {
			t.Errorf("%s: instance report %+v", id, ir)
		}
		if exp.WithTests == "resolved" && len(rep.TestsStatus.FailToPass.Success) != 1 {
			t.Errorf("%s: FAIL_TO_PASS %+v", id, rep.TestsStatus.FailToPass)
		}
		if exp.WithTests == "unresolved" && len(rep.TestsStatus.FailToPass.Failure) != 1 {
			t.Errorf("%s: FAIL_TO_PASS %+v", id, rep.TestsStatus.FailToPass)
		}
	}
	// The run report.
	var rep map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "report.json"))), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"total_instances", "submitted_instances", "completed_instances", "resolved_instances",
		"unresolved_instances", "empty_patch_instances", "error_instances", "completed_ids", "incomplete_ids",
		"empty_patch_ids", "submitted_ids", "resolved_ids", "unresolved_ids", "error_ids", "schema_version"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("report.json has no %s", k)
		}
	}
	// The SWE-bench fields are the harness's verdicts (a patch only the
	// tolerant applier applies is an error there); patchbench's own are
	// under "patchbench".
	ids := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	sort.Strings(resolved)
	sort.Strings(harnessResolved)
	pb, _ := rep["patchbench"].(map[string]any)
	if pb == nil {
		t.Fatalf("report.json has no patchbench summary: %v", rep)
	}
	if diff := cmp.Diff(resolved, ids(pb["resolved_ids"])); diff != "" {
		t.Errorf("patchbench.resolved_ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(harnessResolved, ids(rep["resolved_ids"])); diff != "" {
		t.Errorf("resolved_ids, the harness's (-want +got):\n%s", diff)
	}
	if len(harnessResolved) == 0 || len(harnessResolved) >= len(resolved) {
		t.Errorf("harness resolved %v, patchbench %v: want the repaired ones resolved by patchbench only", harnessResolved, resolved)
	}
	if pb["total_instances"].(float64) != 16 || pb["completed_instances"].(float64) != 10 || pb["resolved_instances"].(float64) != 8 ||
		pb["unresolved_instances"].(float64) != 2 || pb["empty_patch_instances"].(float64) != 2 || pb["error_instances"].(float64) != 4 {
		t.Errorf("report.json patchbench counts: %v", pb)
	}
	if rep["total_instances"].(float64) != 16 || rep["resolved_instances"].(float64) != float64(len(harnessResolved)) {
		t.Errorf("report.json counts: %v", rep)
	}
	checkRepairedPredictions(t, f, out, applied)
	for _, name := range []string{"errors.md", "errors.json", "run.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if md := readFile(t, filepath.Join(out, "errors.md")); !strings.Contains(md, "`acme__pycalc-broken` (acme/pycalc) apply_failed [Patch Apply Failed]: hunk 1 of calc.py") {
		t.Errorf("errors.md lacks the failed instance line:\n%s", md)
	}
}

// TestSWERerun runs the patch stage with one repository missing (its
// instances end infra_error), checks that rerun --dry-run lists exactly the
// failed instances of each type, then makes the repository available and
// reruns the infra failures, which are merged into the run.
func TestSWERerun(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	upstream := filepath.Join(dir, "upstream")
	goRepo := f.Projects[1]
	// Hide acme/gocalc: the store must clone it from upstream, where it is
	// not yet.
	hidden := filepath.Join(dir, "hidden")
	if err := os.Rename(goRepo.Dir, hidden); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "", "swe", "eval", "--no-tests",
		"--dataset", f.Dataset, "--predictions", f.Predictions, "--repos", f.Repos, "--clone-from", upstream,
		"--run-id", "rerun", "--out", out)
	if code != 1 {
		t.Fatalf("swe eval with a missing repository: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := map[string][]string{}
	for id, exp := range f.Expected {
		st := exp.Status
		if strings.HasPrefix(id, "acme__gocalc-") && st != "empty_patch" {
			st = "infra_error"
		}
		switch st {
		case "malformed":
			want["malformed"] = append(want["malformed"], id)
		case "apply_failed":
			want["apply-failed"] = append(want["apply-failed"], id)
		case "infra_error":
			want["infra"] = append(want["infra"], id)
		default:
			continue
		}
		want["all"] = append(want["all"], id)
	}
	for _, typ := range []string{"malformed", "apply-failed", "infra", "all"} {
		code, stdout, stderr := runCLI(t, "", "swe", "rerun", "--from", out, "--type", typ, "--dry-run")
		if code != 0 {
			t.Fatalf("rerun --dry-run --type %s: exit %d: %s", typ, code, stderr)
		}
		got := strings.Fields(stdout)
		sort.Strings(want[typ])
		if diff := cmp.Diff(want[typ], got); diff != "" {
			t.Errorf("rerun --dry-run --type %s (-want +got):\n%s", typ, diff)
		}
	}
	before := readFile(t, filepath.Join(out, "results.jsonl"))
	if code, _, _ := runCLI(t, "", "swe", "rerun", "--from", out, "--type", "bogus", "--dry-run"); code != 2 {
		t.Errorf("rerun --type bogus: exit %d, want 2", code)
	}
	if readFile(t, filepath.Join(out, "results.jsonl")) != before {
		t.Error("a dry run changed results.jsonl")
	}

	// Publish the repository upstream and rerun the infrastructure failures.
	if err := os.MkdirAll(filepath.Join(upstream, "acme"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(hidden, filepath.Join(upstream, "acme", "gocalc")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "", "swe", "rerun", "--from", out, "--type", "infra")
	stdout0 := stdout
	if code != 0 {
		t.Fatalf("rerun --type infra: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "re-evaluated 7 instances (infra)") || !regexpMatch(`infra_error +7 +0`, stdout) || !regexpMatch(`applied +2 +4`, stdout) {
		t.Errorf("rerun output:\n%s", stdout)
	}
	rows := swetest.RowsByID(t, out)
	if len(rows) != len(f.Expected) {
		t.Errorf("%d rows after the rerun, want %d", len(rows), len(f.Expected))
	}
	var applied []string
	for id, exp := range f.Expected {
		if r := rows[id]; r.Status != exp.Status {
			t.Errorf("%s: status %s after the rerun, want %s (reason %q)", id, r.Status, exp.Status, r.Reason)
		}
		if exp.PatchStatus != "" {
			applied = append(applied, id)
		}
	}
	if _, err := os.Stat(filepath.Join(f.Repos, "acme", "gocalc")); err != nil {
		t.Errorf("the missing repository was not cloned into --repos: %v", err)
	}
	// The merged run's reports and repaired predictions follow.
	f.Projects[1].Dir = filepath.Join(f.Repos, "acme", "gocalc")
	checkRepairedPredictions(t, f, out, applied)
	if code, stdout, _ := runCLI(t, "", "swe", "rerun", "--from", out, "--type", "infra", "--dry-run"); code != 0 || stdout != "" {
		t.Errorf("infra failures left after the rerun: exit %d: %q", code, stdout)
	}
	var rep swe.RunReport
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "report.json"))), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Patchbench.ErrorInstances != 4 || rep.StatusCounts["infra_error"] != 0 || rep.StatusCounts["applied"] != 4 || len(rep.Patchbench.IncompleteIDs) != 10 {
		t.Errorf("report.json after the rerun: %+v", rep)
	}
	checkRerunReport(t, out, stdout0, f, want["infra"])
}

// checkRerunReport asserts that the rerun wrote its comparison into the
// run directory: one rerun-TIME.json naming every re-evaluated instance
// whose status changed (infra_error to its expected status), the counts
// printed, and the .md beside it.
func checkRerunReport(t *testing.T, out, stdout string, f *swetest.Fixture, infra []string) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(out, "rerun-*.json"))
	if len(names) != 1 {
		t.Fatalf("rerun comparison files: %q, want one", names)
	}
	if !strings.Contains(stdout, "comparison: "+names[0]+", "+strings.TrimSuffix(names[0], ".json")+".md") {
		t.Errorf("rerun output does not name the comparison %s:\n%s", names[0], stdout)
	}
	var rr swe.RerunReport
	if err := json.Unmarshal([]byte(readFile(t, names[0])), &rr); err != nil {
		t.Fatal(err)
	}
	var wantChanged []swe.RerunChange
	for _, id := range infra {
		wantChanged = append(wantChanged, swe.RerunChange{InstanceID: id, Before: "infra_error", After: f.Expected[id].Status})
	}
	sort.Slice(wantChanged, func(i, j int) bool { return wantChanged[i].InstanceID < wantChanged[j].InstanceID })
	if diff := cmp.Diff(wantChanged, rr.Changed); diff != "" {
		t.Errorf("%s: changed (-want +got):\n%s", names[0], diff)
	}
	if rr.Type != "infra" || rr.Evaluated != 7 || rr.Instances != len(f.Expected) {
		t.Errorf("%s: type %q, evaluated %d, instances %d", names[0], rr.Type, rr.Evaluated, rr.Instances)
	}
	counts := map[string]swe.RerunCount{}
	for _, c := range rr.Counts {
		counts[c.Status] = c
	}
	if c := counts["infra_error"]; c.Before != 7 || c.After != 0 {
		t.Errorf("%s: infra_error %+v", names[0], c)
	}
	md := readFile(t, strings.TrimSuffix(names[0], ".json")+".md")
	if !strings.Contains(md, "| infra_error | 7 | 0 |") || !strings.Contains(md, "| "+wantChanged[0].InstanceID+" | infra_error | "+wantChanged[0].After+" |") {
		t.Errorf("rerun .md:\n%s", md)
	}
}

func TestSWEUsageErrors(t *testing.T) {
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	out := filepath.Join(dir, "out")
	base := []string{"swe", "eval", "--dataset", f.Dataset, "--predictions", f.Predictions, "--repos", f.Repos, "--run-id", "u"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing flag", []string{"swe", "eval", "--dataset", f.Dataset}, "required"},
		{"no test command", append(base, "--out", out+"1"), "no test command"},
		{"missing dataset", []string{"swe", "eval", "--dataset", filepath.Join(dir, "nope.jsonl"), "--predictions", f.Predictions,
			"--repos", f.Repos, "--run-id", "u", "--out", out + "2", "--no-tests"}, "nope.jsonl"},
		{"no run", []string{"swe", "rerun", "--from", dir, "--type", "all", "--dry-run"}, "not a swe run directory"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != 2 || !strings.HasPrefix(stderr, "patchbench: ") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", tc.name, code, stderr, tc.want)
		}
	}
	// A second run into the same --out without --resume is refused; with
	// --resume it has nothing left to do.
	if code, _, stderr := runCLI(t, "", append(base, "--out", out, "--no-tests")...); code != 0 {
		t.Fatalf("swe eval: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", append(base, "--out", out, "--no-tests")...); code != 2 || !strings.Contains(stderr, "--resume") {
		t.Errorf("second run into the same --out: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := runCLI(t, "", append(base, "--out", out, "--no-tests", "--resume")...); code != 0 || !strings.Contains(stdout, "16 instances") {
		t.Errorf("--resume: exit %d: %s%s", code, stdout, stderr)
	}
}

func regexpMatch(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(s)
}
