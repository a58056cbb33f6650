package swe_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
)

func TestParseTestOutput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		log   string
		want  map[string]string
		known bool
	}{
		{"pytest -rA", `============================= test session starts ==============================
collected 4 items

tests/test_calc.py ..F.s                                                   [100%]

=========================== short test summary info ============================
PASSED tests/test_calc.py::test_add
PASSED tests/test_calc.py::test_p[a - b]
FAILED tests/test_calc.py::test_average_fraction - assert 1 == 1.5
FAILED tests/test_calc.py::test_q[x - y] - AssertionError: boom - bang
ERROR tests/test_other.py - ImportError: no module
SKIPPED [1] tests/test_calc.py:20: not today
XFAIL tests/test_calc.py::test_known - reason
==================== 1 failed, 2 passed, 1 skipped in 0.02s ====================
`, map[string]string{
			"tests/test_calc.py::test_add":              "PASSED",
			"tests/test_calc.py::test_p[a - b]":         "PASSED",
			"tests/test_calc.py::test_average_fraction": "FAILED",
			"tests/test_calc.py::test_q[x - y]":         "FAILED",
			"tests/test_other.py":                       "ERROR",
			"tests/test_calc.py::test_known - reason":   "XFAIL",
		}, true},
		{"pytest -v", "tests/test_a.py::test_one PASSED                     [ 50%]\ntests/test_a.py::test_two FAILED   [100%]\n",
			map[string]string{"tests/test_a.py::test_one": "PASSED", "tests/test_a.py::test_two": "FAILED"}, true},
		{"go test -v", `=== RUN   TestMax
--- PASS: TestMax (0.00s)
=== RUN   TestAbs
=== RUN   TestAbs/negative
    calc_test.go:12: Abs(-3) = -3
--- FAIL: TestAbs (0.00s)
    --- FAIL: TestAbs/negative (0.00s)
=== RUN   TestSkip
--- SKIP: TestSkip (0.00s)
FAIL
FAIL	example.com/gocalc	0.002s
ok  	example.com/gocalc/sub	0.001s
`, map[string]string{"TestMax": "PASSED", "TestAbs": "FAILED", "TestAbs/negative": "FAILED", "TestSkip": "SKIPPED"}, true},
		{"go test, pass in one package and fail in another", "--- PASS: TestX (0.00s)\n--- FAIL: TestX (0.00s)\n--- PASS: TestX (0.00s)\n",
			map[string]string{"TestX": "FAILED"}, true},
		{"go build failure", "# example.com/gocalc\n./calc.go:5:2: syntax error\nFAIL\texample.com/gocalc [build failed]\nFAIL\n",
			map[string]string{}, true},
		{"django", "test_add (calc.tests.CalcTests) ... ok\ntest_div (calc.tests.CalcTests)\nDivision works. ... FAIL\ntest_mul (calc.tests.CalcTests) ... ERROR\ntest_skip (calc.tests.CalcTests) ... skipped 'no'\n",
			map[string]string{"test_add (calc.tests.CalcTests)": "PASSED", "test_mul (calc.tests.CalcTests)": "ERROR", "test_skip (calc.tests.CalcTests)": "SKIPPED"}, true},
		{"nothing", "sh: 1: pytest: not found\n", map[string]string{}, false},
	} {
		got, known := swe.ParseTestOutput(tc.log)
		if diff := cmp.Diff(tc.want, got); diff != "" || known != tc.known {
			t.Errorf("%s: known %v (want %v), statuses (-want +got):\n%s", tc.name, known, tc.known, diff)
		}
	}
}

func TestGrade(t *testing.T) {
	inst := swe.Instance{FailToPass: []string{"f1", "f2", "f3"}, PassToPass: []string{"p1", "p2", "p3"}}
	ts, resolved := swe.Grade(inst, map[string]string{"f1": "PASSED", "f2": "XFAIL", "f3": "SKIPPED", "p1": "PASSED", "p2": "PASSED", "p3": "SKIPPED"})
	if resolved || !cmp.Equal(ts.FailToPass.Success, []string{"f1", "f2"}) || !cmp.Equal(ts.FailToPass.Failure, []string{"f3"}) ||
		!cmp.Equal(ts.PassToPass.Success, []string{"p1", "p2", "p3"}) {
		t.Errorf("a skipped FAIL_TO_PASS test fails and a skipped PASS_TO_PASS test is kept, as in SWE-bench's grading: %+v %v", ts, resolved)
	}
	ts, resolved = swe.Grade(inst, map[string]string{"f1": "PASSED", "f2": "PASSED", "f3": "PASSED", "p1": "PASSED", "p2": "ERROR"})
	if resolved || !cmp.Equal(ts.PassToPass.Failure, []string{"p2", "p3"}) {
		t.Errorf("an error and a missing test are failures: %+v %v", ts, resolved)
	}
	if _, resolved := swe.Grade(swe.Instance{}, nil); !resolved {
		t.Error("no tests to pass: resolved, as SWE-bench rates an empty group 1")
	}
}

func TestIsTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/test_calc.py": true, "test_x.py": true, "pkg/x_test.py": true, "conftest.py": true, "a/calc_test.go": true,
		"src/test/java/FooTest.java": true, "FooTests.kt": true, "src/x.test.ts": true, "lib/x.spec.js": true,
		"spec/models/user_spec.rb": true, "__tests__/a.js": true, "testing/helpers.go": true,
		"calc.py": false, "contest.py": false, "src/latest/x.go": false, "attest.go": false, "testdata.go": false, "": false,
	} {
		if got := swe.IsTestPath(p); got != want {
			t.Errorf("IsTestPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestExpandTemplate(t *testing.T) {
	inst := swe.Instance{InstanceID: "a__b-1", Repo: "a/b", BaseCommit: "abc", Version: "1.2",
		FailToPass: []string{"tests/t.py::test_x[a b]", "TestA/sub"}, PassToPass: []string{"TestA/other", "it's",
			// Cut at a space by SWE-bench's log parser, twice: passed once,
			// as the test it parametrizes.
			`tests/t.py::test_y[f("a",`, `tests/t.py::test_y[f("a", )-b`}}
	got := swe.ExpandTemplate("cd {repo} && run {tests} -run {tests_regex} # {instance_id} {base_commit} {version}", inst)
	want := `cd a/b && run 'tests/t.py::test_x[a b]' TestA/sub TestA/other 'it'\''s' tests/t.py::test_y -run '^(tests|TestA|it'\''s)$' # a__b-1 abc 1.2`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestExpandTemplateQuotes: values holding commands and placeholders are
// one word each, filled in once; an image gets the values unquoted and is
// refused when they make it no image reference.
func TestExpandTemplateQuotes(t *testing.T) {
	inst := swe.Instance{InstanceID: "q;echo INJ-$((6*7))", Repo: "o/{version}", Version: "`id`", BaseCommit: "c",
		FailToPass: []string{"t'{instance_id}"}}
	got := swe.ExpandTemplate("run {tests} {instance_id} {repo} {version}", inst)
	want := `run 't'\''{instance_id}' 'q;echo INJ-$((6*7))' 'o/{version}' '` + "`id`'"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, c := range []struct {
		tmpl, id, want string
		ok             bool
	}{
		{"reg.example/sweb.eval.{instance_id}:v1", "django__django-11099", "reg.example/sweb.eval.django__django-11099:v1", true},
		{"img:{instance_id}", "q;echo INJ-$((6*7))", "", false},
		{"{instance_id}", "--privileged", "", false},
		{"img:{instance_id}", "a b", "", false},
	} {
		got, err := swe.ExpandImage(c.tmpl, swe.Instance{InstanceID: c.id})
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ExpandImage(%q, %q) = %q, %v; want %q, ok %v", c.tmpl, c.id, got, err, c.want, c.ok)
		}
	}
}

func TestSafeID(t *testing.T) {
	for in, want := range map[string]string{
		"django__django-11099": "django__django-11099",
		"a/b:c":                "a_b_c~",
		"..":                   "_.~",
		"":                     "~",
	} {
		got := swe.SafeID(in)
		if got != want && !(strings.HasSuffix(want, "~") && strings.HasPrefix(got, want) && len(got) == len(want)+16) {
			t.Errorf("SafeID(%q) = %q, want %q", in, got, want)
		}
	}
	// Injective: ids that one character class would merge keep apart.
	seen := map[string]string{}
	for _, id := range []string{"a/b", "a_b", "a:b", "a b", "a\\b", strings.Repeat("x", 300), strings.Repeat("x", 301), "A_B", ".a", "_a"} {
		name := swe.SafeID(id)
		if prev, ok := seen[name]; ok {
			t.Errorf("SafeID(%q) = SafeID(%q) = %q", id, prev, name)
		}
		seen[name] = id
		if len(name) > 100 || strings.ContainsAny(name, "/\\:") || name == "." || name == ".." {
			t.Errorf("SafeID(%q) = %q: not a short plain name", id, name)
		}
	}
}
