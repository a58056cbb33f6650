package swe

// HarnessClass names an outcome as the official SWE-bench harness and
// SWE4CC's error analysis do, so that their tables and patchbench's can be
// set side by side.
type HarnessClass struct {
	// Report is the list of the official run report the instance is in:
	// resolved_ids, unresolved_ids, error_ids, empty_patch_ids or
	// incomplete_ids (not graded: the tests did not run).
	Report string `json:"report"`
	// Log is the marker the official harness writes into the instance's
	// log (swebench.harness.constants: APPLY_PATCH_FAIL ">>>>> Patch Apply
	// Failed", TESTS_ERROR, TESTS_TIMEOUT, RESET_FAILED, APPLY_PATCH_PASS);
	// empty when it writes none (an empty patch is not run).
	Log string `json:"log,omitempty"`
	// SWE4CC is the class of SWE4CC's error analysis: a corrupt patch
	// (git apply: "corrupt patch at line N") is Malformed Patch, a hunk
	// that does not fit is Patch Apply Failed.
	SWE4CC string `json:"swe4cc"`
}

// The official harness's log markers.
const (
	LogApplyPatchFail = ">>>>> Patch Apply Failed"
	LogApplyPatchPass = ">>>>> Applied Patch"
	LogResetFailed    = ">>>>> Reset Failed"
	LogTestsError     = ">>>>> Tests Errored"
	LogTestsTimeout   = ">>>>> Tests Timed Out"
)

// HarnessClassOf maps a status to the official harness's and SWE4CC's
// class. A patch patchbench refuses is one git apply refuses too: malformed
// is git's "corrupt patch", apply_failed its "patch does not apply"; both
// end in the official report's error_ids. already_applied is an edit
// already in the base files, which git apply refuses as not fitting.
// applied_repaired is the repaired patch (predictions.repaired.jsonl is
// what the official harness applies); the original may be refused there.
func HarnessClassOf(status string) HarnessClass {
	switch status {
	case StatusEmptyPatch:
		return HarnessClass{Report: "empty_patch_ids", SWE4CC: "Empty Patch"}
	case StatusMalformed:
		return HarnessClass{Report: "error_ids", Log: LogApplyPatchFail, SWE4CC: "Malformed Patch"}
	case StatusApplyFailed, StatusAlreadyApplied:
		return HarnessClass{Report: "error_ids", Log: LogApplyPatchFail, SWE4CC: "Patch Apply Failed"}
	case StatusApplied, StatusAppliedRepaired:
		return HarnessClass{Report: "incomplete_ids", Log: LogApplyPatchPass, SWE4CC: "Patch Applied (not tested)"}
	case StatusResolved:
		return HarnessClass{Report: "resolved_ids", Log: LogApplyPatchPass, SWE4CC: "Resolved"}
	case StatusUnresolved:
		return HarnessClass{Report: "unresolved_ids", Log: LogApplyPatchPass, SWE4CC: "Unresolved"}
	case StatusTestError:
		return HarnessClass{Report: "error_ids", Log: LogTestsError, SWE4CC: "Tests Errored"}
	case StatusTestTimeout:
		return HarnessClass{Report: "error_ids", Log: LogTestsTimeout, SWE4CC: "Tests Timed Out"}
	}
	// infra_error: the repository or the worktree could not be made, as
	// the harness's reset of the repository failing.
	return HarnessClass{Report: "error_ids", Log: LogResetFailed, SWE4CC: "Environment Error"}
}
