package swe_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/bench/swe/swetest"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/internal/nobody"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/sandbox"
)

// TestEnvStoreUnprivileged: swe eval --env-store as an ordinary user, on a
// store that user owns, runs each test stage in an overlay mounted in a
// user namespace (constant time, env_method overlay-userns): the test
// command sees the environment (the setup's mark), writes into it, and
// the gold patch resolves; the store hashes the same after; no mount
// record, holder process or layer is left. Run as root, it runs itself
// again as nobody.
func TestEnvStoreUnprivileged(t *testing.T) {
	nobody.Test{Prefix: "swe-userns-", AsNobody: func(base string) { sweAsNobody(t, base) }, Setup: func(base string) (env, paths []string) {
		if _, err := os.Stat("/usr/bin/pytest"); err != nil {
			t.Skip("no /usr/bin/pytest (Debian python3-pytest)")
		}
		f := swetest.Build(t, filepath.Join(base, "fx"))
		py := f.Projects[0]
		// The test command fails unless the environment's mark is there,
		// and writes into the tree.
		cmd := "test -f ENV_BUILT && echo written > written.txt && cat written.txt && " + py.TestCmd
		writeJSONL(t, filepath.Join(base, "ds.jsonl"), []map[string]any{{"instance_id": "gold", "repo": py.Repo, "base_commit": py.Base,
			"test_patch": py.TestPatch, "FAIL_TO_PASS": py.FailToPass, "PASS_TO_PASS": py.PassToPass, "test_cmd": cmd}})
		writeJSONL(t, filepath.Join(base, "preds.jsonl"), []map[string]any{{"instance_id": "gold", "model_name_or_path": "m", "model_patch": py.Gold}})
		s, err := envstore.Open(filepath.Join(base, "store"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := repo.Open(context.Background(), py.Dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Build(context.Background(), r, []string{py.Base}, envstore.BuildOptions{Setup: "echo built > ENV_BUILT", Runner: sandbox.Detect(context.Background())})
		r.Close()
		if err != nil || res[0].Status != envstore.StatusBuilt {
			t.Fatalf("build: %v %+v", err, res)
		}
		return nil, nil
	}}.Run(t)
}

func sweAsNobody(t *testing.T, base string) {
	ctx := context.Background()
	store := filepath.Join(base, "store")
	if ok, why := envstore.OverlayAvailable(base); ok {
		t.Skipf("nobody can mount an overlay others see here: %s", why)
	}
	before := hashFiles(t, filepath.Join(store, "objects"))
	out := filepath.Join(base, "out")
	if _, err := swe.Eval(ctx, swe.Config{Dataset: filepath.Join(base, "ds.jsonl"), Predictions: filepath.Join(base, "preds.jsonl"),
		Repos: filepath.Join(base, "fx", "repos"), Out: out, RunID: "userns", EnvStore: store, Timeout: 5 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	row := swetest.RowsByID(t, out)["gold"]
	if row.Test == nil {
		t.Fatalf("no test run: %+v", row)
	}
	t.Logf("env_method %s: %s", row.Test.EnvMethod, row.Test.EnvMethodReason)
	if row.Status != swe.StatusResolved || row.Test.EnvMethod != envstore.MethodUserNSOverlay || row.Test.EnvMethodReason == "" {
		t.Errorf("gold: %s (%s), env_method %q (%s); want resolved in %s", row.Status, row.Reason, row.Test.EnvMethod, row.Test.EnvMethodReason, envstore.MethodUserNSOverlay)
	}
	if log := mustRead(t, filepath.Join(out, "instances", "gold", "test_output.txt")); !strings.Contains(log, "written") {
		t.Errorf("the test command's write is not in its output:\n%s", log)
	}
	after := hashFiles(t, filepath.Join(store, "objects"))
	if len(after) != len(before) {
		t.Errorf("the store has %d objects after the run, %d before", len(after), len(before))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("object %s changed through the test stage", p)
		}
	}
	if recs, _ := filepath.Glob(filepath.Join(store, "mounts", "*.json")); len(recs) != 0 {
		t.Errorf("mount records left after the run: %q", recs)
	}
	kids, _ := filepath.Glob("/proc/self/task/*/children")
	for _, k := range kids {
		if b, _ := os.ReadFile(k); strings.TrimSpace(string(b)) != "" {
			t.Errorf("processes left after the run (a namespace holder?): %s", b)
		}
	}
}

// hashFiles hashes every file under dir with its mode, by path.
func hashFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		out[p] = hex.EncodeToString(h[:]) + " " + fi.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
