package loc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/patchbench/patchbench/codesearch"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/symbols"
)

// ReportBack is the tool by which the agent gives its answer.
const ReportBack = "report_back"

// LSP modes of the agentic search (--lsp-tools).
const (
	LSPOff  = codesearch.LSPOff
	LSPOn   = codesearch.LSPOn
	LSPAuto = codesearch.LSPAuto
)

// DefaultMaxTurns bounds an agent's conversation when no bound is given.
const DefaultMaxTurns = 20

// AgentPrompt is what --prompt-file sets: the system prompt, the user
// message (with {query} standing for the case's query) and the tools'
// descriptions by name. Empty fields keep the defaults.
type AgentPrompt struct {
	System string            `json:"system"`
	User   string            `json:"user"`
	Tools  map[string]string `json:"tools"`
}

// DefaultAgentPrompt is the prompt of the agentic search.
var DefaultAgentPrompt = AgentPrompt{
	System: "You are a code localization agent. Given an issue and read-only tools over the repository at the " +
		"commit the issue was reported against, find the code that must change to resolve it: the files, and in each " +
		"the line ranges (and so the functions) to edit. Explore with the tools: list directories, search with " +
		"grep_search and find_symbol, read the candidates with view_file. Paths are relative to the repository root. " +
		"When you are confident, call report_back once with the locations, most relevant first. Do not edit anything.",
	User: "Issue:\n\n{query}\n\nFind the code to change, then call report_back.",
}

// reportBackSchema is the JSON schema of report_back's arguments.
const reportBackSchema = `{"type":"object","properties":{` +
	`"files":{"type":"object","description":"file path (relative to the repository root) → line ranges [[start, end], ...] to change, 1-based and inclusive; most relevant file first",` +
	`"additionalProperties":{"type":"array","items":{"type":"array","items":{"type":"integer","minimum":1},"minItems":2,"maxItems":2}}},` +
	`"functions":{"type":"array","description":"optional: the functions to change, as path:Class.method or path:function, most relevant first","items":{"type":"string"}}},` +
	`"required":["files"],"additionalProperties":false}`

const reportBackDescription = "Give your answer and end the search: files maps each file to change to its line ranges " +
	"[[start, end], ...] (1-based, inclusive), most relevant file first, e.g. {\"files\": {\"src/a.py\": [[10, 24]]}}. " +
	"Call it once, when you are done."

// LoadAgentPrompt reads a prompt file (YAML or JSON with the fields of
// [AgentPrompt]); unknown fields and tools are errors.
func LoadAgentPrompt(file string) (AgentPrompt, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return AgentPrompt{}, fmt.Errorf("prompt file: %w", err)
	}
	var p AgentPrompt
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return AgentPrompt{}, fmt.Errorf("prompt file %s: %w", file, err)
	}
	for name := range p.Tools {
		if name != ReportBack && !slices.Contains(codesearch.ToolNames(), name) {
			return AgentPrompt{}, fmt.Errorf("prompt file %s: tools: unknown tool %q", file, name)
		}
	}
	return p, nil
}

// AgentOptions configure the agentic search.
type AgentOptions struct {
	// Model answers; every turn goes through its cache.
	Model *runner.Model
	// MaxTurns bounds the model's answers per case (0: DefaultMaxTurns).
	MaxTurns int
	// Temperature is sent when not nil.
	Temperature *float64
	// MaxTokens bounds each answer (0: the provider's default).
	MaxTokens int
	// Tools are the search tools offered (report_back always is); nil
	// offers view_file, view_directory, grep_search and find_symbol.
	Tools []string
	// Prompt overrides parts of DefaultAgentPrompt.
	Prompt AgentPrompt
	// LSP is LSPOff (""), LSPOn or LSPAuto: whether the definition and
	// references tools of a language server are offered (see
	// codesearch.Snapshot.StartLSP).
	LSP string
}

// Agentic is the agentic search: a model with codesearch's tools in a loop
// bounded by MaxTurns, answering with report_back.
type Agentic struct {
	o AgentOptions
}

