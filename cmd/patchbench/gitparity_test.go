package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// gitParityCase is a patch written by real git (or GNU diff) from a
// change to a small tree, applied forward to the tree before and in
// reverse to the tree after.
type gitParityCase struct {
	name      string
	setup     string            // sh script that makes the tree before
	change    string            // sh script that changes it
	diff      string            // the command that writes the patch, run after git add -A (default: git diff --cached)
	edit      func(tree string) // changes the tree the patch applies to, or nil
	args      []string          // extra apply arguments, for git and patchbench alike
	differs   string            // non-empty: patchbench refuses where git applies, on purpose (docs/formats.md)
	differsR  string            // the same for the reverse apply
	defaultOK bool              // with differs(R): the default mode applies it (as git apply --unidiff-zero would)
}

var gitParityCases = []gitParityCase{
	{name: "quoted-space", setup: `printf 'a\nb\n' > "sp ace.txt"`, change: `printf 'a\nB\n' > "sp ace.txt"`},
	{name: "quoted-utf8", setup: `printf 'a\nb\n' > "fé.txt"`, change: `printf 'a\nB\n' > "fé.txt"`},
	{name: "quoted-tab", setup: `printf 'a\nb\n' > "t	ab.txt"`, change: `printf 'a\nB\n' > "t	ab.txt"`},
	{name: "quoted-backslash-quote", setup: `printf 'a\nb\n' > 'b\s"q.txt'`, change: `printf 'a\nB\n' > 'b\s"q.txt'`},
	{name: "first-last-adjacent", setup: `seq 1 20 > f`, change: `seq 1 20 | sed 's/^1$/one/; s/^4$/four/; s/^11$/x/; s/^20$/twenty/' > f`},
	{name: "U0-at-end", setup: `seq 1 10 > f`, change: `seq 1 10 | sed 's/^10$/ten/' > f`, diff: "git diff --cached -U0"},
	{name: "U0-append", setup: `seq 1 10 > f`, change: `seq 1 12 > f`, diff: "git diff --cached -U0"},
	{name: "U0-whole", setup: `seq 1 3 > f`, change: `seq 4 6 > f`, diff: "git diff --cached -U0"},
	// git apply refuses these (a hunk with no context must match at the end).
	{name: "U0-middle", setup: `seq 1 30 > f`, change: `seq 1 30 | sed 's/^5$/five/; /^20$/d; s/^30$/thirty/' > f`, diff: "git diff --cached -U0"},
	{name: "U0-top", setup: `seq 1 3 > f`, change: `seq 0 3 > f`, diff: "git diff --cached -U0"},
	// git apply appends a context-free insertion at the end of the file,
	// whatever line its header names.
	{name: "U0-insert-middle", setup: `seq 1 10 > f`, change: `seq 1 10 | sed '3a new' > f`, diff: "git diff --cached -U0",
		differs: "inserts at line 4, where git apply", defaultOK: true},
	{name: "U0-delete-middle", setup: `seq 1 10 > f`, change: `seq 1 10 | sed '/^3$/d' > f`, diff: "git diff --cached -U0",
		differsR: "inserts at line 3, where git apply", defaultOK: true},
	// git apply removes a context-free "}" where a "}" ends the file,
	// whatever line its header names (issue 33: the file's last line).
	{name: "U0-delete-brace", setup: `printf 'func a() {\n\tx()\n\t}\n}\n\nfunc b() {\n\ty()\n}\n' > f`, change: `sed -i 4d f`, diff: "git diff --cached -U0",
		differs: "removes lines at line 4, where git apply", differsR: "inserts at line 4, where git apply", defaultOK: true},
	{name: "noeol-old", setup: `printf 'a\nb\nc' > f`, change: `printf 'a\nb\nc\n' > f`},
	{name: "noeol-new", setup: `printf 'a\nb\nc\n' > f`, change: `printf 'a\nb\nc' > f`},
	{name: "noeol-both", setup: `printf 'a\nb\nc' > f`, change: `printf 'a\nb\nC' > f`},
	{name: "noeol-add-after", setup: `printf 'a\nb\nc' > f`, change: `printf 'a\nb\nc\nd\ne\n' > f`},
	{name: "mode-only", setup: `printf 'a\n' > f`, change: `chmod +x f`},
	{name: "mode-and-hunk", setup: `printf 'a\n' > f`, change: `chmod +x f; echo b >> f`},
	{name: "new-empty", setup: `true`, change: `: > e`},
	{name: "delete-empty", setup: `: > e`, change: `rm e`},
	{name: "delete-with-hunk", setup: `printf 'a\nb\n' > d`, change: `rm d`},
	{name: "new-exec", setup: `true`, change: `printf '#!/bin/sh\n' > x; chmod +x x`},
	{name: "rename-100", setup: `seq 1 20 > a`, change: `git mv a b`, diff: "git diff --cached -M"},
	{name: "rename-hunk-mode", setup: `seq 1 20 > a`, change: `git mv a b; seq 1 20 | sed 's/^5$/five/' > b; chmod +x b`, diff: "git diff --cached -M"},
	// A rename onto a path under the old name: the file x leaves its
	// place to the directory x; and two files swapped in one patch (-B
	// breaks the rewrites into renames), one of them changed too. The
	// reverse, x/y to x, makes the directory the rename empties a file.
	{name: "rename-into-own-dir", setup: `seq 1 20 > x`, change: `git mv x tmp && mkdir x && git mv tmp x/y`, diff: "git diff --cached -M"},
	{name: "rename-swap", setup: `seq 1001 1300 > a; seq 2001 2300 > b`,
		change: `git mv a t && git mv b a && git mv t b && echo extra >> a`, diff: "git diff --cached -B -M"},
	{name: "rename-cycle", setup: `seq 1001 1300 > a; seq 2001 2300 > b; seq 3001 3300 > c`,
		change: `git mv a t && git mv c a && git mv b c && git mv t b`, diff: "git diff --cached -B -M"},
	{name: "copy", setup: `seq 1 20 > a`, change: `cp a b; sed -i 's/^5$/five/' b`, diff: "git diff --cached -C --find-copies-harder"},
	{name: "binary-literal-delta", setup: `printf '\0\1\2abc' > b.bin; head -c 4000 /dev/zero | tr '\0' x > big.bin`, change: `printf '\0\1\3abcdef' > b.bin; printf '\0' >> big.bin`, diff: "git diff --cached --binary"},
	{name: "binary-no-data", setup: `printf '\0\1\2abc' > b.bin`, change: `printf '\0\1\3abcdef' > b.bin`},
	{name: "crlf-file", setup: `printf 'a\r\nb\r\nc' > f`, change: `printf 'a\r\nB\r\nc\r\nd' > f`},
	{name: "multi-file-one-fails", setup: `seq 1 5 > a; seq 1 5 > b`, change: `sed -i s/2/two/ a; sed -i s/3/three/ b`,
		edit: func(tree string) { os.WriteFile(filepath.Join(tree, "b"), []byte("1\n2\n3\nFOUR\n5\n"), 0o644) }},
	{name: "index-mismatch", setup: `printf 'a\nb\nc\n' > f`, change: `printf 'a\nB\nc\n' > f`, diff: `git diff --cached | sed 's/^index .*/index 1234567..89abcde 100644/'`},
	{name: "format-patch", setup: `seq 1 5 > a`, change: `sed -i s/2/two/ a; git commit -qam m`, diff: "git format-patch -1 --stdout"},
	{name: "p0", setup: `printf 'a\nb\n' > f`, change: `printf 'a\nB\n' > f`, diff: "git diff --cached --no-prefix", args: []string{"-p0"}},
	{name: "dot-prefix-p2", setup: `printf 'a\nb\n' > f`, change: `printf 'a\nB\n' > f`, diff: "git diff --cached --src-prefix=./a/ --dst-prefix=./b/", args: []string{"-p2"}},
	{name: "gnu-diff-space-timestamp", setup: `mkdir o; printf 'a\nb\n' > "o/my file"; printf 'k\n' > o/keep`,
		change: `mkdir n; printf 'a\nB\n' > "n/my file"; printf 'x\n' > n/new; printf 'k\n' > n/keep; rm -f "my file"`,
		diff:   `diff -ruN o n; true`, edit: gnuTree},
	{name: "offset", setup: `seq 1 20 > f`, change: `seq 1 20 | sed 's/^10$/ten/' > f`,
		edit: func(tree string) {
			b, _ := os.ReadFile(filepath.Join(tree, "f"))
			os.WriteFile(filepath.Join(tree, "f"), append([]byte("x\ny\n"), b...), 0o644)
		}},
	// A git diff naming /dev/null without "deleted file mode": git apply
	// moves the file to "dev/null"; patchbench refuses in --strict and
	// deletes it in the default mode (a repair).
	{name: "git-devnull-no-mode", setup: `printf 'x\n' > gd`, change: `rm gd`,
		diff:    `printf 'diff --git a/gd b/gd\n--- a/gd\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n'`,
		differs: "reads as a file named dev/null", defaultOK: true},
	// Hand-written hunks: the second matches only lines the first wrote,
	// which git apply (without --allow-overlap) refuses; hunks out of
	// order apply.
	{name: "overlapping-hunks", setup: `seq 1 10 > f`, change: `true`,
		diff: `printf -- '--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -2,3 +2,3 @@\n two\n-3\n+three\n 4\n'`},
	{name: "hunks-out-of-order", setup: `seq 1 10 > f`, change: `true`,
		diff: `printf -- '--- a/f\n+++ b/f\n@@ -7,3 +7,3 @@\n 7\n-8\n+eight\n 9\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n'`},
	// Symbolic links: patchbench never creates, edits or follows one.
	{name: "symlink-new", setup: `printf 'a\n' > t`, change: `ln -s t l`, differs: "symbolic links are not edited", differsR: "symbolic links are not edited"},
	{name: "symlink-retarget", setup: `printf 'a\n' > t; ln -s t l`, change: `ln -sfn t2 l`, differs: "symbolic links are not edited", differsR: "symbolic links are not edited"},
}

