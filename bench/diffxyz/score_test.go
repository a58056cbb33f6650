package diffxyz

import (
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// The toy row of the hand-computed tables: non-blank lines
// old {a b c d}, new {a B c d e}.
const (
	toyOld = "a\nb\nc\nd\n"
	toyNew = "a\nB\nc\nd\ne\n"
)

func toyRow(t *testing.T) *Row {
	t.Helper()
	rows := []*Row{{ID: "toy", Path: "f.txt", Lang: "text", OldCode: toyOld, NewCode: toyNew}}
	if err := Prepare(rows); err != nil {
		t.Fatal(err)
	}
	return rows[0]
}

func TestScoreApplyAntiApply(t *testing.T) {
	row := toyRow(t)
	tests := []struct {
		name     string
		task     Task
		response string
		em, iou  float64
	}{
		// apply: the expected answer is new {a B c d e}.
		{"exact", Apply, "```text\n" + toyNew + "```\n", 1, 1},
		{"exact without a fence", Apply, toyNew, 1, 1},
		{"prose around the fence", Apply, "Here it is:\n\n```\n" + toyNew + "```\nDone.\n", 1, 1},
		{"blank lines added", Apply, "```\na\n\nB\n\n   \nc\nd\ne\n\n```\n", 1, 1},
		{"CRLF line endings", Apply, "```\r\na\r\nB\r\nc\r\nd\r\ne\r\n```\r\n", 1, 1},
		// {a c d e} against {a B c d e}: 4/5.
		{"one line dropped", Apply, "```\na\nc\nd\ne\n```\n", 0, 0.8},
		// {I cannot do that.} against 5 lines: nothing shared.
		{"prose only", Apply, "I cannot do that.", 0, 0},
		// {a b c d} against {a B c d e}: ∩ {a c d}, ∪ {a b B c d e}: 3/6.
		{"the other version", Apply, "```\n" + toyOld + "```\n", 0, 0.5},
		// Lines are compared with their indentation.
		{"indented", Apply, "```\n a\n B\n c\n d\n e\n```\n", 0, 0},
		// A repeated line: EM fails, IoU (sets) does not see it.
		{"line repeated", Apply, "```\na\nB\nB\nc\nd\ne\n```\n", 0, 1},
		// An answer that opens with a fence runs to the last closing
		// fence: {x ``` a B c d e} against {a B c d e}: 5/7.
		{"two fences", Apply, "```\nx\n```\n```\n" + toyNew + "```\n", 0, 5.0 / 7},
		// anti-apply: the expected answer is old {a b c d}.
		{"anti-apply exact", AntiApply, "```\n" + toyOld + "```\n", 1, 1},
		{"anti-apply blank lines added", AntiApply, "```\n\na\nb\n\nc\nd\n```\n", 1, 1},
		// {a b d} against {a b c d}: 3/4.
		{"anti-apply one line dropped", AntiApply, "```\na\nb\nd\n```\n", 0, 0.75},
		{"anti-apply prose only", AntiApply, "Sorry, I can't.", 0, 0},
		// {a B c d e} against {a b c d}: 3/6.
		{"anti-apply the other version", AntiApply, "```\n" + toyNew + "```\n", 0, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ScoreResponse(Case{Row: row, Task: tt.task, Format: patch.UDiff, Prompt: WithFormat}, tt.response)
			if s.EM != tt.em || !close(s.IoU, tt.iou) {
				t.Errorf("em %v iou %v, want em %v iou %v", s.EM, s.IoU, tt.em, tt.iou)
			}
			if s.Parsed != nil || s.Applied != nil || s.AppliedTolerant != nil || s.F1Plus != nil || s.F1Minus != nil || s.EMTolerant != nil {
				t.Errorf("diffgen scores set for %s: %+v", tt.task, s)
			}
		})
	}
}

// scores are the diffgen scores of one reading: applied, em, iou, f1+, f1-.
type scores struct {
	applied                  bool
	em, iou, f1Plus, f1Minus float64
}

