package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBareClone: with PATCHBENCH_CORPUS=testdata the corpus is the one the
// repository ships and the shared directory is absent, for the tests that
// look there themselves too, as in a clone with nothing beside it.
func TestBareClone(t *testing.T) {
	t.Setenv("PATCHBENCH_CORPUS", "testdata")
	if _, err := os.Stat(SharedDir()); err == nil {
		t.Errorf("SharedDir() %s exists under PATCHBENCH_CORPUS=testdata", SharedDir())
	}
	if got, want := Path(t, "diffxyz-dev.jsonl.gz"), filepath.Join(CorpusDir(), "diffxyz-dev.jsonl.gz"); got != want {
		t.Errorf("Path: %s, want %s", got, want)
	}
	t.Run("LoadShared skips", func(t *testing.T) {
		LoadShared[Triple](t, "diffxyz-dev.jsonl.gz")
		t.Error("LoadShared did not skip")
	})
}
