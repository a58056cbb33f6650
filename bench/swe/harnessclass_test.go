package swe

import (
	"testing"

	"github.com/patchbench/patchbench/patch"
)

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
		StatusTestError: "Unknown", StatusTestTimeout: "Unknown", StatusInfraError: "Unknown",
	} {
		if got := HarnessClassOf(st).SWE4CC; got != want {
			t.Errorf("%s: SWE4CC %q, want %q", st, got, want)
		}
	}
	if HarnessClassOf(StatusTestTimeout).Log != LogTestsTimeout || HarnessClassOf(StatusMalformed).Log != LogApplyPatchFail {
		t.Error("log markers")
	}
}

// SWE4CCClass reads an error's log as SWE4CC's analysis reads
// run_instance.log; other statuses keep their class.
func TestSWE4CCClass(t *testing.T) {
	for _, c := range []struct{ status, log, want string }{
		{StatusMalformed, ">>>>> Patch Apply Failed:\npatching file a.py\npatch: **** malformed patch at line 15: @@ -1,3 +1,4 @@", "Malformed Patch"},
		// git's "corrupt patch" is not logged by the harness: GNU patch's
		// output is, and here it names no malformed patch.
		{StatusMalformed, ">>>>> Patch Apply Failed:\npatch: **** Only garbage was found in the patch input.", "Patch Apply Failed"},
		{StatusApplyFailed, ">>>>> Patch Apply Failed:\nHunk #1 FAILED at 3.", "Patch Apply Failed"},
		{StatusInfraError, "pull swebench/sweb.eval.x86_64.a: toomanyrequests: You have reached your pull rate limit", "Docker Rate Limit"},
		{StatusTestError, "429 Client Error: Too Many Requests", "Docker Rate Limit"},
		{StatusTestTimeout, "the test command ran past 30m0s", "Unknown"},
		{StatusResolved, "malformed patch", "Resolved"},
		{StatusUnresolved, "", "Unresolved"},
		{StatusEmptyPatch, "", "Empty Patch"},
		{StatusApplied, "", "Patch Applied (not tested)"},
		{"", "", ""},
	} {
		if got := SWE4CCClass(c.status, c.log); got != c.want {
			t.Errorf("SWE4CCClass(%s, %q) = %q, want %q", c.status, c.log, got, c.want)
		}
	}
}

// The chain's files and the applier's are the same when only the way a
// mode is recorded differs; a change of content or executable bit is not.
func TestSameFiles(t *testing.T) {
	chain := []patch.FileResult{{OldPath: "a.py", Path: "a.py", Op: patch.Modify, Content: []byte("x\n"), Mode: 0o100644}}
	for _, c := range []struct {
		name    string
		applier []patch.FileResult
		want    bool
	}{
		{"mode unrecorded", []patch.FileResult{{OldPath: "a.py", Path: "a.py", Op: patch.Modify, Content: []byte("x\n")}}, true},
		{"other content", []patch.FileResult{{OldPath: "a.py", Path: "a.py", Op: patch.Modify, Content: []byte("y\n")}}, false},
		{"made executable", []patch.FileResult{{OldPath: "a.py", Path: "a.py", Op: patch.Modify, Content: []byte("x\n"), Mode: 0o100755}}, false},
		{"a .rej more", append([]patch.FileResult{{Path: "a.py.rej", Op: patch.Create, Content: []byte("@@\n")}}, chain...), false},
	} {
		if got := sameFiles(chain, c.applier); got != c.want {
			t.Errorf("%s: sameFiles = %v, want %v", c.name, got, c.want)
		}
	}
}
