// Package diffxyz runs the Diff-XYZ benchmark (Glukhov et al., "Diff-XYZ:
// A Benchmark for Evaluating Diff Understanding", arXiv 2510.12487): does a
// model understand code diffs?
//
// Each dataset row is a file before (old_code) and after (new_code) a real
// commit, with the edit between them (the diff). Three tasks find one of the
// three from the other two:
//
//	apply       old_code + diff → new_code
//	anti-apply  new_code + diff → old_code
//	diffgen     old_code + new_code → diff
//
// Each task is asked in the paper's edit formats (udiff, udiff-h, udiff-l,
// search-replace; v4a when asked for) and with every prompt variant (with-format:
// a system prompt that describes the format, with a worked example;
// without-format: a generic assistant). Prompts are text/template files
// embedded in the binary (prompts/*.tmpl) that a directory of files can
// override.
//
// The package builds the cases, the requests and the reference answers,
// scores responses, and aggregates reports; package runner runs the cases,
// and package llm calls the models. The scores are defined in [Definitions].
package diffxyz

import (
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// Task is one of the three Diff-XYZ tasks.
type Task string

// The tasks.
const (
	Apply     Task = "apply"      // old code + diff → new code
	AntiApply Task = "anti-apply" // new code + diff → old code
	DiffGen   Task = "diffgen"    // old code + new code → diff
)

// Tasks lists the tasks in order.
var Tasks = []Task{Apply, AntiApply, DiffGen}

// The built-in prompt variants.
const (
	WithFormat    = "with-format"
	WithoutFormat = "without-format"
)

// PromptVariants lists the built-in prompt variants.
var PromptVariants = []string{WithFormat, WithoutFormat}

// ParseTasks parses a comma-separated list of tasks; "all" means every task.
func ParseTasks(s string) ([]Task, error) {
	var out []Task
	for _, name := range splitList(s) {
		if name == "all" {
			out = appendNew(out, Tasks...)
			continue
		}
		t := Task(name)
		switch t {
		case Apply, AntiApply, DiffGen:
		case "antiapply", "anti_apply":
			t = AntiApply
		case "diff-gen", "diff_gen", "diffgeneration", "diff-generation":
			t = DiffGen
		default:
			return nil, fmt.Errorf("unknown task %q (want apply, anti-apply, diffgen or all)", name)
		}
		out = appendNew(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no task given")
	}
	return out, nil
}

// PaperFormats are the formats of the Diff-XYZ paper, the default of a run.
// v4a is patchbench's addition: asked only when named, and reported beside
// these, never pooled into them.
var PaperFormats = []patch.Format{patch.UDiff, patch.UDiffH, patch.UDiffL, patch.SearchReplace}

// ParseFormats parses a comma-separated list of formats; "all" means every
// format of package patch (the paper's four and v4a).
func ParseFormats(s string) ([]patch.Format, error) {
	var out []patch.Format
	for _, name := range splitList(s) {
		if name == "all" {
			out = appendNew(out, patch.Formats...)
			continue
		}
		f, err := patch.ParseFormat(name)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no format given")
	}
	return out, nil
}

// ParsePrompts parses a comma-separated list of prompt variants; "all"
// means the built-in ones. Other names are accepted when a template set
// provides them (see [Prompts.Has]).
func ParsePrompts(s string) ([]string, error) {
	var out []string
	for _, name := range splitList(s) {
		if name == "all" {
			out = appendNew(out, PromptVariants...)
			continue
		}
		if strings.ContainsAny(name, `/\|`) {
			return nil, fmt.Errorf("bad prompt variant name %q", name)
		}
		out = appendNew(out, name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no prompt variant given")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// appendNew appends the items of add not yet in list.
func appendNew[T comparable](list []T, add ...T) []T {
next:
	for _, a := range add {
		for _, x := range list {
			if x == a {
				continue next
			}
		}
		list = append(list, a)
	}
	return list
}

// Case is one unit of work: a row asked one task in one format with one
// prompt variant.
type Case struct {
	Row    *Row
	Task   Task
	Format patch.Format
	Prompt string
}

// Key is the case's unique key in a run: "id|task|format|prompt".
func (c Case) Key() string {
	return c.Row.ID + "|" + string(c.Task) + "|" + string(c.Format) + "|" + c.Prompt
}

// Meta is the case's request metadata, which the replay and reference
// models read: id, task, format and prompt.
func (c Case) Meta() map[string]string {
	return map[string]string{"id": c.Row.ID, "task": string(c.Task), "format": string(c.Format), "prompt": c.Prompt}
}

// Cases returns every combination of rows, tasks, formats and prompts, row
// by row.
func Cases(rows []*Row, tasks []Task, formats []patch.Format, prompts []string) []Case {
	out := make([]Case, 0, len(rows)*len(tasks)*len(formats)*len(prompts))
	for _, r := range rows {
		for _, t := range tasks {
			for _, f := range formats {
				for _, p := range prompts {
					out = append(out, Case{Row: r, Task: t, Format: f, Prompt: p})
				}
			}
		}
	}
	return out
}

// Expected returns what a correct answer to the case holds: the new code
// for apply, the old code for anti-apply, and the row's edit in the case's
// format for diffgen.
func (c Case) Expected() string {
	switch c.Task {
	case Apply:
		return c.Row.NewCode
	case AntiApply:
		return c.Row.OldCode
	}
	return c.Row.Diff(c.Format)
}

// Reference returns the reference answer to the case, as a model that
// follows the prompt would write it: the expected text in a fenced block
// long enough that no line of the text closes it.
func (c Case) Reference() string {
	tag := c.Row.Lang
	if c.Task == DiffGen {
		tag = "diff"
	}
	return fenced(tag, c.Expected())
}

// fenced returns text in a backtick fence with the given info string.
func fenced(info, text string) string {
	f := fenceFor(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f + info + "\n" + text + f + "\n"
}

// fenceFor returns a run of backticks longer than any run that starts a
// line of the texts (after white space), and at least three long, so that
// a fence made of it is closed by nothing inside.
func fenceFor(texts ...string) string {
	n := 3
	for _, t := range texts {
		for line := range strings.Lines(t) {
			line = strings.TrimLeft(line, " \t")
			k := 0
			for k < len(line) && line[k] == '`' {
				k++
			}
			n = max(n, k+1)
		}
	}
	return strings.Repeat("`", n)
}
