// Package confinetest holds the cases that every reader and writer of
// patch targets must refuse (apply, reverse, convert, repair, the SWE patch
// stage, APE's candidate check, the MCP server's tools): paths that escape
// the tree or run through a symbolic link, paths git refuses (.git in any
// letter case and its NTFS and HFS+ equivalents), files that are not
// regular, paths too long or too deep, symbolic links made by the patch;
// and a directory tree with real links, a nested repository's .git and a
// named pipe to run them on. One table, so that every entry point is held
// to the same cases.
package confinetest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/gittest"
)

// Case is a patch that reads or writes outside the tree, or through a link.
type Case struct {
	Name   string
	Format string // "udiff" or "v4a"
	// Patch is the patch text; {{outside}} stands for the absolute path of
	// the directory beside the tree.
	Patch string
	// Want is in the error of every patchbench entry point; ReverseWant,
	// when set, instead of Want when the patch is applied strictly in
	// reverse (an earlier file can fail first; tolerant apply finds that
	// file's change already applied and goes on to the link).
	Want, ReverseWant string
	// Git is set for patches git apply reads; GitWant is in its error.
	Git     bool
	GitWant string
	// Disk is set when the refusal depends on a file on disk that a git
	// tree cannot hold (a named pipe): readers of git trees find no file.
	Disk bool
	// Path is the path refused, when Want does not begin with it
	// (`unsafe path "..."`); ByMode is set when the path is refused for
	// what the patch says about it (a symbolic link's mode), not for
	// itself: entry points that take a path and a content (APE's
	// candidate check) have nothing to refuse then.
	Path   string
	ByMode bool
}

