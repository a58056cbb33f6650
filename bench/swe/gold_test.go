package swe_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/patch"
)

type mapFiles patch.MapFS

func (m mapFiles) ReadFile(name string) ([]byte, error) { return patch.MapFS(m).ReadFile(name) }
func (m mapFiles) ListFiles() ([]string, error) {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out, nil
}

// Issue 29: git's own diff of a commit that creates, deletes and modifies
// files is a gold prediction: status applied, with no repair (its new-file
// hunk "@@ -0,0 +1,2 @@" was reported at offset 1, a line-numbers repair,
// and counted applied_repaired).
func TestGoldDiffWithCreationApplied(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		out, err := gittest.Run(t, dir, "", args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run("init", "-q")
	write("keep.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
	write("gone.py", "x = 1\n")
	run("add", ".")
	run("commit", "-qm", "base")
	write("keep.py", "def f():\n    return 10\n\n\ndef g():\n    return 2\n")
	write("new.py", "import keep\nprint(keep.f())\n")
	run("rm", "-q", "gone.py")
	run("add", ".")
	diff := run("diff", "--cached", "--no-renames")
	base := mapFiles{"keep.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n", "gone.py": "x = 1\n"}
	out := swe.Patch(swe.Prediction{InstanceID: "gold", ModelPatch: &diff}, base)
	if out.Status != swe.StatusApplied || len(out.Repairs) != 0 {
		t.Fatalf("status %s, repairs %v (%s), want applied with none", out.Status, out.Repairs, out.Reason)
	}
	if len(out.Results) != 3 {
		t.Fatalf("%d results, want 3", len(out.Results))
	}
}
