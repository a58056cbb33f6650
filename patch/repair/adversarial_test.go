package repair_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

const twice = `package p

func a() int {
	x := 1
	return x
}

func b() int {
	x := 1
	return x
}
`

// An edit whose context fits two places is refused, naming both.
func TestAmbiguousRefusedNamingBoth(t *testing.T) {
	edit := "--- a/p.go\n+++ b/p.go\n@@ @@\n\tx := 1\n-\treturn x\n+\treturn x + 1\n }\n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"p.go": twice}})
	if !errors.Is(err, repair.ErrRefused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if !strings.Contains(err.Error(), "4") || !strings.Contains(err.Error(), "9") {
		t.Errorf("error %q does not name lines 4 and 9", err)
	}
	got := res.Files[0].Hunks[0].Candidates
	if len(got) != 2 || got[0] != 4 || got[1] != 9 {
		t.Errorf("candidates = %v, want [4 9]", got)
	}
	if res.Results != nil {
		t.Error("a refused repair returned contents")
	}
}

// The same edit with a line number pointing exactly at one place applies
// there, since the patch says where.
func TestExactLineNumberDecides(t *testing.T) {
	edit := "--- a/p.go\n+++ b/p.go\n@@ -9,3 +9,3 @@\n \tx := 1\n-\treturn x\n+\treturn x + 1\n }\n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"p.go": twice}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(twice, "\treturn x\n}\n", "\treturn x + 1\n}\n", 2)
	want = strings.Replace(want, "\treturn x + 1\n}\n", "\treturn x\n}\n", 1)
	if got := string(res.Results[0].Content); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A line the hunk removes that is not in the file is refused, even though
// the rest of the hunk fits.
func TestRemovedLineMissingRefused(t *testing.T) {
	edit := "--- a/p.go\n+++ b/p.go\n@@ -3,4 +3,4 @@\n func a() int {\n \tx := 1\n-\treturn y\n+\treturn x * 2\n }\n"
	_, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"p.go": twice}})
	if !errors.Is(err, repair.ErrRefused) || !strings.Contains(err.Error(), "removes") {
		t.Fatalf("err = %v, want a refusal about the removed line", err)
	}
}

// A patch that is already applied is reported as such, with the place of
// its new lines: a success that changes nothing, never reversed.
func TestAlreadyAppliedReported(t *testing.T) {
	after := strings.Replace(twice, "func a() int {\n\tx := 1", "func a() int {\n\tx := 2", 1)
	edit := "--- a/p.go\n+++ b/p.go\n@@ -3,3 +3,3 @@\n func a() int {\n-\tx := 1\n+\tx := 2\n \treturn x\n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"p.go": after}})
	if err != nil {
		t.Fatalf("err = %v, want success", err)
	}
	h := res.Files[0].Hunks[0]
	if res.Status != repair.StatusAlreadyApplied || res.Files[0].Status != repair.StatusAlreadyApplied || h.Status != repair.StatusAlreadyApplied {
		t.Errorf("status = %s / %s / %s, want already_applied", res.Status, res.Files[0].Status, h.Status)
	}
	if h.Line != 3 {
		t.Errorf("line = %d, want 3 (where the new lines are)", h.Line)
	}
	if len(res.Results) != 0 {
		t.Errorf("an already-applied patch returned contents: %v", res.Results)
	}
	if c := res.Canonical(); c == nil || len(c.Files) != 0 {
		t.Errorf("canonical patch = %v, want an empty one", c)
	}
}

