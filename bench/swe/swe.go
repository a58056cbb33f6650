// Package swe evaluates predictions for SWE-bench-style datasets: it takes
// the edit out of each prediction, repairs it and applies it in memory at the
// instance's base commit (the patch stage), runs the instance's tests in a
// sandboxed worktree (the test stage), and writes SWE-bench's reports, an
// error analysis and the repaired predictions, which the official harness
// accepts.
//
// # Statuses
//
// Each instance ends with one status:
//
//	empty_patch       model_patch and full_output are both empty (or null)
//	malformed         there is text, but no edit in it
//	apply_failed      an edit that does not fit the base files (reason given),
//	                  is already applied, or changes nothing
//	applied           the edit fits as written (test stage skipped)
//	applied_repaired  the edit fits after repairs, which are listed (test
//	                  stage skipped)
//	resolved          the tests ran; every FAIL_TO_PASS and PASS_TO_PASS
//	                  test passed
//	unresolved        the tests ran; some did not pass (they are listed)
//	test_error        the test stage could not give a verdict: the test patch
//	                  did not apply, the sandbox failed, or the output holds
//	                  no test results and the command failed
//	test_timeout      the test command ran past its timeout and was killed
//	infra_error       the repository could not be opened or cloned, the base
//	                  commit is not in it, or the worktree could not be made
//
// test_error, test_timeout and infra_error are infrastructure failures: they
// say nothing about the prediction, and "swe rerun --type infra" retries
// them. See [Patch] for how applied and applied_repaired are told apart.
//
// # Files
//
// A run directory holds results.jsonl (one [Result] row per instance, written
// by package runner), run.json (the run's [Config]), report.json (SWE-bench's
// run report plus status counts), instances/ID/report.json (SWE-bench's
// per-instance report), instances/ID/patch.diff (the repaired patch),
// instances/ID/test_output.txt (the test log), errors.json and errors.md
// (the error analysis) and predictions.repaired.jsonl.
package swe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/patch/repair"
	"github.com/patchbench/patchbench/runner"
)

// Instance statuses.
const (
	StatusEmptyPatch      = "empty_patch"
	StatusMalformed       = "malformed"
	StatusApplyFailed     = "apply_failed"
	StatusApplied         = "applied"
	StatusAppliedRepaired = "applied_repaired"
	// StatusAlreadyApplied: every change of the edit is already in the base
	// files; the patch stage succeeds and changes nothing.
	StatusAlreadyApplied = "already_applied"
	StatusResolved       = "resolved"
	StatusUnresolved     = "unresolved"
	StatusTestError      = "test_error"
	StatusTestTimeout    = "test_timeout"
	StatusInfraError     = "infra_error"
)

// Statuses lists every status in report order.
var Statuses = []string{
	StatusResolved, StatusUnresolved, StatusApplied, StatusAppliedRepaired,
	StatusAlreadyApplied, StatusApplyFailed, StatusMalformed, StatusEmptyPatch,
	StatusTestError, StatusTestTimeout, StatusInfraError,
}

// IsInfra reports whether status is an infrastructure failure.
func IsInfra(status string) bool {
	return status == StatusTestError || status == StatusTestTimeout || status == StatusInfraError
}

// ErrInput is wrapped by errors about the inputs of a run: files that cannot
// be read or parsed, predictions for instances the dataset lacks, a missing
// test command, a run directory that cannot be resumed. It is the
// runner's, so that a run command's exit status says so (runner.Ending).
var ErrInput = runner.ErrInput

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// Result is one instance's row in results.jsonl. Package runner adds the
// fields key, id, failed, error and elapsed_ms.
type Result struct {
	InstanceID string `json:"instance_id"`
	Repo       string `json:"repo"`
	Model      string `json:"model_name_or_path,omitempty"`
	// Status is the instance's final status; PatchStatus is applied,
	// applied_repaired or already_applied when the patch stage succeeded,
	// whatever the test stage made of it.
	Status      string `json:"status"`
	PatchStatus string `json:"patch_status,omitempty"`
	// Reason says why the status is not a success.
	Reason string `json:"reason,omitempty"`
	// Refusal is why the engine refused the edit (status apply_failed
	// from the tolerant applier), from a fixed set (repair.Kind); the
	// error analysis classes failures by it.
	Refusal repair.Kind `json:"refusal,omitempty"`
	// Repairs lists what the edit needed to apply; empty for applied.
	Repairs []string      `json:"repairs"`
	Files   []FileOutcome `json:"files"`
	// Source is model_patch or full_output; Format is the edit's format;
	// Extracted says where in the text the edit was found, when it was
	// taken out of prose or fences.
	Source    string `json:"source,omitempty"`
	Format    string `json:"format,omitempty"`
	Extracted string `json:"extracted,omitempty"`
	// CreatedFiles are files the edit creates (absent at base); TestFiles
	// are test files it touches.
	CreatedFiles []string `json:"created_files,omitempty"`
	TestFiles    []string `json:"test_files,omitempty"`
	PatchIsNone  bool     `json:"patch_is_none,omitempty"`
	// RepairedPatch is the canonical unified diff, when the edit applied.
	RepairedPatch string   `json:"repaired_patch,omitempty"`
	Test          *TestRun `json:"test,omitempty"`

	// HarnessPatchStatus is what the official harness's apply chain does
	// with the raw model_patch at the base commit, whatever the applier of
	// the run: applied, malformed, apply_failed or empty_patch (see
	// [HarnessApply]). HarnessStatus is the instance's status under the
	// harness: HarnessPatchStatus when the chain did not apply it, else
	// the verdict of the tests on the files the chain wrote (HarnessTest
	// holds that test run when those files differ from the applier's, and
	// the tests ran again on them). HarnessLog is the apply part of the
	// harness's run_instance.log.
	HarnessPatchStatus string   `json:"harness_patch_status,omitempty"`
	HarnessStatus      string   `json:"harness_status,omitempty"`
	HarnessApplyCmd    string   `json:"harness_apply_command,omitempty"`
	HarnessLog         string   `json:"harness_log,omitempty"`
	HarnessTest        *TestRun `json:"harness_test,omitempty"`
	// SWE4CCClass is the class SWE4CC's error analysis gives the instance
	// from the official harness's report and log (see [SWE4CCClass]).
	SWE4CCClass string `json:"swe4cc_class,omitempty"`
}

