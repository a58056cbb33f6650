package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/cmd/internal/cli/benchcli"
)

// The tests run every command in process, as patchbench-full does.
type stdio = cli.Stdio

func run(args []string, sio stdio) int { return benchcli.Run(args, sio) }

// TestFullOnly checks that patchbench hands over exactly the commands
// benchcli has.
func TestFullOnly(t *testing.T) {
	var have, handed []string
	for _, c := range benchcli.Commands(cli.OSStdio()) {
		have = append(have, c.Name())
	}
	for _, c := range cli.FullOnly {
		handed = append(handed, c.Name)
	}
	slices.Sort(have)
	slices.Sort(handed)
	if !slices.Equal(have, handed) {
		t.Errorf("benchcli has %v, patchbench hands over %v", have, handed)
	}
}

// TestLinksNoBenchmarkLibraries checks that the patchbench binary does
// not link the libraries whose initialisation made its start-up slow: the
// benchmarks' and the CLI library's (docs/startup.md).
func TestLinksNoBenchmarkLibraries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"openai-go", "anthropic-sdk-go", "modernc.org/sqlite", "parquet-go", "internal/cli/benchcli", "/bench/swe", "/bench/diffxyz", "modelcontextprotocol/go-sdk", "spf13/cobra", "spf13/pflag"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("patchbench links %s", dep)
			}
		}
		// net makes a cgo build link libc dynamically; text/template and
		// regexp-heavy CLI libraries initialise at every start.
		if dep == "net" || dep == "text/template" || dep == "os/user" {
			t.Errorf("patchbench links %s", dep)
		}
	}
}

// TestLeanAndFullAgree: both binaries read an engine command's line the
// same way: the same output, errors and exit code.
func TestLeanAndFullAgree(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("one\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"apply", "--help"}, {"help", "apply"}, {"diff", "-h"}, {"help", "repair"}, {"convert", "--help"},
		{"applybench", "--help"}, {"report", "--help"}, {"--version"},
		{"diff", a, b}, {"diff", "-U1", "--format=udiff-h", a, b}, {"diff", a, "--algorithm", "myers", b},
		{"apply"}, {"apply", "--bogus", "x"}, {"apply", "-C"}, {"convert", "x.diff"}, {"diff", "-U", "x", a, b},
		{"diff", a}, {"applybench", "--cases", "c.jsonl", "extra"}, {"applybench", "--cases", "c.jsonl", "--workers", "-1"},
		{"report"}, {"apply", "--check=maybe", "x"},
	} {
		var lo, le, fo, fe strings.Builder
		lc := cli.Run(args, stdio{In: strings.NewReader(""), Out: &lo, Err: &le})
		fc := run(args, stdio{In: strings.NewReader(""), Out: &fo, Err: &fe})
		if lc != fc || lo.String() != fo.String() || le.String() != fe.String() {
			t.Errorf("%q: patchbench exit %d, out %q, err %q; patchbench-full exit %d, out %q, err %q", args, lc, lo.String(), le.String(), fc, fo.String(), fe.String())
		}
		if strings.Contains(args[0], "help") || slices.Contains(args, "--help") || slices.Contains(args, "-h") {
			if lc != 0 || !strings.Contains(lo.String(), "Usage:\n  patchbench ") {
				t.Errorf("%q: exit %d, help %q", args, lc, lo.String())
			}
		}
	}
}

// TestHandOver builds both binaries and runs a benchmark command through
// patchbench: it must reach patchbench-full (same output and exit code),
// and say how to install it when it is missing.
func TestHandOver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	for _, b := range []string{"patchbench", "patchbench-full"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b), "../"+b)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b, err, out)
		}
	}
	// An input error of diffxyz run: exit 2 from patchbench-full.
	cmd := exec.Command(filepath.Join(dir, "patchbench"), "diffxyz", "run", "--dataset", filepath.Join(dir, "missing.jsonl"), "--model", "reference", "--out", filepath.Join(dir, "out"))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "missing.jsonl") {
		t.Errorf("handed over diffxyz run: %v\n%s", err, out)
	}
	// Shell completion is patchbench-full's (cobra's), engine flags included.
	out, err = exec.Command(filepath.Join(dir, "patchbench"), "__complete", "apply", "--st").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--strict\tapply only a well-formed patch") || !strings.Contains(string(out), "--strip\tremove N leading path components") {
		t.Errorf("__complete apply --st: %v\n%s", err, out)
	}
	// --help reaches the benchmark's own help.
	out, err = exec.Command(filepath.Join(dir, "patchbench"), "swe", "eval", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--predictions") {
		t.Errorf("swe eval --help: %v\n%s", err, out)
	}
	// report --html is handed over too (the page embeds the Vega bundles,
	// which only patchbench-full carries); plain report stays here.
	run := filepath.Join(dir, "run")
	if out, err := exec.Command(filepath.Join(dir, "patchbench"), "diffxyz", "run", "--dataset", "../../testdata/diffxyz-sample.jsonl", "--model", "reference", "--out", run).CombinedOutput(); err != nil {
		t.Fatalf("diffxyz run: %v\n%s", err, out)
	}
	page := filepath.Join(dir, "page.html")
	rows := strings.Count(readFile(t, filepath.Join(run, "results.jsonl")), "\n")
	if out, err := exec.Command(filepath.Join(dir, "patchbench"), "report", "--html", page, run).CombinedOutput(); err != nil {
		t.Errorf("report --html: %v\n%s", err, out)
	} else if want := fmt.Sprintf("%d cases of 1 runs written", rows); !strings.Contains(string(out), want) {
		t.Errorf("report --html says %q, want %q", out, want)
	} else if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "vega") {
		t.Errorf("report --html wrote no page with its charts: %v (%d bytes)", err, len(b))
	}
	// Without patchbench-full beside it or in PATH.
	if err := os.Remove(filepath.Join(dir, "patchbench-full")); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(filepath.Join(dir, "patchbench"), "report", run)
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "reference") {
		t.Errorf("report without patchbench-full: %v\n%s", err, out)
	}
	cmd = exec.Command(filepath.Join(dir, "patchbench"), "report", "--html", page, run)
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "patchbench-full") {
		t.Errorf("report --html without patchbench-full: %v\n%s", err, out)
	}
	cmd = exec.Command(filepath.Join(dir, "patchbench"), "swe", "eval")
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	out, err = cmd.CombinedOutput()
	// The install it suggests is one that works: the module is not
	// published, so ...@latest does not resolve.
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "go install ./cmd/patchbench-full") || strings.Contains(string(out), "@latest") {
		t.Errorf("without patchbench-full: %v\n%s", err, out)
	}
}