// When one file of a multi-file patch fails, no file gets new content.
func TestMultiFileAllOrNothing(t *testing.T) {
	fs := patch.MapFS{"a.go": "one\ntwo\nthree\n", "b.go": "red\ngreen\nblue\n"}
	edit := "--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" +
		"--- a/b.go\n+++ b/b.go\n@@ -1,3 +1,3 @@\n red\n-yellow\n+YELLOW\n blue\n"
	res, err := repair.Repair(edit, repair.Options{FS: fs})
	if !errors.Is(err, repair.ErrRefused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if res.Results != nil {
		t.Errorf("results returned for a failed patch: %v", res.Results)
	}
	if res.Files[0].Status != repair.StatusApplied || res.Files[1].Status != repair.StatusRefused {
		t.Errorf("file statuses = %s, %s; want applied (in memory), refused", res.Files[0].Status, res.Files[1].Status)
	}
}

// An elision marker stands for kept code: whatever it covers survives, as
// context or as a removed line.
func TestElisionNeverDeletes(t *testing.T) {
	file := "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n"
	for _, marker := range []string{" ", "-"} {
		edit := "--- a/f.py\n+++ b/f.py\n@@ @@\n def f():\n-    a = 1\n+    a = 10\n" +
			marker + "    # ... existing code ...\n     return a\n"
		res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"f.py": file}})
		if err != nil {
			t.Fatalf("marker line %q: %v", marker, err)
		}
		want := strings.Replace(file, "a = 1\n", "a = 10\n", 1)
		if got := string(res.Results[0].Content); got != want {
			t.Errorf("marker line %q: got\n%s\nwant\n%s", marker, got, want)
		}
	}
}

// A hunk repeated by the model is applied once.
func TestRepeatedHunkAppliedOnce(t *testing.T) {
	h := "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
	edit := "--- a/a.go\n+++ b/a.go\n" + h + h
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"a.go": "one\ntwo\nthree\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Results[0].Content); got != "one\nTWO\nthree\n" {
		t.Errorf("got %q", got)
	}
}

// Added lines follow the file's indentation when the hunk re-indented the
// file's lines: tabs written as four spaces come back as tabs.
func TestReindentAddedLines(t *testing.T) {
	file := "package p\n\nfunc f() {\n\tif x {\n\t\treturn\n\t}\n}\n"
	edit := "--- a/p.go\n+++ b/p.go\n@@ -4,3 +4,4 @@\n     if x {\n+        log()\n         return\n     }\n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"p.go": file}})
	if err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nfunc f() {\n\tif x {\n\t\tlog()\n\t\treturn\n\t}\n}\n"
	if got := string(res.Results[0].Content); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if r := res.Files[0].Hunks[0].Repairs; !contains(r, "reindent") {
		t.Errorf("repairs %v lack reindent", r)
	}
}

