package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/internal/flock"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/runner"
)

// storeMounts returns the lines of this process's mountinfo that name the
// store: the overlays whose lower layer is one of its trees.
func storeMounts(t *testing.T, store string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, store+"/trees/") {
			out = append(out, l)
		}
	}
	return out
}

// TestApeEnvStoreKilledRun: `ape run --env-store` checks each candidate in
// an overlay of its commit's tree (where this process can mount one); a
// run killed (SIGKILL) while a check runs leaves that overlay mounted, and
// the resumed run releases it before it starts, finishes, and leaves no
// mount and no mount record behind.
func TestApeEnvStoreKilledRun(t *testing.T) {
	dir := t.TempDir()
	if ok, why := envstore.OverlayAvailable(dir); !ok {
		t.Skipf("cannot mount an overlay here: %s", why)
	}
	repoDir, tasks := apeTasks(t, dir)
	store := filepath.Join(dir, "store")
	revs, err := exec.Command("git", "-C", repoDir, "rev-list", "--all").Output()
	if err != nil {
		t.Fatal(err)
	}
	commits := filepath.Join(dir, "commits.txt")
	writeFile(t, commits, string(revs))
	if code, out, stderr := runCLI(t, "", "env", "build", "--store", store, "--repo", repoDir, "--commits", commits, "--setup", "echo built > .pb-env-built"); code != 0 {
		t.Fatalf("env build: exit %d\n%s\n%s", code, out, stderr)
	}
	srv := llmtest.NewServer(llmtest.Config{Reply: func(_, _ string, msgs []llm.Message) string {
		if strings.HasPrefix(msgs[len(msgs)-1].Content, "# Code evaluation request") {
			return "Fine.\nError category: none\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}}\n```\n"
		}
		return "<<<<<<< SEARCH\npackage calc\n=======\npackage calc\n\n// edited\n>>>>>>> REPLACE\n"
	}})
	defer srv.Close()
	out := filepath.Join(dir, "run")
	// The check sees the environment (the setup's file) and takes a
	// while, so that the kill finds one mounted.
	args := []string{"ape", "run", "--dataset", tasks, "--repo", repoDir, "--model", "openai/fake", "--judge-model", "openai/fake",
		"--base-url", srv.OpenAIBaseURL(), "--cache", "off", "--n", "1", "--judge-n", "1", "--workers", "1", "--out", out, "--quiet",
		"--env-store", store, "--check-cmd", "test -f .pb-env-built && sleep 2"}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestShardProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "PATCHBENCH_SHARD_PROCESS=1", "OPENAI_API_KEY=k")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(storeMounts(t, store)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no overlay of the store mounted after 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: the run releases nothing
	cmd.Wait()
	// Wait's return does not end every copy of the run's descriptors: a
	// child it was forking when killed holds them until its own exit
	// (seen under load: an empty-cmdline process holding run/.lock), and
	// the resume would be refused as "in use". Resuming once the killed
	// run has wholly ended is what this test is about.
	for deadline := time.Now().Add(time.Minute); ; {
		l, err := flock.TryAcquire(filepath.Join(out, runner.LockFile))
		if err == nil {
			l.Release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed run's lock is still held after a minute: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	left := storeMounts(t, store)
	if len(left) == 0 {
		t.Fatal("the killed run left no overlay mounted: nothing to test")
	}
	recs, _ := filepath.Glob(filepath.Join(store, "mounts", "*.json"))
	if len(recs) == 0 {
		t.Fatalf("the killed run's mount has no record in the store: %q", left)
	}
	t.Setenv("OPENAI_API_KEY", "k")
	if code, stdout, stderr := runCLI(t, "", append(args, "--resume")...); code != 0 {
		t.Fatalf("ape run --resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if m := storeMounts(t, store); len(m) != 0 {
		t.Errorf("after the resumed run, overlays of the store still mounted:\n%s", strings.Join(m, "\n"))
	}
	if recs, _ := filepath.Glob(filepath.Join(store, "mounts", "*.json")); len(recs) != 0 {
		t.Errorf("mount records left: %q", recs)
	}
	rows, err := runner.ReadRows(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Errorf("%d rows after the resumed run, want 3", len(rows))
	}
	// Each check saw the commit's environment (the setup's file).
	for _, r := range rows {
		if r["compile_pass"] != true {
			t.Errorf("row %v: the check did not pass in the restored environment", r["id"])
		}
	}
	if code, stdout, stderr := runCLI(t, "", "env", "verify", "--store", store); code != 0 {
		t.Errorf("env verify after the runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
