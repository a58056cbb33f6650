package swe

import (
	"context"
	"errors"
	"testing"

	"github.com/patchbench/patchbench/sandbox"
)

func TestOfficialImageName(t *testing.T) {
	for id, want := range map[string]string{
		"django__django-11099":          "swebench/sweb.eval.x86_64.django_1776_django-11099:latest",
		"astropy__astropy-12907":        "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest",
		"scikit-learn__scikit-learn-10": "swebench/sweb.eval.x86_64.scikit-learn_1776_scikit-learn-10:latest",
		"PyCQA__flake8-42":              "swebench/sweb.eval.x86_64.pycqa_1776_flake8-42:latest",
	} {
		if got := OfficialImageName(id); got != want {
			t.Errorf("OfficialImageName(%q) = %q, want %q", id, got, want)
		}
	}
}

// The official harness grades the log between its start and end markers:
// test lines printed before (by git apply -v, say) do not count.
func TestTestOutput(t *testing.T) {
	res := sandbox.Result{
		Stdout: []byte("Checking patch tests/test_x.py...\nPASSED tests/test_x.py::test_fake\n>>>>> Start Test Output\nPASSED tests/test_x.py::test_a\n>>>>> End Test Output\n"),
		Stderr: []byte("warning\n"),
	}
	if got, want := string(testOutput(res)), "\nPASSED tests/test_x.py::test_a\n\nwarning\n"; got != want {
		t.Errorf("testOutput = %q, want %q", got, want)
	}
	plain := sandbox.Result{Stdout: []byte("ok\n")}
	if got := string(testOutput(plain)); got != "ok\n" {
		t.Errorf("testOutput without markers = %q", got)
	}
}

// The official images are Docker images: another sandbox is refused
// before any engine is asked.
func TestOfficialImageNeedsDocker(t *testing.T) {
	for _, kind := range []string{"bwrap", "none"} {
		if _, err := NewSandbox(context.Background(), kind, OfficialImage); !errors.Is(err, ErrInput) {
			t.Errorf("--sandbox %s --image swebench: %v, want an input error", kind, err)
		}
	}
}