// Line-number prefixes copied from a numbered view are removed.
func TestLineNumberPrefixes(t *testing.T) {
	file := "a\nb\nc\nd\n"
	edit := "--- a/f\n+++ b/f\n@@ @@\n 2 | b\n-3 | c\n+3 | C\n 4 | d\n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"f": file}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Results[0].Content); got != "a\nb\nC\nd\n" {
		t.Errorf("got %q", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A path written relative to a subdirectory finds the one file that ends
// with it; with two such files it is refused.
func TestPathSuffix(t *testing.T) {
	edit := "--- a/utils.py\n+++ b/utils.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
	one := patch.MapFS{"pkg/utils.py": "x = 1\ny = 2\n"}
	list := func(m patch.MapFS) func() ([]string, error) {
		return func() ([]string, error) {
			var out []string
			for p := range m {
				out = append(out, p)
			}
			return out, nil
		}
	}
	res, err := repair.Repair(edit, repair.Options{FS: one, Files: list(one)})
	if err != nil || res.Results[0].Path != "pkg/utils.py" {
		t.Fatalf("err = %v, results %+v", err, res.Results)
	}
	two := patch.MapFS{"pkg/utils.py": "x = 1\ny = 2\n", "other/utils.py": "x = 1\ny = 2\n"}
	if _, err := repair.Repair(edit, repair.Options{FS: two, Files: list(two)}); err == nil {
		t.Error("applied although two files end with the path")
	}
}

// A V4A envelope without its end line is still read.
func TestV4AWithoutEnd(t *testing.T) {
	edit := "*** Begin Patch\n*** Update File: f.py\n@@ def f():\n-    return 1\n+    return 2\n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"f.py": "def f():\n    return 1\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Results[0].Content); got != "def f():\n    return 2\n" {
		t.Errorf("got %q", got)
	}
}

// The same search-replace block twice edits the two places it fits, in
// order, as search-replace applies blocks one after another.
func TestRepeatedSearchReplaceBlocks(t *testing.T) {
	file := "A\nk1\nk2\nB\nb\nC\nk1\nk2\nD\nd\n"
	blk := func(s, r string) string {
		return "f\n<<<<<<< SEARCH\n" + s + "=======\n" + r + ">>>>>>> REPLACE\n"
	}
	edit := blk("k1\nk2\n", "k1\nX\nk2\n") + blk("b\n", "bb\n") + blk("k1\nk2\n", "k1\nX\nk2\n") + blk("d\n", "dd\n")
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"f": file}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Results[0].Content), "A\nk1\nX\nk2\nB\nbb\nC\nk1\nX\nk2\nD\ndd\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestCollapseSpaceMatchesFields(t *testing.T) {
	for _, s := range []string{"", " ", "a", "  a  b ", "a\tb", "a  b", "\ta b c\r", "x\u00a0y", "é è", " a b\n"} {
		if got, want := repair.CollapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

// A removed block that the file splits (the model left out a line in the
// middle of what it removes) is refused: keeping or removing the line in
// between would both be guesses.
func TestSplitRemovalRefused(t *testing.T) {
	file := "def f():\n    alpha = compute_alpha()\n    beta = compute_beta()\n    gamma = compute_gamma()\n    return alpha\n"
	edit := "f.py\n<<<<<<< SEARCH\ndef f():\n    alpha = compute_alpha()\n    gamma = compute_gamma()\n    return alpha\n=======\ndef f():\n    alpha = 1\n    return alpha\n>>>>>>> REPLACE\n"
	_, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"f.py": file}})
	if !errors.Is(err, repair.ErrRefused) || !strings.Contains(err.Error(), "not together") {
		t.Fatalf("err = %v, want a refusal about the split removal", err)
	}
}

// TestUnprefixedNameTwoFiles: a name without a/ and b/ (GNU diff -ru
// old new) that names one existing file as written and another with a
// component stripped is a guess either way (git apply takes -p1): refused,
// naming both. With one of them, or with -p given, it applies.
func TestUnprefixedNameTwoFiles(t *testing.T) {
	edit := "--- o/x\t2023-01-01 00:00:00\n+++ o/x\t2024-01-01 00:00:00\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
	both := patch.MapFS{"o/x": "a\nb\n", "x": "a\nb\n"}
	_, err := repair.Repair(edit, repair.Options{FS: both})
	if !errors.Is(err, repair.ErrRefused) || !strings.Contains(err.Error(), "o/x names o/x with -p0 and x with -p1") {
		t.Errorf("both files exist: %v, want a refusal naming both readings", err)
	}
	for _, c := range []struct {
		name string
		fs   patch.MapFS
		opts repair.Options
		want string
	}{
		{"only as written", patch.MapFS{"o/x": "a\nb\n"}, repair.Options{}, "o/x"},
		{"only stripped", patch.MapFS{"x": "a\nb\n"}, repair.Options{}, "x"},
		{"both, -p1 given", both, repair.Options{Strip: 1, FixedStrip: true}, "x"},
	} {
		c.opts.FS = c.fs
		res, err := repair.Repair(edit, c.opts)
		if err != nil || len(res.Results) != 1 || res.Results[0].Path != c.want || string(res.Results[0].Content) != "a\nc\n" {
			t.Errorf("%s: %v %+v, want %s changed", c.name, err, res.Results, c.want)
		}
	}
}
