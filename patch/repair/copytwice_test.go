package repair_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestCopyAndRenameTargets: git's diffs of a copy (git diff -C -C) and of
// a pure rename, applied to trees where the target exists. A copy whose
// target holds the copy is applied already (git apply refuses: "already
// exists"); onto other content it is refused, naming the copy target. A
// copy that needs a repair keeps its source, as git apply --recount does.
// A pure rename with an index line is judged by the blob it names; one
// without is taken as done in the default mode (nothing tells the
// content) and refused by --strict, as git apply refuses it.
func TestCopyAndRenameTargets(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	src := "line1\nline2\nline3\nline4\nline5\n"
	cp := "line1\nline2\nLINE3\nline4\nline5\n"
	dir := writeTree(t, map[string]string{"a.txt": src, "b.txt": cp, "r.go": "package r\n"})
	run := func(args ...string) string { t.Helper(); return mustGit(t, dir, args...) }
	run("init", "-q")
	run("add", "a.txt", "r.go")
	run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
	run("add", "b.txt")
	run("mv", "r.go", "s.go")
	copyDiff := run("diff", "--cached", "-C", "-C", "--", "a.txt", "b.txt")
	renameDiff := run("diff", "--cached", "-M", "--", "r.go", "s.go")
	if !strings.Contains(copyDiff, "\ncopy from a.txt\n") || !strings.Contains(renameDiff, "\nrename from r.go\n") || strings.Contains(renameDiff, "\nindex ") {
		t.Fatalf("git wrote no copy or no pure rename:\n%s\n%s", copyDiff, renameDiff)
	}
	miscounted := strings.Replace(copyDiff, "@@ -1,5 +1,5 @@", "@@ -1,6 +1,6 @@", 1)
	blob := strings.TrimSpace(run("hash-object", "s.go"))
	indexed := strings.Replace(renameDiff, "rename to s.go\n", "rename to s.go\nindex "+blob[:7]+".."+blob[:7]+"\n", 1)
	const other = "something else\n"
	for _, c := range []struct {
		name   string
		diff   string
		strict bool
		tree   map[string]string
		want   map[string]string // nil: refused, the tree unchanged
		status string
		reason string // in the refusal
	}{
		{"copy", copyDiff, false, map[string]string{"a.txt": src}, map[string]string{"a.txt": src, "b.txt": cp}, repair.StatusApplied, ""},
		{"copy twice", copyDiff, false, map[string]string{"a.txt": src, "b.txt": cp}, map[string]string{"a.txt": src, "b.txt": cp}, repair.StatusAlreadyApplied, ""},
		{"copy onto other content", copyDiff, false, map[string]string{"a.txt": src, "b.txt": other}, nil, "", "copy target b.txt already exists and is not the copy of a.txt"},
		{"copy onto the source's content", copyDiff, false, map[string]string{"a.txt": src, "b.txt": src}, nil, "", "copy target b.txt"},
		{"copy twice, strict", copyDiff, true, map[string]string{"a.txt": src, "b.txt": cp}, nil, "", "copy a.txt to b.txt: file already exists"},
		{"copy repaired keeps its source", miscounted, false, map[string]string{"a.txt": src}, map[string]string{"a.txt": src, "b.txt": cp}, repair.StatusApplied, ""},
		{"copy repaired, twice", miscounted, false, map[string]string{"a.txt": src, "b.txt": cp}, map[string]string{"a.txt": src, "b.txt": cp}, repair.StatusAlreadyApplied, ""},
		{"pure rename twice", renameDiff, false, map[string]string{"s.go": "package r\n"}, map[string]string{"s.go": "package r\n"}, repair.StatusAlreadyApplied, ""},
		{"pure rename onto other content, no index line", renameDiff, false, map[string]string{"s.go": other}, map[string]string{"s.go": other}, repair.StatusAlreadyApplied, ""},
		{"pure rename onto other content, strict", renameDiff, true, map[string]string{"s.go": other}, nil, "", "rename r.go: file does not exist"},
		{"pure rename twice, index line", indexed, false, map[string]string{"s.go": "package r\n"}, map[string]string{"s.go": "package r\n"}, repair.StatusAlreadyApplied, ""},
		{"pure rename onto other content, index line", indexed, false, map[string]string{"s.go": other}, nil, "", "not the blob " + blob[:7]},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := writeTree(t, c.tree)
			root, err := patch.OpenRoot(d)
			if err != nil {
				t.Fatal(err)
			}
			opts := repair.ApplyOptions{Strict: c.strict}
			if c.strict {
				opts.Strip = 1
			}
			rep, err := repair.Apply(root, c.diff, opts)
			got := readTree(t, d)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.reason) {
					t.Errorf("err = %v, want a refusal saying %q", err, c.reason)
				}
				if diff := cmp.Diff(c.tree, got); diff != "" {
					t.Errorf("the refusal changed the tree (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != c.status {
				t.Errorf("status %s, want %s", rep.Status, c.status)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
	// The oracle for the repaired copy: git apply --recount keeps a.txt.
	d := writeTree(t, map[string]string{"a.txt": src})
	if _, err := git(d, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-C", d, "apply", "--recount", "-")
	cmd.Stdin = strings.NewReader(miscounted)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply --recount: %v: %s", err, out)
	}
	if diff := cmp.Diff(map[string]string{"a.txt": src, "b.txt": cp}, readTree(t, d)); diff != "" {
		t.Errorf("git apply --recount's tree differs from the test's (-test +git):\n%s", diff)
	}
}
