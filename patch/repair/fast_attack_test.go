package repair_test

// Attacks on the fast path's promise (fast.go): patches built to make it
// decide otherwise than the engine. Each case runs forward and reversed
// through fastVsEngine; where the fast path applies, git apply is the
// oracle for the bytes too.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestFastPathAttacks: CR inside and at the end of lines, NUL and invalid
// UTF-8, files without a final newline, lines in bodies and hunk section
// text that other formats' readers look for (fences, SEARCH markers, V4A,
// git headers), hunk headers and counts that lie, paths, mode and index
// lines, hunks without leading or trailing context, repeated and
// partially applied hunks. fast says whether the fast path takes the
// patch forward (never reversed: the file is the old one).
func TestFastPathAttacks(t *testing.T) {
	file := "a\nb\nc\nd\ne\nf\ng\nh\n"
	h := "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
	hunk := h + "@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n"
	rep := func(s, o, n string) string { return strings.Replace(s, o, n, 1) }
	cases := []struct {
		name, file, text string
		fast             bool
	}{
		{"CR mid line file", rep(file, "d\n", "d\rx\n"), rep(hunk, "-d\n", "-d\rx\n"), true},
		{"CR mid line added", file, rep(hunk, "+D\n", "+D\rx\n"), true},
		{"CR only endings", "a\rb\rc\rd\r", h + "@@ -1 +1 @@\n-a\rb\rc\rd\r\n+x\n", false},
		{"CR only context", "a\nb\rc\nd\ne\n", h + "@@ -1,3 +1,3 @@\n a\n-b\rc\n+B\n d\n", true},
		{"NUL in file", rep(file, "c\n", "c\x00\n"), rep(hunk, " c\n", " c\x00\n"), true},
		{"NUL elsewhere", rep(file, "a\n", "\x00\x01\n"), hunk, true},
		{"NUL added", file, rep(hunk, "+D\n", "+\x00D\n"), true},
		{"invalid utf8", rep(file, "c\n", "c\xff\xfe\n"), rep(hunk, " c\n", " c\xff\xfe\n"), true},
		{"invalid utf8 added", file, rep(hunk, "+D\n", "+\xff\n"), true},
		{"no final newline, hunk mid", strings.TrimSuffix(file, "\n"), hunk, true},
		{"no final newline, added last", "a\nb\nc\nd\ne", h + "@@ -3,3 +3,4 @@\n c\n d\n e\n+x\n", false},
		{"fence in body", rep(file, "c\n", "```\n"), rep(hunk, " c\n", " ```\n"), true},
		{"fence added", file, rep(hunk, "+D\n", "+```diff\n"), true},
		{"search marker", file, rep(hunk, "+D\n", "+<<<<<<< SEARCH\n"), true},
		{"search marker ctx", rep(file, "c\n", "<<<<<<< SEARCH\n"), rep(hunk, " c\n", " <<<<<<< SEARCH\n"), true},
		{"diff git added", file, rep(hunk, "+D\n", "+diff --git a/g b/g\n"), true},
		{"update file", file, rep(hunk, "+D\n", "+*** Update File: f\n"), true},
		{"index added", file, rep(hunk, "+D\n", "+Index: f\n"), true},
		{"at-at added", file, rep(hunk, "+D\n", "+@@ -1 +1 @@\n"), true},
		{"star context", file, rep(hunk, "+D\n", "+*** 1,3 ****\n"), true},
		{"conflict markers", file, rep(hunk, "+D\n", "+=======\n"), true},
		{"conflict >>>", file, rep(hunk, "+D\n", "+>>>>>>> REPLACE\n"), true},
		{"begin patch split", file, rep(hunk, "+D\n", "+*** Begin\n"), true},
		{"end patch", file, rep(hunk, "+D\n", "+*** End Patch\n"), true},
		{"header section", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@ func x() @@ y"), true},
		{"header tab", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@\t"), false},
		{"header leading zero", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -03,3 +03,3 @@"), true},
		{"header plus sign", file, rep(hunk, "+3,3", "++3,3"), false},
		{"count lies more", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,4 +3,4 @@") + " f\n", true},
		{"count lies less", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,2 +3,2 @@"), false},
		{"count lies less ctx", file, h + "@@ -3,2 +3,2 @@\n c\n-d\n+D\n e\n", false},
		{"old name quoted", file, strings.ReplaceAll(hunk, "a/f", "\"a/f\""), false},
		{"mode lines", file, rep(hunk, "--- a/f", "old mode 100644\nnew mode 100755\n--- a/f"), false},
		{"similarity", file, rep(hunk, "--- a/f", "similarity index 100%\n--- a/f"), false},
		{"index mode 755", file, rep(hunk, "--- a/f", "index 1234567..89abcde 100755\n--- a/f"), true},
		{"index upper hex", file, rep(hunk, "--- a/f", "index 1234567..89ABCDE\n--- a/f"), false},
		{"+++ with tab date", file, rep(hunk, "+++ b/f\n", "+++ b/f\t2020-01-01\n"), false},
		{"hunk starts file no leading ctx", file, h + "@@ -1,2 +1,2 @@\n-a\n+A\n b\n", true},
		{"hunk no leading ctx not at start", file, h + "@@ -2,2 +2,2 @@\n-b\n+B\n c\n", false},
		{"ends file", file, h + "@@ -7,2 +7,3 @@\n g\n h\n+i\n", true},
		{"ends file claims mid", file + "i\n", h + "@@ -7,2 +7,3 @@\n g\n h\n+i\n", false},
		{"new matches old both", "a\nb\nb\nb\nc\n", h + "@@ -1,3 +1,4 @@\n a\n b\n+b\n b\n", false},
		{"insert dup of next", "a\nx\ny\nz\n", h + "@@ -1,2 +1,3 @@\n a\n+x\n x\n", true},
		{"dup hunk", file, hunk + "@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n", false},
		{"adjacent hunks", file, h + "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -3,2 +3,2 @@\n c\n-d\n+D\n", false},
		{"overlap hunks", file, h + "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -3,2 +3,2 @@\n c\n-d\n+D\n", false},
		{"partial applied 2 hunks", rep(file, "b\n", "B\n"), h + "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -5,3 +5,3 @@\n e\n-f\n+F\n g\n", false},
		{"CRLF file CR in added only", "a\r\nb\r\nc\r\n", h + "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\n c\r\n", false},
		{"CRLF applied LF new", "a\r\nB\r\nc\r\n", h + "@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\n c\r\n", false},
		{"mixed CRLF new there", "a\nb\r\nB\nc\n", h + "@@ -1,2 +1,2 @@\n a\n-b\r\n+B\n", false},
		{"trailing whitespace ctx", rep(file, "c\n", "c \n"), rep(hunk, " c\n", " c \n"), true},
		{"BOM", "\ufeff" + file, h + "@@ -1,2 +1,2 @@\n \ufeffa\n-b\n+B\n", false},
		{"BOM patch", file, "\ufeff" + hunk, false},
		{"leading text", file, "From abc\nSubject: x\n\n" + hunk, false},
		{"long path", file, strings.ReplaceAll(hunk, "/f", "/"+strings.Repeat("d/", 3)+"f"), true},
		{"dot path", file, strings.ReplaceAll(hunk, "/f", "/./f"), false},
		{"space path", file, strings.ReplaceAll(hunk, "/f", "/f g"), false},
		{"b/ in path", file, strings.ReplaceAll(hunk, "/f", "/x b/f"), false},
		{"dev null", file, rep(hunk, "--- a/f", "--- /dev/null"), false},
		{"git dir path", file, strings.ReplaceAll(hunk, "/f", "/.git/f"), false},
		{"dotgit upper", file, strings.ReplaceAll(hunk, "/f", "/.GIT/f"), false},
		{"section NUL", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@ \x00\xff"), true},
		{"section header", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@ --- a/f"), true},
		{"section diff", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@ diff --git a/g b/g"), true},
		{"section begin", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@ *** Begin Patch"), false},
		{"section CR", file, rep(hunk, "@@ -3,3 +3,3 @@", "@@ -3,3 +3,3 @@ x\ry"), false},
		{"empty file", "", h + "@@ -1,1 +1,1 @@\n-\n+x\n", false},
	}
	_, gitErr := exec.LookPath("git")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, rev := range []bool{false, true} {
				fsys := patch.MapFS{"f": tc.file, "x b/f": tc.file, "d/d/d/f": tc.file, ".git/f": tc.file, ".GIT/f": tc.file, "f g": tc.file}
				fast, d := fastVsEngine(tc.text, fsys, rev)
				if d != "" {
					t.Errorf("reverse %v: %s", rev, d)
				}
				if want := tc.fast && !rev; fast != want {
					t.Errorf("reverse %v: fast path taken: %v, want %v", rev, fast, want)
				}
				if !fast || gitErr != nil {
					continue
				}
				_, content, _, _ := repair.FastApply(tc.text, fsys, rev)
				dir := t.TempDir()
				for n, c := range fsys {
					os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755)
					if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(dir, "p.diff"), []byte(tc.text), 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command("git", "-C", dir, "apply", "p.diff").CombinedOutput()
				got, _ := os.ReadFile(filepath.Join(dir, gitDiffName(tc.text)))
				if err != nil || string(got) != string(content) {
					t.Errorf("git apply: %v %s; the same bytes as the fast path: %v", err, out, string(got) == string(content))
				}
			}
		})
	}
}

// gitDiffName is the a/ name of a "diff --git a/P b/P" first line.
func gitDiffName(text string) string {
	l, _, _ := strings.Cut(text, "\n")
	n, _, _ := strings.Cut(strings.TrimPrefix(l, "diff --git a/"), " b/")
	return n
}
