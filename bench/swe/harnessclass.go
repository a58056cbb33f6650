package swe

import "strings"

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
		return HarnessClass{Report: "empty_patch_ids", SWE4CC: SWE4CCEmptyPatch}
	case StatusMalformed:
		return HarnessClass{Report: "error_ids", Log: LogApplyPatchFail, SWE4CC: SWE4CCMalformed}
	case StatusApplyFailed, StatusAlreadyApplied:
		return HarnessClass{Report: "error_ids", Log: LogApplyPatchFail, SWE4CC: SWE4CCApplyFailed}
	case StatusApplied, StatusAppliedRepaired:
		return HarnessClass{Report: "incomplete_ids", Log: LogApplyPatchPass, SWE4CC: SWE4CCAppliedNotTested}
	case StatusResolved:
		return HarnessClass{Report: "resolved_ids", Log: LogApplyPatchPass, SWE4CC: SWE4CCResolved}
	case StatusUnresolved:
		return HarnessClass{Report: "unresolved_ids", Log: LogApplyPatchPass, SWE4CC: SWE4CCUnresolved}
	case StatusTestError:
		return HarnessClass{Report: "error_ids", Log: LogTestsError, SWE4CC: SWE4CCUnknown}
	case StatusTestTimeout:
		return HarnessClass{Report: "error_ids", Log: LogTestsTimeout, SWE4CC: SWE4CCUnknown}
	}
	// infra_error: the repository or the worktree could not be made, as
	// the harness's reset of the repository failing.
	return HarnessClass{Report: "error_ids", Log: LogResetFailed, SWE4CC: SWE4CCUnknown}
}

// SWE4CC's classes. Its analysis reads an instance of the official
// report's error_ids by its run_instance.log: "malformed patch" (GNU
// patch's message, the last command of the chain) makes Malformed Patch,
// "Too Many Requests" or "toomanyrequests" (a Docker Hub pull refused)
// Docker Rate Limit, the marker ">>>>> Patch Apply Failed" Patch Apply
// Failed, anything else unknown.
const (
	SWE4CCResolved         = "Resolved"
	SWE4CCUnresolved       = "Unresolved"
	SWE4CCEmptyPatch       = "Empty Patch"
	SWE4CCMalformed        = "Malformed Patch"
	SWE4CCApplyFailed      = "Patch Apply Failed"
	SWE4CCDockerRateLimit  = "Docker Rate Limit"
	SWE4CCUnknown          = "Unknown"
	SWE4CCAppliedNotTested = "Patch Applied (not tested)"
)

// SWE4CCClasses lists the classes in report order.
var SWE4CCClasses = []string{
	SWE4CCResolved, SWE4CCUnresolved, SWE4CCAppliedNotTested, SWE4CCEmptyPatch,
	SWE4CCMalformed, SWE4CCApplyFailed, SWE4CCDockerRateLimit, SWE4CCUnknown,
}

// SWE4CCClass is the class SWE4CC gives an instance whose status under the
// official harness is status, log being what the harness logged for it
// (for error statuses, read as SWE4CC reads run_instance.log). A status
// that is not an error of the official report keeps its class: resolved,
// unresolved, empty patch, applied and not tested. "" (no status) is "".
func SWE4CCClass(status, log string) string {
	if status == "" {
		return ""
	}
	hc := HarnessClassOf(status)
	if hc.Report != "error_ids" {
		return hc.SWE4CC
	}
	switch {
	case strings.Contains(log, "malformed patch"):
		return SWE4CCMalformed
	case strings.Contains(log, "Too Many Requests"), strings.Contains(log, "toomanyrequests"):
		return SWE4CCDockerRateLimit
	case strings.Contains(log, "Patch Apply Failed"):
		return SWE4CCApplyFailed
	}
	return SWE4CCUnknown
}
