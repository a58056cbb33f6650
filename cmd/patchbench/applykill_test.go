package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// killFixture is a tree of 20 files and a git diff that modifies them
// all, with the trees before and after.
func killFixture(t *testing.T) (dir, patchFile string, old, new map[string]string) {
	t.Helper()
	old, new = map[string]string{}, map[string]string{}
	var diff strings.Builder
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("d%d/f%02d.txt", i%4, i)
		old[name] = fmt.Sprintf("one %d\ntwo\n", i)
		new[name] = fmt.Sprintf("one %d\nTWO\n", i)
		fmt.Fprintf(&diff, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,2 +1,2 @@\n one %d\n-two\n+TWO\n", name, name, name, name, i)
	}
	dir = filepath.Join(t.TempDir(), "tree")
	writeTree(t, dir, old)
	patchFile = filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(patchFile, []byte(diff.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, patchFile, old, new
}

// killApply runs pb apply on dir, stopped at point by
// PATCHBENCH_TEST_PAUSE_WRITE, and kills it with SIGKILL there.
func killApply(t *testing.T, pb, dir, patchFile, point string) {
	t.Helper()
	cmd := exec.Command(pb, "apply", "-C", dir, patchFile)
	cmd.Env = append(os.Environ(), "PATCHBENCH_TEST_PAUSE_WRITE="+point)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var all strings.Builder
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "paused at "+point) {
				paused <- ""
				return
			}
		}
		paused <- all.String()
	}()
	select {
	case out := <-paused:
		if out != "" {
			cmd.Wait()
			t.Fatalf("apply ended before %s:\n%s", point, out)
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("apply did not reach %s", point)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// TestApplyKilled kills patchbench apply of a 20-file patch with SIGKILL
// at several points of its writes, then recovers with apply --recover
// (all old before the commit, all new after) or by applying the patch
// again (all new): never a mix, and nothing of the write left over.
func TestApplyKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	pb, err := exec.LookPath("patchbench") // the test binary, set up by TestMain
	if err != nil {
		t.Skip("patchbench is not in PATH")
	}
	for _, point := range []string{"temps", "step 1", "step 10", "step 20", "commit"} {
		for _, how := range []string{"--recover", "apply again"} {
			t.Run(point+"/"+how, func(t *testing.T) {
				dir, patchFile, old, new := killFixture(t)
				killApply(t, pb, dir, patchFile, point)
				if point == "step 10" {
					if left := readTree(t, dir); cmp.Equal(left, old) || cmp.Equal(left, new) {
						t.Fatalf("killed at %s, the tree is all old or all new: the kill came at the wrong point", point)
					}
				}
				want := new
				var cmd *exec.Cmd
				if how == "--recover" {
					cmd = exec.Command(pb, "apply", "--recover", "-C", dir)
					if point != "commit" {
						want = old
					}
				} else {
					cmd = exec.Command(pb, "apply", "-C", dir, patchFile)
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", how, err, out)
				}
				if how == "--recover" && !strings.Contains(string(out), "interrupted write of 20 files") {
					t.Errorf("--recover says %q", out)
				}
				if d := cmp.Diff(want, readTree(t, dir)); d != "" {
					t.Errorf("after %s (-want +got):\n%s", how, d)
				}
				out, err = exec.Command(pb, "apply", "--recover", "-C", dir).CombinedOutput()
				if err != nil || string(out) != "nothing to recover\n" {
					t.Errorf("a second --recover: %v, %q", err, out)
				}
			})
		}
	}
}

// testMCPKilledWrite: apply_patch recovers a write that an apply killed
// midway left, before it reads, and says so in its answer.
func testMCPKilledWrite(t *testing.T, pb string) {
	dir, patchFile, _, new := killFixture(t)
	killApply(t, pb, dir, patchFile, "step 10")
	text, err := os.ReadFile(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()
	answer, failed := call(t, s, "apply_patch", map[string]any{"patch": string(text)})
	if failed || !strings.Contains(answer, "undid an interrupted write of 20 files") {
		t.Errorf("apply_patch after a killed write: failed %v: %s", failed, answer)
	}
	if d := cmp.Diff(new, readTree(t, dir)); d != "" {
		t.Errorf("after apply_patch (-want +got):\n%s", d)
	}
}
