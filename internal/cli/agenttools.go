package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/diff"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// Bounds of the engine tools' inputs and outputs. A bound hit is said in
// the answer.
const (
	MaxToolPatchBytes  = 1 << 20 // a patch given to apply_patch, repair or convert
	MaxToolDiffBytes   = 4 << 20 // one side of a diff
	MaxToolOutputBytes = 200_000 // the text of a diff, repair or convert answer
)

// AgentTool is one of the patch engine's commands as a tool for a model
// (served by patchbench mcp): what the model reads and the code.
type AgentTool struct {
	Name, Description string
	// Schema is the JSON schema of the arguments (an object schema).
	Schema json.RawMessage
	// Run runs a call with its JSON arguments and returns the answer's
	// text and whether the call failed; the model reads both.
	Run func(ctx context.Context, args json.RawMessage) (text string, failed bool)
}

// engineTools serves the tools on the directory dir.
type engineTools struct {
	dir string
	// writeMu makes apply_patch calls one at a time, so that each reads
	// the files the previous one wrote.
	writeMu sync.Mutex
}

// EngineTools returns apply_patch, repair, diff and convert on the files
// under dir, an absolute directory. They reuse the commands' code (the same
// confinement as apply: see patch.Root) and are safe for concurrent use.
func EngineTools(dir string) []AgentTool {
	return (&engineTools{dir: dir}).tools()
}

const formatsList = "udiff, udiff-h, udiff-l, search-replace, v4a"

