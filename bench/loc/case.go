// Package loc is the code localization benchmark (Loc-Bench): a case is a
// natural-language query (an issue text or a commit message), a repository
// pinned at a commit, and the ground truth the fixing change touched (files,
// line ranges, functions). A search answers with a ranked [Found]; package
// metrics scores it with the relace-mcp and LocAgent metric families.
//
// Cases are JSON lines (see [Case]); [ReadCases] and [WriteCases] read and
// write them.
package loc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/dataset"
	"github.com/patchbench/patchbench/internal/atomicfile"
)

// Case is one localization task, one line of a cases file:
//
//	{"id": "...", "repo": "owner/name", "base_commit": "<sha>", "query": "...",
//	 "ground_truth": {"files": {"path": {"ranges": [[s, e], ...],
//	     "functions": ["Class.method", ...], "context": [[s, e], ...]}}},
//	 "category": "...", "source": "..."}
type Case struct {
	ID          string      `json:"id"`
	Repo        string      `json:"repo"`
	BaseCommit  string      `json:"base_commit"`
	Query       string      `json:"query"`
	GroundTruth GroundTruth `json:"ground_truth"`
	// Category is the dataset's class of the case (Loc-Bench: Bug Report,
	// Feature Request, Security Vulnerability, Performance Issue; history
	// builds: the commit's kind).
	Category string `json:"category,omitempty"`
	// Source names where the case came from: a dataset file or
	// "git:RANGE".
	Source string `json:"source,omitempty"`
}

// GroundTruth is what a search should find, by repository path.
type GroundTruth struct {
	Files map[string]FileTruth `json:"files"`
}

// FileTruth is the ground truth inside one file.
type FileTruth struct {
	// Ranges are the target lines, 1-based inclusive, at base_commit.
	Ranges []Range `json:"ranges"`
	// Functions are the qualified names (package symbols) of the functions
	// and methods holding target lines, without the "path:" prefix.
	Functions []string `json:"functions"`
	// Context[i] is the span Ranges[i] must lie in: the function that
	// encloses it, or the whole file for lines outside every function. It
	// may be empty (cases from other tools); validate then checks nothing.
	Context []Range `json:"context,omitempty"`
	// Defs are the functions holding target lines, each with the span of
	// its definition, which function_hit_rate counts as hit when an answer
	// overlaps it. Cases written without them take the function spans from
	// Context (see [FunctionTargets]).
	Defs []FunctionDef `json:"defs,omitempty"`
}

// FunctionDef is a ground-truth function: its qualified name (as in
// FileTruth.Functions), the class holding it when it is a method (a prefix
// of Name), the span of its definition and its first line.
type FunctionDef struct {
	Name      string `json:"name"`
	Class     string `json:"class,omitempty"`
	Range     Range  `json:"range"`
	Signature string `json:"signature,omitempty"`
}

// Range is a 1-based inclusive line range [start, end].
type Range [2]int

// Start is the first line.
func (r Range) Start() int { return r[0] }

// End is the last line.
func (r Range) End() int { return r[1] }

