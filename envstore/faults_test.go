package envstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a build process for the tests that need a
// real, separate process (SIGKILL, several processes on one store):
// ENVSTORE_HELPER=build with ENVSTORE_STORE, ENVSTORE_REPO, ENVSTORE_COMMITS
// (comma-separated), ENVSTORE_SETUP, and ENVSTORE_HANG (a build stage at
// which to stop and wait to be killed, after writing ENVSTORE_HANG_FILE).
func TestMain(m *testing.M) {
	if os.Getenv("ENVSTORE_HELPER") == "build" {
		os.Exit(helperBuild())
	}
	os.Exit(m.Run())
}

func helperBuild() int {
	ctx := context.Background()
	s, err := Open(os.Getenv("ENVSTORE_STORE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r, err := openRepoErr(os.Getenv("ENVSTORE_REPO"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := BuildOptions{Setup: os.Getenv("ENVSTORE_SETUP"), Runner: runner(), Workers: 2}
	if stage := os.Getenv("ENVSTORE_HANG"); stage != "" {
		opts.testHook = func(at, tree string) {
			if at == stage {
				os.WriteFile(os.Getenv("ENVSTORE_HANG_FILE"), []byte(tree), 0o644)
				select {}
			}
		}
	}
	res, err := s.Build(ctx, r, strings.Split(os.Getenv("ENVSTORE_COMMITS"), ","), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func helperCommand(t *testing.T, store, repoDir string, commits []string, setup string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ENVSTORE_HELPER=build", "ENVSTORE_STORE="+store, "ENVSTORE_REPO="+repoDir,
		"ENVSTORE_COMMITS="+strings.Join(commits, ","), "ENVSTORE_SETUP="+setup)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// waitFile waits for p to exist.
func waitFile(t *testing.T, p string, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s did not appear", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKilledBuild kills a build process with SIGKILL during the setup, and
// after its objects are stored but before its manifest: no manifest is left,
// verify passes, the next build completes the commit, and gc removes what
// the killed build left.
func TestKilledBuild(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 3)
	r := openRepo(t, dir)
	storeDir := filepath.Join(t.TempDir(), "store")
	s := openStore(t, storeDir)
	c := commits[2]
	for _, tc := range []struct {
		name, setup string
		env         []string
		marker      func(hang string) string
	}{
		{"during setup", "touch started; sleep 600", nil,
			func(string) string { return "" }},
		{"before manifest", pySetup(), []string{"ENVSTORE_HANG=objects-stored"},
			func(hang string) string { return hang }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hang := filepath.Join(t.TempDir(), "hang")
			cmd := helperCommand(t, storeDir, dir, []string{c}, tc.setup, append(tc.env, "ENVSTORE_HANG_FILE="+hang)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if m := tc.marker(hang); m != "" {
				waitFile(t, m, cmd)
			} else {
				deadline := time.Now().Add(5 * time.Minute)
				for {
					found, _ := filepath.Glob(filepath.Join(storeDir, "tmp", "build-*", "tree", "started"))
					if len(found) > 0 {
						break
					}
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatal("the setup did not start")
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if s.Has(c) {
				t.Fatal("a killed build left a manifest")
			}
			rep := mustVerify(t, s)
			if rep.Temporary == 0 {
				t.Errorf("the killed build left nothing in tmp: did it run?")
			}
			if tc.name == "before manifest" && rep.Objects == 0 {
				t.Errorf("no objects stored before the kill")
			}
		})
	}
	res, err := s.Build(ctx, r, []string{c}, BuildOptions{Setup: pySetup(), Runner: runner()})
	if err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build after the kills: %v %+v", err, res)
	}
	mustVerify(t, s)
	if _, err := s.Restore(ctx, c, filepath.Join(t.TempDir(), "r"), RestoreOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	gc, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gc.Temporary == 0 {
		t.Errorf("gc removed nothing from tmp: %+v", gc)
	}
	if rep := mustVerify(t, s); rep.Temporary != 0 {
		t.Errorf("%d temporary files after gc", rep.Temporary)
	}
	// The killed builds' worktrees are gone from the repository too, once
	// pruned.
	git(t, dir, "worktree", "prune")
	if out := git(t, dir, "worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("worktrees left: %s", out)
	}
}

// TestConcurrentBuilds runs two build processes on one store over
// overlapping commits, while this process restores what is stored: each
// commit is built once, and the store verifies.
func TestConcurrentBuilds(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 8)
	storeDir := filepath.Join(t.TempDir(), "store")
	s := openStore(t, storeDir)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for _, cs := range [][]string{commits[:6], commits[2:]} {
		cmd := helperCommand(t, storeDir, dir, cs, pySetup())
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	// Wait for the processes in the background: ProcessState is only set
	// by Wait, so polling it would never see them end.
	waitErr := make([]error, len(cmds))
	finished := make(chan struct{})
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Go(func() { waitErr[i] = cmd.Wait() })
	}
	go func() { wg.Wait(); close(finished) }()
	// Restore each commit once, as soon as it is stored, while the builds
	// run.
	restored := 0
	seen := map[string]bool{}
	restoreNew := func() {
		for _, c := range commits {
			if seen[c] || !s.Has(c) {
				continue
			}
			seen[c] = true
			if _, err := s.Restore(ctx, c, filepath.Join(t.TempDir(), "r"), RestoreOptions{}); err != nil {
				t.Fatalf("restore %s during the builds: %v", c, err)
			}
			restored++
		}
	}
	deadline := time.After(8 * time.Minute)
wait:
	for {
		restoreNew()
		select {
		case <-finished:
			break wait
		case <-deadline:
			t.Fatalf("the build processes did not end in 8 minutes")
		case <-time.After(50 * time.Millisecond):
		}
	}
	built := map[string]int{}
	for i := range cmds {
		if err := waitErr[i]; err != nil {
			t.Fatalf("build process %d: %v\n%s", i, err, outs[i])
		}
		var res []BuildResult
		if err := json.Unmarshal([]byte(outs[i].String()), &res); err != nil {
			t.Fatalf("build process %d: %v\n%s", i, err, outs[i])
		}
		for _, r := range res {
			switch r.Status {
			case StatusBuilt:
				built[r.Commit]++
			case StatusSkipped:
			default:
				t.Errorf("process %d: %s: %s %s", i, r.Commit, r.Status, r.Reason)
			}
		}
	}
	for _, c := range commits {
		if built[c] != 1 {
			t.Errorf("%s built %d times", c, built[c])
		}
		if _, err := s.Restore(ctx, c, filepath.Join(t.TempDir(), "r"), RestoreOptions{Verify: true}); err != nil {
			t.Error(err)
		}
	}
	mustVerify(t, s)
	t.Logf("%d restores during the builds", restored)
}

// TestCorruptObject damages objects: a truncated one is found by verify and
// refused by restore (sizes); an altered one of the same size is found by
// verify and refused by restore --verify. A failed restore leaves nothing.
func TestCorruptObject(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 2)
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	// Loose objects, as a store of format 2 keeps them (damaged
	// compressed ones: TestCorruptCompressedObject).
	s.compress.Store(false)
	if res, err := s.Build(ctx, r, commits[1:], BuildOptions{Setup: pySetup(), Runner: runner()}); err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build: %v %+v", err, res)
	}
	m, err := s.Manifest(commits[1])
	if err != nil {
		t.Fatal(err)
	}
	objectOf := func(path string) string {
		for _, e := range m.Entries {
			if e.Path == path {
				return s.objectPath(e.Hash, e.exec())
			}
		}
		t.Fatalf("%s not in the manifest", path)
		return ""
	}
	damage := func(obj string, f func(string) error) {
		t.Helper()
		os.Chmod(obj, 0o644)
		if err := f(obj); err != nil {
			t.Fatal(err)
		}
		os.Chmod(obj, 0o444)
	}
	truncated := objectOf("pkg/core.py")
	damage(truncated, func(p string) error { return os.Truncate(p, 3) })
	altered := objectOf("data/f010.txt")
	damage(altered, func(p string) error {
		b, _ := os.ReadFile(p)
		b[0] ^= 1
		return os.WriteFile(p, b, 0o644)
	})
	rep, err := s.Verify(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(rep.Problems, "\n")
	for _, want := range []string{truncated, altered} {
		if !strings.Contains(text, want) {
			t.Errorf("verify does not name %s:\n%s", want, text)
		}
	}
	dest := filepath.Join(t.TempDir(), "r")
	// Hard links (the fast path) check each object's size.
	if _, err := s.Restore(ctx, commits[1], dest, RestoreOptions{Method: RestoreLink, ReadOnlyUse: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), truncated) {
		t.Errorf("restore with a truncated object: %v", err)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed restore left %s", dest)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dest)); len(ents) != 0 {
		t.Errorf("a failed restore left %d entries beside the destination", len(ents))
	}
	// Repair the truncated object; the altered one is caught only by
	// re-hashing.
	os.Remove(truncated)
	if res, err := s.Build(ctx, r, commits[1:], BuildOptions{Setup: pySetup(), Runner: runner()}); err != nil || res[0].Status != StatusSkipped {
		t.Fatalf("build: %v %+v", err, res)
	}
	if _, err := s.Restore(ctx, commits[1], dest, RestoreOptions{Verify: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), altered) {
		t.Errorf("restore --verify with an altered object: %v", err)
	}
	// A copy reads the bytes, so it hashes them: it finds the altered
	// object without Verify, and leaves nothing.
	if _, err := s.Restore(ctx, commits[1], dest, RestoreOptions{Method: RestoreCopy}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), altered) {
		t.Errorf("restore --copy with an altered object: %v", err)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed copy left %s", dest)
	}
	// A missing object is a problem too.
	rep, err = s.Verify(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(rep.Problems, "\n"); !strings.Contains(text, "missing") {
		t.Errorf("verify does not report the missing object:\n%s", text)
	}
}

// TestGC removes the objects of a commit whose manifest is gone and keeps
// every object other manifests name; it waits for a running build.
func TestGC(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 3)
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	if _, err := s.Build(ctx, r, commits, BuildOptions{Setup: pySetup(), Runner: runner()}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Stats()
	if res, err := s.GC(ctx); err != nil || res.Objects != 0 {
		t.Fatalf("gc of a complete store: %+v %v", res, err)
	}
	// Forget commit 2 (core.py and its .pyc differ in every commit).
	if err := os.Remove(s.manifestPath(commits[2])); err != nil {
		t.Fatal(err)
	}
	res, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.Stats()
	if res.Objects == 0 || after.Objects != before.Objects-res.Objects || after.ObjectBytes != before.ObjectBytes-res.Bytes {
		t.Errorf("gc removed %+v: objects %d -> %d", res, before.Objects, after.Objects)
	}
	mustVerify(t, s)
	for _, c := range commits[:2] {
		if _, err := s.Restore(ctx, c, filepath.Join(t.TempDir(), "r"), RestoreOptions{Verify: true}); err != nil {
			t.Error(err)
		}
	}
	// A build in progress holds gc.lock shared: gc waits.
	l, err := s.acquire(ctx, "gc.lock", true)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := s.GC(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("gc during a build: %v, want it to wait", err)
	}
	l.release()
}

// TestFailedSetup records a failed setup with its exit code and log, stores
// nothing for it, and skips it next time unless asked to retry.
func TestFailedSetup(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 1)
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	opts := BuildOptions{Setup: "echo broken >&2; exit 3", Runner: runner()}
	res, err := s.Build(ctx, r, commits, opts)
	if err != nil || res[0].Status != StatusFailed || res[0].ExitCode != 3 {
		t.Fatalf("build: %v %+v", err, res)
	}
	f, err := s.Failure(commits[0])
	if err != nil || f.ExitCode != 3 || !strings.Contains(f.Log, "broken") {
		t.Fatalf("failure record %+v %v", f, err)
	}
	if st, _ := s.Stats(); st.Commits != 0 || st.Objects != 0 || st.Failed != 1 {
		t.Errorf("stats after a failed setup: %+v", st)
	}
	if res, _ := s.Build(ctx, r, commits, opts); res[0].Status != StatusSkippedFailed {
		t.Errorf("second build: %+v", res[0])
	}
	opts.Setup, opts.RetryFailed = "true", true
	if res, _ := s.Build(ctx, r, commits, opts); res[0].Status != StatusBuilt {
		t.Errorf("retry: %+v", res[0])
	}
	if _, err := s.Failure(commits[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the failure record stays after a good build: %v", err)
	}
}