func (s *engineTools) tools() []AgentTool {
	patchProp := fmt.Sprintf(`"patch":{"type":"string","maxLength":%d,"description":"the edit: a unified diff (git or plain), a diff without line numbers, SEARCH/REPLACE blocks, a V4A patch (*** Begin Patch), or a whole model answer holding one of them"}`, MaxToolPatchBytes)
	targetProp := `"target":{"type":"string","description":"the file, relative to the root, that a patch naming no file (or a single-file patch) applies to"}`
	return []AgentTool{{
		Name: "apply_patch",
		Description: "Apply an edit to the files under the root, all or nothing, with atomic writes. Tolerant by default: the edit is taken out of " +
			"surrounding prose or fences, hunk counts and line numbers are only hints, lost context spaces, whitespace drift and missing " +
			"headers are repaired, and each hunk goes where exactly one place fits. A hunk that fits several places, or whose lines are " +
			"not in the file, is refused and NOTHING is written: the answer's JSON report gives per file and hunk the status, the reason " +
			"and the candidate lines, so you can add context and try again. On success the report gives each hunk's tier (exact, " +
			"whitespace, indentation, fuzzy), line, offset and repairs. strict applies only a well-formed patch whose context matches " +
			"exactly (as git apply); dry_run checks and reports without writing.",
		Schema: json.RawMessage(`{"type":"object","properties":{` + patchProp + `,` +
			`"strict":{"type":"boolean","description":"apply only a well-formed patch whose context matches exactly (default false)"},` +
			`"dry_run":{"type":"boolean","description":"check and report, write nothing (default false)"},` +
			`"reverse":{"type":"boolean","description":"apply the patch in reverse (default false)"},` + targetProp +
			`},"required":["patch"],"additionalProperties":false}`),
		Run: s.applyPatch,
	}, {
		Name: "repair",
		Description: "Repair an edit against the files, as apply_patch does, and return it as a canonical unified diff (exact context, " +
			"correct counts and line numbers, git headers) that git apply accepts. Writes nothing. A refusal gives the JSON report " +
			"with the reason and candidate lines.",
		Schema: json.RawMessage(`{"type":"object","properties":{` + patchProp + `,` +
			`"reverse":{"type":"boolean","description":"repair the reverse of the patch (default false)"},` + targetProp +
			`},"required":["patch"],"additionalProperties":false}`),
		Run: s.repair,
	}, {
		Name: "diff",
		Description: fmt.Sprintf("Return the edit that turns an old file into a new one, in a patch format (%s; default udiff). Each side "+
			"is a file under the root (old_path, new_path) or a text (old_text, new_text; the path then only names it in the headers). "+
			"Omit both of a side for a creation or a deletion. Sides are at most %d bytes; the answer is cut at %d bytes.",
			formatsList, MaxToolDiffBytes, MaxToolOutputBytes),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"old_path":{"type":"string","description":"old file, relative to the root (or the old name when old_text is given)"},` +
			`"new_path":{"type":"string","description":"new file, relative to the root (or the new name when new_text is given)"},` +
			`"old_text":{"type":"string","description":"old contents instead of a file"},` +
			`"new_text":{"type":"string","description":"new contents instead of a file"},` +
			`"format":{"type":"string","enum":["udiff","udiff-h","udiff-l","search-replace","v4a"],"description":"output format (default udiff)"},` +
			`"algorithm":{"type":"string","enum":["histogram","myers"],"description":"diff algorithm (default histogram)"},` +
			`"context":{"type":"integer","minimum":0,"description":"lines of context around each change (default 3)"}` +
			`},"additionalProperties":false}`),
		Run: s.diff,
	}, {
		Name: "convert",
		Description: fmt.Sprintf("Convert an edit to another patch format (%s). When either format has no line numbers the edit is "+
			"applied in memory to the files under the root and generated anew with enough context to be placed uniquely; nothing is written.", formatsList),
		Schema: json.RawMessage(`{"type":"object","properties":{` + patchProp + `,` +
			`"to":{"type":"string","enum":["udiff","udiff-h","udiff-l","search-replace","v4a"],"description":"target format"},` +
			`"from":{"type":"string","enum":["udiff","udiff-h","udiff-l","search-replace","v4a"],"description":"source format (default: detect)"},` +
			`"context":{"type":"integer","minimum":0,"description":"lines of context when generating (default 3)"},` + targetProp +
			`},"required":["patch","to"],"additionalProperties":false}`),
		Run: s.convert,
	}}
}

// decodeStrict decodes a call's arguments, refusing unknown fields, so that
// a misspelt option is not silently ignored.
func decodeStrict(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

// patchArgs are the arguments shared by the tools that take a patch.
type patchArgs struct {
	Patch   *string `json:"patch"`
	Target  string  `json:"target"`
	Reverse bool    `json:"reverse"`
}

// check refuses a missing or oversized patch and a target outside the
// root.
func (a patchArgs) check() error {
	if a.Patch == nil || strings.TrimSpace(*a.Patch) == "" {
		return errors.New("bad arguments: patch is required")
	}
	if len(*a.Patch) > MaxToolPatchBytes {
		return fmt.Errorf("patch is %d bytes, over the bound of %d: split the edit into several calls", len(*a.Patch), MaxToolPatchBytes)
	}
	if a.Target != "" {
		return patch.CheckPath(a.Target)
	}
	return nil
}

// memStdio feeds a patch to a command as its standard input and collects
// its output.
func memStdio(text string) (Stdio, *bytes.Buffer) {
	var out bytes.Buffer
	return Stdio{In: strings.NewReader(text), Out: &out, Err: &out}, &out
}

func (s *engineTools) applyPatch(ctx context.Context, raw json.RawMessage) (string, bool) {
	var a struct {
		patchArgs
		Strict bool `json:"strict"`
		DryRun bool `json:"dry_run"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return err.Error(), true
	}
	if err := a.check(); err != nil {
		return err.Error(), true
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	sio, out := memStdio(*a.Patch)
	err := runApply(applyOptions{dir: s.dir, target: a.Target, reverse: a.Reverse, check: a.DryRun, strip: 1, json: true, strict: a.Strict}, "-", sio)
	var rep applyReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
		return fmt.Sprintf("apply_patch: %v\n%s", err, out.String()), true
	}
	var head string
	switch {
	case err != nil:
		head = "refused, nothing written: " + rep.Error
		if cands := candidates(rep.Files); cands != "" {
			head += "\ncandidate places: " + cands + " (add context lines that tell them apart)"
		}
	case a.DryRun:
		head = "dry run: the patch applies (" + rep.Status + "); nothing written"
	default:
		head = rep.Status + ": " + writtenFiles(rep.Files)
	}
	return head + "\nreport:\n" + out.String(), err != nil
}