// gnuTree moves the "o" tree of a GNU diff case to the root, as the
// patch's -p1 reads it.
func gnuTree(tree string) {
	entries, _ := os.ReadDir(filepath.Join(tree, "o"))
	for _, e := range entries {
		os.Rename(filepath.Join(tree, "o", e.Name()), filepath.Join(tree, e.Name()))
	}
	os.RemoveAll(filepath.Join(tree, "o"))
	os.RemoveAll(filepath.Join(tree, "n"))
}

// TestGitApplyParity applies patches written by git (and GNU diff) with
// git apply and with patchbench apply --strict and in the default mode,
// forward and in reverse: the same success, the same bytes, modes and
// links, nothing written on failure; where patchbench refuses on purpose
// the case says so and the tree stays as it was.
func TestGitApplyParity(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, c := range gitParityCases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			repo := filepath.Join(work, "repo")
			sh(t, work, "mkdir repo && cd repo && git init -q . && git config user.email a@b && git config user.name a && git config core.quotepath true && git config core.autocrlf false")
			sh(t, repo, c.setup+" && git add -A && git commit -qm pre --allow-empty")
			pre := filepath.Join(work, "pre")
			sh(t, work, "cp -a repo pre && rm -rf pre/.git")
			sh(t, repo, c.change+" && git add -A")
			diffCmd := c.diff
			if diffCmd == "" {
				diffCmd = "git diff --cached"
			}
			patchText := sh(t, repo, diffCmd)
			patchFile := filepath.Join(work, "fix.patch")
			os.WriteFile(patchFile, []byte(patchText), 0o644)
			post := filepath.Join(work, "post")
			sh(t, work, "cp -a repo post && rm -rf post/.git")
			if c.edit != nil {
				c.edit(pre)
				c.edit(post)
			}
			parityRun(t, work, pre, patchFile, c.args, c.differs, c.defaultOK)
			parityRun(t, work, post, patchFile, append([]string{"-R"}, c.args...), c.differsR, c.defaultOK)
		})
	}
}

