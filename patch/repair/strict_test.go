package repair_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// strictApply applies text as `apply --strict` does.
func strictApply(text string, fsys patch.FileSystem, target string, reverse bool) ([]patch.FileResult, error) {
	p, err := patch.Parse(text, patch.UDiff, patch.DefaultParseOptions)
	if err != nil {
		return nil, err
	}
	if target != "" {
		if len(p.Files) != 1 {
			return nil, fmt.Errorf("%d files", len(p.Files))
		}
		repair.Retarget(p.Files[0], target)
	}
	return patch.Apply(p, fsys, patch.ApplyOptions{Reverse: reverse})
}

// propCase is one patch offered to both modes.
type propCase struct {
	id, text, target string
	fsys             patch.MapFS
	reverse          bool
	loose            bool // not a patch strict mode could apply
}

// pastCount adds one line after the body of hunk k, beyond its counts:
// strict mode and git apply read it as the end of the patch's hunk.
func pastCount(udiff, line string, k int) string {
	head, hs := udiffHunks(udiff)
	h := append(append([]string(nil), hs[k]...), line)
	return joinHunks(head, hs, k, h)
}

// strictCorpus gathers patches from every corpus at hand: git's diff of
// each dev commit as it is, reversed, made with 0, 1 and 5 lines of
// context, and with a line past a hunk's count (the next file line, the
// one after it, a blank line, a removal); every malformed-dev patch; git's
// diffs of real click and cobra commits (creations and deletions too).
func strictCorpus(t *testing.T) []propCase {
	var cs []propCase
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	r := rand.New(rand.NewSource(29))
	for _, row := range rows {
		old := patch.MapFS{row.Path: row.OldCode}
		cs = append(cs, propCase{id: row.ID, text: row.UDiff, target: row.Path, fsys: old},
			propCase{id: row.ID + " reversed", text: row.UDiff, target: row.Path, fsys: patch.MapFS{row.Path: row.NewCode}, reverse: true})
		for _, n := range []int{0, 1, 5} {
			opts := patch.DefaultMakeOptions()
			opts.Context = n
			text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{patch.Make(row.Path, row.Path, row.OldCode, row.NewCode, opts)}}, patch.UDiff)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, propCase{id: fmt.Sprintf("%s -U%d", row.ID, n), text: text, fsys: old})
		}
		_, hs := udiffHunks(row.UDiff)
		lines, _ := patch.SplitLines(row.OldCode)
		k := r.Intn(len(hs))
		var start, count int
		if _, err := fmt.Sscanf(hs[k][0], "@@ -%d,%d", &start, &count); err != nil {
			continue
		}
		for i, extra := range []string{" " + at(lines, start+count-1), " " + at(lines, start+count), " ", "-" + at(lines, start+count-1)} {
			cs = append(cs, propCase{id: fmt.Sprintf("%s hunk %d past count %d", row.ID, k+1, i), text: pastCount(row.UDiff, extra, k), target: row.Path, fsys: old})
		}
	}
	for _, m := range testdata.Load[testdata.Malformed](t, "malformed-dev.jsonl.gz") {
		cs = append(cs, propCase{id: m.ID, text: m.Patch, target: m.Path, fsys: patch.MapFS{m.Path: m.OldCode}})
	}
	for _, c := range loadRealCommits(t) {
		cs = append(cs, propCase{id: c.ID, text: c.Diff, fsys: c.Old})
	}
	return cs
}

func at(lines []string, i int) string {
	if i < 0 || i >= len(lines) {
		return ""
	}
	return lines[i]
}

// TestStrictImpliesTolerant: wherever strict mode applies a patch, the
// default mode applies it too, with the same bytes for every file. And
// whatever the default mode applies, over the same corpus and git's diffs of
// real commits made loose (no line numbers, no context spaces), removes
// from a file only lines the patch removes and adds only lines it adds (as
// multisets of lines, whitespace aside).
func TestStrictImpliesTolerant(t *testing.T) {
	strict, same, applied := 0, 0, 0
	cs := strictCorpus(t)
	for _, c := range loadRealCommits(t) {
		cs = append(cs, propCase{id: c.ID + " loosened", text: loosen(c.Diff), fsys: c.Old, loose: true})
	}
	for _, c := range cs {
		res, tolErr := repair.Repair(c.text, repair.Options{Target: c.target, FS: c.fsys, Reverse: c.reverse})
		if tolErr == nil && !c.reverse {
			minus, plus := patchLines(c.text)
			for _, r := range res.Results {
				if r.Op != patch.Modify {
					continue
				}
				applied++
				if why := lineBudget(c.fsys[r.OldPath], string(r.Content), minus, plus); why != "" {
					t.Errorf("%s: %s: %s", c.id, r.Path, why)
				}
			}
		}
		if c.loose {
			continue
		}
		want, err := strictApply(c.text, c.fsys, c.target, c.reverse)
		if err != nil {
			continue
		}
		strict++
		switch {
		case tolErr != nil:
			t.Errorf("%s: strict applies, tolerant refuses: %v", c.id, tolErr)
		case !sameResults(want, res.Results):
			t.Errorf("%s: strict and tolerant results differ", c.id)
		default:
			same++
		}
	}
	t.Logf("%d patches, %d applied by strict mode, %d of them by the default mode with the same bytes; %d files changed by the default mode, none with a line lost or invented unless reported", len(cs), strict, same, applied)
	if strict < len(cs)/2 {
		t.Errorf("strict mode applied only %d of %d: the corpus does not test the invariant", strict, len(cs))
	}
}

