package diffxyz

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/patchbench/patchbench/patch"
)

// The default prompt templates. Each is a text/template file:
//
//	system-VARIANT.tmpl  the system prompt of a prompt variant
//	                     (with-format, without-format, or any other name)
//	TASK.tmpl            the user message of a task (apply, anti-apply, diffgen)
//	format-FORMAT.tmpl   defines "name" (a short name of the format, as in
//	                     "written as a unified diff (udiff)") and
//	                     "description" (what the format is, with a worked
//	                     example), for each format; the embedded ones give
//	                     patch.FormatName and patch.FormatDescription, the
//	                     words every prompt of patchbench uses for a format
//
// System and user templates see a [PromptData]; format templates see a
// [FormatData]. Every template can call code: {{code LANG TEXT}} writes TEXT
// in a fenced block tagged LANG, with a fence longer than any backtick run
// inside; and {{formatName F}} and {{formatDescription F}}.
//
//go:embed prompts/*.tmpl
var embeddedPrompts embed.FS

// PromptData is what system and user templates see.
type PromptData struct {
	Task   Task
	Format patch.Format
	Prompt string // the prompt variant
	// FormatName and FormatDescription are the format template's "name"
	// and "description", rendered.
	FormatName        string
	FormatDescription string
	Path, Lang        string
	OldCode, NewCode  string
	// Diff is the row's edit in the case's format; empty for diffgen,
	// whose answer it is.
	Diff string
}

// FormatData is what format templates see.
type FormatData struct {
	Format  patch.Format
	Example Example
}

// Example is the worked example shown in format descriptions; its Diff is
// computed by the patch engine in the format described.
type Example struct {
	Path, Lang       string
	OldCode, NewCode string
	Diff             string
}

// exampleEdit is the edit of every format's worked example.
var exampleEdit = Example{
	Path: "geometry.py",
	Lang: "python",
	OldCode: `import sys


def area(r):
    return 3.14 * r * r


def main():
    r = float(sys.argv[1])
    print(area(r))


if __name__ == "__main__":
    main()
`,
	NewCode: `import math
import sys


def area(r):
    return math.pi * r * r


def main():
    r = float(sys.argv[1])
    print(f"{area(r):.2f}")


if __name__ == "__main__":
    main()
`,
}

// templateFuncs are the functions every template can call: code, and
// formatName and formatDescription, the one name and description of a
// format that every prompt naming it gives (patch.FormatName,
// patch.FormatDescription).
var templateFuncs = template.FuncMap{
	"code":              fenced,
	"formatName":        patch.FormatName,
	"formatDescription": patch.FormatDescription,
}

// Prompts is a set of prompt templates, ready to render requests.
type Prompts struct {
	files   map[string]string // file name → text
	tmpls   map[string]*template.Template
	formats map[patch.Format][2]string // rendered name and description
}

// DefaultPromptFiles returns the embedded templates, by file name.
func DefaultPromptFiles() map[string]string {
	out := map[string]string{}
	entries, _ := fs.ReadDir(embeddedPrompts, "prompts")
	for _, e := range entries {
		b, _ := fs.ReadFile(embeddedPrompts, "prompts/"+e.Name())
		out[e.Name()] = string(b)
	}
	return out
}

// LoadPrompts returns the embedded templates, with every *.tmpl file of dir
// replacing the embedded file of the same name or adding a new one (a
// system-NAME.tmpl adds the prompt variant NAME). An empty dir means the
// embedded templates alone.
func LoadPrompts(dir string) (*Prompts, error) {
	files := DefaultPromptFiles()
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("prompts: %w", err)
		}
		n := 0
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".tmpl") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("prompts: %w", err)
			}
			files[e.Name()] = string(b)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("prompts: %s holds no .tmpl files", dir)
		}
	}
	return newPrompts(files)
}

