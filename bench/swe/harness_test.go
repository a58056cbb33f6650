package swe_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/internal/testdata"
)

// patchShapes are the forms model patches take, each made from a gold
// patch: wrong hunk counts, context lines without their space, line
// numbers that are off, the diff in a Markdown fence, prose around it, and
// a path that is not in the repository.
var patchShapes = []struct {
	name string
	make func(string) string
}{
	{"gold", func(p string) string { return p }},
	{"counts", func(p string) string {
		return hunkCounts.ReplaceAllStringFunc(p, func(h string) string {
			m := hunkCounts.FindStringSubmatch(h)
			return "@@ -" + m[1] + "," + plus(m[2], 2) + " +" + m[3] + "," + plus(m[4], 1) + " @@"
		})
	}},
	{"nospace", swetest.NoContextSpaces},
	{"lines", func(p string) string {
		return hunkCounts.ReplaceAllStringFunc(p, func(h string) string {
			m := hunkCounts.FindStringSubmatch(h)
			return "@@ -" + plus(m[1], 7) + "," + m[2] + " +" + plus(m[3], 7) + "," + m[4] + " @@"
		})
	}},
	{"fenced", func(p string) string { return "```diff\n" + p + "```\n" }},
	{"prose", func(p string) string { return "Here is the fix:\n\n" + p + "\nThis makes the tests pass.\n" }},
	{"path", func(p string) string {
		return regexp.MustCompile(`(?m)^(diff --git a/|--- a/|\+\+\+ b/)`).ReplaceAllString(strings.ReplaceAll(p, " b/", " b/lost/"), "${1}lost/")
	}},
}

var hunkCounts = regexp.MustCompile(`@@ -(\d+),(\d+) \+(\d+),(\d+) @@`)

func plus(s string, n int) string {
	v, _ := strconv.Atoi(s)
	return strconv.Itoa(v + n)
}

// harnessChain is SWE-bench's run_evaluation.py GIT_APPLY_CMDS, written
// out here independently of package swe.
var harnessChain = []string{"git apply --verbose", "git apply --verbose --reject", "patch --batch --fuzz=5 -p1 -i"}

type oracle struct {
	status string            // applied, malformed, apply_failed
	output string            // the last command's output
	tree   map[string]string // every file of the checkout afterwards
}