func sameResults(a, b []patch.FileResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].OldPath != b[i].OldPath || a[i].Path != b[i].Path || string(a[i].Content) != string(b[i].Content) || (a[i].Content == nil) != (b[i].Content == nil) {
			return false
		}
	}
	return true
}

// TestNoRepairForWhatGitAccepts: git's own diffs of the dev commits and of
// real click and cobra commits (file creations and deletions included),
// which git applies as written, are applied with no repair, no offset and
// at the exact tier, and give the new files.
func TestNoRepairForWhatGitAccepts(t *testing.T) {
	var cs []commitDiff
	for _, r := range testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz") {
		cs = append(cs, commitDiff{ID: r.ID, Diff: r.UDiff, Old: patch.MapFS{r.Path: r.OldCode}, New: patch.MapFS{r.Path: r.NewCode}})
	}
	real := loadRealCommits(t)
	cs = append(cs, real...)
	created, deleted := 0, 0
	for _, c := range cs {
		res, err := repair.Repair(c.Diff, repair.Options{FS: c.Old})
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
			continue
		}
		if len(res.Repairs) > 0 {
			t.Errorf("%s: patch repairs %v", c.ID, res.Repairs)
		}
		for _, f := range res.Files {
			if len(f.Repairs) > 0 {
				t.Errorf("%s: %s: repairs %v", c.ID, f.Path, f.Repairs)
			}
			for _, h := range f.Hunks {
				if len(h.Repairs) > 0 || h.Offset != 0 || h.Tier != repair.TierExact {
					t.Errorf("%s: %s hunk %d: tier %s, offset %d, repairs %v", c.ID, f.Path, h.Hunk, h.Tier, h.Offset, h.Repairs)
				}
			}
		}
		for _, r := range res.Results {
			switch {
			case r.Op == patch.Delete:
				deleted++
				if _, ok := c.New[r.OldPath]; ok {
					t.Errorf("%s: %s deleted", c.ID, r.OldPath)
				}
			case string(r.Content) != c.New[r.Path]:
				t.Errorf("%s: %s differs from the commit's", c.ID, r.Path)
			case r.Op == patch.Create:
				created++
			}
		}
	}
	t.Logf("%d diffs (%d of real click and cobra commits), %d files created, %d deleted, none repaired unless reported", len(cs), len(real), created, deleted)
	if created == 0 || deleted == 0 {
		t.Error("the real commits hold no creation or no deletion")
	}
}

// Issue 29: the canonical new-file hunk is no repair, in either path: as
// git wrote it (strict), and without its git header (the pipeline).
func TestNewFileNoRepair(t *testing.T) {
	for _, text := range []string{
		"diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
		"--- /dev/null\n+++ n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
	} {
		res, err := repair.Repair(text, repair.Options{FS: patch.MapFS{}})
		if err != nil {
			t.Fatal(err)
		}
		h := res.Files[0].Hunks[0]
		if len(h.Repairs) > 0 || h.Offset != 0 || string(res.Results[0].Content) != "one\ntwo\n" {
			t.Errorf("%q: hunk %+v, content %q", text, h, res.Results[0].Content)
		}
	}
}

// patchLines counts the removed and added lines of a unified diff's text,
// whitespace collapsed.
func patchLines(text string) (minus, plus map[string]int) {
	minus, plus = map[string]int{}, map[string]int{}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
		case strings.HasPrefix(l, "+++ ") && i > 0 && strings.HasPrefix(lines[i-1], "--- "):
		case strings.HasPrefix(l, "-"):
			minus[strings.Join(strings.Fields(l[1:]), " ")]++
		case strings.HasPrefix(l, "+"):
			plus[strings.Join(strings.Fields(l[1:]), " ")]++
		}
	}
	return minus, plus
}

// lineBudget checks that new lost from old only lines in minus and gained
// only lines in plus.
func lineBudget(old, new string, minus, plus map[string]int) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		lines, _ := patch.SplitLines(s)
		for _, l := range lines {
			m[strings.Join(strings.Fields(l), " ")]++
		}
		return m
	}
	o, n := count(old), count(new)
	for l, k := range o {
		if lost := k - n[l]; lost > minus[l] {
			return fmt.Sprintf("%d copies of %q lost, the patch removes %d", lost, l, minus[l])
		}
	}
	for l, k := range n {
		if gained := k - o[l]; gained > plus[l] {
			return fmt.Sprintf("%d copies of %q gained, the patch adds %d", gained, l, plus[l])
		}
	}
	return ""
}
