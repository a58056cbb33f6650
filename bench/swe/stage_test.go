package swe_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
)

func writeJSONL(t *testing.T, path string, rows []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// swapSides turns a diff around: its + lines become - lines and back.
func swapSides(diff string) string {
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			lines[i] = "-" + l[1:]
		case strings.HasPrefix(l, "-"):
			lines[i] = "+" + l[1:]
		}
	}
	return strings.Join(lines, "")
}

// TestStages covers what the end-to-end fixture does not: created and test
// files, an edit already applied, an edit that changes nothing, a prediction
// whose edits to the tests the test patch overrides, a test command that
// times out and one that gives no test results.
func TestStages(t *testing.T) {
	if _, err := os.Stat("/usr/bin/pytest"); err != nil {
		t.Skip("no /usr/bin/pytest (Debian python3-pytest)")
	}
	dir := t.TempDir()
	f := swetest.Build(t, dir)
	py := f.Projects[0]
	creates := py.Gold + `diff --git a/helpers.py b/helpers.py
new file mode 100644
--- /dev/null
+++ b/helpers.py
@@ -0,0 +1 @@
+HELP = 1
diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -1,4 +1,4 @@
-from calc import add, average, clamp
+from calc import add, average, clamp  # the model was here
 
 
 def test_add():
`
	nothing := "--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n-    return a + b\n+    return b + a\n" +
		"--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n-    return b + a\n+    return a + b\n"
	cases := []struct {
		id, patch, cmd string
		status         string
		reason         string
		created, tests []string
	}{
		{"creates", creates, py.TestCmd, "resolved", "", []string{"helpers.py"}, []string{"tests/test_calc.py"}},
		// Already applied: the patch stage succeeds and changes nothing, so
		// the tests run on the base files, where the bug is.
		{"already", swapSides(py.Gold), py.TestCmd, "unresolved", "", nil, nil},
		{"nothing", nothing, py.TestCmd, "apply_failed", "the edit changes nothing", nil, nil},
		{"timeout", py.Gold, "sleep 60", "test_timeout", "", nil, nil},
		{"noresults", py.Gold, "echo cannot run; exit 3", "test_error", "no test results in the output (exit 3): cannot run", nil, nil},
	}
	// The instance that must time out runs alone with a short timeout, the
	// others with a generous one; both runs share one dataset.
	var ds, preds, slowPreds []map[string]any
	for _, c := range cases {
		ds = append(ds, map[string]any{"instance_id": c.id, "repo": py.Repo, "base_commit": py.Base, "test_patch": py.TestPatch,
			"FAIL_TO_PASS": py.FailToPass, "PASS_TO_PASS": py.PassToPass, "test_cmd": c.cmd})
		p := map[string]any{"instance_id": c.id, "model_name_or_path": "m", "model_patch": c.patch}
		if c.status == "test_timeout" {
			slowPreds = append(slowPreds, p)
		} else {
			preds = append(preds, p)
		}
	}
	dataset := filepath.Join(dir, "ds.jsonl")
	predictions, slow := filepath.Join(dir, "preds.jsonl"), filepath.Join(dir, "slow.jsonl")
	writeJSONL(t, dataset, ds)
	writeJSONL(t, predictions, preds)
	writeJSONL(t, slow, slowPreds)
	out, slowOut := filepath.Join(dir, "out"), filepath.Join(dir, "slow")
	s, err := swe.Eval(context.Background(), swe.Config{Dataset: dataset, Predictions: predictions, Repos: f.Repos, Out: out,
		RunID: "stages", Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if s.Infra != 1 {
		t.Errorf("%d infrastructure failures, want 1 (no results)", s.Infra)
	}
	if s, err := swe.Eval(context.Background(), swe.Config{Dataset: dataset, Predictions: slow, Repos: f.Repos, Out: slowOut,
		RunID: "slow", Timeout: time.Second}); err != nil || s.Counts["test_timeout"] != 1 {
		t.Errorf("a command past its timeout: %+v, %v", s, err)
	}
	rows := swetest.RowsByID(t, out)
	for id, r := range swetest.RowsByID(t, slowOut) {
		rows[id] = r
	}
	for _, c := range cases {
		r := rows[c.id]
		if r.Status != c.status || c.reason != "" && r.Reason != c.reason {
			t.Errorf("%s: status %s (%q), want %s (%q)", c.id, r.Status, r.Reason, c.status, c.reason)
		}
		if c.id == "already" && (r.PatchStatus != "already_applied" || len(r.Files) == 0 || r.Files[0].Status != "already_applied" || r.Files[0].Hunks[0].Line == 0) {
			t.Errorf("already: patch status %q, files %+v; want already_applied with the place", r.PatchStatus, r.Files)
		}
		if !cmp.Equal(r.CreatedFiles, c.created) || !cmp.Equal(r.TestFiles, c.tests) {
			t.Errorf("%s: created %v, test files %v; want %v, %v", c.id, r.CreatedFiles, r.TestFiles, c.created, c.tests)
		}
	}
	var ea swe.ErrorAnalysis
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "errors.json"))), &ea); err != nil {
		t.Fatal(err)
	}
	if ea.ByClass["unresolved"] != 1 || ea.ByClass["test_error"] != 1 ||
		!cmp.Equal(ea.CreatedFiles, []string{"creates"}) || !cmp.Equal(ea.TestFiles, []string{"creates"}) {
		t.Errorf("errors.json: %+v", ea)
	}
	// The official harness grades a log without test results as it grades
	// any log (get_logs_eval: every FAIL_TO_PASS test missing), so under
	// it the instance is completed and unresolved, not an error.
	if r := rows["noresults"]; r.HarnessStatus != "unresolved" || r.SWE4CCClass != "Unresolved" {
		t.Errorf("noresults under the harness: %q, SWE4CC %q; want unresolved, Unresolved", r.HarnessStatus, r.SWE4CCClass)
	}
	var sum swe.SummaryReport
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "m.stages.json"))), &sum); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.UnresolvedIDs, "noresults") || slices.Contains(sum.ErrorIDs, "noresults") {
		t.Errorf("m.stages.json: unresolved %v, errors %v; want noresults unresolved", sum.UnresolvedIDs, sum.ErrorIDs)
	}
	if !strings.Contains(mustRead(t, filepath.Join(out, "instances", "noresults", "test_output.txt")), "cannot run") {
		t.Error("the test output was not kept")
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