func newPrompts(files map[string]string) (*Prompts, error) {
	p := &Prompts{files: files, tmpls: map[string]*template.Template{}, formats: map[patch.Format][2]string{}}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		t, err := template.New(name).Funcs(templateFuncs).Option("missingkey=error").Parse(files[name])
		if err != nil {
			return nil, fmt.Errorf("prompts: %w", err)
		}
		p.tmpls[name] = t
	}
	for _, f := range patch.Formats {
		name := "format-" + string(f) + ".tmpl"
		t := p.tmpls[name]
		if t == nil {
			return nil, fmt.Errorf("prompts: %s is missing", name)
		}
		ex := exampleEdit
		d, err := MakeDiff(ex.Path, ex.OldCode, ex.NewCode, f)
		if err != nil {
			return nil, fmt.Errorf("prompts: worked example: %w", err)
		}
		ex.Diff = d
		var out [2]string
		for i, part := range []string{"name", "description"} {
			var b bytes.Buffer
			if t.Lookup(part) == nil {
				return nil, fmt.Errorf("prompts: %s does not define %q", name, part)
			}
			if err := t.ExecuteTemplate(&b, part, FormatData{Format: f, Example: ex}); err != nil {
				return nil, fmt.Errorf("prompts: %w", err)
			}
			out[i] = strings.TrimSpace(b.String())
		}
		p.formats[f] = out
	}
	for _, task := range Tasks {
		if p.tmpls[string(task)+".tmpl"] == nil {
			return nil, fmt.Errorf("prompts: %s.tmpl is missing", task)
		}
	}
	return p, nil
}

// Has reports whether the set has a system template for the prompt
// variant.
// SHA256 returns the hex SHA-256 of the templates in use (the embedded
// ones with those of a prompt directory over them), each with its name:
// what run.json records, so that a resume or a merge of runs asked with
// other prompt texts is refused, wherever the templates lie.
func (p *Prompts) SHA256() string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(p.files)) {
		fmt.Fprintf(h, "%d:%s\n%d:", len(name), name, len(p.files[name]))
		h.Write([]byte(p.files[name]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (p *Prompts) Has(variant string) bool {
	return p.tmpls["system-"+variant+".tmpl"] != nil
}

// Variants lists the prompt variants the set has, in name order.
func (p *Prompts) Variants() []string {
	var out []string
	for name := range p.tmpls {
		if v, ok := strings.CutPrefix(name, "system-"); ok {
			out = append(out, strings.TrimSuffix(v, ".tmpl"))
		}
	}
	slices.Sort(out)
	return out
}

// Render returns the system prompt and the user message of a case.
func (p *Prompts) Render(c Case) (system, user string, err error) {
	st := p.tmpls["system-"+c.Prompt+".tmpl"]
	if st == nil {
		return "", "", fmt.Errorf("prompts: no prompt variant %q (no system-%s.tmpl)", c.Prompt, c.Prompt)
	}
	ut := p.tmpls[string(c.Task)+".tmpl"]
	if ut == nil {
		return "", "", fmt.Errorf("prompts: no template for task %q", c.Task)
	}
	fm, ok := p.formats[c.Format]
	if !ok {
		return "", "", fmt.Errorf("prompts: unknown format %q", c.Format)
	}
	d := PromptData{
		Task: c.Task, Format: c.Format, Prompt: c.Prompt,
		FormatName: fm[0], FormatDescription: fm[1],
		Path: c.Row.Path, Lang: c.Row.Lang,
		OldCode: c.Row.OldCode, NewCode: c.Row.NewCode,
	}
	if c.Task != DiffGen {
		d.Diff = c.Row.Diff(c.Format)
	}
	var sb, ub bytes.Buffer
	if err := st.Execute(&sb, d); err != nil {
		return "", "", fmt.Errorf("prompts: %w", err)
	}
	if err := ut.Execute(&ub, d); err != nil {
		return "", "", fmt.Errorf("prompts: %w", err)
	}
	return strings.TrimSpace(sb.String()), strings.TrimSpace(ub.String()), nil
}

// WritePromptFiles writes the embedded templates into dir, for editing and
// use with LoadPrompts. It refuses to overwrite existing files.
func WritePromptFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	files := DefaultPromptFiles()
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return nil, fmt.Errorf("prompts: %s already exists", filepath.Join(dir, name))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("prompts: %w", err)
		}
	}
	var written []string
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
			return written, fmt.Errorf("prompts: %w", err)
		}
		written = append(written, path)
	}
	return written, nil
}
