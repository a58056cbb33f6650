package cli

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// TestVersion: --version names the program, the module version (the test
// binary's main module is "(devel)") and the Go release, and exits 0.
func TestVersion(t *testing.T) {
	code, out, _ := run(t, "--version")
	if code != ExitOK {
		t.Fatalf("--version exit %d", code)
	}
	want := "patchbench " + Version() + "\n"
	if out != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	if !strings.HasSuffix(Version(), " "+runtime.Version()) {
		t.Errorf("Version() = %q, want it to end with the Go release %s", Version(), runtime.Version())
	}
}

// TestRepairStripHelp: the help of repair -p states its one default (the
// strip is decided per file), not cobra's "(default 1)" beside it.
func TestRepairStripHelp(t *testing.T) {
	code, out, _ := run(t, "repair", "--help")
	if code != ExitOK {
		t.Fatalf("repair --help exit %d", code)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "--strip") {
			line = l
		}
	}
	if !strings.Contains(line, "decided per file") || strings.Count(line, "default") != 1 {
		t.Errorf("repair --help: %q, want one default, decided per file", line)
	}
}

// TestEngineNames: each engine command is found under the name its help
// gives it.
func TestEngineNames(t *testing.T) {
	for _, c := range Engine(OSStdio()) {
		if got := engineCommand(c.Name(), OSStdio()); got == nil || got.Use != c.Use {
			t.Errorf("engineCommand(%q) = %v", c.Name(), got)
		}
	}
}
