package repair_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// renameCase is one file renamed by a real commit: git's diff of it, and
// the file before and after.
type renameCase struct {
	id, text, from, to, oldC, newC string
}

// TestRenameTwiceRealCommits applies git's diff of each file renamed by
// the click and cobra histories (at most 12 commits a repository, when the
// bundles are there) and of the renames shipped in testdata/renames (real
// renames of those histories, with and without hunks), with and without
// an edit, to the trees the "already renamed" rule judges:
//
//   - the source: renamed, with the commit's content;
//   - the target with the commit's content, the source gone: renamed
//     already, nothing written (it was refused, "target exists");
//   - the target with the source's old content, or another file's, the
//     source gone, for a rename with hunks: refused (must refuse: not the
//     rename applied);
//   - source and target both there: refused, a rename replaces no file.
func TestRenameTwiceRealCommits(t *testing.T) {
	cases := shippedRenames(t)
	shipped := len(cases)
	cases = append(cases, bundleRenames(t)...)
	type counts struct{ renames, withHunks, already, refusedOther int }
	var all counts
	for _, rc := range cases {
		id, text, from, to, oldC, newC := rc.id, rc.text, rc.from, rc.to, rc.oldC, rc.newC
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
	t.Logf("%d renames (%d shipped; %d with hunks): %d renamed already on the second apply; %d with hunks refused onto other content (old content, another file)", all.renames, shipped, all.withHunks, all.already, all.refusedOther)
	if shipped == 0 || all.withHunks == 0 {
		t.Fatal("no renames with hunks found")
	}
}

// shippedRenames reads testdata/renames: each txtar holds a rename's
// names (from, to), git's diff and the file before and after.
func shippedRenames(t *testing.T) []renameCase {
	names, err := filepath.Glob(filepath.Join("testdata", "renames", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []renameCase
	for _, name := range names {
		a, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f := map[string]string{}
		for _, file := range a.Files {
			f[file.Name] = string(file.Data)
		}
		out = append(out, renameCase{id: strings.TrimSpace(string(a.Comment)), text: f["diff"],
			from: strings.TrimSpace(f["from"]), to: strings.TrimSpace(f["to"]), oldC: f["old"], newC: f["new"]})
	}
	return out
}

// bundleRenames reads the renames of the click and cobra bundles; none
// without git or the bundles.
func bundleRenames(t *testing.T) []renameCase {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	dir := filepath.Join(testdata.SharedDir(), "repos")
	if _, err := os.Stat(filepath.Join(dir, "click.bundle")); err != nil {
		t.Logf("bundles not found, the shipped renames only: %v", err)
		return nil
	}
	var out []renameCase
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
				out = append(out, renameCase{fmt.Sprintf("%s@%s %s -> %s", name, c[:12], from, to), text, from, to, oldC, newC})
			}
		}
	}
	return out
}