// NewAgentic checks o and returns the search.
func NewAgentic(o AgentOptions) (*Agentic, error) {
	if o.Model == nil {
		return nil, errors.New("agentic search: no model")
	}
	if o.MaxTurns < 0 {
		return nil, fmt.Errorf("agentic search: --max-turns %d", o.MaxTurns)
	}
	if o.MaxTurns == 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	switch o.LSP {
	case "":
		o.LSP = LSPOff
	case LSPOff, LSPOn, LSPAuto:
	default:
		return nil, fmt.Errorf("agentic search: --lsp-tools %q: want true, false or auto", o.LSP)
	}
	if o.Tools == nil {
		o.Tools = []string{codesearch.ViewFile, codesearch.ViewDirectory, codesearch.GrepSearch, codesearch.FindSymbol}
	}
	o.Tools = slices.DeleteFunc(slices.Clone(o.Tools), func(n string) bool { return n == ReportBack })
	for _, n := range o.Tools {
		if n == codesearch.Definition || n == codesearch.References {
			return nil, fmt.Errorf("agentic search: tool %s comes with --lsp-tools, not --enabled-tools", n)
		}
		if !slices.Contains(codesearch.ToolNames(), n) {
			return nil, fmt.Errorf("agentic search: unknown tool %q (tools: %s, %s)", n, strings.Join(codesearch.ToolNames(), ", "), ReportBack)
		}
	}
	p := DefaultAgentPrompt
	if o.Prompt.System != "" {
		p.System = o.Prompt.System
	}
	if o.Prompt.User != "" {
		p.User = o.Prompt.User
	}
	p.Tools = o.Prompt.Tools
	o.Prompt = p
	return &Agentic{o: o}, nil
}

// Search runs the agent on one case. A model that still calls tools after
// the last turn, or stops without report_back (and without the report's
// JSON in its text), answers with nothing found and Answer.NoAnswer saying
// why: the case is scored, as a miss. The first report_back that reads is
// the answer; a later one is told so.
func (a *Agentic) Search(ctx context.Context, c Case, rp *repo.Repo, calls *runner.ModelCalls) (Answer, error) {
	snap, err := codesearch.OpenCommit(ctx, rp, c.BaseCommit)
	if err != nil {
		return Answer{}, err
	}
	defer snap.Close()
	names := slices.Clone(a.o.Tools)
	if a.o.LSP != LSPOff {
		started, err := snap.StartLSP(ctx, a.o.LSP == LSPOn)
		if err != nil {
			return Answer{}, err
		}
		if started {
			names = append(names, codesearch.Definition, codesearch.References)
		}
	}
	defs, err := snap.Tools(names...)
	if err != nil {
		return Answer{}, err
	}
	tools := make([]llm.Tool, 0, len(defs)+1)
	for _, d := range defs {
		t := llm.Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
		if s := a.o.Prompt.Tools[d.Name]; s != "" {
			t.Description = s
		}
		tools = append(tools, t)
	}
	rb := llm.Tool{Name: ReportBack, Description: reportBackDescription, Parameters: json.RawMessage(reportBackSchema)}
	if s := a.o.Prompt.Tools[ReportBack]; s != "" {
		rb.Description = s
	}
	tools = append(tools, rb)

	req := llm.Request{
		System:      a.o.Prompt.System,
		Messages:    []llm.Message{{Role: "user", Content: strings.ReplaceAll(a.o.Prompt.User, "{query}", c.Query)}},
		Temperature: a.o.Temperature,
		MaxTokens:   a.o.MaxTokens,
		Tools:       tools,
		Meta:        map[string]string{"id": c.ID, "repo": c.Repo},
	}
	var found *Found
	run := func(ctx context.Context, call llm.ToolCall) (llm.ToolOutput, error) {
		if call.Name == ReportBack {
			if found != nil {
				return llm.ToolOutput{Content: "report_back: already received; this call is ignored", IsError: true, Stop: true}, nil
			}
			f, err := parseReport(call.Arguments)
			if err != nil {
				return llm.ToolOutput{Content: "report_back: " + err.Error() + "; call report_back again", IsError: true}, nil
			}
			found = &f
			return llm.ToolOutput{Content: "received", Stop: true}, nil
		}
		if !slices.Contains(names, call.Name) {
			return llm.ToolOutput{Content: fmt.Sprintf("no tool %q here; the tools are: %s", call.Name, toolList(tools)), IsError: true}, nil
		}
		out, err := snap.Call(ctx, call.Name, json.RawMessage(call.Arguments))
		if err != nil {
			if ctx.Err() != nil {
				return llm.ToolOutput{}, err
			}
			return llm.ToolOutput{Content: err.Error(), IsError: true}, nil
		}
		return llm.ToolOutput{Content: out}, nil
	}
	ag, err := llm.RunAgent(ctx, a.o.Model.Recording(calls), req, run, a.o.MaxTurns)
	ans := Answer{Turns: ag.Turns}
	if errors.Is(err, llm.ErrMaxTurns) && ctx.Err() == nil {
		ans.NoAnswer = fmt.Sprintf("no report_back within %d turns", a.o.MaxTurns)
		return ans, nil
	}
	if err != nil {
		return ans, err
	}
	if found == nil {
		// No report_back: an answer may still be the report's JSON in text.
		if f, err := parseReport(jsonObject(ag.Text)); err == nil {
			found = &f
		}
	}
	if found == nil {
		ans.NoAnswer = "the model stopped without report_back"
	}
	if found != nil {
		if len(found.Functions) == 0 {
			found.Functions, found.Modules = functionsOf(ctx, snap, *found)
		}
		ans.Found = *found
	}
	return ans, nil
}