// Cases are the confinement cases. The tree is:
//
//	tree/a.txt         "one\ntwo\nthree\n"
//	tree/sub/f.txt     "inner\n"
//	tree/link      ->  ../outside          (a directory outside)
//	tree/file.txt  ->  ../outside/secret.txt
//	tree/inlink    ->  sub                 (a directory inside)
//	tree/infile.txt -> a.txt               (a file inside)
//	tree/sub/.git/config "[core]\n"   (a nested repository's)
//	tree/fifo          a named pipe (where the system has them)
//	outside/victim.txt "secret\n"
//	outside/secret.txt "secret2\n"
var Cases = []Case{
	{
		Name: "dir link escaping", Format: "udiff",
		Patch: "--- a/link/victim.txt\n+++ b/link/victim.txt\n@@ -1 +1 @@\n-secret\n+pwned\n",
		Want:  `unsafe path "link/victim.txt": beyond a symbolic link (link -> ../outside)`,
		Git:   true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "file link escaping", Format: "udiff",
		Patch: "--- a/file.txt\n+++ b/file.txt\n@@ -1 +1 @@\n-secret2\n+pwned\n",
		Want:  `unsafe path "file.txt": a symbolic link (-> ../outside/secret.txt); symbolic links are not edited`,
		Git:   true, GitWant: "patch does not apply",
	},
	{
		Name: "absolute path", Format: "v4a",
		Patch: "*** Begin Patch\n*** Update File: {{outside}}/victim.txt\n@@\n-secret\n+pwned\n*** End Patch\n",
		Want:  `unsafe path "{{outside}}/victim.txt": patch paths must be relative and stay inside the directory`,
	},
	{
		Name: "dotdot path", Format: "udiff",
		Patch: "--- a/../outside/victim.txt\n+++ b/../outside/victim.txt\n@@ -1 +1 @@\n-secret\n+pwned\n",
		Want:  `unsafe path "../outside/victim.txt": patch paths must be relative and stay inside the directory`,
		Git:   true, GitWant: "invalid path",
	},
	{
		Name: "dotdot path v4a", Format: "v4a",
		Patch: "*** Begin Patch\n*** Update File: ../outside/victim.txt\n@@\n-secret\n+pwned\n*** End Patch\n",
		Want:  `unsafe path "../outside/victim.txt": patch paths must be relative and stay inside the directory`,
	},
	{
		Name: "v4a add file through link", Format: "v4a",
		Patch: "*** Begin Patch\n*** Add File: link/new.txt\n+hello\n*** End Patch\n",
		Want:  `unsafe path "link/new.txt": beyond a symbolic link (link -> ../outside)`,
	},
	{
		Name: "udiff create through link", Format: "udiff",
		Patch: "diff --git a/link/new.txt b/link/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/link/new.txt\n@@ -0,0 +1 @@\n+hello\n",
		Want:  `unsafe path "link/new.txt": beyond a symbolic link (link -> ../outside)`,
		Git:   true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "rename target through link", Format: "udiff",
		Patch: "diff --git a/a.txt b/link/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to link/a.txt\n",
		Want:  `unsafe path "link/a.txt": beyond a symbolic link (link -> ../outside)`,
		Git:   true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "v4a move target through link", Format: "v4a",
		Patch: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: link/moved.txt\n@@\n-one\n+ONE\n*** End Patch\n",
		Want:  `unsafe path "link/moved.txt": beyond a symbolic link (link -> ../outside)`,
	},
	{
		Name: "delete through link", Format: "udiff",
		Patch: "diff --git a/link/victim.txt b/link/victim.txt\ndeleted file mode 100644\n--- a/link/victim.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-secret\n",
		Want:  `unsafe path "link/victim.txt": beyond a symbolic link (link -> ../outside)`,
		Git:   true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "v4a delete through link", Format: "v4a",
		Patch: "*** Begin Patch\n*** Delete File: link/victim.txt\n*** End Patch\n",
		Want:  `unsafe path "link/victim.txt": beyond a symbolic link (link -> ../outside)`,
	},
	{
		Name: "v4a delete of a link", Format: "v4a",
		Patch: "*** Begin Patch\n*** Delete File: file.txt\n*** End Patch\n",
		Want:  `unsafe path "file.txt": a symbolic link (-> ../outside/secret.txt)`,
	},
	{
		Name: "binary create through link", Format: "udiff",
		Patch: "diff --git a/link/bin.dat b/link/bin.dat\nnew file mode 100644\n" +
			"index 0000000000000000000000000000000000000000..20f982d561018f3bfdd8f3230d65ded24d81c79c\n" +
			"GIT binary patch\nliteral 7\nOcmZQzWJ=1+;{pH!zyU`9\n\nliteral 0\nHcmV?d00001\n\n",
		Want: `unsafe path "link/bin.dat": beyond a symbolic link (link -> ../outside)`,
		Git:  true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "dir link inside the tree", Format: "udiff",
		Patch: "--- a/inlink/f.txt\n+++ b/inlink/f.txt\n@@ -1 +1 @@\n-inner\n+changed\n",
		Want:  `unsafe path "inlink/f.txt": beyond a symbolic link (inlink -> sub)`,
		Git:   true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "file link inside the tree", Format: "udiff",
		Patch: "--- a/infile.txt\n+++ b/infile.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
		Want:  `unsafe path "infile.txt": a symbolic link (-> a.txt); symbolic links are not edited`,
		Git:   true, GitWant: "patch does not apply",
	},
	{
		Name: "second file through link", Format: "udiff",
		Patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n three\n" +
			"--- a/link/victim.txt\n+++ b/link/victim.txt\n@@ -1 +1 @@\n-secret\n+pwned\n",
		Want:        `unsafe path "link/victim.txt": beyond a symbolic link (link -> ../outside)`,
		ReverseWant: "a.txt",
		Git:         true, GitWant: "beyond a symbolic link",
	},
	{
		Name: "nested .git read and written", Format: "udiff",
		Patch: "--- a/sub/.git/config\n+++ b/sub/.git/config\n@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = touch /tmp/pwned\n",
		Want:  `unsafe path "sub/.git/config": patches may not touch .git (component ".git")`,
		Git:   true, GitWant: "invalid path",
	},
	{
		Name: ".GIT created", Format: "udiff",
		Patch: "diff --git a/.GIT/hooks/pre-commit b/.GIT/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.GIT/hooks/pre-commit\n@@ -0,0 +1 @@\n+evil\n",
		Want:  `unsafe path ".GIT/hooks/pre-commit": patches may not touch .git (component ".GIT")`,
		Git:   true, GitWant: "invalid path",
	},
	{
		Name: "deep .Git added v4a", Format: "v4a",
		Patch: "*** Begin Patch\n*** Add File: vendor/lib/.Git/hooks/post-checkout\n+evil\n*** End Patch\n",
		Want:  `unsafe path "vendor/lib/.Git/hooks/post-checkout": patches may not touch .git (component ".Git")`,
	},
	{
		Name: "NTFS .git. created", Format: "udiff",
		Patch: "diff --git a/.git./config b/.git./config\nnew file mode 100644\n--- /dev/null\n+++ b/.git./config\n@@ -0,0 +1 @@\n+evil\n",
		Want:  `unsafe path ".git./config": patches may not touch .git (component ".git.")`,
		Git:   true, GitWant: "invalid path",
	},
	{
		Name: "NTFS short name git~1", Format: "udiff",
		Patch: "diff --git a/GIT~1/config b/GIT~1/config\nnew file mode 100644\n--- /dev/null\n+++ b/GIT~1/config\n@@ -0,0 +1 @@\n+evil\n",
		Want:  `unsafe path "GIT~1/config": patches may not touch .git (component "GIT~1")`,
		Git:   true, GitWant: "invalid path",
	},
	{
		Name: "HFS+ .g(zero-width)it v4a", Format: "v4a",
		Patch: "*** Begin Patch\n*** Add File: .g\u200cit/config\n+evil\n*** End Patch\n",
		Want:  `unsafe path ".g\u200cit/config": patches may not touch .git (component ".g\u200cit")`,
	},
	{
		Name: "named pipe", Format: "udiff",
		Patch: "--- a/fifo\n+++ b/fifo\n@@ -1 +1 @@\n-a\n+b\n",
		Want:  `unsafe path "fifo": a named pipe, not a regular file`,
		Git:   true, GitWant: "failed to read fifo", Disk: true,
	},
	{
		Name: "named pipe deleted v4a", Format: "v4a",
		Patch: "*** Begin Patch\n*** Delete File: fifo\n*** End Patch\n",
		Want:  `unsafe path "fifo": a named pipe, not a regular file`, Disk: true,
	},
	{
		Name: "path too long", Format: "v4a",
		Patch: "*** Begin Patch\n*** Add File: " + strings.Repeat("x/", 2100) + "f\n+x\n*** End Patch\n",
		Want:  "4201 bytes, over the bound of 4096 (MaxPathBytes)",
		Path:  strings.Repeat("x/", 2100) + "f",
	},
	{
		Name: "path too deep", Format: "udiff",
		Patch: "--- /dev/null\n+++ b/" + strings.Repeat("d/", 300) + "f\n@@ -0,0 +1 @@\n+x\n",
		Want:  "301 components deep, over the bound of 256 (MaxPathDepth)",
		Path:  strings.Repeat("d/", 300) + "f",
	},
	{
		Name: "symbolic link created", Format: "udiff",
		Patch:  "diff --git a/newlink b/newlink\nnew file mode 120000\n--- /dev/null\n+++ b/newlink\n@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n",
		Want:   `unsafe path "newlink": the patch edits a symbolic link (mode 120000)`,
		ByMode: true,
	},
	{
		Name: "absolute udiff path", Format: "udiff",
		Patch: "--- {{outside}}/victim.txt\n+++ {{outside}}/victim.txt\n@@ -1 +1 @@\n-secret\n+pwned\n",
		Want:  `unsafe path "{{outside}}/victim.txt": patch paths must be relative and stay inside the directory`,
	},
}

