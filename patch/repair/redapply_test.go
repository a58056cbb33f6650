package repair_test

// The red team of the apply engine: each shape a patch that applies once
// and, sent again, changed the file again (or removed more than it meant).
// Each row is a first apply (the file it must make, or "" where it must be
// refused) and a second and a third apply to that result, which must
// change nothing.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// againChanges applies text to content twice more, as patchbench apply
// does, and returns the first content that differs from content, or "".
func againChanges(name, content, text string) string {
	for range 2 {
		res, err := repair.Repair(text, repair.Options{FS: patch.MapFS{name: content}})
		if err != nil {
			continue
		}
		for _, r := range res.Results {
			if string(r.Content) != content {
				return string(r.Content)
			}
		}
	}
	return ""
}

func TestRedApplyTwice(t *testing.T) {
	goSrc := lines(
		"package m",
		"",
		"func f(x int) int {",
		"\tif x > 0 {",
		"\t\treturn x",
		"\t}",
		"\treturn 0",
		"}",
		"func g() {}",
	)
	py := lines(
		"import os",
		"",
		"",
		"def helper(path):",
		`    return os.path.join(path, "x")`,
		"",
		"",
		"def helper(path):",
		`    return os.path.join(path, "x")`,
		"",
		"",
		"def main():",
		`    print(helper("."))`,
	)
	pyOnce := strings.Replace(py, "def helper(path):\n    return os.path.join(path, \"x\")\n\n\n", "", 1)
	// A blank line after f's closing brace, written three ways.
	goBlank := strings.Replace(goSrc, "}\nfunc g", "}\n\nfunc g", 1)
	// A closing brace appended (a model that closes what it thinks open).
	goBrace := goSrc + "}\n"

	tests := []struct {
		name, path, old, patch, want string
	}{
		// REPLACE is SEARCH and a line that says little: the SEARCH text is
		// in the file again after the first apply, at the same place.
		{"search-replace appends a blank line to its search text", "m.go", goSrc,
			"m.go\n<<<<<<< SEARCH\n\treturn 0\n}\n=======\n\treturn 0\n}\n\n>>>>>>> REPLACE\n", goBlank},
		{"v4a adds a blank line after its context", "m.go", goSrc,
			"*** Begin Patch\n*** Update File: m.go\n@@\n \treturn 0\n }\n+\n*** End Patch\n", goBlank},
		{"udiff-h adds a brace before a brace", "m.go", goSrc,
			"--- a/m.go\n+++ b/m.go\n@@ @@\n \t\treturn x\n+\t}\n \t}\n", strings.Replace(goSrc, "\t}\n", "\t}\n\t}\n", 1)},
		// An empty SEARCH appends; a brace says nothing of whether it was.
		{"search-replace with an empty search appends a brace", "m.go", goSrc,
			"m.go\n<<<<<<< SEARCH\n=======\n}\n>>>>>>> REPLACE\n", goBrace},
		{"v4a chunk of added lines only appends a brace", "m.go", goSrc,
			"*** Begin Patch\n*** Update File: m.go\n@@\n+}\n*** End Patch\n", goBrace},
		// A hunk without context that removes a line and adds it back with
		// a blank line after it: its place holds both sides once applied.
		{"-U0 hunk re-adds the line it removes and a blank line", "m.go", goSrc,
			"--- a/m.go\n+++ b/m.go\n@@ -8 +8,2 @@\n-}\n+}\n+\n", goBlank},
		// One of two copies of a function removed, the search text whole;
		// the second apply dropped the context line as "invented" and
		// removed the other copy.
		{"search-replace removes the second of two copies", "m.py", py,
			"m.py\n<<<<<<< SEARCH\ndef helper(path):\n    return os.path.join(path, \"x\")\n\n\ndef helper(path):\n    return os.path.join(path, \"x\")\n=======\ndef helper(path):\n    return os.path.join(path, \"x\")\n>>>>>>> REPLACE\n", pyOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := repairOne(t, tc.path, tc.old, tc.patch)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("first apply made\n%s\nwant a refusal", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("first apply: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("first apply (-want +got):\n%s", diff)
			}
			if again := againChanges(tc.path, got, tc.patch); again != "" {
				t.Errorf("applied again, the file changed (-first +again):\n%s", cmp.Diff(got, again))
			}
		})
	}
}

