// Package swetest builds small SWE-bench-style fixtures for tests: real git
// repositories with a bug, a gold patch, a test patch with a FAIL_TO_PASS
// test, a dataset and predictions of every kind the patch stage tells apart.
package swetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/swe"
)

// Project is one repository of the fixture.
type Project struct {
	// Repo is "owner/name"; Dir is its directory under the repos dir.
	Repo, Dir string
	// Base is the base commit; Gold and TestPatch are the gold and test
	// patches (git diff).
	Base, Gold, TestPatch string
	FailToPass            []string
	PassToPass            []string
	// TestCmd is the test command written into the dataset rows; empty
	// when the project relies on --test-cmd.
	TestCmd string
	// Broken is a patch that does not fit the base files; Wrong one that
	// applies but does not fix the bug.
	Broken, Wrong string
}

// Expected is the outcome an instance must have.
type Expected struct {
	Status, PatchStatus string
	Repairs             []string
	// Resolved is the status with the test stage: resolved, unresolved,
	// or the patch-stage status when the tests do not run.
	WithTests string
}

// Fixture is a repos directory, a dataset and predictions.
type Fixture struct {
	Repos, Dataset, Predictions string
	Projects                    []Project
	// Expected maps instance ids to their outcome.
	Expected map[string]Expected
	// GoTestCmd is the --test-cmd for the Go project's instances.
	GoTestCmd string
}

// Git runs git in dir and returns its output, failing the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// makeProject commits base, then takes the gold patch (fix) and the test
// patch (tests) as git diffs against it, leaving the repository at base.
func makeProject(t testing.TB, repos, name string, base, fix, tests map[string]string) Project {
	t.Helper()
	dir := filepath.Join(repos, filepath.FromSlash(name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, base)
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "base")
	p := Project{Repo: name, Dir: dir, Base: strings.TrimSpace(Git(t, dir, "rev-parse", "HEAD"))}
	write(t, dir, fix)
	p.Gold = Git(t, dir, "diff")
	Git(t, dir, "checkout", "-q", ".")
	write(t, dir, tests)
	Git(t, dir, "add", "-A")
	p.TestPatch = Git(t, dir, "diff", "--cached")
	Git(t, dir, "reset", "-q", "--hard")
	return p
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+),(\d+) \+(\d+),(\d+) @@`)

// BrokenCounts gives every hunk header of a diff wrong line counts.
func BrokenCounts(diff string) string {
	return hunkHeader.ReplaceAllString(diff, "@@ -$1,99 +$3,1 @@")
}

// NoContextSpaces removes the leading space of every context line.
func NoContextSpaces(diff string) string {
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ") {
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "")
}

// Build makes the fixture under dir: a Python project tested with pytest
// (its rows carry test_cmd) and a Go module tested with go test (its rows use
// GoTestCmd), eight predictions each.
func Build(t testing.TB, dir string) *Fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	f := &Fixture{Repos: filepath.Join(dir, "repos"), Expected: map[string]Expected{}}
	py := makeProject(t, f.Repos, "acme/pycalc", map[string]string{
		"calc.py": `"""Small arithmetic helpers."""


def add(a, b):
    return a + b


def average(values):
    if not values:
        return 0
    total = 0
    for v in values:
        total = add(total, v)
    return total // len(values)


def clamp(x, lo, hi):
    return max(lo, min(x, hi))
`,
		"tests/__init__.py": "",
		"tests/test_calc.py": `from calc import add, average, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp():
    assert clamp(5, 0, 3) == 3
`,
	}, map[string]string{
		"calc.py": `"""Small arithmetic helpers."""


def add(a, b):
    return a + b


def average(values):
    if not values:
        return 0
    total = 0
    for v in values:
        total = add(total, v)
    return total / len(values)


def clamp(x, lo, hi):
    return max(lo, min(x, hi))
`,
	}, map[string]string{
		"tests/test_calc.py": `from calc import add, average, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp():
    assert clamp(5, 0, 3) == 3


def test_average_fraction():
    assert average([1, 2]) == 1.5
`,
	})
	py.FailToPass = []string{"tests/test_calc.py::test_average_fraction"}
	py.PassToPass = []string{"tests/test_calc.py::test_add", "tests/test_calc.py::test_clamp"}
	py.TestCmd = "/usr/bin/python3 -m pytest -rA -p no:cacheprovider {tests}"
	py.Broken = strings.Replace(py.Gold, "-    return total // len(values)", "-    return total // count", 1)
	py.Wrong = strings.Replace(py.Gold, "+    return total / len(values)", "+    return total // len(values) or 0", 1)

	gomod := makeProject(t, f.Repos, "acme/gocalc", map[string]string{
		"go.mod": "module example.com/gocalc\n\ngo 1.21\n",
		"calc.go": `package gocalc

// Abs returns the absolute value of x.
func Abs(x int) int {
	if x < 0 {
		return x
	}
	return x
}

// Max returns the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}
`,
		"calc_test.go": `package gocalc

import "testing"

func TestMax(t *testing.T) {
	if Max(2, 3) != 3 {
		t.Fatal("Max(2, 3) != 3")
	}
}
`,
	}, map[string]string{
		"calc.go": `package gocalc

