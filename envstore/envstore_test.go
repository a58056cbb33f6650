package envstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestHistory builds 30 commits of a Go module and of a Python package, each
// with its real build (go build with the build cache in the tree,
// compileall), and checks that every restored tree is the tree the setup
// left, that the store holds each content once, and what reusing git's blob
// ids saved.
func TestHistory(t *testing.T) {
	for _, tc := range []struct{ kind, setup string }{{"go", goSetup}, {"python", pySetup()}} {
		t.Run(tc.kind, func(t *testing.T) {
			ctx := context.Background()
			dir, commits := makeHistory(t, tc.kind, 30)
			r := openRepo(t, dir)
			s := openStore(t, filepath.Join(t.TempDir(), "store"))
			refs := filepath.Join(t.TempDir(), "refs")
			os.Mkdir(refs, 0o755)
			var mu sync.Mutex
			opts := BuildOptions{Setup: tc.setup, Runner: runner(), Workers: 2,
				testHook: func(stage, tree string) {
					if stage == "setup-done" {
						mu.Lock()
						defer mu.Unlock()
						copyTree(t, tree, filepath.Join(refs, filepath.Base(filepath.Dir(tree))))
					}
				}}
			results, err := s.Build(ctx, r, commits, opts)
			if err != nil {
				t.Fatal(err)
			}
			var reused, hashed int64
			var logical int64
			for _, res := range results {
				if res.Status != StatusBuilt {
					t.Fatalf("%s: %s: %s", res.Commit, res.Status, res.Reason)
				}
				t.Logf("%s checkout %d ms, setup %d ms, snapshot %d ms", res.Commit[:8], res.CheckoutMS, res.SetupMS, res.SnapshotMS)
				reused += res.ReusedBytes
				hashed += res.HashedBytes
				logical += res.Bytes
			}
			t.Logf("runner %s; git reuse: %d bytes not read, %d bytes hashed", runner().Name(), reused, hashed)
			if reused == 0 {
				t.Errorf("no tracked file's hash came from git")
			}

			// Each built tree was copied by the hook into refs/build-<commit[:12]>-*.
			byCommit := map[string]string{}
			ents, _ := os.ReadDir(refs)
			for _, e := range ents {
				name := strings.TrimPrefix(e.Name(), "build-")
				byCommit[name[:12]] = filepath.Join(refs, e.Name())
			}
			if len(byCommit) != len(commits) {
				t.Fatalf("%d built trees copied, want %d", len(byCommit), len(commits))
			}
			var sum, unique int64
			contents := map[string]bool{} // content and executable bit: one object each
			for i, c := range commits {
				want := readTree(t, byCommit[c[:12]])
				for p, e := range want {
					if e.typ == "file" {
						sum += int64(len(e.content))
						k := fmt.Sprint(e.content, e.mode&0o100 != 0)
						if !contents[k] {
							contents[k] = true
							unique += int64(len(e.content))
						}
					}
					if p == ".git" {
						t.Fatalf("%s: the built tree has .git", c)
					}
				}
				if _, ok := want[".cache/go-build/README"]; tc.kind == "go" && !ok {
					t.Fatalf("%s: the setup left no build cache in the tree", c)
				}
				dest := filepath.Join(t.TempDir(), "r")
				res, err := s.Restore(ctx, c, dest, RestoreOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if res.Linked+res.Reflinked+res.Copied != res.Files {
					t.Errorf("%s: %+v: files made do not add up", c, res)
				}
				compareTrees(t, want, readTree(t, dest), res.Reflinked == 0)
				if i%10 == 0 {
					dest := filepath.Join(t.TempDir(), "c")
					if _, err := s.Restore(ctx, c, dest, RestoreOptions{Method: RestoreCopy, Verify: true}); err != nil {
						t.Fatal(err)
					}
					compareTrees(t, want, readTree(t, dest), false)
				}
			}
			st, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.Commits != 30 || st.LogicalBytes != sum || st.LogicalBytes != logical {
				t.Errorf("stats %+v: want 30 commits and %d logical bytes (sum of the built trees; builds said %d)", st, sum, logical)
			}
			if st.Objects != len(contents) || st.ObjectBytes != unique {
				t.Errorf("%d objects of %d bytes, want one per distinct content: %d of %d bytes", st.Objects, st.ObjectBytes, len(contents), unique)
			}
			if st.StoredBytes >= st.LogicalBytes {
				t.Errorf("stored %d bytes >= the trees' %d", st.StoredBytes, st.LogicalBytes)
			}
			t.Logf("%d commits, %d files, %d bytes in the trees, %d stored (%d in %d objects, %d in manifests): %.1fx smaller",
				st.Commits, st.Files, st.LogicalBytes, st.StoredBytes, st.ObjectBytes, st.Objects, st.ManifestBytes, st.Ratio())
			mustVerify(t, s)

			// Stored commits are skipped.
			again, err := s.Build(ctx, r, commits[:3], opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range again {
				if res.Status != StatusSkipped {
					t.Errorf("second build of %s: %s", res.Commit, res.Status)
				}
			}
		})
	}
}

// TestWriteIsolation restores one commit twice and edits one tree the way
// tools do (a new file renamed over the old): the store and the other tree
// keep their content. A write in place is refused in the sandbox (no
// capabilities, read-only object); outside it, root's write reaches the
// object, and verify and restore --verify catch it.
func TestWriteIsolation(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 3)
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	if res, err := s.Build(ctx, r, commits[2:], BuildOptions{Setup: pySetup(), Runner: runner()}); err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build: %v %+v", err, res)
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, d := range []string{a, b} {
		if _, err := s.Restore(ctx, commits[2], d, RestoreOptions{Method: RestoreLink}); err != nil {
			t.Fatal(err)
		}
	}
	before := readTree(t, b)
	objBefore := readTree(t, filepath.Join(s.Dir(), "objects"))

	target := filepath.Join(a, "pkg", "core.py")
	tmp := target + ".tmp"
	if err := os.WriteFile(tmp, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "edited\n" {
		t.Fatalf("the edit did not land: %q", got)
	}
	compareTrees(t, before, readTree(t, b), false)
	compareTrees(t, objBefore, readTree(t, filepath.Join(s.Dir(), "objects")), false)
	mustVerify(t, s)

	// In the sandbox, a write in place is refused even for root.
	if runner().Name() == "bwrap" {
		res, err := runner().Run(ctx, sandboxCommand(a, "echo in-place >> pkg/__init__.py"))
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 {
			t.Errorf("an in-place write to a hard-linked file succeeded in the sandbox")
		}
		compareTrees(t, before, readTree(t, b), false)
		mustVerify(t, s)
	}

	// Outside a sandbox: ordinary users cannot open the object for
	// writing; root can, and the write reaches the store, where verify
	// and restore --verify find it.
	victim := filepath.Join(a, "README")
	err := os.WriteFile(victim, []byte("in place\n"), 0o644)
	if os.Geteuid() != 0 {
		if err == nil {
			t.Fatal("a non-root in-place write to a read-only object succeeded")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(b, "README")); string(got) != "in place\n" {
		t.Fatalf("root's in-place write did not reach the other tree (%q): the test's premise is wrong", got)
	}
	rep, err := s.Verify(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Errorf("verify found nothing after an in-place write to an object")
	}
	if _, err := s.Restore(ctx, commits[2], filepath.Join(t.TempDir(), "c"), RestoreOptions{Verify: true}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("restore --verify of a damaged object: %v, want ErrCorrupt", err)
	}
}
