package swe

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The official harness's files, written beside patchbench's in the run
// directory from the rows' statuses under the harness (Row.HarnessStatus):
//
//	MODEL.RUN_ID.json                                  its summary report
//	logs/run_evaluation/RUN_ID/MODEL/ID/patch.diff      the raw model_patch
//	logs/run_evaluation/RUN_ID/MODEL/ID/run_instance.log
//	logs/run_evaluation/RUN_ID/MODEL/ID/test_output.txt when the tests ran
//	logs/run_evaluation/RUN_ID/MODEL/ID/report.json     when they completed
//
// MODEL is model_name_or_path with "/" written "__", as the harness names
// it; the summary is named after the first prediction's model, as the
// harness's is. Instances with an empty model_patch get no log directory:
// the harness does not run them.

// HarnessLogDir is the harness's log directory of the run, relative to
// the run directory.
func HarnessLogDir(runID string) string {
	return filepath.Join("logs", "run_evaluation", SafeID(runID))
}

// HarnessModelName is a model's name in the harness's file names.
func HarnessModelName(model string) string {
	if model == "" {
		model = "None"
	}
	return SafeID(strings.ReplaceAll(model, "/", "__"))
}

// HarnessSummaryName is the file name of the harness's summary report.
func HarnessSummaryName(model, runID string) string {
	return SafeID(strings.ReplaceAll(model, "/", "__") + "." + runID + ".json")
}

// harnessStatus is the row's status under the official harness; rows
// written before it was recorded, and failed rows, give their own.
func (r Row) harnessStatus() string {
	if r.Failed || r.HarnessStatus == "" {
		return r.FinalStatus()
	}
	return r.HarnessStatus
}

// harnessTest is the test run whose verdict is the harness's.
func (r Row) harnessTest() *TestRun {
	if r.HarnessTest != nil {
		return r.HarnessTest
	}
	return r.Test
}

// harnessModel is the model the harness names its summary after: the
// first prediction's.
func harnessModel(in *inputs) string {
	if len(in.preds) > 0 && in.preds[0].Model != "" {
		return in.preds[0].Model
	}
	return "None"
}

func writeHarnessFiles(dir, runID string, in *inputs, rows []Row) error {
	first := harnessModel(in)
	sum := makeRunReport(runID, in, rows, true).SummaryReport
	b, err := json.MarshalIndent(sum, "", "    ")
	if err != nil {
		return fmt.Errorf("swe: encode the summary report: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, HarnessSummaryName(first, runID)), append(b, '\n'), true); err != nil {
		return err
	}
	var errs []error
	for _, r := range rows {
		pred, ok := in.predsByID[r.InstanceID]
		if !ok || deref(pred.ModelPatch) == "" {
			continue
		}
		if err := writeHarnessInstance(dir, runID, r, deref(pred.ModelPatch)); err != nil {
			errs = append(errs, fmt.Errorf("swe: instance %q: %w", r.InstanceID, err))
		}
	}
	return errors.Join(errs...)
}

func writeHarnessInstance(dir, runID string, r Row, raw string) error {
	model := r.Model
	idir := filepath.Join(dir, HarnessLogDir(runID), HarnessModelName(model), SafeID(r.InstanceID))
	if err := os.MkdirAll(idir, 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(idir, "patch.diff"), []byte(raw), false); err != nil {
		return err
	}
	st := r.harnessStatus()
	var log strings.Builder
	fmt.Fprintf(&log, "Intermediate patch for %s written to %s, now applying to container...\n", r.InstanceID, filepath.Join(idir, "patch.diff"))
	log.WriteString(r.HarnessLog)
	// The test log: the tests' of this run, or of the second run on the
	// chain's files.
	src := filepath.Join(dir, "instances", SafeID(r.InstanceID), "test_output.txt")
	if r.HarnessTest != nil {
		src = filepath.Join(dir, "instances", SafeID(r.InstanceID), harnessTestOutput)
	}
	out := filepath.Join(idir, "test_output.txt")
	report := filepath.Join(idir, "report.json")
	tested := r.HarnessPatchStatus == StatusApplied && r.harnessTest() != nil
	if data, err := os.ReadFile(src); err == nil && tested {
		if err := writeAtomic(out, data, false); err != nil {
			return err
		}
		fmt.Fprintf(&log, "Test output for %s written to %s\n", r.InstanceID, out)
	} else {
		os.Remove(out)
	}
	switch st {
	case StatusResolved, StatusUnresolved:
		ir := instanceReport(r)
		ir.PatchIsNone, ir.PatchExists = false, true
		ir.PatchSuccessfullyApplied, ir.Resolved = true, st == StatusResolved
		if t := r.harnessTest(); t != nil && t.Status != nil {
			ir.TestsStatus = *t.Status
		}
		if err := writeJSONFast(report, map[string]InstanceReport{r.InstanceID: ir}); err != nil {
			return err
		}
		fmt.Fprintf(&log, "Result for %s: resolved: %v\n", r.InstanceID, st == StatusResolved)
	default:
		os.Remove(report)
		if st != r.HarnessPatchStatus {
			// Failed after the patch applied: the test stage's reason.
			reason := r.Reason
			if r.HarnessTest != nil {
				reason = st
			}
			fmt.Fprintf(&log, "%s: %s\n", HarnessClassOf(st).Log, oneLine(reason))
		}
	}
	return writeAtomic(filepath.Join(idir, "run_instance.log"), []byte(log.String()), false)
}

// harnessTestOutput is the test log of the second test run, on the files
// the official chain wrote, in instances/ID.
const harnessTestOutput = "harness_test_output.txt"
