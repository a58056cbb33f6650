package repair_test

// Apply once: an agent that retries sends the same patch again. The second
// apply of a patch that applied must change no byte (already applied, or
// refused), in every format; and apply --reverse of what applied restores
// the file. Measured on git's own diffs of real commits (click and cobra,
// at 0, 1 and 3 lines of context; git is the oracle) and on every
// diffxyz-dev commit printed in each format.

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// onceCase is one patch with the files it applies to and the files it
// must make.
type onceCase struct {
	id, family string
	text       string
	old, neu   patch.MapFS
	// strictFirst: the first apply must equal git's result (git's own
	// diffs); a format git does not read need only make neu.
	target string // --target, for a patch that names no file
}

// onceTally counts what happened to the cases of one family.
type onceTally struct {
	cases, firstExact, firstRefused, firstWrong    int
	doubled, claimed, secondRefused, secondAlready int
	reverseRestored, reverseRefused, reverseBad    int
	examples                                       []string
}

// applyFS applies text to fsys as patchbench apply does and returns the
// files after it (fsys itself when nothing was written) and the status.
func applyFS(c onceCase, fsys patch.MapFS, reverse bool) (patch.MapFS, string, error) {
	res, err := repair.Repair(c.text, repair.Options{FS: fsys, Reverse: reverse, Target: c.target})
	if err != nil {
		return fsys, repair.StatusRefused, err
	}
	out := maps.Clone(fsys)
	for _, r := range res.Results {
		if r.OldPath != "" && (r.Op == patch.Delete || r.Op == patch.Rename) {
			delete(out, r.OldPath)
		}
		if r.Op != patch.Delete {
			out[r.Path] = string(r.Content)
		}
	}
	return out, res.Status, nil
}

// runOnce applies c, then applies it again to the result, then reverses it
// on the result, and counts each outcome in tl.
func runOnce(c onceCase, tl *onceTally) {
	tl.cases++
	note := func(format string, args ...any) {
		if len(tl.examples) < 5 {
			tl.examples = append(tl.examples, c.id+": "+fmt.Sprintf(format, args...))
		}
	}
	first, _, err := applyFS(c, c.old, false)
	switch {
	case err != nil:
		tl.firstRefused++
		note("first apply refused: %v", err)
		return
	case !maps.Equal(first, c.neu):
		tl.firstWrong++
		note("first apply differs from the commit")
		return
	}
	tl.firstExact++
	second, status, err := applyFS(c, first, false)
	switch {
	case err != nil:
		tl.secondRefused++
	case !maps.Equal(second, first):
		tl.doubled++
		note("second apply changed the files")
		dump(c, first, "doubled")
	default:
		if status == repair.StatusAlreadyApplied {
			tl.secondAlready++
		} else {
			// "applied" for a change it did not make.
			tl.claimed++
			note("second apply answered %s and changed nothing", status)
			dump(c, first, "claimed")
		}
	}
	back, _, err := applyFS(c, first, true)
	switch {
	case err != nil:
		tl.reverseRefused++
		note("reverse refused: %v", err)
		dump(c, first, "reverse-refused")
	case maps.Equal(back, c.old):
		tl.reverseRestored++
	default:
		tl.reverseBad++
		note("reverse did not restore the files")
		dump(c, first, "reverse")
	}
}

var onceDump = flag.String("once-dump", "", "TestApplyOnce: write each case that fails into this directory (the patch and the files after the first apply)")

// dump writes c and the files after its first apply under -once-dump.
func dump(c onceCase, after patch.MapFS, what string) {
	if *onceDump == "" {
		return
	}
	dir := filepath.Join(*onceDump, what, strings.NewReplacer("/", "_", " ", "_", "@", "_", ":", "_").Replace(c.id))
	for name, content := range after {
		p := filepath.Join(dir, "files", name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o644)
	}
	_ = os.WriteFile(filepath.Join(dir, "patch"), []byte(c.text), 0o644)
}

// onceCommits returns git's diffs at 0, 1 and 3 lines of context of every
// step-th first-parent commit of the click and cobra histories (none
// without the bundles).
func onceCommits(t *testing.T, step int) []onceCase {
	dir := filepath.Join(testdata.SharedDir(), "repos")
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "click.bundle")); err != nil {
		t.Logf("no click and cobra histories: %v", err)
		return nil
	}
	tmp := t.TempDir()
	var out []onceCase
	for _, name := range []string{"click", "cobra"} {
		cs, err := commitsOf(filepath.Join(dir, name+".bundle"), filepath.Join(tmp, name), name, step, 0, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			for _, u := range []int{0, 1, 3} {
				out = append(out, onceCase{id: fmt.Sprintf("%s -U%d", c.ID, u), family: fmt.Sprintf("git -U%d", u), text: c.Diffs[u], old: c.Old, neu: c.New})
			}
		}
	}
	return out
}

