package swe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testPatchTwoFiles = `diff --git a/tests/static/config.toml b/tests/static/config.toml
new file mode 100644
--- /dev/null
+++ b/tests/static/config.toml
@@ -0,0 +1 @@
+X = 1
diff --git a/tests/test_config.py b/tests/test_config.py
--- a/tests/test_config.py
+++ b/tests/test_config.py
@@ -1 +1 @@
-a
+b
diff --git a/tests/admin_views/tests.py b/tests/admin_views/tests.py
--- a/tests/admin_views/tests.py
+++ b/tests/admin_views/tests.py
@@ -1 +1 @@
-a
+b
diff --git a/tests/admin_views/models.py b/tests/admin_views/models.py
--- a/tests/admin_views/models.py
+++ b/tests/admin_views/models.py
@@ -1 +1 @@
-a
+b
`

func TestBuiltinSpecs(t *testing.T) {
	specs := BuiltinSpecs()
	// Every repository of SWE-bench Lite and Verified.
	for _, repo := range []string{"astropy/astropy", "django/django", "matplotlib/matplotlib", "mwaskom/seaborn",
		"pallets/flask", "psf/requests", "pydata/xarray", "pylint-dev/pylint", "pytest-dev/pytest",
		"scikit-learn/scikit-learn", "sphinx-doc/sphinx", "sympy/sympy"} {
		if _, ok := specs.Lookup(repo, "1.0"); !ok {
			t.Errorf("no built-in spec for %s", repo)
		}
	}
	// Django's labels leave out files that are not tests (models.py outside
	// a tests/ directory below the top one), as the official harness does.
	cases := []struct {
		repo, version, parser, cmd string
	}{
		{"sympy/sympy", "1.7", "sympy", "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose tests/test_config.py tests/admin_views/tests.py tests/admin_views/models.py"},
		{"pallets/flask", "2.3", "pytest", "pytest -rA tests/test_config.py tests/admin_views/tests.py tests/admin_views/models.py"},
		{"django/django", "4.0", "django", "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 test_config admin_views.tests"},
		{"django/django", "1.9", "django", "export LANG=en_US.UTF-8\nexport LC_ALL=en_US.UTF-8\nexport PYTHONIOENCODING=utf8\nexport LANGUAGE=en_US:en\n./tests/runtests.py --verbosity 2 test_config admin_views.tests"},
		{"astropy/astropy", "1.3", "pytest_v2", "pytest -rA -vv -o console_output_style=classic --tb=no -p no:nose tests/test_config.py tests/admin_views/tests.py tests/admin_views/models.py"},
		{"psf/requests", "2.0", "pytest_options", "pytest -rA tests/test_config.py tests/admin_views/tests.py tests/admin_views/models.py"},
	}
	for _, c := range cases {
		s, ok := specs.Lookup(c.repo, c.version)
		if !ok {
			t.Errorf("%s %s: no spec", c.repo, c.version)
			continue
		}
		if s.Parser != c.parser {
			t.Errorf("%s %s: parser %s, want %s", c.repo, c.version, s.Parser, c.parser)
		}
		if got := s.Command(Instance{Repo: c.repo, Version: c.version, TestPatch: testPatchTwoFiles}); got != c.cmd {
			t.Errorf("%s %s: command\n%s\nwant\n%s", c.repo, c.version, got, c.cmd)
		}
	}
	if _, ok := specs.Lookup("someone/else", "1.0"); ok {
		t.Error("a spec for an unknown repository")
	}
}

func TestLoadSpecs(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "spec.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := LoadSpecs(write(`pallets/flask:
  - versions: ["2.3"]
    test_cmd: python3 -m pytest -rA
    parser: pytest
    env: [PYTHONPATH=src]
`))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.Lookup("pallets/flask", "2.3")
	if !ok || got.TestCmd != "python3 -m pytest -rA" || got.Directives != "files" || len(got.Env) != 1 {
		t.Errorf("spec %+v %v", got, ok)
	}
	if _, ok := s.Lookup("pallets/flask", "2.0"); ok {
		t.Error("version 2.0 matched an entry for 2.3")
	}
	for _, bad := range []struct{ text, want string }{
		{"pallets/flask:\n  - versions: [\"*\"]\n    test_cmd: pytest\n    parser: nose\n", `unknown parser "nose"`},
		{"pallets/flask:\n  - versions: [\"*\"]\n    parser: pytest\n", "no test_cmd"},
		{"pallets/flask:\n  - test_cmd: pytest\n    parser: pytest\n", "no versions"},
		{"pallets/flask:\n  - versions: [\"*\"]\n    test_cmd: pytest\n    parser: pytest\n    directive: files\n", "unknown field"},
		{"pallets/flask:\n  - versions: [\"*\"]\n    test_cmd: pytest\n    parser: pytest\n    directives: modules\n", `unknown directives "modules"`},
	} {
		_, err := LoadSpecs(write(bad.text))
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "spec.yaml") {
			t.Errorf("%q: error %v, want one naming the file and %q", bad.text, err, bad.want)
		}
	}
}

func TestTestCommandPrecedence(t *testing.T) {
	user := SpecTable{"pallets/flask": {{Versions: []string{"*"}, Spec: Spec{TestCmd: "mine", Parser: "pytest", Directives: "none"}}}}
	inst := Instance{Repo: "pallets/flask", Version: "2.3", TestPatch: testPatchTwoFiles, FailToPass: []string{"tests/a.py::t"}}
	cases := []struct {
		name       string
		cfg        TestConfig
		rowCmd     string
		cmd, parse string
	}{
		{"row", TestConfig{Specs: user, Command: "tmpl {tests}"}, "row {tests}", "row tests/a.py::t", "auto"},
		{"user spec", TestConfig{Specs: user, Command: "tmpl {tests}"}, "", "mine", "pytest"},
		{"template", TestConfig{Command: "tmpl {tests}"}, "", "tmpl tests/a.py::t", "auto"},
		{"builtin", TestConfig{}, "", "pytest -rA tests/test_config.py tests/admin_views/tests.py tests/admin_views/models.py", "pytest"},
		{"none", TestConfig{NoBuiltinSpecs: true}, "", "", ""},
	}
	for _, c := range cases {
		in := inst
		in.TestCmd = c.rowCmd
		cmd, parser, _ := c.cfg.testCommand(in)
		if cmd != c.cmd || parser != c.parse {
			t.Errorf("%s: %q %q, want %q %q", c.name, cmd, parser, c.cmd, c.parse)
		}
	}
}