func TestScoreDiffGen(t *testing.T) {
	row := toyRow(t)
	const exact = "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,5 @@\n a\n-b\n+B\n c\n d\n+e\n"
	all := scores{true, 1, 1, 1, 1}
	none := scores{false, 0, 0, 0, 0}
	tests := []struct {
		name            string
		format          patch.Format
		response        string
		parsed          bool
		paper, tolerant scores
	}{
		{"exact", patch.UDiff, "```diff\n" + exact + "```\n", true, all, all},
		{"exact, bare", patch.UDiff, exact, true, all, all},
		{"the reference column", patch.UDiff, row.UDiff, true, all, all},
		// Counts larger than the body: the udiff parser refuses, so the
		// paper's scores are 0; the tolerant engine recounts and applies,
		// and its F1 comes from the applied edit.
		{"wrong counts", patch.UDiff, "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,7 @@\n a\n-b\n+B\n c\n d\n+e\n```\n", false, none, all},
		// Hunk without line numbers asked as udiff-h: parsed and applied.
		{"udiff-h", patch.UDiffH, "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ ... @@\n a\n-b\n+B\n c\n d\n+e\n```\n", true, all, all},
		// udiff asked, udiff-h given: the udiff parser wants numbers.
		{"format not followed", patch.UDiff, "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ ... @@\n a\n-b\n+B\n c\n d\n+e\n```\n", false, none, all},
		// search-replace asked, udiff given: not parsed, so not applied
		// and em 0 by the paper; the tolerant engine takes any format.
		{"udiff for search-replace", patch.SearchReplace, "```diff\n" + exact + "```\n", false, none, all},
		{"search-replace", patch.SearchReplace, "f.txt\n<<<<<<< SEARCH\na\nb\nc\nd\n=======\na\nB\nc\nd\ne\n>>>>>>> REPLACE\n", true, all, all},
		{"prose only", patch.UDiff, "The file changes b to B and appends e.", false, none, none},
		// Half the edit: new file {a B c d} against {a B c d e}: IoU 4/5;
		// added {B} against {B e}: 2·1/(1+2); removed {b} against {b}.
		{"half the edit", patch.UDiff, "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n```\n", true,
			scores{true, 0, 0.8, 2.0 / 3, 1}, scores{true, 0, 0.8, 2.0 / 3, 1}},
		// A stale hunk removes a line the file lacks: nothing applies,
		// em and iou are 0; added {B} against {B e}, removed {x} against {b}.
		{"stale", patch.UDiff, "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n a\n-x\n+B\n c\n d\n```\n", true,
			scores{false, 0, 0, 2.0 / 3, 0}, scores{false, 0, 0, 2.0 / 3, 0}},
		// The reverse edit: already applied, not applied; added {b} and
		// removed {B e} share nothing with the reference.
		{"reversed", patch.UDiff, "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,4 @@\n a\n-B\n+b\n c\n d\n-e\n```\n", true, none, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ScoreResponse(Case{Row: row, Task: DiffGen, Format: tt.format, Prompt: WithFormat}, tt.response)
			if s.Parsed == nil || s.Applied == nil || s.F1Plus == nil || s.F1Minus == nil || s.AppliedTolerant == nil ||
				s.EMTolerant == nil || s.IoUTolerant == nil || s.F1PlusTolerant == nil || s.F1MinusTolerant == nil {
				t.Fatalf("diffgen scores missing: %+v", s)
			}
			if *s.Parsed != tt.parsed {
				t.Errorf("parsed %v, want %v", *s.Parsed, tt.parsed)
			}
			paper := scores{*s.Applied, s.EM, s.IoU, *s.F1Plus, *s.F1Minus}
			tolerant := scores{*s.AppliedTolerant, *s.EMTolerant, *s.IoUTolerant, *s.F1PlusTolerant, *s.F1MinusTolerant}
			if !sameScores(paper, tt.paper) {
				t.Errorf("paper's applied, em, iou, f1+, f1- = %v, want %v", paper, tt.paper)
			}
			if !sameScores(tolerant, tt.tolerant) {
				t.Errorf("tolerant applied, em, iou, f1+, f1- = %v, want %v (apply error %q)", tolerant, tt.tolerant, s.ApplyError)
			}
			if !tt.tolerant.applied && s.ApplyError == "" {
				t.Error("no apply error for an edit that did not apply")
			}
		})
	}
}

