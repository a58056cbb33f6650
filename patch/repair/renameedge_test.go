package repair_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/internal/testtree"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// numbered returns n lines "<word> line i".
func numbered(word string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", word, i)
	}
	return b.String()
}

// noContextSpace drops the leading space of every context line of a
// unified diff: a patch that only the tolerant mode reads.
func noContextSpace(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ") {
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "")
}

// TestRenameEdgesAgainstGit (issue 33, item 7): a rename of x onto x/y,
// and two files swapped, made in a git repository and diffed by git
// (-M, and -B -M for the swap), applied forward to the old tree and in
// reverse to the new one: strict, tolerant, and tolerant on the patch
// with its context lines' spaces lost, each must leave the tree git
// apply (-R) leaves with the intact patch, and nothing else (no backup,
// temporary file or journal). Applied again, the tolerant apply changes
// nothing.
func TestRenameEdgesAgainstGit(t *testing.T) {
	gittest.Need(t)
	tests := []struct {
		name     string
		old      map[string]string
		moves    [][2]string       // renames on disk, in order ("" a directory removed)
		edits    map[string]string // then written
		diffArgs []string
	}{
		{"x renamed to x/y", map[string]string{"x": numbered("ex", 12), "keep": "k\n"},
			[][2]string{{"x", "x.tmp"}, {"x.tmp", "x/y"}},
			map[string]string{"x/y": strings.Replace(numbered("ex", 12), "ex line 6\n", "EX line 6\n", 1)}, []string{"-M"}},
		{"x/y renamed to x", map[string]string{"x/y": numbered("ex", 12), "keep": "k\n"},
			[][2]string{{"x/y", "x.tmp"}, {"x", ""}, {"x.tmp", "x"}},
			map[string]string{"x": strings.Replace(numbered("ex", 12), "ex line 6\n", "EX line 6\n", 1)}, []string{"-M"}},
		{"a and b swapped", map[string]string{"a": numbered("alpha", 60), "b": numbered("beta", 60)},
			[][2]string{{"a", "t"}, {"b", "a"}, {"t", "b"}},
			map[string]string{"b": strings.Replace(numbered("alpha", 60), "alpha line 7\n", "ALPHA line 7\n", 1)}, []string{"-B", "-M"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			run := func(stdin string, args ...string) string {
				t.Helper()
				out, err := gittest.Run(t, repo, stdin, args...)
				if err != nil {
					t.Fatalf("git %s: %v", strings.Join(args, " "), err)
				}
				return out
			}
			run("", "init", "-q")
			testtree.Write(t, repo, tc.old)
			run("", "add", "-A")
			run("", "commit", "-q", "-m", "old")
			for _, m := range tc.moves {
				from, to := filepath.Join(repo, m[0]), filepath.Join(repo, m[1])
				if m[1] == "" {
					if err := os.Remove(from); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(from, to); err != nil {
					t.Fatal(err)
				}
			}
			testtree.Write(t, repo, tc.edits)
			run("", "add", "-A")
			text := run("", append([]string{"diff", "--cached", "--no-color"}, tc.diffArgs...)...)
			if !strings.Contains(text, "rename from") {
				t.Fatalf("git wrote no rename:\n%s", text)
			}
			newTree := testtree.Read(t, repo)
			for _, reverse := range []bool{false, true} {
				start := tc.old
				if reverse {
					start = newTree
				}
				// The oracle: git apply of the intact patch.
				gdir := t.TempDir()
				testtree.Write(t, gdir, start)
				args := []string{"apply"}
				if reverse {
					args = append(args, "-R")
				}
				if _, err := gittest.Run(t, gdir, text, append(args, "-")...); err != nil {
					t.Fatalf("git %s: %v", strings.Join(args, " "), err)
				}
				want := testtree.Read(t, gdir)
				check := func(how string, apply func(fsys patch.FileSystem) ([]patch.FileResult, error)) string {
					dir := t.TempDir()
					testtree.Write(t, dir, start)
					res, err := apply(patch.DirFS(dir))
					if err == nil {
						err = patch.WriteResults(dir, res)
					}
					if err != nil {
						t.Errorf("reverse=%v %s: %v", reverse, how, err)
						return ""
					}
					if d := cmp.Diff(want, testtree.Read(t, dir)); d != "" {
						t.Errorf("reverse=%v %s: the tree differs from git apply's (-git +ours):\n%s", reverse, how, d)
					}
					return dir
				}
				check("strict", func(fsys patch.FileSystem) ([]patch.FileResult, error) {
					p, err := patch.ParseUDiff(text, patch.DefaultParseOptions)
					if err != nil {
						return nil, err
					}
					return patch.Apply(p, fsys, patch.ApplyOptions{Reverse: reverse})
				})
				for _, tt := range []struct{ how, text string }{{"tolerant", text}, {"tolerant, context spaces lost", noContextSpace(text)}} {
					tolerant := func(fsys patch.FileSystem) ([]patch.FileResult, error) {
						res, err := repair.Repair(tt.text, repair.Options{FS: fsys, Reverse: reverse})
						if err != nil {
							return nil, err
						}
						return res.Results, nil
					}
					dir := check(tt.how, tolerant)
					if dir == "" {
						continue
					}
					// Apply once: again, nothing changes.
					if res, err := tolerant(patch.DirFS(dir)); err == nil {
						if err := patch.WriteResults(dir, res); err != nil {
							t.Errorf("reverse=%v %s, again: %v", reverse, tt.how, err)
						}
					}
					if d := cmp.Diff(want, testtree.Read(t, dir)); d != "" {
						t.Errorf("reverse=%v %s, applied again, changed the tree (-once +twice):\n%s", reverse, tt.how, d)
					}
				}
			}
		})
	}
}

// TestRenameEdgesRefused: the must-refuse cases beside
// TestRenameEdgesAgainstGit, strict and tolerant (context spaces lost),
// each leaving the tree as it was: x/y renamed back to x where the
// directory x holds another file; two renames onto b, which one later
// section moves away (the second finds it taken); a rename onto a file
// that nothing moves away.
func TestRenameEdgesRefused(t *testing.T) {
	ren := func(from, to, hunk string) string {
		return fmt.Sprintf("diff --git a/%s b/%s\nsimilarity index 80%%\nrename from %s\nrename to %s\n%s", from, to, from, to, hunk)
	}
	edit := "--- a/%s\n+++ b/%s\n@@ -1,3 +1,3 @@\n l1\n-l2\n+L2\n l3\n"
	file := "l1\nl2\nl3\n"
	tests := []struct {
		name  string
		files map[string]string
		text  string
	}{
		{"x/y back to x, another file in x", map[string]string{"x/y": file, "x/other": "o\n"},
			ren("x/y", "x", fmt.Sprintf(edit, "x/y", "x"))},
		{"two renames onto b, one b moved away", map[string]string{"a": file, "b": "b\n", "c": file},
			ren("a", "b", fmt.Sprintf(edit, "a", "b")) + ren("c", "b", fmt.Sprintf(edit, "c", "b")) + ren("b", "d", "")},
		{"rename onto a file that stays", map[string]string{"a": file, "b": "b\n"},
			ren("a", "b", fmt.Sprintf(edit, "a", "b"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, how := range []string{"strict", "tolerant"} {
				dir := t.TempDir()
				testtree.Write(t, dir, tc.files)
				var res []patch.FileResult
				var err error
				if how == "strict" {
					var p *patch.Patch
					if p, err = patch.ParseUDiff(tc.text, patch.DefaultParseOptions); err == nil {
						res, err = patch.Apply(p, patch.DirFS(dir), patch.ApplyOptions{})
					}
				} else {
					var r *repair.Result
					if r, err = repair.Repair(noContextSpace(tc.text), repair.Options{FS: patch.DirFS(dir)}); err == nil {
						res = r.Results
					}
				}
				if err == nil {
					err = patch.WriteResults(dir, res)
				}
				if err == nil {
					t.Errorf("%s: applied, want a refusal", how)
				}
				t.Logf("%s: %v", how, err)
				if d := cmp.Diff(tc.files, testtree.Read(t, dir)); d != "" {
					t.Errorf("%s: the tree changed (-before +after):\n%s", how, d)
				}
			}
		})
	}
}
