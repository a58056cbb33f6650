package repair_test

// The fast path (fast.go) must make exactly the engine's decisions: where
// it applies a patch, the engine applies it too, tolerant and strict, to
// the same bytes with the same report; everywhere else it leaves the
// patch to the engine. Checked on git's own diffs of real commits (click
// and cobra, -U0/-U1/-U3, whole and file by file), on every diffxyz-dev
// commit in every format, applied to the old files, applied again to the
// new ones and reversed, on the malformed corpus, and by two fuzz tests.

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/internal/testtree"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// fastVsEngine runs the fast path on text against fsys and, when it
// applies, the engine too, and returns whether the fast path applied and
// what differs from the engine ("" when nothing does).
func fastVsEngine(text string, fsys patch.MapFS, reverse bool) (fast bool, diff string) {
	name, content, places, ok := repair.FastApply(text, fsys, reverse)
	if !ok {
		return false, ""
	}
	res, err := repair.Repair(text, repair.Options{FS: fsys, Reverse: reverse})
	if err != nil || res.Status != repair.StatusApplied || len(res.Results) != 1 {
		return true, fmt.Sprintf("fast path applied, tolerant engine: %v %v (%d results)", err, res.Status, len(res.Results))
	}
	want := patch.FileResult{OldPath: name, Path: name, Op: patch.Modify, Content: content, Placements: places}
	if d := cmp.Diff(want, res.Results[0], cmpResult); d != "" {
		return true, "tolerant engine (-fast +engine):\n" + d
	}
	report := []repair.FileReport{repair.ResultReport(want)}
	if d := cmp.Diff(report, res.Files); d != "" || res.Format != patch.UDiff || res.Repairs != nil || res.Extracted != "" {
		return true, fmt.Sprintf("tolerant report (-fast +engine):\n%s%s %v %q", d, res.Format, res.Repairs, res.Extracted)
	}
	p, _, err := repair.ParseStrict(text, "p", "", 1, "")
	if err != nil {
		return true, fmt.Sprintf("fast path applied, strict parse: %v", err)
	}
	results, err := patch.Apply(p, fsys, patch.ApplyOptions{Reverse: reverse, Git: true})
	if err != nil || len(results) != 1 {
		return true, fmt.Sprintf("fast path applied, strict engine: %v (%d results)", err, len(results))
	}
	if d := cmp.Diff(want, results[0], cmpResult); d != "" {
		return true, "strict engine (-fast +engine):\n" + d
	}
	return true, ""
}

// cmpResult compares results by their bytes, a nil and an empty
// placement list alike, leaving out the streamed writer.
var cmpResult = cmp.Options{
	cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) }),
	cmp.Comparer(func(a, b []patch.Placement) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) }),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".WriteContent" }, cmp.Ignore()),
}

// fileSections splits a git diff into its file sections.
func fileSections(text string) []string {
	var out []string
	start := -1
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], "diff --git ") {
			if start >= 0 {
				out = append(out, text[start:i])
			}
			start = i
		}
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

var fastCommitsStep = flag.Int("fast-commits-step", 6, "TestFastPathVsEngine: take every N-th commit of the click and cobra histories")

// fastTally counts the fast path's decisions over a family of cases.
type fastTally struct{ cases, fast, wrong int }

