package ape

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/internal/nobody"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/sandbox"
)

// TestCompileUnprivileged: ape's check as an ordinary user, on an
// environment store that user owns, runs in an overlay mounted in a user
// namespace (env_method overlay-userns), by bubblewrap and unsandboxed:
// the check sees the setup's file and the candidate written in place of
// the task's file, and writes into the tree; no mount record is left. Run
// as root, it runs itself again as nobody.
func TestCompileUnprivileged(t *testing.T) {
	nobody.Test{Prefix: "ape-userns-", AsNobody: func(base string) { compileAsNobody(t, base) }, Setup: func(base string) (env, paths []string) {
		ctx := context.Background()
		repoDir := filepath.Join(base, "repo")
		os.Rename(history(t), repoDir)
		tasks, _, err := Build(ctx, repoDir, "HEAD", BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteTasks(filepath.Join(base, "tasks.jsonl"), tasks); err != nil {
			t.Fatal(err)
		}
		store, err := envstore.Open(filepath.Join(base, "store"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := repo.Open(ctx, repoDir)
		if err != nil {
			t.Fatal(err)
		}
		built, err := store.Build(ctx, r, []string{tasks[0].CommitHash}, envstore.BuildOptions{Setup: "echo built > .pb-env-built", Runner: sandbox.Plain{}})
		r.Close()
		if err != nil || built[0].Status != envstore.StatusBuilt {
			t.Fatalf("env build: %v %+v", err, built)
		}
		return nil, nil
	}}.Run(t)
}

func compileAsNobody(t *testing.T, base string) {
	ctx := context.Background()
	if ok, why := envstore.OverlayAvailable(base); ok {
		t.Skipf("nobody can mount an overlay others see here: %s", why)
	}
	tasks, err := ReadTasks(filepath.Join(base, "tasks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := envstore.OpenExisting(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	runners := []sandbox.Runner{sandbox.Plain{}}
	if b, err := sandbox.NewBwrap(ctx); err == nil {
		runners = append(runners, b)
	}
	const mark = "// the candidate, not the commit's file\n"
	for _, r := range runners {
		c, err := Compile(ctx, &tasks[0], tasks[0].ContentAfter+mark, CheckOptions{Store: store, Runner: r,
			Command: "test -f .pb-env-built && echo written > w.txt && cat w.txt {file}"})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: env_method %s: %s", r.Name(), c.EnvMethod, c.EnvMethodReason)
		if !c.Pass || c.EnvMethod != envstore.MethodUserNSOverlay || !strings.Contains(c.Output, "written\n") || !strings.Contains(c.Output, mark) {
			t.Errorf("%s: pass %v, env_method %q (%s), output %q; want a pass in %s that sees the setup's file, its write and the candidate",
				r.Name(), c.Pass, c.EnvMethod, c.EnvMethodReason, c.Output, envstore.MethodUserNSOverlay)
		}
	}
	if recs, _ := filepath.Glob(filepath.Join(base, "store", "mounts", "*.json")); len(recs) != 0 {
		t.Errorf("mount records left: %q", recs)
	}
}