func parityRun(t *testing.T, work, tree, patchFile string, args []string, differs string, defaultOK bool) {
	t.Helper()
	label := strings.Join(append([]string{"apply"}, args...), " ")
	before := snapshot(t, tree)
	gitDir := copyTree(t, work, tree, "git")
	cmd := exec.Command("git", append(append([]string{"apply"}, args...), patchFile)...)
	cmd.Dir = gitDir
	gitOut, gitErr := cmd.CombinedOutput()
	gitOK := gitErr == nil
	check := exec.Command("git", append(append([]string{"apply", "--check"}, args...), patchFile)...)
	check.Dir = tree
	if checkOK := check.Run() == nil; checkOK != gitOK {
		t.Fatalf("%s: git apply --check says %v, git apply %v", label, checkOK, gitOK)
	}
	want := snapshot(t, gitDir)
	for _, mode := range []string{"--strict", "default"} {
		dir := copyTree(t, work, tree, strings.TrimPrefix(mode, "--"))
		a := []string{"apply", "-C", dir}
		if mode != "default" {
			a = append(a, mode)
		}
		a = append(append(a, args...), patchFile)
		code, _, stderr := runCLI(t, "", a...)
		got := snapshot(t, dir)
		switch {
		case differs != "" && (mode == "--strict" || !defaultOK):
			if !gitOK {
				t.Fatalf("%s %s: git apply refuses (%s); the case says patchbench differs", label, mode, gitOut)
			}
			if code == 0 || !strings.Contains(stderr, differs) {
				t.Fatalf("%s %s: exit %d, stderr %q; want a refusal naming %q", label, mode, code, stderr, differs)
			}
			if got != before {
				t.Fatalf("%s %s: refused but the tree changed:\n%s", label, mode, got)
			}
		case differs != "":
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", label, mode, code, stderr)
			}
		case gitOK:
			if code != 0 {
				t.Fatalf("%s %s: git applies it, patchbench exit %d: %s", label, mode, code, stderr)
			}
			if got != want {
				t.Fatalf("%s %s: the tree differs from git apply's\ngit:\n%s\npatchbench:\n%s", label, mode, want, got)
			}
		case mode == "--strict":
			if code == 0 {
				t.Fatalf("%s --strict: git apply refuses (%s); patchbench applied it:\n%s", label, gitOut, got)
			}
			if got != before {
				t.Fatalf("%s --strict: refused but the tree changed", label)
			}
		default:
			// The default mode may repair what git refuses; when it refuses,
			// nothing is written.
			if code != 0 && got != before {
				t.Fatalf("%s: refused but the tree changed", label)
			}
		}
	}
}

func sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return string(out)
}

func copyTree(t *testing.T, work, tree, name string) string {
	t.Helper()
	dst, err := os.MkdirTemp(work, name)
	if err != nil {
		t.Fatal(err)
	}
	sh(t, work, fmt.Sprintf("cp -a %q/. %q/ && cd %q && git init -q .", tree, dst, dst))
	return dst
}

// snapshot lists a tree outside .git: each path with its type and mode,
// a link's target, a file's bytes.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if rel == "." || d.IsDir() {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("%s -> %s", rel, target))
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s %v %q", rel, info.Mode().Perm()&0o100 != 0, b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
