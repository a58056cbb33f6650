package swe

import (
	"regexp"
	"strings"
	"sync"
)

// Test statuses, as SWE-bench's log parsers name them.
const (
	TestPassed  = "PASSED"
	TestFailed  = "FAILED"
	TestSkipped = "SKIPPED"
	TestError   = "ERROR"
	TestXFail   = "XFAIL"
	TestXPass   = "XPASS"
)

// testLineREs are the patterns of the test runners' lines.
type testLineREs struct {
	pytestSummary, pytestVerbose, goTest, goPackage, djangoTest *regexp.Regexp
}

// testLines compiles the patterns on first use rather than at package
// initialisation: the CLI links this package into every command, and a
// `patchbench apply` should not pay for them (issue 8 §5).
var testLines = sync.OnceValue(func() *testLineREs {
	return &testLineREs{
		// pytest -rA short summary: "PASSED tests/x.py::test_y", "FAILED
		// tests/x.py::test_y - AssertionError", "ERROR tests/x.py - ...".
		pytestSummary: regexp.MustCompile(`^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.+)$`),
		// pytest -v: "tests/x.py::test_y PASSED [ 50%]".
		pytestVerbose: regexp.MustCompile(`^(\S+::.+?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: +\[ *\d+%\])?\s*$`),
		// go test -v: "--- PASS: TestX (0.00s)", indented for subtests.
		goTest: regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`),
		// go test package lines: "ok  \tpkg\t0.1s", "FAIL\tpkg [build failed]".
		goPackage: regexp.MustCompile(`^(?:ok|FAIL|\?) *\t\S`),
		// Django's runner with -v 2: "test_x (module.Class) ... ok".
		djangoTest: regexp.MustCompile(`^(\w+ \([\w.]+\))(?: \S.*)? \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b`),
	}
})

// ParseTestOutput reads a test log and returns the status of each test it
// reports, and whether the log holds any output of a known test runner
// (test lines, or go test's per-package summary lines, which are there even
// when a package does not build). It understands:
//
//   - pytest with -rA: the short summary lines "PASSED id", "FAILED id -
//     message", "ERROR id", "SKIPPED ...", "XFAIL id", "XPASS id"; and with -v
//     the lines "id PASSED [ 50%]";
//   - go test -v: "--- PASS: TestX", "--- FAIL: TestX", "--- SKIP: TestX",
//     subtests as "TestX/sub";
//   - Django's test runner at verbosity 2: "test_x (module.Class) ... ok".
//
// A test reported more than once keeps its worst status (a failure in one
// package or one parametrization is not undone by a pass in another).
func ParseTestOutput(log string) (map[string]string, bool) {
	st := map[string]string{}
	known := false
	re := testLines()
	set := func(id, s string) {
		known = true
		if old, ok := st[id]; ok && rank(old) >= rank(s) {
			return
		}
		st[id] = s
	}
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := re.pytestSummary.FindStringSubmatch(line); m != nil {
			if m[1] == TestSkipped {
				// "SKIPPED [1] tests/x.py:12: reason" names no test id.
				known = true
				continue
			}
			id := m[2]
			if m[1] == TestFailed || m[1] == TestError {
				id = cutMessage(id)
			}
			set(id, m[1])
			continue
		}
		if m := re.pytestVerbose.FindStringSubmatch(line); m != nil {
			set(m[1], m[2])
			continue
		}
		if m := re.goTest.FindStringSubmatch(line); m != nil {
			set(m[2], map[string]string{"PASS": TestPassed, "FAIL": TestFailed, "SKIP": TestSkipped}[m[1]])
			continue
		}
		if m := re.djangoTest.FindStringSubmatch(line); m != nil {
			s := map[string]string{"ok": TestPassed, "FAIL": TestFailed, "ERROR": TestError, "skipped": TestSkipped,
				"expected failure": TestXFail, "unexpected success": TestXPass}[m[2]]
			set(m[1], s)
			continue
		}
		if re.goPackage.MatchString(line) {
			known = true
		}
	}
	return st, known
}

// rank orders statuses from best to worst, for tests reported twice.
func rank(s string) int {
	switch s {
	case TestPassed, TestXFail:
		return 1
	case TestSkipped:
		return 0
	case TestXPass:
		return 2
	case TestFailed:
		return 3
	case TestError:
		return 4
	}
	return 0
}

// cutMessage removes pytest's " - message" after a failed test id, leaving
// " - " inside a parametrization's brackets alone.
func cutMessage(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth == 0 && strings.HasPrefix(s[i:], " - ") {
				return s[:i]
			}
		}
	}
	return strings.TrimSpace(s)
}

// TestsStatus is SWE-bench's tests_status: for each group of tests, those
// that succeeded and those that failed.
type TestsStatus struct {
	FailToPass TestGroup `json:"FAIL_TO_PASS"`
	PassToPass TestGroup `json:"PASS_TO_PASS"`
	FailToFail TestGroup `json:"FAIL_TO_FAIL"`
	PassToFail TestGroup `json:"PASS_TO_FAIL"`
}

// TestGroup lists tests by outcome. Both lists are always present.
type TestGroup struct {
	Success []string `json:"success"`
	Failure []string `json:"failure"`
}

// Grade sorts the FAIL_TO_PASS and PASS_TO_PASS tests of inst by the
// statuses of a test log, as SWE-bench's grading does: a test passes when
// it PASSED or XFAILed; a FAIL_TO_PASS test fails otherwise (FAILED, ERROR,
// SKIPPED, or missing from the log); a PASS_TO_PASS test is also kept when
// it was SKIPPED. The instance is resolved when no test of either group
// failed.
func Grade(inst Instance, statuses map[string]string) (TestsStatus, bool) {
	ts := TestsStatus{
		FailToPass: group(inst.FailToPass, statuses, false),
		PassToPass: group(inst.PassToPass, statuses, true),
		FailToFail: TestGroup{Success: []string{}, Failure: []string{}},
		PassToFail: TestGroup{Success: []string{}, Failure: []string{}},
	}
	return ts, len(ts.FailToPass.Failure) == 0 && len(ts.PassToPass.Failure) == 0
}

func group(tests []string, statuses map[string]string, skipKeeps bool) TestGroup {
	g := TestGroup{Success: []string{}, Failure: []string{}}
	for _, t := range tests {
		switch s := statuses[t]; {
		case s == TestPassed || s == TestXFail || skipKeeps && s == TestSkipped:
			g.Success = append(g.Success, t)
		default:
			g.Failure = append(g.Failure, t)
		}
	}
	return g
}

// testOutcomes gives each graded test's status in the log, MISSING when
// the log does not name it.
func testOutcomes(inst Instance, statuses map[string]string) map[string]string {
	out := map[string]string{}
	for _, t := range append(append([]string{}, inst.FailToPass...), inst.PassToPass...) {
		if s, ok := statuses[t]; ok {
			out[t] = s
		} else {
			out[t] = "MISSING"
		}
	}
	return out
}