// onceFormats returns every diffxyz-dev commit as git's diff, as a diff
// at 0 and 1 lines of context, and printed in each other format as
// patchbench diff --format prints it.
func onceFormats(t *testing.T) []onceCase {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	var out []onceCase
	for _, r := range rows {
		old, neu := patch.MapFS{r.Path: r.OldCode}, patch.MapFS{r.Path: r.NewCode}
		add := func(family, text string) {
			out = append(out, onceCase{id: r.ID + " " + family, family: family, text: text, old: old, neu: neu})
		}
		add("udiff (git)", r.UDiff)
		for _, u := range []int{0, 1} {
			fp := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, patch.MakeOptions{Context: u})
			if s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff); err == nil {
				add(fmt.Sprintf("udiff -U%d", u), s)
			}
		}
		// patchbench diff old.py new.py: two names, both files there.
		on, nn := "old_"+filepath.Base(r.Path), "new_"+filepath.Base(r.Path)
		fp2 := patch.Make(on, nn, r.OldCode, r.NewCode, patch.DefaultMakeOptions())
		fp2.Op = patch.Modify
		if s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp2}}, patch.UDiff); err == nil {
			out = append(out, onceCase{id: r.ID + " two names", family: "udiff, two names", text: s,
				old: patch.MapFS{on: r.OldCode, nn: r.NewCode}, neu: patch.MapFS{on: r.NewCode, nn: r.NewCode}})
		}
		for _, f := range []patch.Format{patch.UDiffH, patch.UDiffL, patch.SearchReplace, patch.V4A} {
			fp := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, patch.MakeOptions{Context: 3, Unique: !f.HasPositions()})
			if s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f); err == nil {
				add(string(f), s)
			}
		}
	}
	return out
}

// TestApplyOnce measures apply once on git's diffs of real commits and on
// every format: the first apply makes the commit's files, the second
// changes no byte, apply --reverse restores the old files. With the dev
// corpus it also takes every 12th commit of the click and cobra histories
// at -U0, -U1 and -U3.
//
//	go test -run TestApplyOnce -v ./patch/repair
func TestApplyOnce(t *testing.T) {
	cases := onceFormats(t)
	cases = append(cases, onceCommits(t, 12)...)
	tallies := map[string]*onceTally{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan onceCase)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				var tl onceTally
				runOnce(c, &tl)
				mu.Lock()
				all := tallies[c.family]
				if all == nil {
					all = &onceTally{}
					tallies[c.family] = all
				}
				all.add(tl)
				mu.Unlock()
			}
		}()
	}
	for _, c := range cases {
		work <- c
	}
	close(work)
	wg.Wait()
	var fams []string
	for f := range tallies {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	var sum onceTally
	for _, f := range fams {
		tl := tallies[f]
		sum.add(*tl)
		t.Logf("%-16s %4d cases: first exact %d (refused %d, wrong %d); second: doubled %d, claimed %d, already %d, refused %d; reverse: restored %d, refused %d, wrong %d",
			f, tl.cases, tl.firstExact, tl.firstRefused, tl.firstWrong, tl.doubled, tl.claimed, tl.secondAlready, tl.secondRefused, tl.reverseRestored, tl.reverseRefused, tl.reverseBad)
		for _, e := range tl.examples {
			t.Logf("    %s", e)
		}
	}
	t.Logf("all %d cases: first exact %d (refused %d, wrong %d); second: doubled %d, claimed %d, already %d, refused %d; reverse: restored %d, refused %d, wrong %d",
		sum.cases, sum.firstExact, sum.firstRefused, sum.firstWrong, sum.doubled, sum.claimed, sum.secondAlready, sum.secondRefused, sum.reverseRestored, sum.reverseRefused, sum.reverseBad)
	if sum.doubled+sum.claimed > 0 {
		t.Errorf("%d second applies changed the files, %d answered applied for a change they did not make", sum.doubled, sum.claimed)
	}
	if sum.firstWrong > 0 || sum.reverseBad > 0 {
		t.Errorf("%d first applies and %d reverses made other files", sum.firstWrong, sum.reverseBad)
	}
}

