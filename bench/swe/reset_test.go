package swe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/confinetest"
	"github.com/patchbench/patchbench/repo"
)

// TestResetFilesConfined: resetting the test patch's files goes through the
// same confinement as the prediction's: a path through a link of the tree
// is refused and nothing is written; plain paths are reset to the base.
func TestResetFilesConfined(t *testing.T) {
	tr := confinetest.New(t)
	tr.Commit(t)
	ctx := context.Background()
	r, err := repo.Open(ctx, tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	escape := "--- a/link/victim.txt\n+++ b/link/victim.txt\n@@ -1 +1 @@\n-secret\n+pwned\n"
	err = resetFiles(ctx, r, "HEAD", tr.Dir, escape)
	if want := `unsafe path "link/victim.txt": beyond a symbolic link (link -> ../outside)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resetFiles: %v, want an error containing %q", err, want)
	}
	tr.Unchanged(t)

	// A prediction changed a.txt and created new.txt: both are reset.
	a := filepath.Join(tr.Dir, "a.txt")
	if err := os.WriteFile(a, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.Dir, "new.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+y\n"
	if err := resetFiles(ctx, r, "HEAD", tr.Dir, tests); err != nil {
		t.Fatal(err)
	}
	tr.Unchanged(t)
}
