package extract_test

import (
	"errors"
	"testing"

	"github.com/patchbench/patchbench/patch/extract"
)

// TestDocuments: a fence labelled markdown is the answer wrapped whole
// (its edits are the answer's) or a document the answer shows whole (its
// edits are examples in it), decided by what is inside and the prose that
// names it; where nothing tells, the answer is refused.
func TestDocuments(t *testing.T) {
	cfg := "```diff\n--- a/config.yml\n+++ b/config.yml\n@@ -1,2 +1,2 @@\n name: demo\n-debug: true\n+debug: false\n```\n"
	readmeDiff := "```diff\n--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,3 @@\n # Tool\n+Run `tool --fast` for speed.\n Usage below.\n```\n"
	appDiff := "```diff\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n import yaml\n-DEBUG = True\n+DEBUG = False\n```\n"
	readme := "# mytool\n\nmytool applies patches to your configuration.\n\n## Installation\n\n    pip install mytool\n\n## Usage\n\nWrite the change as a unified diff:\n\n" + cfg + "\nThen run `mytool apply change.diff`.\n"
	const (
		edit = iota
		sample
		part
	)
	tests := []struct {
		name, input string
		want        int
	}{
		// A README shown whole, named by nothing: its sections say it is
		// a document, and its example is no edit.
		{"unnamed README, install and usage", "````markdown\n" + readme + "````\n", sample},
		{"unnamed README after prose naming no file", "Sure:\n\n````markdown\n" + readme + "````\n", sample},
		{"unnamed README with a badge", "````md\n# tool\n\n[![CI](https://ci.example/badge.svg)](https://ci.example)\n\nA tool.\n\n" + cfg + "````\n", sample},
		// Both a document's sections and an answer's words: cannot tell.
		{"README sections and the answer's words", "````markdown\nHere is the fix for the debug flag.\n\n## Usage\n\n" + cfg + "\nThat's all.\n````\n", sample},
		// The answer wrapped whole: kept.
		{"wrapper, heading and sentence", "````markdown\n### The fix\n\n" + cfg + "\nNothing else changes.\n````\n", edit},
		{"wrapper, title only", "````markdown\n# Fix\n\n" + cfg + "````\n", edit},
		// A README's heading in the wrapped diff's lines is the file's.
		{"wrapper, diff of a README's Usage section", "````markdown\n### Document the flag\n\n```diff\n--- a/README.md\n+++ b/README.md\n@@ -3,3 +3,4 @@\n ## Usage\n \n Run `tool`.\n+Run `tool --fast` for speed.\n```\n````\n", edit},
		{"wrapper, raw diff of a README's Usage section", "````markdown\nThe change:\n\n--- a/README.md\n+++ b/README.md\n@@ -3,3 +3,4 @@\n ## Usage\n \n Run `tool`.\n+Run `tool --fast` for speed.\n````\n", edit},
		{"wrapper, only the diff", "````markdown\n" + cfg + "````\n", edit},
		// A wrapper named by its one-line intro, holding a change of the
		// document it names: the change is the answer's.
		{"wrapper named README.md, diff of README.md", "Here is the change to README.md:\n\n````markdown\n### Document the fast flag\n\n" + readmeDiff + "\nNothing else changes.\n````\n", edit},
		{"wrapper named README, diff of README.md", "Update the README:\n\n````markdown\nAdd a line on the fast flag.\n\n" + readmeDiff + "````\n", edit},
		// Named README holding an example of another file: a document.
		{"named README, example of config.yml", "Here is the updated README.md:\n\n````markdown\n# Tool\n\nTo turn debugging off:\n\n" + cfg + "````\n", sample},
		// A document shown whole beside a diff of another file: the
		// document is part of the answer, and no format here writes it.
		{"named README beside a diff", appDiff + "\nAnd the updated README.md:\n\n```markdown\n# app\n\nDebugging is off by default.\n```\n", part},
		{"unnamed README with example beside a diff", appDiff + "\n````markdown\n" + readme + "````\n", part},
		{"README with an example beside a diff", appDiff + "\nAnd the updated `README.md`:\n\n````markdown\n# app\n\nTo turn debugging off by hand:\n\n" + cfg + "````\n", part},
		// Beside a diff of that document it is the diff's result: kept.
		{"named README beside its own diff", readmeDiff + "\nThe README.md now reads:\n\n```markdown\n# Tool\nRun `tool --fast` for speed.\nUsage below.\n```\n", edit},
		// Markdown that no prose names as a file is no document: kept.
		{"PR description beside a diff", appDiff + "\nA description for the pull request:\n\n```markdown\n## Summary\n\nTurn debugging off.\n```\n", edit},
		{"code file beside a diff", appDiff + "\nAnd a test, `tests/test_app.py`:\n\n```python\nimport app\n\ndef test_debug_off():\n    assert app.DEBUG is False\n```\n", edit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := extract.Extract(tt.input)
			switch {
			case tt.want == edit && err != nil:
				t.Errorf("err %v, want the edit", err)
			case tt.want == sample && !errors.Is(err, extract.ErrSample):
				t.Errorf("err %v, want ErrSample", err)
			case tt.want == part && !errors.Is(err, extract.ErrPartSample):
				t.Errorf("err %v, want ErrPartSample", err)
			}
		})
	}
}