func TestFastPathVsEngine(t *testing.T) {
	tallies := map[string]*fastTally{}
	var order []string
	check := func(family, id, text string, fsys patch.MapFS, reverse bool) {
		tl := tallies[family]
		if tl == nil {
			tl = &fastTally{}
			tallies[family] = tl
			order = append(order, family)
		}
		tl.cases++
		fast, d := fastVsEngine(text, fsys, reverse)
		if fast {
			tl.fast++
		}
		if d != "" {
			tl.wrong++
			if tl.wrong <= 5 {
				t.Errorf("%s (reverse %v): %s", id, reverse, d)
			}
		}
	}
	// Every case against the old files and the new ones, forward and
	// reversed: to apply, applied already, to undo, undone already.
	each := func(family string, c onceCase) {
		for _, fs := range []patch.MapFS{c.old, c.neu} {
			for _, rev := range []bool{false, true} {
				check(family, c.id, c.text, fs, rev)
				if strings.HasPrefix(c.text, "diff --git ") {
					if secs := fileSections(c.text); len(secs) > 1 {
						for i, s := range secs {
							check(family+", by file", fmt.Sprintf("%s file %d", c.id, i+1), s, fs, rev)
						}
					}
				}
			}
		}
	}
	for _, c := range onceFormats(t) {
		each(c.family, c)
	}
	for _, c := range onceCommits(t, *fastCommitsStep) {
		each(c.family, c)
	}
	for _, r := range testdata.Load[testdata.Malformed](t, "malformed-dev.jsonl.gz") {
		fs := patch.MapFS{r.Path: r.OldCode}
		check("malformed", r.ID, r.Patch, fs, false)
		if r.Expected != nil {
			check("malformed, applied", r.ID, r.Patch, patch.MapFS{r.Path: *r.Expected}, false)
			check("malformed, applied", r.ID, r.Patch, patch.MapFS{r.Path: *r.Expected}, true)
		}
	}
	old, neu, diff := testdata.ManyHunks(300)
	for _, fs := range []patch.MapFS{{"f": old}, {"f": neu}} {
		for _, rev := range []bool{false, true} {
			check("many hunks", "ManyHunks(300)", diff, fs, rev)
		}
	}
	total := fastTally{}
	for _, f := range order {
		tl := tallies[f]
		t.Logf("%-24s %5d cases: fast path %5d, differs from the engine %d", f, tl.cases, tl.fast, tl.wrong)
		total.cases, total.fast, total.wrong = total.cases+tl.cases, total.fast+tl.fast, total.wrong+tl.wrong
	}
	t.Logf("%-24s %5d cases: fast path %5d, differs from the engine %d", "all", total.cases, total.fast, total.wrong)
	// The forward and reverse applies of git's own single-file diffs
	// take the fast path: were it never taken, this test would prove
	// nothing.
	if tallies["udiff (git)"] == nil || tallies["udiff (git)"].fast == 0 || tallies["many hunks"].fast != 2 {
		t.Errorf("the fast path was not taken where it should be: udiff (git) %+v, many hunks %+v", tallies["udiff (git)"], tallies["many hunks"])
	}
}