// functionsOf names the functions and methods that hold the reported
// lines, from the files' syntax trees, in the order of the files and then
// of the lines, with their modules: a model that reports ranges is scored
// at function and module level too. Files that cannot be read or parsed
// add nothing.
func functionsOf(ctx context.Context, snap *codesearch.Snapshot, f Found) (funcs, modules []string) {
	p := symbols.NewParser()
	defer p.Close()
	for _, file := range f.Files {
		rs := f.Ranges[file]
		if len(rs) == 0 || symbols.LanguageOf(file) == "" {
			continue
		}
		data, err := snap.ReadFile(ctx, file)
		if err != nil {
			continue
		}
		res, err := p.Parse(ctx, file, data)
		if err != nil {
			continue
		}
		for _, r := range rs {
			for line := r[0]; line <= min(r[1], res.Lines); line++ {
				sym, ok := symbols.Innermost(res.Symbols, line)
				if !ok {
					continue
				}
				e := file + ":" + sym.Name
				if !slices.Contains(funcs, e) {
					funcs = append(funcs, e)
				}
				if m := ModuleOf(e); !slices.Contains(modules, m) {
					modules = append(modules, m)
				}
			}
		}
	}
	return funcs, modules
}

func toolList(tools []llm.Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// jsonObject returns the outermost {...} of text, "" when there is none.
func jsonObject(text string) string {
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j < i {
		return ""
	}
	return text[i : j+1]
}

// parseReport reads report_back's arguments into a Found: files in the
// order the model wrote them, their ranges merged and sorted, functions
// (and their modules) as given. Paths are checked as the tools check them.
func parseReport(args string) (Found, error) {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var raw struct {
		Files     json.RawMessage `json:"files"`
		Functions []string        `json:"functions"`
	}
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Found{}, fmt.Errorf("arguments: %w", err)
	}
	if len(raw.Files) == 0 || string(raw.Files) == "null" {
		return Found{}, errors.New("arguments: files is required")
	}
	order, err := objectKeys(raw.Files)
	if err != nil {
		return Found{}, fmt.Errorf("files: %w", err)
	}
	var files map[string][][]int
	if err := json.Unmarshal(raw.Files, &files); err != nil {
		return Found{}, fmt.Errorf("files: want {path: [[start, end], ...]}: %w", err)
	}
	f := Found{Ranges: map[string][]Range{}}
	for _, p := range order {
		clean := reportPath(p)
		if err := patch.CheckPath(clean); err != nil {
			return Found{}, fmt.Errorf("files: %w", err)
		}
		if slices.Contains(f.Files, clean) {
			continue
		}
		f.Files = append(f.Files, clean)
		var rs []Range
		for _, r := range files[p] {
			if len(r) != 2 || r[0] < 1 || r[1] < r[0] {
				return Found{}, fmt.Errorf("files: %s: range %v: want [start, end] with 1 <= start <= end", p, r)
			}
			rs = append(rs, Range{r[0], r[1]})
		}
		if len(rs) > 0 {
			f.Ranges[clean] = mergeRanges(rs)
		}
	}
	for _, fn := range raw.Functions {
		p, name, ok := strings.Cut(fn, ":")
		p, name = reportPath(p), strings.TrimSpace(name)
		if !ok || name == "" || patch.CheckPath(p) != nil {
			return Found{}, fmt.Errorf("functions: %q: want path:Class.method or path:function", fn)
		}
		entity := p + ":" + name
		if !slices.Contains(f.Functions, entity) {
			f.Functions = append(f.Functions, entity)
		}
		if m := ModuleOf(entity); !slices.Contains(f.Modules, m) {
			f.Modules = append(f.Modules, m)
		}
	}
	return f, nil
}

// reportPath reads a path of report_back as the repository names it:
// without white space around it, with "/" for a Windows "\", cleaned
// ("./a.py" and "a//b.py" are "a.py" and "a/b.py"). A path is not
// completed: "b.py" does not name "a/b.py".
func reportPath(p string) string {
	p = path.Clean(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/"))
	if rest, ok := strings.CutPrefix(p, testbed); ok && rest != "" {
		return rest
	}
	return p
}

// testbed is where SWE-bench's images hold the repository: a model used to
// them reports /testbed/a.py for the repository's a.py.
const testbed = "/testbed/"

// objectKeys returns the keys of a JSON object in the order written.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("want an object {path: [[start, end], ...]}")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// mergeRanges sorts ranges and joins overlapping and adjacent ones.
func mergeRanges(rs []Range) []Range {
	slices.SortFunc(rs, func(a, b Range) int { return a[0] - b[0] })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1]+1 {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}
