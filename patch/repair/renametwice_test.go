package repair_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestRenameTwiceRealCommits applies git's diff of each file renamed by
// the click and cobra histories (at most 12 commits a repository), with
// and without an edit, to the trees the "already renamed" rule judges:
//
//   - the source: renamed, with the commit's content;
//   - the target with the commit's content, the source gone: renamed
//     already, nothing written (it was refused, "target exists");
//   - the target with the source's old content, or another file's, the
//     source gone, for a rename with hunks: refused (must refuse: not the
//     rename applied);
//   - source and target both there: refused, a rename replaces no file.
//
// Skips without git or the bundles.
func TestRenameTwiceRealCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(testdata.SharedDir(), "repos")
	if _, err := os.Stat(filepath.Join(dir, "click.bundle")); err != nil {
		t.Skipf("bundles not found: %v", err)
	}
	type counts struct{ renames, withHunks, already, refusedOther int }
	var all counts
	for _, name := range []string{"click", "cobra"} {
		repo := filepath.Join(t.TempDir(), name)
		if out, err := exec.Command("git", "clone", "-q", "--bare", filepath.Join(dir, name+".bundle"), repo).CombinedOutput(); err != nil {
			t.Fatalf("clone: %v: %s", err, out)
		}
		list, err := git(repo, "log", "--first-parent", "--no-merges", "-M", "--diff-filter=R", "--format=%H", "-n", "12")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range strings.Fields(list) {
			st, err := git(repo, "diff", "-M", "--name-status", "--diff-filter=R", c+"^", c)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(strings.TrimSpace(st), "\n") {
				f := strings.Split(l, "\t")
				if len(f) != 3 {
					continue
				}
				from, to := f[1], f[2]
				text, err := git(repo, "diff", "-M", c+"^", c, "--", from, to)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(text, "\nrename from ") || strings.Contains(text, "GIT binary patch") || strings.Contains(text, "Binary files") || strings.Contains(text, "\nold mode ") {
					continue
				}
				oldC, err1 := git(repo, "show", c+"^:"+from)
				newC, err2 := git(repo, "show", c+":"+to)
				if err1 != nil || err2 != nil {
					continue
				}
				id := fmt.Sprintf("%s@%s %s -> %s", name, c[:12], from, to)
				all.renames++
				hunks := strings.Contains(text, "\n@@ ")
				run := func(fs patch.MapFS) (*repair.Result, error) {
					return repair.Repair(text, repair.Options{FS: fs})
				}
				// The source: renamed.
				res, err := run(patch.MapFS{from: oldC})
				if err != nil || len(res.Results) != 1 || string(res.Results[0].Content) != newC || res.Results[0].Path != to {
					t.Errorf("%s: first apply: %v", id, err)
					continue
				}
				// Renamed already.
				res, err = run(patch.MapFS{to: newC})
				if err != nil || res.Status != repair.StatusAlreadyApplied || len(res.Results) != 0 {
					t.Errorf("%s: second apply: %v, status %v, %d results; want already applied", id, err, res.Status, len(res.Results))
				} else {
					all.already++
				}
				// Both there.
				if _, err := run(patch.MapFS{from: oldC, to: newC}); !errors.Is(err, repair.ErrRefused) {
					t.Errorf("%s: source and target both there: %v, want refused", id, err)
				}
				if !hunks {
					continue
				}
				all.withHunks++
				refused := 0
				for _, other := range []string{oldC, "package other\n\nfunc F() {}\n"} {
					if other == newC {
						continue
					}
					if res, err := run(patch.MapFS{to: other}); !errors.Is(err, repair.ErrRefused) {
						t.Errorf("%s: target with other content: %v, status %v; want refused", id, err, res.Status)
					} else {
						refused++
					}
				}
				if refused == 2 {
					all.refusedOther++
				}
			}
		}
	}
	t.Logf("%d renames (%d with hunks): %d renamed already on the second apply; %d with hunks refused onto other content (old content, another file)", all.renames, all.withHunks, all.already, all.refusedOther)
	if all.renames == 0 {
		t.Fatal("no renames found")
	}
}