// candidates lists the candidate lines of refused hunks.
func candidates(files []repair.FileReport) string {
	var parts []string
	for _, f := range files {
		for _, h := range f.Hunks {
			if len(h.Candidates) > 1 {
				name := f.Path
				if name == "" {
					name = f.OldPath
				}
				parts = append(parts, fmt.Sprintf("%s hunk %d at lines %s", name, h.Hunk, strings.Trim(fmt.Sprint(h.Candidates), "[]")))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// writtenFiles names the files an apply changed.
func writtenFiles(files []repair.FileReport) string {
	var names []string
	for _, f := range files {
		name := f.Path
		if name == "" {
			name = f.OldPath
		}
		names = append(names, name+" ("+f.Status+")")
	}
	return strings.Join(names, ", ")
}

func (s *engineTools) repair(ctx context.Context, raw json.RawMessage) (string, bool) {
	var a patchArgs
	if err := decodeStrict(raw, &a); err != nil {
		return err.Error(), true
	}
	if err := a.check(); err != nil {
		return err.Error(), true
	}
	sio, out := memStdio(*a.Patch)
	err := runRepair(applyOptions{dir: s.dir, target: a.Target, reverse: a.Reverse, strip: 1}, "-", sio)
	if err != nil {
		// The report says why and where; run again for it.
		sio, out = memStdio(*a.Patch)
		runRepair(applyOptions{dir: s.dir, target: a.Target, reverse: a.Reverse, strip: 1, json: true}, "-", sio)
		return "refused: " + err.Error() + "\nreport:\n" + out.String(), true
	}
	if out.Len() == 0 {
		return "the edit is already in the files; nothing to repair", false
	}
	return bounded(out.String()), false
}

func (s *engineTools) convert(ctx context.Context, raw json.RawMessage) (string, bool) {
	var a struct {
		patchArgs
		To      string `json:"to"`
		From    string `json:"from"`
		Context *int   `json:"context"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return err.Error(), true
	}
	if err := a.check(); err != nil {
		return err.Error(), true
	}
	if a.Reverse {
		return "bad arguments: convert has no reverse", true
	}
	o := convertOptions{to: a.To, from: a.From, dir: s.dir, target: a.Target, strip: 1, context: patch.DefaultContext}
	if a.Context != nil {
		o.context = *a.Context
	}
	sio, out := memStdio(*a.Patch)
	if err := runConvert(o, "-", sio); err != nil {
		return "convert: " + err.Error(), true
	}
	return bounded(out.String()), false
}

func (s *engineTools) diff(ctx context.Context, raw json.RawMessage) (string, bool) {
	var a struct {
		OldPath   string  `json:"old_path"`
		NewPath   string  `json:"new_path"`
		OldText   *string `json:"old_text"`
		NewText   *string `json:"new_text"`
		Format    string  `json:"format"`
		Algorithm string  `json:"algorithm"`
		Context   *int    `json:"context"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return err.Error(), true
	}
	o := diffOptions{format: a.Format, algorithm: a.Algorithm, context: patch.DefaultContext}
	if o.format == "" {
		o.format = "udiff"
	}
	if a.Context != nil {
		o.context = *a.Context
	}
	f, err := patch.ParseFormat(o.format)
	if err != nil {
		return "bad arguments: " + err.Error(), true
	}
	alg, err := diff.ParseAlgorithm(o.algorithm)
	if err != nil {
		return "bad arguments: " + err.Error(), true
	}
	if o.context < 0 {
		return "bad arguments: context must be at least 0", true
	}
	if a.OldPath == "" && a.OldText == nil && a.NewPath == "" && a.NewText == nil {
		return "bad arguments: give old_path or old_text, and new_path or new_text", true
	}
	root, err := patch.OpenRoot(s.dir)
	if err != nil {
		return err.Error(), true
	}
	defer root.Close()
	oldPath, old, err := diffSide(root, "old", a.OldPath, a.OldText, a.NewPath)
	if err != nil {
		return err.Error(), true
	}
	newPath, neu, err := diffSide(root, "new", a.NewPath, a.NewText, a.OldPath)
	if err != nil {
		return err.Error(), true
	}
	text, err := makeDiff(o, f, alg, oldPath, newPath, old, neu)
	if err != nil {
		return "diff: " + err.Error(), true
	}
	if text == "" {
		return "no difference", false
	}
	return bounded(text), false
}

// diffSide reads one side of a diff: a text, a file under the root, or
// nothing (a creation or deletion). A text without a name takes the other
// side's, so that two texts compare as one file's versions.
func diffSide(root *patch.Root, side, name string, text *string, other string) (string, string, error) {
	if text != nil {
		if len(*text) > MaxToolDiffBytes {
			return "", "", fmt.Errorf("%s_text is %d bytes, over the bound of %d", side, len(*text), MaxToolDiffBytes)
		}
		if name == "" {
			name = other
		}
		if name == "" {
			name = "file"
		}
		return name, *text, nil
	}
	if name == "" {
		return "", "", nil
	}
	data, err := root.ReadFile(name)
	if err != nil {
		return "", "", fmt.Errorf("%s_path: %w", side, err)
	}
	if len(data) > MaxToolDiffBytes {
		return "", "", fmt.Errorf("%s_path %s is %d bytes, over the bound of %d", side, name, len(data), MaxToolDiffBytes)
	}
	return name, string(data), nil
}

// bounded cuts an answer at MaxToolOutputBytes, at a line end, and says so.
func bounded(text string) string {
	if len(text) <= MaxToolOutputBytes {
		return text
	}
	cut := strings.LastIndexByte(text[:MaxToolOutputBytes], '\n') + 1
	return text[:cut] + fmt.Sprintf("[cut at %d of %d bytes (bound %d): ask for fewer files or less context]\n", cut, len(text), MaxToolOutputBytes)
}