// TestFastPathDecisions: the cases the fast path must leave to the
// engine, each with the engine's own decision, and the ones it takes.
func TestFastPathDecisions(t *testing.T) {
	file := "a\nb\nc\nd\ne\nf\ng\nh\n"
	hunk := "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n"
	tests := []struct {
		name, file, text string
		fast             bool
	}{
		{"exact at its place", file, hunk, true},
		{"index line with mode", file, strings.Replace(hunk, "--- ", "index 1234567..89abcde 100644\n--- ", 1), true},
		{"symbolic link mode", file, strings.Replace(hunk, "--- ", "index 1234567..89abcde 120000\n--- ", 1), false},
		{"at an offset", "x\n" + file, hunk, false},
		{"new side there too (repeats)", "a\n\n\n\nb\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n+\n \n \n", false},
		{"new side not there", "a\n\n\nb\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n+\n \n \n", true},
		{"whole file replaced, no context", "a\nb\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n-b\n+A\n+B\n", false},
		{"applied already", strings.Replace(file, "d\n", "D\n", 1), hunk, false},
		{"no trailing context, not at the end", file, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n c\n-d\n+D\n", false},
		{"no trailing context, at the end", file, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -7,2 +7,2 @@\n g\n-h\n+H\n", true},
		{"last line without newline", "a\nb\nc\nd\ne", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n", false},
		{"no newline marker", "a\nb\nc\nd\ne", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n\\ No newline at end of file\n", false},
		{"-U0", file, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -4 +4 @@\n-d\n+D\n", false},
		{"new start inconsistent", file, strings.Replace(hunk, "+3,3", "+4,3", 1), false},
		{"CR in a header", file, strings.Replace(hunk, "+++ b/f\n", "+++ b/f\r\n", 1), false},
		{"CRLF file, exact", "a\r\nb\r\nc\r\nd\r\ne\r\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\r\n-d\r\n+D\r\n e\r\n", true},
		{"CRLF file, LF patch", "a\r\nb\r\nc\r\nd\r\ne\r\n", hunk, false},
		{"trailing text", file, hunk + "-- \n2.39.5\n", false},
		{"two files", file, hunk + strings.ReplaceAll(hunk, "/f", "/g"), false},
		{"renamed", file, strings.Replace(hunk, "b/f", "b/g", 1), false},
		{"V4A envelope in a line", "a\nb\nc\n*** Begin Patch\ne\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n-*** Begin Patch\n+x\n e\n", false},
		{"hunks out of order", file, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -6,2 +6,2 @@\n f\n-g\n+G\n h\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n d\n", false},
		{"empty context line", "a\n\nc\nd\ne\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n\n c\n-d\n+D\n", false},
		{"path with ..", file, strings.ReplaceAll(hunk, "/f", "/x/../f"), false},
		{"a removed line that reads as a header, CRLF", "a\r\nb\r\n-- x\r\nc\r\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,3 +2,2 @@\n b\r\n--- x\r\n c\r\n", false},
		{"removed and added lines that read as headers", "a\nb\n-- x\nc\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n--- x\n+++ y\n c\n", false},
		{"a line longer than the buffer", "a\nb\n" + strings.Repeat("x", 70<<10) + "\nc\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n " + strings.Repeat("x", 70<<10) + "\n", false},
		{"a line a little shorter than the buffer", "a\nb\n" + strings.Repeat("x", 60<<10) + "\nc\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n " + strings.Repeat("x", 60<<10) + "\n", true},
		{"no change", file, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n c\n d\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fast, d := fastVsEngine(tc.text, patch.MapFS{"f": tc.file, "g": tc.file}, false)
			if d != "" {
				t.Fatal(d)
			}
			if fast != tc.fast {
				t.Errorf("fast path taken: %v, want %v", fast, tc.fast)
			}
		})
	}
}

// fastSeeds are the fuzz tests' starting points.
var fastSeeds = []struct{ file, text string }{
	{"a\nb\nc\nd\ne\nf\ng\nh\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n@@ -6,3 +6,4 @@\n f\n g\n+\n h\n"},
	{"}\n}\n\n\n}\n", "diff --git a/f b/f\nindex 1234567..89abcde 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n }\n+}\n }\n \n"},
	{"a\r\nb\r\n\r\nc\r\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+b\n"},
	// From TestFastPathAttacks: CR inside a line, NUL and invalid UTF-8,
	// no final newline, other formats' markers in a body and in section
	// text, a pure insertion of the next line, CRLF new side already
	// there.
	{"a\nb\rc\nd\ne\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\rc\n+B\n d\n"},
	{"a\nb\nc\x00\xff\nd\ne", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n c\x00\xff\n-d\n+<<<<<<< SEARCH\n"},
	{"a\nb\nc\nd\ne\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@ --- a/f\n b\n-c\n+```diff\n d\n"},
	{"a\nx\ny\nz\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+x\n x\n"},
	{"a\r\nB\r\nc\r\n", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\n c\r\n"},
}

// FuzzFastPath: whatever the patch text and the file, the fast path
// applies only what the engine applies, the same way.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s.file, s.text, false)
		f.Add(s.file, s.text, true)
	}
	f.Fuzz(func(t *testing.T, file, text string, reverse bool) {
		if _, d := fastVsEngine(text, patch.MapFS{"f": file}, reverse); d != "" {
			t.Fatal(d)
		}
	})
}

// FuzzFastPathDiffs makes the patch text well-formed more often than
// FuzzFastPath's mutations do (see fastDiffCase).
func FuzzFastPathDiffs(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(0))
	f.Add(uint64(7), uint8(1), uint8(1))
	f.Add(uint64(42), uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, ctx uint8, mutate uint8) {
		if _, d := fastDiffCase(seed, ctx, mutate); d != "" {
			t.Fatal(d)
		}
	})
}

// TestFastPathDiffs runs fastDiffCase over 1,000 seeds: lines that repeat
// are where applying once is decided, and where the fast path must leave
// the decision to the engine.
func TestFastPathDiffs(t *testing.T) {
	fast, n := 0, 0
	for seed := range uint64(1000) {
		k, d := fastDiffCase(seed, uint8(seed%4), uint8(seed/4%4))
		if d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
		fast, n = fast+k, n+4
	}
	t.Logf("%d applies, %d by the fast path", n, fast)
	if fast < n/20 {
		t.Errorf("the fast path took %d of %d applies: too few for the test to mean anything", fast, n)
	}
}

// fastDiffCase makes a file of lines that repeat (braces, blank lines),
// an edit of it, git's kind of diff of the two at 0 to 3 lines of
// context, then maybe a header or a line of the file changed; the patch
// goes to the old file and to the new one, both ways, through the fast
// path and the engine. It returns how many of the four applies took the
// fast path, and what differs from the engine.
func fastDiffCase(seed uint64, ctx, mutate uint8) (int, string) {
	alphabet := []string{"}\n", "\n", "a\n", "b\n", "{\n", "x = 1\n", "\treturn\n", "b\r\n"}
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	var old, neu strings.Builder
	for range 4 + rng.IntN(40) {
		l := alphabet[rng.IntN(len(alphabet))]
		old.WriteString(l)
		switch rng.IntN(6) {
		case 0: // removed
		case 1: // changed
			neu.WriteString(alphabet[rng.IntN(len(alphabet))])
		case 2: // one added after it
			neu.WriteString(l)
			neu.WriteString(alphabet[rng.IntN(len(alphabet))])
		default:
			neu.WriteString(l)
		}
	}
	fp := patch.Make("f", "f", old.String(), neu.String(), patch.MakeOptions{Context: int(ctx % 4)})
	text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff)
	if err != nil || len(fp.Hunks) == 0 {
		return 0, ""
	}
	if !strings.HasPrefix(text, "diff --git ") {
		text = "diff --git a/f b/f\n" + text
	}
	files := []string{old.String(), neu.String()}
	switch mutate % 4 {
	case 1: // a header's line number moved
		text = strings.Replace(text, "@@ -", fmt.Sprintf("@@ -%d", 1+rng.IntN(3)), 1)
	case 2: // a line of the file changed
		lines := strings.SplitAfter(files[0], "\n")
		lines[rng.IntN(len(lines))] = alphabet[rng.IntN(len(alphabet))]
		files[0] = strings.Join(lines, "")
	case 3: // the file's first lines repeated before it
		files[0] = files[0][:len(files[0])/2] + files[0]
	}
	n := 0
	for _, file := range files {
		for _, rev := range []bool{false, true} {
			fast, d := fastVsEngine(text, patch.MapFS{"f": file}, rev)
			if d != "" {
				return n, fmt.Sprintf("%s\nfile %q\nreverse %v, patch:\n%s", d, file, rev, text)
			}
			if fast {
				n++
			}
		}
	}
	return n, ""
}

// TestApplyReaderFastPath: ApplyReader and ApplyText take the fast path
// for a large well-formed diff (Brief then leaves the hunks out of the
// report, which the engine never does) and write the new file; a diff
// whose one hunk is off by a line, and the largest of its kind under
// FastMinSize, go to the engine, which applies them.
func TestApplyReaderFastPath(t *testing.T) {
	old, neu, diff := testdata.ManyHunks(1000)
	off := strings.Replace(diff, "@@ -1602,7 +1602,7 @@", "@@ -1601,7 +1601,7 @@", 1)
	if off == diff {
		t.Fatal("no hunk at line 1602 to move")
	}
	// The most hunks whose diff is under FastMinSize.
	n := 1000*repair.FastMinSize/len(diff) + 50
	smallOld, smallNew, small := testdata.ManyHunks(n)
	for len(small) >= repair.FastMinSize {
		n--
		smallOld, smallNew, small = testdata.ManyHunks(n)
	}
	if _, _, d := testdata.ManyHunks(n + 1); len(d) < repair.FastMinSize {
		t.Fatalf("ManyHunks(%d) is under FastMinSize too", n+1)
	}
	for _, tc := range []struct {
		name, text string
		old, neu   string
		fast       bool
	}{
		{"well-formed", diff, old, neu, true},
		{"a hunk off by a line", off, old, neu, false},
		{"under FastMinSize", small, smallOld, smallNew, false},
	} {
		for _, via := range []string{viaReader, viaText} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				dir, root := testtree.Root(t, map[string]string{"f": tc.old})
				opts := repair.ApplyOptions{Name: "p.diff", Strip: 1, Brief: true}
				var rep *repair.Report
				var err error
				if via == viaText {
					rep, err = repair.ApplyText(root, tc.text, opts)
				} else {
					rep, err = repair.ApplyReader(root, strings.NewReader(tc.text), int64(len(tc.text)), opts)
				}
				if err != nil || rep.Status != repair.StatusApplied || len(rep.Files) != 1 {
					t.Fatalf("apply: %v, %+v", err, rep)
				}
				if fast := rep.Files[0].Hunks == nil; fast != tc.fast {
					t.Errorf("fast path taken: %v, want %v", fast, tc.fast)
				}
				got, _ := os.ReadFile(filepath.Join(dir, "f"))
				if string(got) != tc.neu {
					t.Errorf("the file after differs from the new one")
				}
			})
		}
	}
	t.Logf("ManyHunks(%d): %d bytes, under FastMinSize", n, len(small))
}