// TestRedApplyReportRepairs: the repairs a report lists are the ones that
// happened. A V4A or search-replace name has no a/ and b/ to lose, so it
// is no "no-ab-prefix" (it was listed for every such file); a hunk whose
// "\ No newline at end of file" marker, or its absence, disagrees with
// the file's end is applied (git apply refuses it) and says so (it said
// nothing).
func TestRedApplyReportRepairs(t *testing.T) {
	abc := "a\nb\nc\n"
	abcNoEOL := "a\nb\nc"
	tests := []struct {
		name, content, patch, want string
		file, hunk                 []string
	}{
		{"search-replace name", abc, "f.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n", "a\nB\nc\n", nil, []string{"no-line-numbers"}},
		{"v4a name, pipeline", "a\nb\nc\nb\n", "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n-b\n+B\n c\n-b\n+B\n*** End Patch\n", "a\nB\nc\nB\n", nil, nil},
		{"udiff name without a/ b/", abc, "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "a\nB\nc\n", []string{"no-ab-prefix"}, nil},
		{"marker on the old side, the file ends with a newline", abc, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+C\n", "a\nb\nC\n", nil, []string{"no-newline-marker"}},
		{"no marker, the file ends without a newline", abcNoEOL, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "a\nB\nc", nil, []string{"no-newline-marker"}},
		// Must stay without the repair: the markers as git writes them.
		{"markers as git writes them", abcNoEOL, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n", "a\nB\nc", nil, nil},
		{"no marker, the file ends with a newline, placed by the pipeline", abc + "d\n", "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n", "a\nB\nc\nd\n", nil, []string{"recount"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := repair.Repair(tc.patch, repair.Options{FS: patch.MapFS{"f.txt": tc.content}})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Results[0].Content); got != tc.want {
				t.Fatalf("made %q, want %q", got, tc.want)
			}
			fr := res.Files[0]
			if diff := cmp.Diff(tc.file, fr.Repairs); diff != "" {
				t.Errorf("file repairs (-want +got):\n%s", diff)
			}
			var hunk []string
			for _, h := range fr.Hunks {
				hunk = append(hunk, h.Repairs...)
			}
			if diff := cmp.Diff(tc.hunk, hunk); diff != "" {
				t.Errorf("hunk repairs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRedApplyModeTwice: a mode change applied a second time (and its
// reverse applied twice) changes nothing and is already_applied, never
// "applied" for a change it did not make; one whose mode is not there
// yet, its hunk made, is applied.
func TestRedApplyModeTwice(t *testing.T) {
	const modeOnly = "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n"
	const withHunk = modeOnly + "--- a/x.sh\n+++ b/x.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo hi\n+echo hello\n"
	tests := []struct {
		name, patch, content string
		perm                 os.FileMode
		reverse              bool
		want                 string
		wantPerm             os.FileMode
	}{
		{"mode only, made", modeOnly, "#!/bin/sh\necho hi\n", 0o755, false, repair.StatusAlreadyApplied, 0o755},
		{"mode only, reversed, made", modeOnly, "#!/bin/sh\necho hi\n", 0o644, true, repair.StatusAlreadyApplied, 0o644},
		{"mode and hunk, made", withHunk, "#!/bin/sh\necho hello\n", 0o755, false, repair.StatusAlreadyApplied, 0o755},
		// Must apply: something is left to do.
		{"mode only, not made", modeOnly, "#!/bin/sh\necho hi\n", 0o644, false, repair.StatusApplied, 0o755},
		{"hunk made, mode not", withHunk, "#!/bin/sh\necho hello\n", 0o644, false, repair.StatusApplied, 0o755},
		{"mode made, hunk not", withHunk, "#!/bin/sh\necho hi\n", 0o755, false, repair.StatusApplied, 0o755},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "x.sh")
			if err := os.WriteFile(f, []byte(tc.content), tc.perm); err != nil {
				t.Fatal(err)
			}
			os.Chmod(f, tc.perm)
			root, err := patch.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			rep, err := repair.Apply(root, tc.patch, repair.ApplyOptions{Name: "p", Reverse: tc.reverse, Strip: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != tc.want {
				t.Errorf("status %s, want %s", rep.Status, tc.want)
			}
			if st, err := os.Stat(f); err != nil || st.Mode().Perm() != tc.wantPerm {
				t.Errorf("mode %v (%v), want %v", st.Mode().Perm(), err, tc.wantPerm)
			}
		})
	}
}
