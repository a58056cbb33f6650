package swe

import (
	"os"
	"path/filepath"
	"testing"
)

// The logs under testdata/logs were written by running the runners here:
// sympy's bin/test --verbose on sympy/core/tests/test_basic.py of
// sympy__sympy-20590 (before and after the gold patch, and with an erroring
// and a skipped test added), pytest -rA on flask's tests/test_cli.py of
// pallets__flask-5063 (before and after the gold patch) and on a small file of
// every outcome (also with --color=yes), and Django 3.2's test runner at
// verbosity 2 on a small app.
func readLog(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogParsers(t *testing.T) {
	cases := []struct {
		parser, log string
		want        map[string]string // a subset of the statuses
		absent      []string          // names the parser must not report
		count       int               // number of statuses, -1 to skip
	}{
		{"sympy", "sympy-bin-test-fail.log", map[string]string{
			"test_immutable": TestFailed, "test__aresame": TestPassed, "test_canonical_variables": TestPassed,
			"sympy/core/tests/test_basic.py:test_immutable": TestFailed,
		}, []string{"test_replace_exceptions"}, 23},
		{"sympy", "sympy-bin-test-pass.log", map[string]string{
			"test_immutable": TestPassed, "test_structure": TestPassed,
		}, []string{"test_replace_exceptions"}, 22},
		{"sympy", "sympy-bin-test-error.log", map[string]string{
			"test_raises_error": TestError, "test_replace_exceptions": TestPassed, "test_immutable": TestPassed,
			"sympy/core/tests/test_basic.py:test_raises_error": TestFailed,
		}, []string{"test_skipped_one"}, -1},
		{"pytest", "pytest-flask-5063-fail.log", map[string]string{
			"tests/test_cli.py::TestRoutes::test_subdomain": TestFailed,
			"tests/test_cli.py::TestRoutes::test_host":      TestFailed,
			"tests/test_cli.py::test_cli_name":              TestPassed,
			// The official parser cuts a name at its first space; the
			// dataset's ids are cut the same way.
			`tests/test_cli.py::test_locate_app[cliapp.factory-create_app2("foo",`: TestPassed,
		}, nil, -1},
		{"pytest", "pytest-flask-5063-pass.log", map[string]string{
			"tests/test_cli.py::TestRoutes::test_subdomain": TestPassed,
			"tests/test_cli.py::TestRoutes::test_host":      TestPassed,
		}, nil, -1},
		{"pytest", "pytest-misc.log", map[string]string{
			"tests/test_misc.py::test_ok":                        TestPassed,
			"tests/test_misc.py::test_fails":                     TestFailed,
			"tests/test_misc.py::test_errors":                    TestError,
			"tests/test_misc.py::test_xfails":                    TestXFail,
			"tests/test_misc.py::test_param[a":                   TestPassed,
			"tests/test_misc.py::test_param[x":                   TestFailed,
			"tests/test_misc.py::test_param[/abs/path/file.txt]": TestPassed,
			// "___ ERROR at setup of test_errors ___" reads as a test named
			// by the underscores, in the official parser too.
			"________________________": TestError,
		}, []string{"[1]", "tests/test_misc.py::test_skipped"}, 8},
		{"pytest_options", "pytest-misc.log", map[string]string{
			"tests/test_misc.py::test_param[/file.txt]": TestPassed,
			"tests/test_misc.py::test_ok":               TestPassed,
		}, []string{"tests/test_misc.py::test_param[/abs/path/file.txt]"}, 8},
		// Without removing colour codes, pytest's coloured lines name nothing.
		{"pytest", "pytest-misc-color.log", nil, []string{"tests/test_misc.py::test_ok"}, 1},
		{"pytest_v2", "pytest-misc-color.log", map[string]string{
			"tests/test_misc.py::test_ok":    TestPassed,
			"tests/test_misc.py::test_fails": TestFailed,
		}, nil, 8},
		{"seaborn", "pytest-misc.log", map[string]string{
			"tests/test_misc.py::test_ok":    TestPassed,
			"tests/test_misc.py::test_fails": TestFailed,
		}, []string{"tests/test_misc.py::test_errors"}, -1},
		{"matplotlib", "pytest-misc.log", map[string]string{
			"tests/test_misc.py::test_ok":     TestPassed,
			"tests/test_misc.py::test_errors": TestError,
			"tests/test_misc.py::test_xfails": TestXFail,
			"[1]":                             TestSkipped,
		}, nil, -1},
		{"django", "django-test-v2.log", map[string]string{
			"test_adds (app.tests.MathTests.test_adds)":       TestPassed,
			"test_fails (app.tests.MathTests.test_fails)":     TestFailed,
			"test_errors (app.tests.MathTests.test_errors)":   TestError,
			"test_skipped (app.tests.MathTests.test_skipped)": TestSkipped,
			// "... some output" then "ok" on a later line.
			"test_prints (app.tests.MathTests.test_prints)": TestPassed,
		}, []string{"test_expected_failure (app.tests.MathTests.test_expected_failure)"}, -1},
	}
	for _, c := range cases {
		t.Run(c.parser+"/"+c.log, func(t *testing.T) {
			st, ok := ParseLog(c.parser, readLog(t, c.log))
			if !ok {
				t.Fatalf("no parser %q", c.parser)
			}
			for name, want := range c.want {
				if got := st[name]; got != want {
					t.Errorf("%q: %q, want %q", name, got, want)
				}
			}
			for _, name := range c.absent {
				if s, ok := st[name]; ok {
					t.Errorf("%q reported as %s", name, s)
				}
			}
			if c.count >= 0 && len(st) != c.count {
				t.Errorf("%d statuses, want %d: %v", len(st), c.count, st)
			}
		})
	}
}

func TestMatplotlibMouseButtons(t *testing.T) {
	st, _ := ParseLog("matplotlib", "PASSED lib/matplotlib/tests/test_backend_bases.py::test_interactive_zoom[MouseButton.LEFT-x]\n")
	if st["lib/matplotlib/tests/test_backend_bases.py::test_interactive_zoom[1-x]"] != TestPassed {
		t.Errorf("mouse button not renamed: %v", st)
	}
}

// TestGradeSkips checks the official rules for skipped and missing tests.
func TestGradeSkips(t *testing.T) {
	inst := Instance{FailToPass: []string{"f_pass", "f_skip", "f_missing", "f_xfail"}, PassToPass: []string{"p_pass", "p_skip", "p_missing", "p_error"}}
	ts, resolved := Grade(inst, map[string]string{
		"f_pass": TestPassed, "f_skip": TestSkipped, "f_xfail": TestXFail,
		"p_pass": TestPassed, "p_skip": TestSkipped, "p_error": TestError,
	})
	if resolved {
		t.Error("resolved with failures")
	}
	check := func(name string, got, want []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", name, got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
		}
	}
	check("F2P success", ts.FailToPass.Success, []string{"f_pass", "f_xfail"})
	check("F2P failure", ts.FailToPass.Failure, []string{"f_skip", "f_missing"})
	check("P2P success", ts.PassToPass.Success, []string{"p_pass", "p_skip"})
	check("P2P failure", ts.PassToPass.Failure, []string{"p_missing", "p_error"})
	if _, ok := Grade(Instance{FailToPass: []string{"a"}, PassToPass: []string{"b"}}, map[string]string{"a": TestPassed, "b": TestSkipped}); !ok {
		t.Error("all passing (P2P skipped) not resolved")
	}
	out := testOutcomes(inst, map[string]string{"f_pass": TestPassed})
	if out["f_pass"] != TestPassed || out["p_missing"] != "MISSING" || len(out) != 8 {
		t.Errorf("outcomes %v", out)
	}
}
