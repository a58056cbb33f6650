package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

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
	// MaxToolErrorBytes bounds the text of a failed call: errors quote
	// their input (a path, a line), which must not come back whole.
	MaxToolErrorBytes = 8_000
	// MaxReportString bounds each string of apply_patch's report (paths,
	// reasons, errors), for the same reason.
	MaxReportString = 1_000
)

// Tool is a tool the server offers a model: what the model reads and the
// code. The engine's tools, the code search tools and the language
// server's are all of this type.
type Tool struct {
	Name, Title, Description string
	// Schema is the JSON schema of the arguments (an object schema).
	Schema json.RawMessage
	// OutputSchema, when set, is the JSON schema of the answers'
	// Structured value.
	OutputSchema json.RawMessage
	// ReadOnly: the tool changes nothing. Idempotent: calling it again
	// with the same arguments changes nothing more. Destructive: it may
	// overwrite or delete what is there (meaningful when not ReadOnly).
	ReadOnly, Idempotent, Destructive bool
	// Run runs a call with its JSON arguments; ctx carries the call's
	// deadline.
	Run func(ctx context.Context, args json.RawMessage) Answer
}

// Answer is what a tool call gives the model.
type Answer struct {
	Text string
	// Structured, for tools with an OutputSchema, is the value the text
	// is the JSON of.
	Structured any
	// Failed: the call did not do what was asked (a refusal, bad
	// arguments); the text says why.
	Failed bool
}

// TextAnswer is a plain-text answer; a failure is bounded by
// MaxToolErrorBytes, a success by MaxToolOutputBytes.
func TextAnswer(text string, failed bool) Answer {
	if failed {
		return Answer{Text: Clip(text, MaxToolErrorBytes), Failed: true}
	}
	return Answer{Text: bounded(text)}
}

// failure is the answer of a call that failed with err.
func failure(err error) Answer { return TextAnswer(err.Error(), true) }

// Clip shortens s to at most n bytes (n at least 100), keeping its start
// and end, and says how much was left out.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	note := fmt.Sprintf(" [... %d bytes left out ...] ", len(s)-n+60)
	head := n - 60 - len(note)
	head = validUTF8Prefix(s, head)
	tail := len(s) - 60
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + note + s[tail:]
}

