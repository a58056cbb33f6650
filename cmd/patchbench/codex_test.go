package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/internal/testtree"
)

// codexScenario is one of codex's apply_patch scenarios: the tree before,
// the patch, and the tree codex leaves.
type codexScenario struct {
	name            string
	patch           []byte
	input, expected map[string]string
}

// partialSuccess is the scenario where codex keeps the files it wrote before
// a failing section; patchbench writes nothing, on purpose.
const partialSuccess = "015_failure_after_partial_success_leaves_changes"

// TestCodexScenarios runs codex's apply_patch scenarios through the CLI, in
// tolerant and strict mode, and compares the whole tree with codex's: the
// copies in testdata/codex, and all 25 from ../shared/data when present.
// 015 must be refused with the tree left as it was; every other scenario
// must give codex's tree.
func TestCodexScenarios(t *testing.T) {
	sets := map[string][]codexScenario{"testdata/codex": txtarScenarios(t)}
	if sc := sharedScenarios(t); sc != nil {
		sets["shared data"] = sc
	}
	for from, scenarios := range sets {
		if len(scenarios) == 0 {
			t.Fatalf("no scenarios in %s", from)
		}
		for _, mode := range []string{"tolerant", "strict"} {
			same := 0
			for _, sc := range scenarios {
				if runScenario(t, sc, mode) {
					same++
				}
			}
			t.Logf("%s, %s: codex's tree in %d of %d scenarios", from, mode, same, len(scenarios))
			if same != len(scenarios)-1 {
				t.Errorf("%s, %s: codex's tree in %d of %d scenarios, want all but %s", from, mode, same, len(scenarios), partialSuccess)
			}
		}
	}
}

// runScenario applies one scenario in a fresh directory and reports whether
// the tree is codex's.
func runScenario(t *testing.T, sc codexScenario, mode string) bool {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, sc.input)
	patchFile := filepath.Join(t.TempDir(), "patch.txt")
	if err := os.WriteFile(patchFile, sc.patch, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "-C", dir, patchFile}
	if mode == "strict" {
		args = append(args, "--strict")
	}
	var out, errb bytes.Buffer
	code := run(args, stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	got := readTree(t, dir)
	if sc.name == partialSuccess {
		if code != 1 {
			t.Errorf("%s (%s): exit %d, want 1 (refused)", sc.name, mode, code)
		}
		if d := cmp.Diff(sc.input, got); d != "" {
			t.Errorf("%s (%s): the refused patch changed the tree (-input +got):\n%s", sc.name, mode, d)
		}
		return false
	}
	if d := cmp.Diff(sc.expected, got); d != "" {
		t.Errorf("%s (%s): exit %d, tree differs from codex's (-codex +patchbench):\n%s\nstderr: %s", sc.name, mode, code, d, errb.String())
		return false
	}
	return true
}

// sharedScenarios reads every scenario folder of the shared data; nil when
// it is absent.
func sharedScenarios(t *testing.T) []codexScenario {
	root := filepath.Join(testdata.SharedDir(), "codex-apply-patch-scenarios")
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []codexScenario
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(root, e.Name())
		p, err := os.ReadFile(filepath.Join(d, "patch.txt"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, codexScenario{name: e.Name(), patch: p,
			input: readTree(t, filepath.Join(d, "input")), expected: readTree(t, filepath.Join(d, "expected"))})
	}
	if len(out) != 25 {
		t.Fatalf("%d scenarios in %s, want 25", len(out), root)
	}
	return out
}

// txtarScenarios reads the copies in testdata/codex.
func txtarScenarios(t *testing.T) []codexScenario {
	files, err := filepath.Glob("testdata/codex/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var out []codexScenario
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := codexScenario{name: strings.TrimSuffix(filepath.Base(f), ".txtar"), input: map[string]string{}, expected: map[string]string{}}
		for _, af := range ar.Files {
			switch {
			case af.Name == "patch.txt":
				sc.patch = af.Data
			case strings.HasPrefix(af.Name, "input/"):
				sc.input[strings.TrimPrefix(af.Name, "input/")] = string(af.Data)
			case strings.HasPrefix(af.Name, "expected/"):
				sc.expected[strings.TrimPrefix(af.Name, "expected/")] = string(af.Data)
			}
		}
		out = append(out, sc)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) { testtree.Write(t, dir, files) }

// readTree maps every regular file under dir to its content; empty when
// dir does not exist. Directories left empty count too, as "dir/".
func readTree(t *testing.T, dir string) map[string]string { return testtree.Read(t, dir) }
