package envstore

import (
	"context"
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
				compareTrees(t, want, readTree(t, dest), res.Method == "hardlink")
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
			// Objects whole: compressed ones count their content's size.
			whole := st.UncompressedBytes - (st.StoredBytes - st.ObjectBytes)
			if st.Objects != len(contents) || whole != unique || st.ObjectBytes > unique {
				t.Errorf("%d objects of %d bytes (%d on disk), want one per distinct content: %d of %d bytes", st.Objects, whole, st.ObjectBytes, len(contents), unique)
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
