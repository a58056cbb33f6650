package loc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/internal/atomicfile"
)

// relace-mcp's case schema, one JSON object a line:
//
//	{"id", "query", "repo", "base_commit",
//	 "hard_gt": [{"path", "function", "class", "range": [s, e],
//	              "target_ranges": [[s, e], ...], "signature"}, ...],
//	 "soft_context": [{"path", "function", "range", "signature"}, ...],
//	 "category", ...}
//
// A hard_gt entry is one function: range is its definition span,
// target_ranges the changed lines inside it. Read as relace-mcp reads it:
// a file's ground-truth lines are its entries' target_ranges (an entry
// without valid ones gives its range); every entry is a function target
// whose span is its range. Entries without a path or a two-number range,
// and target ranges not of two integers with 1 <= start <= end, are left
// out; soft_context does not count in any metric and is not kept.

type relaceRow struct {
	ID         string        `json:"id"`
	Query      string        `json:"query"`
	Repo       string        `json:"repo"`
	BaseCommit string        `json:"base_commit"`
	HardGT     []relaceEntry `json:"hard_gt"`
	// SoftContext is written empty, as relace-mcp's own build does.
	SoftContext []relaceEntry `json:"soft_context"`
	Category    string        `json:"category,omitempty"`
}

type relaceEntry struct {
	Path         string  `json:"path"`
	Function     string  `json:"function"`
	Class        *string `json:"class"`
	Range        [2]int  `json:"range"`
	TargetRanges []Range `json:"target_ranges,omitempty"`
	Signature    string  `json:"signature,omitempty"`
}

// decodeRelace reads a row of relace-mcp's schema as a Case.
func decodeRelace(line []byte) (Case, error) {
	var row struct {
		ID         string            `json:"id"`
		Query      string            `json:"query"`
		Repo       string            `json:"repo"`
		BaseCommit string            `json:"base_commit"`
		HardGT     []json.RawMessage `json:"hard_gt"`
		Category   any               `json:"category"`
	}
	if err := json.Unmarshal(line, &row); err != nil {
		return Case{}, fmt.Errorf("relace-mcp row: %w", err)
	}
	c := Case{ID: row.ID, Repo: row.Repo, BaseCommit: row.BaseCommit, Query: row.Query,
		GroundTruth: GroundTruth{Files: map[string]FileTruth{}}}
	c.Category, _ = row.Category.(string)
	for _, raw := range row.HardGT {
		var e struct {
			Path         string `json:"path"`
			Function     string `json:"function"`
			Class        any    `json:"class"`
			Range        []any  `json:"range"`
			TargetRanges []any  `json:"target_ranges"`
			Signature    any    `json:"signature"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&e) != nil || e.Path == "" {
			continue
		}
		span, ok := intPair(e.Range)
		if !ok {
			continue
		}
		var targets []Range
		for _, t := range e.TargetRanges {
			l, _ := t.([]any)
			if r, ok := intPair(l); ok && r[0] > 0 && r[1] >= r[0] {
				targets = append(targets, r)
			}
		}
		if len(targets) == 0 {
			targets = []Range{span}
		}
		class, _ := e.Class.(string)
		name := e.Function
		if class != "" {
			name = class + "." + e.Function
		}
		sig, _ := e.Signature.(string)
		ft := c.GroundTruth.Files[e.Path]
		for _, t := range targets {
			ft.Ranges = append(ft.Ranges, t)
			ft.Context = append(ft.Context, span)
		}
		if name != "" {
			ft.Functions = append(ft.Functions, name)
		}
		ft.Defs = append(ft.Defs, FunctionDef{Name: name, Class: class, Range: span, Signature: sig})
		c.GroundTruth.Files[e.Path] = ft
	}
	for p, ft := range c.GroundTruth.Files {
		sort.Strings(ft.Functions)
		ft.Functions = dedupe(ft.Functions)
		if ft.Functions == nil {
			ft.Functions = []string{}
		}
		c.GroundTruth.Files[p] = ft
	}
	return c, nil
}

// intPair reads [a, b, ...] whose first two items are JSON integers.
func intPair(l []any) (Range, bool) {
	if len(l) < 2 {
		return Range{}, false
	}
	var r Range
	for i := range 2 {
		n, ok := l[i].(json.Number)
		if !ok {
			return Range{}, false
		}
		v, err := n.Int64()
		if err != nil {
			return Range{}, false
		}
		r[i] = int(v)
	}
	return r, true
}

// errNoFunction is a case relace-mcp's schema cannot hold: its entries
// are functions.
var errNoFunction = errors.New("no ground-truth function: relace-mcp's schema holds functions only")

// toRelace writes c in relace-mcp's schema: one hard_gt entry per function
// (Defs), with its span and the case's ranges inside it as target_ranges.
// Lines outside every function are left out, as relace-mcp's build leaves
// them out.
func toRelace(c Case) (relaceRow, error) {
	row := relaceRow{ID: c.ID, Query: c.Query, Repo: c.Repo, BaseCommit: c.BaseCommit,
		HardGT: []relaceEntry{}, SoftContext: []relaceEntry{}, Category: c.Category}
	for _, p := range c.GroundTruth.Paths() {
		ft := c.GroundTruth.Files[p]
		if len(ft.Functions) > 0 && len(ft.Defs) == 0 {
			return relaceRow{}, fmt.Errorf("%s: functions without their spans (defs); rebuild the case with loc build", p)
		}
		for _, d := range ft.Defs {
			e := relaceEntry{Path: p, Function: strings.TrimPrefix(d.Name, d.Class+"."), Range: d.Range, Signature: d.Signature}
			if d.Class != "" {
				e.Class = &d.Class
			} else {
				e.Function = d.Name
			}
			for i, r := range ft.Ranges {
				if i < len(ft.Context) && ft.Context[i] == d.Range {
					e.TargetRanges = append(e.TargetRanges, r)
				}
			}
			row.HardGT = append(row.HardGT, e)
		}
	}
	if len(row.HardGT) == 0 {
		return relaceRow{}, errNoFunction
	}
	return row, nil
}

// WriteRelaceCases writes cases to path in relace-mcp's schema, atomically.
// A case the schema cannot hold (no function) is left out and returned as
// a Problem.
func WriteRelaceCases(path string, cases []Case) (written int, problems []Problem, err error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		row, err := toRelace(c)
		if err != nil {
			problems = append(problems, Problem{ID: c.ID, Err: err.Error()})
			continue
		}
		if err := enc.Encode(row); err != nil {
			return 0, nil, fmt.Errorf("write cases %s: case %s: %w", path, c.ID, err)
		}
		written++
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return 0, nil, fmt.Errorf("write cases %s: %w", path, err)
	}
	return written, problems, nil
}