func (a *onceTally) add(b onceTally) {
	a.cases += b.cases
	a.firstExact += b.firstExact
	a.firstRefused += b.firstRefused
	a.firstWrong += b.firstWrong
	a.doubled += b.doubled
	a.claimed += b.claimed
	a.secondRefused += b.secondRefused
	a.secondAlready += b.secondAlready
	a.reverseRestored += b.reverseRestored
	a.reverseRefused += b.reverseRefused
	a.reverseBad += b.reverseBad
	if len(a.examples) < 5 {
		a.examples = append(a.examples, b.examples[:min(len(b.examples), 5-len(a.examples))]...)
	}
}

// TestReverseTwoNames: patchbench diff old.py new.py makes a diff whose
// names differ and are not git's; apply patches old.py (GNU patch's rule:
// both exist, the shorter name, the old one at equal length), and apply
// --reverse must patch the same file back, as GNU patch does, not new.py.
func TestReverseTwoNames(t *testing.T) {
	old, neu := "a\nb\nc\n", "a\nB\nc\n"
	fp := patch.Make("old.py", "new.py", old, neu, patch.DefaultMakeOptions())
	fp.Op = patch.Modify // as patchbench diff prints two names
	text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff)
	if err != nil {
		t.Fatal(err)
	}
	text = strings.Replace(strings.Replace(text, "rename from old.py\n", "", 1), "rename to new.py\n", "", 1)
	c := onceCase{text: text}
	start := patch.MapFS{"old.py": old, "new.py": neu}
	after, _, err := applyFS(c, start, false)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, text)
	}
	if !maps.Equal(after, patch.MapFS{"old.py": neu, "new.py": neu}) {
		t.Fatalf("apply patched %v", after)
	}
	back, _, err := applyFS(c, after, true)
	if err != nil {
		t.Fatalf("apply --reverse: %v", err)
	}
	if !maps.Equal(back, start) {
		t.Errorf("apply --reverse made %v, want %v", back, start)
	}
	// --strict, patch.Apply, keeps the same rule.
	p, err := patch.Parse(text, patch.UDiff, patch.ParseOptions{Strip: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := patch.Apply(p, after, patch.ApplyOptions{Reverse: true})
	if err != nil || len(res) != 1 || res[0].Path != "old.py" || string(res[0].Content) != old {
		t.Errorf("strict reverse: %v %+v", err, res)
	}
}

// TestApplyOnceShapes: the shapes of issue 33, each applied to the old
// file (it must make the new one) and then to the new one (it must change
// nothing).
func TestApplyOnceShapes(t *testing.T) {
	py := "def f():\n    a = 1\n    b = 2\n    c = 3\n\ndef g():\n    return 1\n"
	pyBlank := "def f():\n    a = 1\n    b = 2\n\n    c = 3\n\ndef g():\n    return 1\n"
	goOld := "func a() {\n\tx()\n\t}\n}\n\nfunc b() {\n\ty()\n}\n"
	goNew := "func a() {\n\tx()\n\t}\n\nfunc b() {\n\ty()\n}\n"
	tests := []struct {
		name, old, neu, text string
	}{
		{"blank line inserted, -U3", py, pyBlank,
			"--- a/f\n+++ b/f\n@@ -1,6 +1,7 @@\n def f():\n     a = 1\n     b = 2\n+\n     c = 3\n \n def g():\n"},
		// git apply deletes the file's last "}" (a hunk without trailing
		// context is read as the end of the file); the line number says 4.
		{"-U0 removal of a brace", goOld, goNew,
			"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -4 +3,0 @@ func a() {\n-}\n"},
		{"test added before the last brace, -U1", "mod t {\n    fn a() {\n    }\n}\n", "mod t {\n    fn a() {\n    }\n\n    fn b() {\n    }\n}\n",
			"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,2 +3,5 @@\n     }\n+\n+    fn b() {\n+    }\n }\n"},
		{"search-replace inserting a blank line", py, pyBlank,
			"f\n```\n<<<<<<< SEARCH\n    b = 2\n    c = 3\n=======\n    b = 2\n\n    c = 3\n>>>>>>> REPLACE\n```\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := onceCase{text: tc.text}
			first, _, err := applyFS(c, patch.MapFS{"f": tc.old}, false)
			if err != nil {
				t.Fatalf("first apply: %v", err)
			}
			if first["f"] != tc.neu {
				t.Fatalf("first apply made %q, want %q", first["f"], tc.neu)
			}
			second, status, err := applyFS(c, first, false)
			if err == nil && status != repair.StatusAlreadyApplied || second["f"] != tc.neu {
				t.Errorf("second apply: %s %v, made %q", status, err, second["f"])
			}
			back, _, err := applyFS(c, first, true)
			if err != nil || back["f"] != tc.old {
				t.Errorf("reverse: %v, made %q", err, back["f"])
			}
		})
	}
}
