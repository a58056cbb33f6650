package diffxyz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

func TestPromptsRender(t *testing.T) {
	p, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	row := toyRow(t)
	row.OldCode = "```\n" + toyOld // a fence inside the code must not end the block
	row.UDiff, row.UDiffH, row.UDiffL, row.SearchReplace, row.V4A = "", "", "", "", ""
	if err := Prepare([]*Row{row}); err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases([]*Row{row}, Tasks, patch.Formats, PromptVariants) {
		system, user, err := p.Render(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Key(), err)
		}
		if strings.Contains(system+user, "<no value>") {
			t.Errorf("%s: a template field is missing:\n%s\n%s", c.Key(), system, user)
		}
		switch c.Prompt {
		case WithFormat:
			// The one description of the format every prompt gives.
			if !strings.Contains(system, "For example") || !strings.Contains(system, patch.FormatDescription(c.Format)) ||
				!strings.Contains(system, patch.FormatName(c.Format)) {
				t.Errorf("%s: system prompt lacks the format description:\n%s", c.Key(), system)
			}
		case WithoutFormat:
			if system != "You are a helpful assistant." {
				t.Errorf("%s: system prompt %q", c.Key(), system)
			}
		}
		diff := row.Diff(c.Format)
		if c.Task == DiffGen {
			if strings.Contains(user, diff) {
				t.Errorf("%s: the diffgen prompt holds its answer", c.Key())
			}
		} else if !strings.Contains(user, diff) {
			t.Errorf("%s: the prompt lacks the diff:\n%s", c.Key(), user)
		}
		// The code is shown whole in a fence that no line of it closes.
		if c.Task == Apply {
			if !strings.Contains(user, "\n"+fenced(row.Lang, row.OldCode)) {
				t.Errorf("%s: the prompt lacks the old code in its own fence:\n%s", c.Key(), user)
			}
		}
		if !strings.Contains(user, "udiff") && !strings.Contains(user, "search-replace") && !strings.Contains(user, "V4A") {
			t.Errorf("%s: the user message does not name the format:\n%s", c.Key(), user)
		}
	}
}

// The worked example of each format description is the engine's diff in
// that format.
func TestPromptExamples(t *testing.T) {
	p, err := LoadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range patch.Formats {
		d, err := MakeDiff(exampleEdit.Path, exampleEdit.OldCode, exampleEdit.NewCode, f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.formats[f][1], d) {
			t.Errorf("%s: the description lacks the example diff:\n%s", f, p.formats[f][1])
		}
		if !appliesExactly(d, f, exampleEdit.Path, exampleEdit.OldCode, exampleEdit.NewCode) {
			t.Errorf("%s: the example does not apply", f)
		}
	}
}

func TestPromptsOverride(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "system-terse.tmpl"), []byte("Edit {{.FormatName}} only."), 0o644)
	os.WriteFile(filepath.Join(dir, "apply.tmpl"), []byte("APPLY {{.Path}} {{.Format}}"), 0o644)
	p, err := LoadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Has("terse") || !p.Has(WithFormat) {
		t.Errorf("variants %v", p.Variants())
	}
	row := toyRow(t)
	system, user, err := p.Render(Case{Row: row, Task: Apply, Format: patch.UDiffL, Prompt: "terse"})
	if err != nil {
		t.Fatal(err)
	}
	if system != "Edit a unified diff with ADD/DEL/CON line markers (udiff-l) only." || user != "APPLY f.txt udiff-l" {
		t.Errorf("system %q user %q", system, user)
	}
	if _, _, err := p.Render(Case{Row: row, Task: Apply, Format: patch.UDiff, Prompt: "nope"}); err == nil {
		t.Error("unknown variant: no error")
	}

	// Bad templates are reported when loading, naming the file.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "diffgen.tmpl"), []byte("{{.Nope"), 0o644)
	if _, err := LoadPrompts(bad); err == nil || !strings.Contains(err.Error(), "diffgen.tmpl") {
		t.Errorf("bad template: error %v", err)
	}
	unknown := t.TempDir()
	os.WriteFile(filepath.Join(unknown, "apply.tmpl"), []byte("{{.Nope}}"), 0o644)
	p, err = LoadPrompts(unknown)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Render(Case{Row: row, Task: Apply, Format: patch.UDiff, Prompt: WithFormat}); err == nil {
		t.Error("unknown field: no error")
	}
	if _, err := LoadPrompts(t.TempDir()); err == nil {
		t.Error("empty directory: no error")
	}
}

func TestWritePromptFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "prompts")
	files, err := WritePromptFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(DefaultPromptFiles()) {
		t.Errorf("wrote %d files, want %d", len(files), len(DefaultPromptFiles()))
	}
	p, err := LoadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := LoadPrompts("")
	c := Case{Row: toyRow(t), Task: DiffGen, Format: patch.V4A, Prompt: WithFormat}
	s1, u1, _ := p.Render(c)
	s2, u2, _ := d.Render(c)
	if s1 != s2 || u1 != u2 {
		t.Error("written templates render differently from the embedded ones")
	}
	if _, err := WritePromptFiles(dir); err == nil {
		t.Error("overwrote existing files")
	}
}