// Paths returns the ground-truth files in sorted order.
func (g GroundTruth) Paths() []string {
	ps := make([]string, 0, len(g.Files))
	for p := range g.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// FunctionPaths returns, in sorted order, the files that hold a
// ground-truth function: LocAgent's file-level ground truth, the paths of
// its edit_functions, which leaves out a file changed only outside
// functions (a doc page, a module-level line).
func (g GroundTruth) FunctionPaths() []string {
	var ps []string
	for _, p := range g.Paths() {
		if len(g.Files[p].Functions) > 0 {
			ps = append(ps, p)
		}
	}
	return ps
}

// Functions returns the ground-truth functions named as LocAgent names
// entities, "path:Class.method", in sorted order.
func (g GroundTruth) Functions() []string {
	var out []string
	for _, p := range g.Paths() {
		for _, f := range g.Files[p].Functions {
			out = append(out, p+":"+f)
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

// Modules returns the ground-truth modules as LocAgent names them:
// "path:Class" for a method, "path:func" for a top-level function.
func (g GroundTruth) Modules() []string {
	var out []string
	for _, f := range g.Functions() {
		out = append(out, ModuleOf(f))
	}
	sort.Strings(out)
	return dedupe(out)
}

// ModuleOf maps an entity "path:Class.method" to its module "path:Class"
// (an entity without a dot is its own module).
func ModuleOf(entity string) string {
	path, name, ok := strings.Cut(entity, ":")
	if !ok {
		return entity
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return path + ":" + name
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// Found is a search's ranked answer. Files, Modules and Functions are in
// rank order, best first; modules and functions are named as in
// [GroundTruth.Modules] and [GroundTruth.Functions].
type Found struct {
	Files     []string           `json:"files"`
	Modules   []string           `json:"modules"`
	Functions []string           `json:"functions"`
	Ranges    map[string][]Range `json:"ranges"`
}

// ReadCases reads a cases file. Blank lines are skipped; a line that is
// not a case is an error naming its line number.
func ReadCases(path string) ([]Case, error) {
	cases, bad, err := ReadCasesLenient(path)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return cases, err
}

// ReadCasesLenient reads a cases file past its bad lines (not JSON, no id,
// an id seen before), which it returns in bad, each naming the file, the
// line and the id when there is one. err is for the file as a whole.
func ReadCasesLenient(path string) (cases []Case, bad []error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read cases: %w", err)
	}
	defer f.Close()
	cases, bad, err = decodeCases(f)
	if errors.Is(err, errDatasetRow) {
		return nil, nil, fmt.Errorf("read cases %s: %w; make cases from it first: patchbench loc build --dataset %s --repos DIR --out cases.jsonl", path, err, path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read cases %s: %w", path, err)
	}
	for i, b := range bad {
		bad[i] = fmt.Errorf("read cases %s: %w", path, b)
	}
	return cases, bad, nil
}

// DecodeCases reads cases, one JSON object a line, from r.
func DecodeCases(r io.Reader) ([]Case, error) {
	cases, bad, err := decodeCases(r)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return cases, err
}

func decodeCases(r io.Reader) (cases []Case, bad []error, err error) {
	seen := map[string]bool{}
	err = dataset.EachFrom(r, "", dataset.Options{}, func(line json.RawMessage, at dataset.Pos, rerr error) error {
		n := at.N()
		if rerr != nil {
			bad = append(bad, fmt.Errorf("line %d: %w", n, errors.Unwrap(rerr)))
			return nil
		}
		c, err := decodeCase(line)
		if err != nil {
			bad = append(bad, fmt.Errorf("line %d: %w", n, err))
			return nil
		}
		if c.ID == "" {
			var row struct {
				InstanceID string `json:"instance_id"`
			}
			if json.Unmarshal(line, &row) == nil && row.InstanceID != "" && len(cases) == 0 {
				return fmt.Errorf("line %d: %w", n, errDatasetRow)
			}
			bad = append(bad, fmt.Errorf("line %d: case without an id", n))
			return nil
		}
		if seen[c.ID] {
			bad = append(bad, fmt.Errorf("line %d: case %s appears twice", n, c.ID))
			return nil
		}
		seen[c.ID] = true
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return cases, bad, nil
}

// decodeCase reads one line: a case, or a row of relace-mcp's schema
// (hard_gt and no ground_truth).
func decodeCase(line []byte) (Case, error) {
	var probe struct {
		HardGT      json.RawMessage `json:"hard_gt"`
		GroundTruth json.RawMessage `json:"ground_truth"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return Case{}, err
	}
	if probe.HardGT != nil && probe.GroundTruth == nil {
		return decodeRelace(line)
	}
	var c Case
	err := json.Unmarshal(line, &c)
	return c, err
}

// errDatasetRow is a first row that is a benchmark's instance (SWE-bench
// or Loc-Bench_V1: instance_id, repo, base_commit, patch) rather than a
// case.
var errDatasetRow = errors.New("a SWE-bench or Loc-Bench dataset row (instance_id, no id), not a case")

// WriteCases writes cases as JSON lines to path, atomically.
func WriteCases(path string, cases []Case) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if c.GroundTruth.Files == nil {
			c.GroundTruth.Files = map[string]FileTruth{}
		}
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("write cases %s: case %s: %w", path, c.ID, err)
		}
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write cases %s: %w", path, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
