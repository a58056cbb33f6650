package swe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/sandbox"
)

// OfficialImage, given as the image (--image swebench), runs each
// instance's tests in the official harness's per-instance image, where
// the repository is checked out at /testbed with its environment built.
const OfficialImage = "swebench"

// Markers of the official harness's logs (swebench.harness.constants)
// that the script in the official image writes.
const (
	logStartTestOutput = ">>>>> Start Test Output"
	logEndTestOutput   = ">>>>> End Test Output"
)

// OfficialImageName is the official harness's image of an instance, as
// published in its registry namespace: swebench/sweb.eval.x86_64.ID:latest
// with the id in lower case and "__" written "_1776_" (Docker refuses a
// double underscore).
func OfficialImageName(instanceID string) string {
	id := strings.ReplaceAll(strings.ToLower(instanceID), "__", "_1776_")
	return "swebench/sweb.eval.x86_64." + id + ":latest"
}

// officialScript is what the official harness's eval script does, with
// the prediction applied first as its run_instance does: in the image's
// conda environment at /testbed, apply the prediction, reset the test
// patch's files to the base commit, apply the test patch, and run the test
// command between the start and end markers. dir holds model.diff and
// test.diff (mounted at the same path).
func officialScript(inst Instance, dir, cmdline string, hasModel, hasTest bool, testFiles []string) string {
	var b strings.Builder
	b.WriteString("set -o pipefail\n")
	b.WriteString("source /opt/miniconda3/bin/activate\nconda activate testbed\ncd /testbed\n")
	b.WriteString("git config --global --add safe.directory /testbed\n")
	if hasModel {
		fmt.Fprintf(&b, "if ! git apply -v %s; then echo %s; exit 3; fi\n", shellQuote(filepath.Join(dir, "model.diff")), shellQuote(LogApplyPatchFail))
	}
	if hasTest {
		quoted := make([]string, len(testFiles))
		for i, f := range testFiles {
			quoted[i] = shellQuote(f)
		}
		// As the eval script: files the base lacks make git checkout
		// complain, which does not stop it.
		fmt.Fprintf(&b, "git checkout %s %s\n", shellQuote(inst.BaseCommit), strings.Join(quoted, " "))
		fmt.Fprintf(&b, "if ! git apply -v %s; then echo %s: the test patch does not apply; exit 4; fi\n", shellQuote(filepath.Join(dir, "test.diff")), shellQuote(LogTestsError))
	}
	fmt.Fprintf(&b, "echo %s\n%s\nstatus=$?\necho %s\nexit $status\n", shellQuote(logStartTestOutput), cmdline, shellQuote(logEndTestOutput))
	return b.String()
}

// testPatchFiles lists the paths the test patch touches, sorted.
func testPatchFiles(testPatch string) ([]string, error) {
	p, err := patch.ParseUDiff(testPatch, patch.DefaultParseOptions)
	if err != nil {
		return nil, fmt.Errorf("the test patch does not parse: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, fp := range p.Files {
		for _, q := range []string{fp.OldPath, fp.NewPath} {
			if q != "" && validPath(q) && !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// runOfficial runs inst's tests in its official image: the repaired
// prediction diff and the test patch are handed in as files, and the
// image's own checkout and environment are used.
func runOfficial(ctx context.Context, inst Instance, diff string, cfg *TestConfig) testOutcome {
	cmdline, parser, specEnv := cfg.testCommand(inst)
	if cmdline == "" {
		return testOutcome{status: StatusTestError, reason: "no test command: the dataset row has no test_cmd, no spec names its repository and version, and no --test-cmd was given"}
	}
	tmp, err := os.MkdirTemp(cfg.WorkDir, "patchbench-swe-"+SafeID(inst.InstanceID)+"-")
	if err != nil {
		return testOutcome{status: StatusInfraError, reason: fmt.Sprintf("make work directory: %v", err)}
	}
	defer os.RemoveAll(tmp)
	var files []string
	hasTest := strings.TrimSpace(inst.TestPatch) != ""
	if hasTest {
		if files, err = testPatchFiles(inst.TestPatch); err != nil {
			return testOutcome{status: StatusTestError, reason: err.Error()}
		}
	}
	for name, text := range map[string]string{"model.diff": diff, "test.diff": inst.TestPatch} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
			return testOutcome{status: StatusInfraError, reason: fmt.Sprintf("write %s: %v", name, err)}
		}
	}
	script := officialScript(inst, tmp, cmdline, strings.TrimSpace(diff) != "", hasTest, files)
	image := OfficialImageName(inst.InstanceID)
	run := &TestRun{Runner: cfg.Runner.Name(), Command: cmdline, Parser: parser, Image: image}
	res, err := cfg.Runner.Run(ctx, sandbox.Command{
		Dir:     tmp,
		Args:    []string{"/bin/bash", "-c", script},
		Image:   image,
		Env:     append(append([]string{"PYTHONDONTWRITEBYTECODE=1"}, specEnv...), cfg.Env...),
		Timeout: cfg.Timeout,
		Limits:  cfg.Limits,
	})
	out := string(res.Stdout) + "\n" + string(res.Stderr)
	if err == nil && !res.TimedOut {
		for _, m := range []string{LogApplyPatchFail, LogTestsError} {
			if strings.Contains(out, m) && !strings.Contains(out, logStartTestOutput) {
				o := testOutcome{status: StatusTestError, reason: fmt.Sprintf("in %s: %s", image, lastLine([]byte(out))), run: run, log: []byte(out)}
				run.ExitCode = res.ExitCode
				return o
			}
		}
	}
	return gradeRun(inst, cfg, run, parser, res, err, testOutput(res))
}

// testOutput is the part of a log between the official start and end
// markers, as the official harness grades it; the whole log when they are
// missing.
func testOutput(res sandbox.Result) []byte {
	log := append(append([]byte{}, res.Stdout...), res.Stderr...)
	s := string(log)
	i := strings.Index(s, logStartTestOutput)
	if i < 0 {
		return log
	}
	s = s[i+len(logStartTestOutput):]
	if j := strings.Index(s, logEndTestOutput); j >= 0 {
		s = s[:j] + s[j+len(logEndTestOutput):] // stderr follows the end marker
	}
	return []byte(s)
}