// Abs returns the absolute value of x.
func Abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Max returns the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}
`,
	}, map[string]string{
		"calc_test.go": `package gocalc

import "testing"

func TestMax(t *testing.T) {
	if Max(2, 3) != 3 {
		t.Fatal("Max(2, 3) != 3")
	}
}

func TestAbsNegative(t *testing.T) {
	if Abs(-3) != 3 {
		t.Fatalf("Abs(-3) = %d", Abs(-3))
	}
}
`,
	})
	gomod.FailToPass = []string{"TestAbsNegative"}
	gomod.PassToPass = []string{"TestMax"}
	gomod.Broken = strings.Replace(gomod.Gold, "-\t\treturn x\n", "-\t\treturn x + 0\n", 1)
	gomod.Wrong = strings.Replace(gomod.Gold, "+\t\treturn -x\n", "+\t\treturn x * 1\n", 1)
	f.GoTestCmd = "go test -v -count=1 -run {tests_regex} ./..."
	f.Projects = []Project{py, gomod}

	var dataset, preds []map[string]any
	for _, p := range f.Projects {
		short := strings.ReplaceAll(p.Repo, "/", "__")
		kinds := []struct {
			suffix, patch, full string
			nullPatch           bool
			exp                 Expected
		}{
			{"gold", p.Gold, "", false, Expected{Status: "applied", PatchStatus: "applied", WithTests: "resolved"}},
			{"counts", BrokenCounts(p.Gold), "", false, Expected{Status: "applied_repaired", PatchStatus: "applied_repaired", Repairs: []string{"recount"}, WithTests: "resolved"}},
			{"nospace", NoContextSpaces(p.Gold), "", false, Expected{Status: "applied_repaired", PatchStatus: "applied_repaired", Repairs: []string{"context-space"}, WithTests: "resolved"}},
			{"empty", "", "", true, Expected{Status: "empty_patch", WithTests: "empty_patch"}},
			{"prose", "I think average should divide with / instead of //, so that it returns a float.", "", false, Expected{Status: "malformed", WithTests: "malformed"}},
			{"broken", p.Broken, "", false, Expected{Status: "apply_failed", WithTests: "apply_failed"}},
			{"wrong", p.Wrong, "", false, Expected{Status: "applied", PatchStatus: "applied", WithTests: "unresolved"}},
			{"fullout", "", "Here is the fix.\n\n```diff\n" + p.Gold + "```\n\nThis should do it.\n", false,
				Expected{Status: "applied_repaired", PatchStatus: "applied_repaired", Repairs: []string{"extracted", "full-output"}, WithTests: "resolved"}},
		}
		for _, k := range kinds {
			id := short + "-" + k.suffix
			f2p, _ := json.Marshal(p.FailToPass)
			p2p, _ := json.Marshal(p.PassToPass)
			row := map[string]any{
				"instance_id": id, "repo": p.Repo, "base_commit": p.Base, "patch": p.Gold, "test_patch": p.TestPatch,
				// Hugging Face's encoding for one project, lists for the other.
				"FAIL_TO_PASS": string(f2p), "PASS_TO_PASS": string(p2p), "version": "1.0",
			}
			if p.TestCmd != "" {
				row["test_cmd"] = p.TestCmd
			} else {
				row["FAIL_TO_PASS"], row["PASS_TO_PASS"] = p.FailToPass, p.PassToPass
			}
			dataset = append(dataset, row)
			pred := map[string]any{"instance_id": id, "model_name_or_path": "test-model", "model_patch": k.patch}
			if k.nullPatch {
				pred["model_patch"] = nil
			}
			if k.full != "" {
				pred["full_output"] = k.full
			}
			preds = append(preds, pred)
			f.Expected[id] = k.exp
		}
	}
	f.Dataset = filepath.Join(dir, "dataset.jsonl")
	f.Predictions = filepath.Join(dir, "predictions.jsonl")
	writeJSONL(t, f.Dataset, dataset)
	writeJSONL(t, f.Predictions, preds)
	return f
}

func writeJSONL(t testing.TB, path string, rows []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// GitApplyCheck reports whether git apply --check accepts diff at commit of
// the repository in dir, through a temporary index (no checkout). It may be
// called from any goroutine.
func GitApplyCheck(t testing.TB, dir, commit, diff string) error {
	t.Helper()
	index := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+index)
	rt := exec.Command("git", "read-tree", commit)
	rt.Dir, rt.Env = dir, env
	if out, err := rt.CombinedOutput(); err != nil {
		return &applyError{err: fmt.Errorf("git read-tree %s: %w", commit, err), out: string(out)}
	}
	ap := exec.Command("git", "apply", "--cached", "--check", "-")
	ap.Dir, ap.Env, ap.Stdin = dir, env, strings.NewReader(diff)
	if out, err := ap.CombinedOutput(); err != nil {
		return &applyError{err: err, out: string(out)}
	}
	return nil
}

type applyError struct {
	err error
	out string
}

func (e *applyError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.out) }

// RowsByID reads the results.jsonl of a run in dir, keyed by instance id.
func RowsByID(t testing.TB, dir string) map[string]swe.Row {
	t.Helper()
	rows, err := swe.ReadResults(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]swe.Row{}
	for _, r := range rows {
		m[r.InstanceID] = r
	}
	return m
}
