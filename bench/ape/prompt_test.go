package ape

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// TestEditPromptDescribesFormat: the edit request names and describes the
// format asked for as every prompt of patchbench does (patch.FormatName,
// patch.FormatDescription): udiff-l is its ADD/DEL/CON markers, not "hunk
// lines carry their line numbers", as this prompt said before.
func TestEditPromptDescribesFormat(t *testing.T) {
	task := &Task{FilePathBefore: "a.go", FilePathAfter: "a.go", Instruction: "Return 2.", ContentBefore: "package a\n"}
	for _, f := range patch.Formats {
		p := editPrompt(task, f)
		for _, want := range []string{patch.FormatName(f), patch.FormatDescription(f), "Instruction:\nReturn 2.\n", "package a\n"} {
			if !strings.Contains(p, want) {
				t.Errorf("%s: prompt lacks %q:\n%s", f, want, p)
			}
		}
	}
	if p := editPrompt(task, patch.UDiffL); strings.Contains(p, "line numbers") && !strings.Contains(p, "`ADD `") {
		t.Errorf("udiff-l prompt:\n%s", p)
	}
}
