package swe

import "testing"

// Every status has a class in each vocabulary, and the official report's
// list agrees with the one report.json puts the status in.
func TestHarnessClassOf(t *testing.T) {
	report := map[string]string{
		StatusResolved: "resolved_ids", StatusUnresolved: "unresolved_ids", StatusEmptyPatch: "empty_patch_ids",
		StatusApplied: "incomplete_ids", StatusAppliedRepaired: "incomplete_ids",
		StatusMalformed: "error_ids", StatusApplyFailed: "error_ids", StatusTestError: "error_ids",
		StatusTestTimeout: "error_ids", StatusInfraError: "error_ids",
	}
	for _, st := range Statuses {
		hc := HarnessClassOf(st)
		if hc.SWE4CC == "" || hc.Report == "" {
			t.Errorf("%s: %+v", st, hc)
		}
		if w, ok := report[st]; ok && hc.Report != w {
			t.Errorf("%s: report list %q, want %q", st, hc.Report, w)
		}
	}
	for st, want := range map[string]string{
		StatusMalformed: "Malformed Patch", StatusApplyFailed: "Patch Apply Failed", StatusAlreadyApplied: "Patch Apply Failed",
		StatusTestError: "Tests Errored", StatusTestTimeout: "Tests Timed Out", StatusInfraError: "Environment Error",
	} {
		if got := HarnessClassOf(st).SWE4CC; got != want {
			t.Errorf("%s: SWE4CC %q, want %q", st, got, want)
		}
	}
	if HarnessClassOf(StatusTestTimeout).Log != LogTestsTimeout || HarnessClassOf(StatusMalformed).Log != LogApplyPatchFail {
		t.Error("log markers")
	}
}