// runOracle checks out commit of the repository gitDir in full and runs
// the harness's commands on text there, as its run_instance does in the
// container: the first that exits 0 applied it, and .orig files left
// then are moved back. git and GNU patch say what the patch is.
func runOracle(t *testing.T, gitDir, commit, text string) oracle {
	t.Helper()
	dir := t.TempDir()
	tree := checkout(t, gitDir, commit, filepath.Join(dir, "testbed"))
	pf := filepath.Join(dir, "patch.diff")
	if err := os.WriteFile(pf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var o oracle
	var outs []string
	for _, c := range harnessChain {
		cmd := exec.Command("sh", "-c", c+" "+pf)
		cmd.Dir = tree
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES=" + dir}
		out, err := cmd.CombinedOutput()
		o.output = string(out)
		outs = append(outs, o.output)
		if err == nil {
			o.status = swe.StatusApplied
			break
		}
	}
	if o.status == "" {
		o.status = swe.StatusApplyFailed
		for _, out := range outs {
			if strings.Contains(out, "corrupt patch") || strings.Contains(out, "malformed patch") {
				o.status = swe.StatusMalformed
			}
		}
		return o
	}
	mv := exec.Command("sh", "-c", `find . -name '*.orig' -type f -exec sh -c 'mv "$1" "${1%.orig}"' _ {} \;`)
	mv.Dir = tree
	if out, err := mv.CombinedOutput(); err != nil {
		t.Fatalf("restore .orig: %v: %s", err, out)
	}
	o.tree = readTree(t, tree)
	return o
}

func checkout(t *testing.T, gitDir, commit, dst string) string {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", gitDir, commit, dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("checkout %s: %v: %s", commit, err, out)
	}
	return dst
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shapeSource is a dataset whose gold patches are made into every shape.
type shapeSource struct {
	name, dataset, repos string
	// gitDir maps a row's repo to its git directory.
	gitDir func(repo string) string
}

// TestHarnessChainShapes runs swe eval --apply official and the default
// applier on gold patches made into the shapes models write, and checks
// each instance against git and GNU patch run here on a full checkout, as
// the harness runs them: the status (applied, malformed, apply_failed),
// harness_patch_status whatever the applier, swe4cc_class, and for the
// patches the chain applied, the files. The shipped fixture always runs;
// the five SWE-bench Lite dev instances when the dev corpus is there.
func TestHarnessChainShapes(t *testing.T) {
	for _, tool := range []string{"git", "patch", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	fx := swetest.Build(t, t.TempDir())
	sources := []shapeSource{{
		name: "fixture", dataset: fx.Dataset, repos: fx.Repos,
		gitDir: func(repo string) string { return filepath.Join(fx.Repos, filepath.FromSlash(repo)) },
	}}
	bundle := filepath.Join(testdata.SharedDir(), "swebench-lite-dev.bundle")
	if _, err := os.Stat(bundle); err == nil && os.Getenv("PATCHBENCH_CORPUS") != "testdata" && !testing.Short() {
		repos := t.TempDir()
		for _, r := range []string{"pallets/flask", "sympy/sympy"} {
			swetest.Git(t, "", "clone", "-q", "--bare", bundle, filepath.Join(repos, r))
		}
		sources = append(sources, shapeSource{
			name: "lite", dataset: filepath.Join(testdata.SharedDir(), "swebench-lite-dev.jsonl"), repos: repos,
			gitDir: func(repo string) string { return filepath.Join(repos, filepath.FromSlash(repo)) },
		})
	} else {
		t.Logf("%s: not here (or -short), the Lite dev instances are left out", bundle)
	}
	seen := map[string]int{}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			dataset, preds, rows := shapeInputs(t, src.dataset)
			run := func(apply string) map[string]swe.Row {
				out := filepath.Join(t.TempDir(), "run")
				if _, err := swe.Eval(context.Background(), swe.Config{
					Dataset: dataset, Predictions: preds, Repos: src.repos, RunID: "shapes", Out: out, NoTests: true, Apply: apply,
				}); err != nil {
					t.Fatal(err)
				}
				return swetest.RowsByID(t, out)
			}
			official, tolerant := run(swe.ApplyOfficial), run("")
			for _, row := range rows {
				id := row["instance_id"].(string)
				o := runOracle(t, src.gitDir(row["repo"].(string)), row["base_commit"].(string), row["model_patch"].(string))
				seen[o.status]++
				want := swe.SWE4CCAppliedNotTested
				if o.status != swe.StatusApplied {
					want = swe.SWE4CCApplyFailed
					if strings.Contains(o.output, "malformed patch") {
						want = swe.SWE4CCMalformed
					}
				}
				off, tol := official[id], tolerant[id]
				if off.Status != o.status || off.HarnessPatchStatus != o.status || tol.HarnessPatchStatus != o.status {
					t.Errorf("%s: official status %s, harness_patch_status %s (official) and %s (tolerant); git and patch: %s\n%s",
						id, off.Status, off.HarnessPatchStatus, tol.HarnessPatchStatus, o.status, o.output)
				}
				if off.SWE4CCClass != want || tol.SWE4CCClass != want {
					t.Errorf("%s: swe4cc_class %q (official), %q (tolerant); want %q", id, off.SWE4CCClass, tol.SWE4CCClass, want)
				}
				if o.status != swe.StatusApplied {
					continue
				}
				// The files the chain left, as the run records them.
				dir := t.TempDir()
				tree := checkout(t, src.gitDir(row["repo"].(string)), row["base_commit"].(string), filepath.Join(dir, "t"))
				if off.RepairedPatch != "" {
					pf := filepath.Join(dir, "p.diff")
					os.WriteFile(pf, []byte(off.RepairedPatch), 0o644)
					cmd := exec.Command("git", "apply", pf)
					cmd.Dir = tree
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("%s: git apply of the recorded change: %v: %s", id, err, out)
					}
				}
				if diff := cmp.Diff(o.tree, readTree(t, tree)); diff != "" {
					t.Errorf("%s: files after the chain differ (-git and patch +swe eval --apply official):\n%s", id, diff)
				}
			}
		})
	}
	// Each verdict occurs, or the shapes test nothing.
	for _, st := range []string{swe.StatusApplied, swe.StatusMalformed, swe.StatusApplyFailed} {
		if seen[st] == 0 {
			t.Errorf("no shape is %s: %v", st, seen)
		}
	}
	t.Logf("git and GNU patch: %v", seen)
}