// Usage implements runner.Result; evaluating costs no tokens.
func (Result) Usage() runner.Usage { return runner.Usage{} }

// TestRun is what the test stage did.
type TestRun struct {
	Runner  string `json:"runner"`
	Command string `json:"command"`
	Parser  string `json:"parser,omitempty"`
	// EnvStore says the tree was the base commit's environment restored
	// from the --env-store, not a fresh worktree.
	EnvStore bool `json:"env_store,omitempty"`
	// EnvMethod is how the environment was restored: "overlay" (a mount,
	// in constant time), "overlay-userns" (a mount in a user namespace
	// the test command runs in, as an ordinary user), or "reflink",
	// "hardlink", "copy" (files made).
	EnvMethod string `json:"env_method,omitempty"`
	// EnvMethodReason says why that method: what the probes found (an
	// overlay mounts, or why none: the privilege, a user namespace's
	// limits such as a tree another user owns).
	EnvMethodReason string `json:"env_method_reason,omitempty"`
	// Image is the official harness's image the tests ran in (--image
	// swebench).
	Image      string       `json:"image,omitempty"`
	ExitCode   int          `json:"exit_code"`
	TimedOut   bool         `json:"timed_out,omitempty"`
	DurationMS int64        `json:"duration_ms"`
	Status     *TestsStatus `json:"tests_status,omitempty"`
	// Tests gives each FAIL_TO_PASS and PASS_TO_PASS test's status in the
	// log (PASSED, FAILED, ERROR, SKIPPED, XFAIL), or MISSING when the log
	// does not report it.
	Tests map[string]string `json:"tests,omitempty"`
}

// Row is a results.jsonl row as read back: the [Result] and the runner's
// fields.
type Row struct {
	Result
	Key       string `json:"key"`
	ID        string `json:"id"`
	Failed    bool   `json:"failed"`
	Error     string `json:"error,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// FinalStatus is the row's status; a row the runner marked failed (the
// evaluation itself panicked or errored) counts as infra_error.
func (r Row) FinalStatus() string {
	if r.Failed || r.Status == "" {
		return StatusInfraError
	}
	return r.Status
}

// ReadResults reads a results.jsonl file; for a key with several rows the
// last one counts, in the place of the first. A last line cut short by a
// killed run is ignored.
func ReadResults(path string) ([]Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []Row
	idx := map[string]int{}
	lines := bytes.Split(b, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Row
		if err := json.Unmarshal(line, &r); err != nil {
			if i == len(lines)-1 {
				break // cut short
			}
			return nil, fmt.Errorf("swe: %s: line %d: %w", path, i+1, err)
		}
		if r.Key == "" {
			r.Key = r.InstanceID
		}
		if k, ok := idx[r.Key]; ok {
			rows[k] = r
			continue
		}
		idx[r.Key] = len(rows)
		rows = append(rows, r)
	}
	return rows, nil
}

// writeRows writes rows as JSON Lines, atomically.
func writeRows(path string, rows []Row) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("swe: encode row %s: %w", r.Key, err)
		}
	}
	return writeAtomic(path, buf.Bytes(), true)
}

// writeAtomic writes a run file so that readers never see a part, syncing
// it first when sync is set.
func writeAtomic(path string, data []byte, sync bool) error {
	write := atomicfile.WriteUnsynced
	if sync {
		write = atomicfile.Write
	}
	if err := write(path, data, 0o644); err != nil {
		return fmt.Errorf("swe: write %s: %w", path, err)
	}
	return nil
}

// SafeID turns an instance id into a directory name, injectively (see
// runner.DiskName): "a/b", "a_b" and "a:b" get three directories, and an
// id of any length a name the file system takes.
func SafeID(id string) string { return runner.DiskName(id) }