// validUTF8Prefix returns n, moved back so that s[:n] does not end inside
// a character.
func validUTF8Prefix(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// engineTools serves the tools on the directory dir.
type engineTools struct {
	dir string
	// writeLock makes apply_patch calls one at a time, so that each reads
	// the files the previous one wrote. A channel, so that waiting for it
	// ends with the call's deadline.
	writeLock chan struct{}
}

// EngineTools returns apply_patch, repair, diff and convert on the files
// under dir, an absolute directory. They reuse the commands' code (the same
// confinement as apply: see patch.Root) and are safe for concurrent use.
func EngineTools(dir string) []Tool {
	return (&engineTools{dir: dir, writeLock: make(chan struct{}, 1)}).tools()
}

const formatsList = "udiff, udiff-h, udiff-l, search-replace, v4a"

// PathRules says, for tool descriptions, which paths a tool takes.
const PathRules = "Paths are relative to the root (the directory the server serves), written with '/'. Refused, for reads as for writes: absolute " +
	"paths, paths that leave the root with '..', any path with a .git component (in any letter case, at any depth: " +
	".git/config, vendor/lib/.git/HEAD, .GIT/hooks), paths through or at a symbolic link, and files that are not regular " +
	"files (named pipes, devices, sockets)."

// formatGrammar describes the edit formats for the model writing one:
// for each, the description every prompt of patchbench gives
// (patch.FormatDescription), then what an edit of one existing file does
// not show: several files, new, deleted and renamed ones.
func formatGrammar() string {
	var b strings.Builder
	b.WriteString("Formats (detected; the patch may also be a whole answer with prose and fences around one of them):\n")
	for _, f := range patch.Formats {
		fmt.Fprintf(&b, "\n%s: %s.\n%s\n", f, patch.FormatName(f), patch.FormatDescription(f))
	}
	b.WriteString(`
Beyond changing one existing file:
- udiff, udiff-h, udiff-l: a file's section after another's edits several files; "--- /dev/null" makes a new file (every line added), "+++ /dev/null" deletes one.
- search-replace: a path line before each file's blocks; an empty SEARCH section appends to the file, or creates it.
- v4a: "*** Add File: PATH" then every line of the new file, each starting with '+'; "*** Delete File: PATH"; "*** Move to: NEW_PATH" right after "*** Update File: PATH" renames the file; "*** End of File" ends a chunk at the end of the file.`)
	return b.String()
}

func (s *engineTools) tools() []Tool {
	patchProp := fmt.Sprintf(`"patch":{"type":"string","maxLength":%d,"description":"the edit: a unified diff (git or plain), a diff without line numbers, SEARCH/REPLACE blocks, a V4A patch (*** Begin Patch), or a whole model answer holding one of them"}`, MaxToolPatchBytes)
	targetProp := `"target":{"type":"string","description":"the file, relative to the root, that a patch naming no file (or a single-file patch) applies to"}`
	return []Tool{{
		Name:  "apply_patch",
		Title: "Apply an edit to files",
		Description: "Apply an edit to the files under the root, all or nothing, with atomic writes. Tolerant by default: the edit is taken out of " +
			"surrounding prose or fences, hunk counts and line numbers are only hints, lost context spaces, whitespace drift and missing " +
			"headers are repaired, and each hunk goes where exactly one place fits. A hunk that fits several places, or whose lines are " +
			"not in the file, is refused and NOTHING is written: the report gives per file and hunk the status, the reason " +
			"and the candidate lines, so you can add context and try again. On success the report gives each hunk's tier (exact, " +
			"whitespace, indentation, fuzzy), line, offset and repairs. strict applies only a well-formed patch whose context matches " +
			"exactly (as git apply); dry_run checks and reports without writing. " + PathRules + "\n\n" + formatGrammar(),
		Schema: json.RawMessage(`{"type":"object","properties":{` + patchProp + `,` +
			`"strict":{"type":"boolean","description":"apply only a well-formed patch whose context matches exactly (default false)"},` +
			`"dry_run":{"type":"boolean","description":"check and report, write nothing (default false)"},` +
			`"reverse":{"type":"boolean","description":"apply the patch in reverse (default false)"},` + targetProp +
			`},"required":["patch"],"additionalProperties":false}`),
		OutputSchema: applyOutputSchema,
		Destructive:  true,
		Run:          s.applyPatch,
	}, {
		Name:  "repair",
		Title: "Repair an edit into a clean diff",
		Description: "Repair an edit against the files, as apply_patch does, and return it as a canonical unified diff (exact context, " +
			"correct counts and line numbers, git headers) that git apply accepts. Writes nothing. A refusal gives the JSON report " +
			"with the reason and candidate lines. " + PathRules,
		Schema: json.RawMessage(`{"type":"object","properties":{` + patchProp + `,` +
			`"reverse":{"type":"boolean","description":"repair the reverse of the patch (default false)"},` + targetProp +
			`},"required":["patch"],"additionalProperties":false}`),
		ReadOnly: true, Idempotent: true,
		Run: s.repair,
	}, {
		Name:  "diff",
		Title: "Diff two files or texts",
		Description: fmt.Sprintf("Return the edit that turns an old file into a new one, in a patch format (%s; default udiff). Each side "+
			"is a file under the root (old_path, new_path) or a text (old_text, new_text; the path then only names it in the headers). "+
			"Omit both of a side for a creation or a deletion. Sides are at most %d bytes; the answer is cut at %d bytes. Writes nothing. %s",
			formatsList, MaxToolDiffBytes, MaxToolOutputBytes, PathRules),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"old_path":{"type":"string","description":"old file, relative to the root (or the old name when old_text is given)"},` +
			`"new_path":{"type":"string","description":"new file, relative to the root (or the new name when new_text is given)"},` +
			`"old_text":{"type":"string","description":"old contents instead of a file"},` +
			`"new_text":{"type":"string","description":"new contents instead of a file"},` +
			`"format":{"type":"string","enum":["udiff","udiff-h","udiff-l","search-replace","v4a"],"description":"output format (default udiff)"},` +
			`"algorithm":{"type":"string","enum":["histogram","myers"],"description":"diff algorithm (default histogram)"},` +
			`"context":{"type":"integer","minimum":0,"description":"lines of context around each change (default 3)"}` +
			`},"additionalProperties":false}`),
		ReadOnly: true, Idempotent: true,
		Run: s.diff,
	}, {
		Name:  "convert",
		Title: "Convert an edit to another format",
		Description: fmt.Sprintf("Convert an edit to another patch format (%s). When either format has no line numbers the edit is "+
			"applied in memory to the files under the root and generated anew with enough context to be placed uniquely; nothing is written. %s", formatsList, PathRules),
		Schema: json.RawMessage(`{"type":"object","properties":{` + patchProp + `,` +
			`"to":{"type":"string","enum":["udiff","udiff-h","udiff-l","search-replace","v4a"],"description":"target format"},` +
			`"from":{"type":"string","enum":["udiff","udiff-h","udiff-l","search-replace","v4a"],"description":"source format (default: detect)"},` +
			`"context":{"type":"integer","minimum":0,"description":"lines of context when generating (default 3)"},` + targetProp +
			`},"required":["patch","to"],"additionalProperties":false}`),
		ReadOnly: true, Idempotent: true,
		Run: s.convert,
	}}
}

// applyOutputSchema is the JSON schema of apply_patch's structured answer:
// the report of apply --json (docs/apply-json.md) with a summary line.
var applyOutputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"summary":{"type":"string","description":"one line: what happened"},` +
	`"written":{"type":"boolean","description":"whether files were changed on disk"},` +
	`"hunks_omitted":{"type":"integer","description":"hunk reports left out to bound the answer (refused ones are kept first)"},` +
	`"status":{"type":"string","enum":["applied","already_applied","refused"]},` +
	`"mode":{"type":"string","enum":["tolerant","strict"]},` +
	`"check":{"type":"boolean"},"reverse":{"type":"boolean"},` +
	`"format":{"type":"string"},"extracted":{"type":"string"},` +
	`"repairs":{"type":"array","items":{"type":"string"}},` +
	`"error":{"type":"string"},` +
	`"files":{"type":"array","items":{"type":"object","properties":{` +
	`"path":{"type":"string"},"old_path":{"type":"string"},"op":{"type":"string"},"status":{"type":"string"},` +
	`"repairs":{"type":"array","items":{"type":"string"}},"reason":{"type":"string"},"binary":{"type":"boolean"},"replaced":{"type":"boolean"},` +
	`"hunks":{"type":"array","items":{"type":"object","properties":{` +
	`"hunk":{"type":"integer"},"status":{"type":"string"},"tier":{"type":"string"},"line":{"type":"integer"},"offset":{"type":"integer"},` +
	`"repairs":{"type":"array","items":{"type":"string"}},"context_dropped":{"type":"integer"},"context_restored":{"type":"integer"},` +
	`"unmatched":{"type":"array","items":{"type":"string"}},"candidates":{"type":"array","items":{"type":"integer"}},"reason":{"type":"string"}` +
	`},"required":["hunk","status"]}}` +
	`},"required":["status"]}}` +
	`},"required":["summary","written","status","mode","files"]}`)

// ApplyAnswer is apply_patch's structured answer.
type ApplyAnswer struct {
	Summary string `json:"summary"`
	Written bool   `json:"written"`
	// HunksOmitted counts the hunk reports left out to keep the answer
	// within maxReportHunks; the refused ones are kept first.
	HunksOmitted int `json:"hunks_omitted,omitempty"`
	repair.Report
}

// maxReportHunks bounds the hunk reports of one apply_patch answer (a
// 1 MiB patch can hold tens of thousands of hunks).
const maxReportHunks = 500

// decodeStrict decodes a call's arguments, refusing unknown fields, so that
// a misspelt option is not silently ignored. Key case and duplicate keys
// are checked before, by CheckArgs.
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

// CheckArgs checks a call's arguments against the names its schema
// declares: a JSON object whose keys are exactly the declared names (Go's
// decoding would take "DRY_RUN" for "dry_run"), each at most once, and no
// duplicate key in any nested object either (a reader that keeps the first
// and one that keeps the last would see different calls).
func CheckArgs(raw json.RawMessage, schema json.RawMessage) error {
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &sc); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	// One set of keys per open object; arrays push nil.
	var stack []map[string]bool
	expectKey := func() bool { return len(stack) > 0 && stack[len(stack)-1] != nil }
	inKey, started := false, false
	for {
		tok, err := dec.Token()
		if err == io.EOF && started && len(stack) == 0 {
			break
		}
		if err == io.EOF {
			return errors.New("bad arguments: the JSON object ends early")
		}
		if err != nil {
			return fmt.Errorf("bad arguments: %w", err)
		}
		if len(stack) == 0 && (started || tok != json.Delim('{')) {
			return errors.New("bad arguments: want a JSON object")
		}
		started = true
		switch tok {
		case json.Delim('{'):
			stack = append(stack, map[string]bool{})
			inKey = true
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			inKey = expectKey()
			continue
		}
		if inKey && expectKey() {
			key := tok.(string)
			keys := stack[len(stack)-1]
			if keys[key] {
				return fmt.Errorf("bad arguments: key %q given twice", Clip(key, 200))
			}
			keys[key] = true
			if len(stack) == 1 {
				if _, ok := sc.Properties[key]; !ok {
					return fmt.Errorf("bad arguments: unknown argument %q (argument names are exact, in lower case: %s)", Clip(key, 200), strings.Join(slices.Sorted(maps.Keys(sc.Properties)), ", "))
				}
			}
			inKey = false
			continue
		}
		inKey = expectKey() // a value read: next comes a key again in an object
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

// errAbandoned refuses the writes of an apply_patch call whose deadline
// passed before it got to them.
var errAbandoned = errors.New("the call's deadline passed before the writes; nothing written")

func (s *engineTools) applyPatch(ctx context.Context, raw json.RawMessage) Answer {
	var a struct {
		patchArgs
		Strict bool `json:"strict"`
		DryRun bool `json:"dry_run"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return failure(err)
	}
	if err := a.check(); err != nil {
		return failure(err)
	}
	select {
	case s.writeLock <- struct{}{}:
	case <-ctx.Done():
		return failure(fmt.Errorf("apply_patch: waited for an earlier apply_patch until the call's deadline: %w; nothing written", context.Cause(ctx)))
	}
	// The apply runs beside this call, so that a read that never returns
	// (a file that blocks) does not hold the lock past the deadline: at
	// the deadline the call gives up, lets the next apply_patch in, and
	// the abandoned apply is refused its writes (guard). Once its writes
	// have begun, they are waited for: they are bounded.
	var (
		mu                 sync.Mutex
		writing, abandoned bool
	)
	guard := func() (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		if abandoned || ctx.Err() != nil {
			return nil, errAbandoned
		}
		writing = true
		return func() {}, nil
	}
	type result struct {
		err error
		rep *repair.Report
	}
	var once sync.Once
	unlock := func() { once.Do(func() { <-s.writeLock }) }
	done := make(chan result, 1)
	go func() {
		defer unlock()
		root, err := patch.OpenRoot(s.dir)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer root.Close()
		// ApplyText: a large well-formed git diff takes the fast path
		// from memory, with no parsed copy of it (see repair.ApplyReader).
		rep, err := repair.ApplyText(root, *a.Patch, repair.ApplyOptions{Name: "-", Strict: a.Strict, Target: a.Target,
			Reverse: a.Reverse, Check: a.DryRun, Strip: 1, Guard: guard})
		done <- result{err, rep}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		mu.Lock()
		if !writing {
			abandoned = true
			mu.Unlock()
			unlock()
			return failure(fmt.Errorf("apply_patch: no answer within the call's deadline (%w); nothing written", context.Cause(ctx)))
		}
		mu.Unlock()
		r = <-done
	}
	if r.rep == nil {
		return failure(fmt.Errorf("apply_patch: %w", r.err))
	}
	ans := ApplyAnswer{Report: *r.rep}
	ans.clip()
	switch {
	case r.err != nil:
		ans.Summary = "refused, nothing written: " + ans.Error
		if cands := candidates(ans.Files); cands != "" {
			ans.Summary += "; candidate places: " + cands + " (add context lines that tell them apart)"
		}
	case a.DryRun:
		ans.Summary = "dry run: the patch applies (" + ans.Status + "); nothing written"
	default:
		ans.Written = ans.Status == repair.StatusApplied
		ans.Summary = ans.Status + ": " + writtenFiles(ans.Files)
	}
	// The text is the structured answer's JSON, as the specification asks;
	// "->" in a reason stays readable.
	var text bytes.Buffer
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ans); err != nil {
		return failure(err)
	}
	return Answer{Text: text.String(), Structured: ans, Failed: r.err != nil}
}

// clip bounds the report: its strings, which quote the patch (paths,
// lines), and the number of hunk reports, keeping the refused ones (what
// the model has to act on) before the rest.
func (a *ApplyAnswer) clip() {
	total := 0
	for _, f := range a.Files {
		total += len(f.Hunks)
	}
	if total > maxReportHunks {
		keep := maxReportHunks
		for pass := range 2 {
			for i := range a.Files {
				var kept []repair.HunkReport
				for _, h := range a.Files[i].Hunks {
					refused := h.Status == repair.StatusRefused || h.Reason != "" || len(h.Candidates) > 0
					switch {
					case pass == 0 && !refused, pass == 1 && refused:
						kept = append(kept, h) // decided in the other pass
					case keep > 0:
						kept = append(kept, h)
						keep--
					default:
						a.HunksOmitted++
					}
				}
				a.Files[i].Hunks = kept
			}
		}
	}
	c := func(s *string) { *s = Clip(jsonText(*s), MaxReportString) }
	c(&a.Error)
	c(&a.Extracted)
	for i := range a.Files {
		f := &a.Files[i]
		c(&f.Path)
		c(&f.OldPath)
		c(&f.Reason)
		for j := range f.Hunks {
			h := &f.Hunks[j]
			c(&h.Reason)
			for k := range h.Unmatched {
				c(&h.Unmatched[k])
			}
		}
	}
}

// jsonText is s as JSON decodes it once encoded: each byte that is not
// part of a UTF-8 character replaced by U+FFFD, so that the bound holds
// for the text the model reads.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
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

func (s *engineTools) repair(ctx context.Context, raw json.RawMessage) Answer {
	var a patchArgs
	if err := decodeStrict(raw, &a); err != nil {
		return failure(err)
	}
	if err := a.check(); err != nil {
		return failure(err)
	}
	root, err := patch.OpenRoot(s.dir)
	if err != nil {
		return failure(err)
	}
	defer root.Close()
	rep, err := repair.Apply(root, *a.Patch, repair.ApplyOptions{Name: "-", Target: a.Target, Reverse: a.Reverse, Check: true, Strip: 1})
	// Repair writes nothing by its nature: its report does not say check.
	rep.Check = false
	var text string
	if err == nil {
		if rep.Status == repair.StatusAlreadyApplied {
			lines := rep.AlreadyApplied()
			if len(lines) == 0 {
				return TextAnswer("the edit is already in the files; nothing to repair", false)
			}
			return TextAnswer(strings.Join(lines, "\n")+"\n", false)
		}
		text, err = patch.Print(rep.Canonical(), patch.UDiff)
	}
	if err != nil {
		// The report says why and where.
		var report bytes.Buffer
		enc := json.NewEncoder(&report)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return TextAnswer("refused: "+err.Error()+"\nreport:\n"+report.String(), true)
	}
	return TextAnswer(text, false)
}

func (s *engineTools) convert(ctx context.Context, raw json.RawMessage) Answer {
	var a struct {
		patchArgs
		To      string `json:"to"`
		From    string `json:"from"`
		Context *int   `json:"context"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return failure(err)
	}
	if err := a.check(); err != nil {
		return failure(err)
	}
	if a.Reverse {
		return TextAnswer("bad arguments: convert has no reverse", true)
	}
	o := repair.ConvertOptions{Name: "-", Strip: 1, Target: a.Target, Context: patch.DefaultContext}
	if a.Context != nil {
		o.Context = *a.Context
	}
	var err error
	if o.To, err = patch.ParseFormat(a.To); err == nil && a.From != "" {
		o.From, err = patch.ParseFormat(a.From)
	}
	var text string
	if err == nil {
		text, err = repair.Convert(*a.Patch, s.dir, o)
	}
	if err != nil {
		return TextAnswer("convert: "+err.Error(), true)
	}
	return TextAnswer(text, false)
}

func (s *engineTools) diff(ctx context.Context, raw json.RawMessage) Answer {
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
		return failure(err)
	}
	format, mo := a.Format, patch.DefaultMakeOptions()
	if format == "" {
		format = "udiff"
	}
	if a.Context != nil {
		mo.Context = *a.Context
	}
	f, err := patch.ParseFormat(format)
	if err != nil {
		return TextAnswer("bad arguments: "+err.Error(), true)
	}
	if mo.Algorithm, err = diff.ParseAlgorithm(a.Algorithm); err != nil {
		return TextAnswer("bad arguments: "+err.Error(), true)
	}
	if mo.Context < 0 {
		return TextAnswer("bad arguments: context must be at least 0", true)
	}
	if a.OldPath == "" && a.OldText == nil && a.NewPath == "" && a.NewText == nil {
		return TextAnswer("bad arguments: give old_path or old_text, and new_path or new_text", true)
	}
	root, err := patch.OpenRoot(s.dir)
	if err != nil {
		return failure(err)
	}
	defer root.Close()
	oldPath, old, err := diffSide(root, "old", a.OldPath, a.OldText, a.NewPath)
	if err != nil {
		return failure(err)
	}
	newPath, neu, err := diffSide(root, "new", a.NewPath, a.NewText, a.OldPath)
	if err != nil {
		return failure(err)
	}
	text, err := patch.DiffText(f, oldPath, newPath, old, neu, mo, false)
	if err != nil {
		return TextAnswer("diff: "+err.Error(), true)
	}
	if text == "" {
		return TextAnswer("no difference", false)
	}
	return TextAnswer(text, false)
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
	// Bounded before it is read: a huge file costs no memory.
	data, err := root.ReadFileLimit(name, MaxToolDiffBytes)
	if err != nil {
		return "", "", fmt.Errorf("%s_path: %w", side, patch.ForReading(err))
	}
	return name, string(data), nil
}

// bounded cuts an answer at MaxToolOutputBytes, at a line end, and says so.
func bounded(text string) string {
	if len(text) <= MaxToolOutputBytes {
		return text
	}
	note := fmt.Sprintf("[cut at %%d of %d bytes (bound %d): ask for fewer files or less context]\n", len(text), MaxToolOutputBytes)
	cut := strings.LastIndexByte(text[:MaxToolOutputBytes-len(note)-20], '\n') + 1
	if cut < MaxToolOutputBytes/2 {
		// A long line (an answer quoting a long input): cutting at a line
		// end would keep little or nothing of it.
		return Clip(text, MaxToolOutputBytes)
	}
	return text[:cut] + fmt.Sprintf(note, cut)
}