// shapeInputs writes a dataset with a row per instance and shape (id
// ID.SHAPE) and predictions holding the shaped gold patches; it returns
// the rows with their model_patch.
func shapeInputs(t *testing.T, path string) (dataset, preds string, rows []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	dataset, preds = filepath.Join(dir, "dataset.jsonl"), filepath.Join(dir, "preds.jsonl")
	var ds, ps strings.Builder
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		id := row["instance_id"].(string)
		// One instance per base commit of the fixture: its rows repeat the
		// gold patch under prediction kinds.
		key := row["repo"].(string) + "@" + row["base_commit"].(string)
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, s := range patchShapes {
			r := map[string]any{}
			for k, v := range row {
				r[k] = v
			}
			r["instance_id"] = id + "." + s.name
			line, _ := json.Marshal(r)
			ds.Write(append(line, '\n'))
			text := s.make(row["patch"].(string))
			line, _ = json.Marshal(map[string]any{"instance_id": r["instance_id"], "model_name_or_path": "shapes", "model_patch": text})
			ps.Write(append(line, '\n'))
			r["model_patch"] = text
			rows = append(rows, r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dataset, []byte(ds.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(preds, []byte(ps.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dataset, preds, rows
}

// TestLiteDevOfficial runs, in a default run (bubblewrap when it works
// here, else unsandboxed), flask-4045's gold patch with its context lines'
// spaces removed: it resolves under the tolerant applier, while the
// official chain (GNU patch applies it with fuzz 3, then the harness's
// .orig restore undoes that) leaves what git apply --reject wrote, and its
// tests do not pass. TestLiteDev runs the gold patches under --apply
// official.
func TestLiteDevOfficial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the instances' real test suites")
	}
	data := testdata.SharedDir()
	bundle := filepath.Join(data, "swebench-lite-dev.bundle")
	if _, err := os.Stat(bundle); err != nil {
		t.Skipf("%s: the dev corpus is not beside this checkout", bundle)
	}
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("GNU patch is not installed")
	}
	probe := exec.Command("/usr/bin/python3", "-c", "import pytest, mpmath, werkzeug, jinja2, itsdangerous, click, blinker")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("Debian's python3 packages are missing (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	repos := t.TempDir()
	for _, r := range []string{"pallets/flask", "sympy/sympy"} {
		swetest.Git(t, "", "clone", "-q", "--bare", bundle, filepath.Join(repos, r))
	}
	spec, err := filepath.Abs("../../docs/specs/debian-python3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dataset := filepath.Join(data, "swebench-lite-dev.jsonl")
	// flask-4045 with its context lines' spaces removed.
	var patch string
	_, _, rows := shapeInputs(t, dataset)
	for _, r := range rows {
		if r["instance_id"] == "pallets__flask-4045.nospace" {
			patch = r["model_patch"].(string)
		}
	}
	preds := filepath.Join(t.TempDir(), "nospace.jsonl")
	line, _ := json.Marshal(map[string]any{"instance_id": "pallets__flask-4045", "model_name_or_path": "nospace", "model_patch": patch})
	if err := os.WriteFile(preds, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "nospace")
	if _, err := swe.Eval(context.Background(), swe.Config{
		Dataset: dataset, Predictions: preds, Repos: repos, RunID: "nospace", Out: out, SpecFile: spec, Workers: 2,
	}); err != nil {
		t.Fatal(err)
	}
	ns := swetest.RowsByID(t, out)
	r := ns["pallets__flask-4045"]
	if r.Status != swe.StatusResolved || r.HarnessPatchStatus != swe.StatusApplied || r.HarnessStatus != swe.StatusUnresolved ||
		r.SWE4CCClass != swe.SWE4CCUnresolved || r.HarnessTest == nil || !strings.Contains(r.HarnessLog, "restored files from .orig") {
		t.Errorf("flask-4045 without context spaces: status %s, harness %s/%s, swe4cc %s, harness test %v\n%s",
			r.Status, r.HarnessPatchStatus, r.HarnessStatus, r.SWE4CCClass, r.HarnessTest != nil, r.HarnessLog)
	}
}
