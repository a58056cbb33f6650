package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// runCLI runs the command in process and returns its exit code and output.
func runCLI(t testing.TB, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDevTriplesCLI is the engine's acceptance check over every dev commit:
// git's udiff applies forwards and backwards through the CLI, our diff in
// each of the five formats applies back to new_code, and our udiff is
// accepted by git apply.
func TestDevTriplesCLI(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed as the oracle")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "file")
	oldF, newF := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	patchF := filepath.Join(dir, "patch")
	gitDir := filepath.Join(dir, "git")
	if out, err := exec.Command("git", "init", "-q", gitDir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, r := range rows {
		// 1. git's own udiff, forwards (strict and tolerant) and in reverse.
		writeFile(t, patchF, r.UDiff)
		for _, mode := range []string{"--strict", "--strict=false"} {
			writeFile(t, target, r.OldCode)
			if code, _, stderr := runCLI(t, "", "apply", mode, "--target", target, patchF); code != 0 {
				t.Errorf("%s: apply %s udiff: exit %d: %s", r.ID, mode, code, stderr)
			} else if readFile(t, target) != r.NewCode {
				t.Errorf("%s: apply %s udiff: result differs from new_code", r.ID, mode)
			}
		}
		// Strict apply is byte-identical to git apply on well-formed patches.
		writeFile(t, filepath.Join(gitDir, r.Path), r.OldCode)
		cmd := exec.Command("git", "apply", "-")
		cmd.Dir, cmd.Stdin = gitDir, strings.NewReader(r.UDiff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: git apply of the dataset's udiff: %v\n%s", r.ID, err, out)
		} else {
			writeFile(t, target, r.OldCode)
			runCLI(t, "", "apply", "--strict", "--target", target, patchF)
			if readFile(t, target) != readFile(t, filepath.Join(gitDir, r.Path)) {
				t.Errorf("%s: strict apply and git apply differ", r.ID)
			}
		}
		os.Remove(filepath.Join(gitDir, r.Path))
		writeFile(t, target, r.NewCode)
		if code, _, stderr := runCLI(t, "", "apply", "--reverse", "--target", target, patchF); code != 0 {
			t.Errorf("%s: apply --reverse: exit %d: %s", r.ID, code, stderr)
		} else if readFile(t, target) != r.OldCode {
			t.Errorf("%s: apply --reverse: result differs from old_code", r.ID)
		}
		// 2. Our diff in every format, applied back.
		writeFile(t, oldF, r.OldCode)
		writeFile(t, newF, r.NewCode)
		for _, f := range patch.Formats {
			code, out, stderr := runCLI(t, "", "diff", "--format", string(f), oldF, newF)
			if code != 0 {
				t.Errorf("%s: diff --format %s: exit %d: %s", r.ID, f, code, stderr)
				continue
			}
			writeFile(t, patchF, out)
			writeFile(t, target, r.OldCode)
			if code, _, stderr := runCLI(t, "", "apply", "--format", string(f), "--target", target, patchF); code != 0 {
				t.Errorf("%s: apply --format %s: exit %d: %s", r.ID, f, code, stderr)
			} else if readFile(t, target) != r.NewCode {
				t.Errorf("%s: %s round trip differs from new_code", r.ID, f)
			}
			if f != patch.UDiff {
				continue
			}
			// 3. git apply accepts our udiff once it has git file headers.
			fp := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, patch.DefaultMakeOptions())
			text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(gitDir, r.Path), r.OldCode)
			cmd := exec.Command("git", "apply", "-")
			cmd.Dir, cmd.Stdin = gitDir, strings.NewReader(text)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: git apply rejects our udiff: %v\n%s", r.ID, err, out)
			} else if readFile(t, filepath.Join(gitDir, r.Path)) != r.NewCode {
				t.Errorf("%s: git apply of our udiff differs from new_code", r.ID)
			}
			os.Remove(filepath.Join(gitDir, r.Path))
		}
	}
}