func sameScores(a, b scores) bool {
	return a.applied == b.applied && close(a.em, b.em) && close(a.iou, b.iou) && close(a.f1Plus, b.f1Plus) && close(a.f1Minus, b.f1Minus)
}

func TestSizeClassOf(t *testing.T) {
	for _, tt := range []struct {
		changed int
		want    string
	}{{0, Small}, {1, Small}, {7, Small}, {8, Medium}, {24, Medium}, {25, Large}, {1000, Large}} {
		if got := SizeClassOf(tt.changed); got != tt.want {
			t.Errorf("SizeClassOf(%d) = %s, want %s", tt.changed, got, tt.want)
		}
	}
}

func TestReferenceAnswersScoreOne(t *testing.T) {
	row := toyRow(t)
	row.NewCode = "```\n" + toyNew + "````\n" // fences inside the code
	row.UDiff, row.UDiffH, row.UDiffL, row.SearchReplace, row.V4A = "", "", "", "", ""
	if err := Prepare([]*Row{row}); err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases([]*Row{row}, Tasks, patch.Formats, PromptVariants) {
		s := ScoreResponse(c, c.Reference())
		if s.EM != 1 || s.IoU != 1 {
			t.Errorf("%s: em %v iou %v", c.Key(), s.EM, s.IoU)
		}
		if c.Task == DiffGen && !(*s.Parsed && *s.Applied && *s.AppliedTolerant && *s.EMTolerant == 1 && *s.F1Plus == 1 && *s.F1Minus == 1) {
			t.Errorf("%s: %+v", c.Key(), s)
		}
	}
}

func close(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The published dataset's diff columns carry no file headers (and its
// search-replace blocks no path line); they are used as given, and the
// reference answers made of them still score 1.
func TestHeaderlessColumns(t *testing.T) {
	row := &Row{ID: "hf", Path: "f.txt", Lang: "text", OldCode: toyOld, NewCode: toyNew,
		UDiff:         "@@ -1,4 +1,5 @@\n a\n-b\n+B\n c\n d\n+e\n",
		UDiffH:        "@@ ... @@\n a\n-b\n+B\n c\n d\n+e\n",
		UDiffL:        "@@ -1,4 +1,5 @@\nCON a\nDEL b\nADD B\nCON c\nCON d\nADD e\n",
		SearchReplace: "<<<<<<< SEARCH\na\nb\nc\nd\n=======\na\nB\nc\nd\ne\n>>>>>>> REPLACE\n",
	}
	given := *row
	if err := Prepare([]*Row{row}); err != nil {
		t.Fatal(err)
	}
	if row.UDiff != given.UDiff || row.UDiffH != given.UDiffH || row.UDiffL != given.UDiffL || row.SearchReplace != given.SearchReplace {
		t.Error("Prepare changed a given column")
	}
	for _, f := range patch.Formats {
		c := Case{Row: row, Task: DiffGen, Format: f, Prompt: WithFormat}
		s := ScoreResponse(c, c.Reference())
		if s.EM != 1 || !*s.Parsed || !*s.Applied || !*s.AppliedTolerant || *s.F1Plus != 1 || *s.F1Minus != 1 {
			t.Errorf("%s: em %v parsed %v applied %v tolerant %v f1 %v %v (%s)", f, s.EM, *s.Parsed, *s.Applied, *s.AppliedTolerant, *s.F1Plus, *s.F1Minus, s.ApplyError)
		}
	}
}