// Tree is the directory tree of [Cases] under a temporary directory, with a
// snapshot of everything in it.
type Tree struct {
	// Dir is the tree patches apply to; Outside is the directory beside it.
	Dir, Outside string
	base         string
	snap         map[string]string
}

// New makes the tree. It skips the test where symbolic links cannot be made.
func New(t testing.TB) *Tree {
	t.Helper()
	base := t.TempDir()
	tr := &Tree{Dir: filepath.Join(base, "tree"), Outside: filepath.Join(base, "outside"), base: base}
	files := map[string]string{
		"tree/a.txt":           "one\ntwo\nthree\n",
		"tree/sub/f.txt":       "inner\n",
		"tree/sub/.git/config": "[core]\n",
		"outside/victim.txt":   "secret\n",
		"outside/secret.txt":   "secret2\n",
	}
	for name, c := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := [][2]string{{"link", "../outside"}, {"file.txt", "../outside/secret.txt"}, {"inlink", "sub"}, {"infile.txt", "a.txt"}}
	for _, l := range links {
		if err := os.Symlink(l[1], filepath.Join(tr.Dir, l[0])); err != nil {
			t.Skipf("cannot make symbolic links: %v", err)
		}
	}
	if err := mkfifo(filepath.Join(tr.Dir, "fifo")); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	tr.snap = tr.snapshot(t)
	return tr
}

// Commit makes the tree a git repository with one commit of its files and
// links (links are mode 120000 entries), for readers of git trees and for
// git apply as oracle. It skips the test without git.
func (tr *Tree) Commit(t testing.TB) {
	t.Helper()
	gittest.Need(t)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "base"}} {
		if _, err := gittest.Run(t, tr.Dir, "", args...); err != nil {
			t.Fatal(err)
		}
	}
}

// Patch returns the text of c for this tree.
func (tr *Tree) Patch(c Case) string {
	return strings.ReplaceAll(c.Patch, "{{outside}}", filepath.ToSlash(tr.Outside))
}

// RefusedPath returns the path c is refused for, for this tree.
func (tr *Tree) RefusedPath(c Case) string {
	if c.Path != "" {
		return c.Path
	}
	q, ok := strings.CutPrefix(tr.Want(c, false), "unsafe path ")
	if !ok {
		panic("confinetest: case " + c.Name + " names no path")
	}
	p, err := strconv.QuotedPrefix(q)
	if err != nil {
		panic("confinetest: case " + c.Name + ": " + err.Error())
	}
	p, _ = strconv.Unquote(p)
	return p
}

// Want returns the error text of c for this tree.
func (tr *Tree) Want(c Case, strictReverse bool) string {
	w := c.Want
	if strictReverse && c.ReverseWant != "" {
		w = c.ReverseWant
	}
	return strings.ReplaceAll(w, "{{outside}}", filepath.ToSlash(tr.Outside))
}

// Unchanged fails the test if anything in or beside the tree (outside .git)
// was written, created, removed or replaced since New: file contents, link
// targets and modes are compared.
func (tr *Tree) Unchanged(t testing.TB) {
	t.Helper()
	if diff := cmp.Diff(tr.snap, tr.snapshot(t)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

func (tr *Tree) snapshot(t testing.TB) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(tr.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(tr.Dir, ".git") {
			return filepath.SkipDir // the repository of Commit, which git writes
		}
		rel, _ := filepath.Rel(tr.base, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		var b bytes.Buffer
		b.WriteString(info.Mode().String())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			b.WriteString(" -> " + target)
		case info.Mode().IsRegular():
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(c))
		}
		snap[filepath.ToSlash(rel)] = b.String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
