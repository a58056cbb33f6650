package diffxyz

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// Row is one instance of the Diff-XYZ dataset: a file before and after a
// commit, and the edit between them in each format. The JSON names are the
// columns of the Hugging Face dataset JetBrains-Research/diff-xyz; id and
// size_class come from patchbench's own datasets, and v4a is generated.
type Row struct {
	ID         string `json:"id,omitempty"`
	Repo       string `json:"repo,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Path       string `json:"path"`
	Lang       string `json:"lang"`
	License    string `json:"license,omitempty"`
	Message    string `json:"message,omitempty"`
	OldCode    string `json:"old_code"`
	NewCode    string `json:"new_code"`
	NAdded     int    `json:"n_added"`
	NRemoved   int    `json:"n_removed"`
	NHunks     int    `json:"n_hunks"`
	ChangeKind string `json:"change_kind,omitempty"`
	SizeClass  string `json:"size_class,omitempty"`

	UDiff         string `json:"udiff,omitempty"`
	UDiffH        string `json:"udiff-h,omitempty"`
	UDiffL        string `json:"udiff-l,omitempty"`
	SearchReplace string `json:"search-replace,omitempty"`
	V4A           string `json:"v4a,omitempty"`

	// Missing names the required columns (old_code, new_code) the row
	// does not have, or has as null; such a row is left out of a run, not
	// read as an edit from or to an empty file.
	Missing []string `json:"-"`

	// NotApplicable holds, by format, why the row's edit cannot be
	// written in that format (for example a search-replace block cannot
	// hold a line "======="). Prepare fills it; the row's cases in such a
	// format are recorded as not applicable instead of stopping the run.
	NotApplicable map[patch.Format]string `json:"-"`
}

// UnmarshalJSON reads a row, noting a missing or null old_code or
// new_code: a file of no lines is a column "", not a column that is not
// there.
func (r *Row) UnmarshalJSON(b []byte) error {
	type plain Row // without this method
	var aux struct {
		*plain
		// At depth 0 these take the columns from plain's fields.
		OldCode *string `json:"old_code"`
		NewCode *string `json:"new_code"`
	}
	aux.plain = (*plain)(r)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	r.Missing = nil
	for _, c := range []struct {
		name string
		v    *string
		dst  *string
	}{{"old_code", aux.OldCode, &r.OldCode}, {"new_code", aux.NewCode, &r.NewCode}} {
		if c.v == nil {
			r.Missing = append(r.Missing, c.name)
			*c.dst = ""
			continue
		}
		*c.dst = *c.v
	}
	return nil
}

// Size classes of an edit, by its number of changed (added plus removed)
// lines, with the thresholds of the Diff-XYZ paper.
const (
	Small  = "small"  // at most 7 changed lines
	Medium = "medium" // 8 to 24
	Large  = "large"  // more than 24
)

// SizeClasses lists the size classes in order.
var SizeClasses = []string{Small, Medium, Large}

// SizeClassOf returns the size class of an edit with the given number of
// changed lines.
func SizeClassOf(changed int) string {
	switch {
	case changed <= 7:
		return Small
	case changed <= 24:
		return Medium
	}
	return Large
}

// Change kinds of an edit: what it does to the file's lines.
const (
	AddDelete  = "add+delete"  // adds and removes lines
	AddOnly    = "add-only"    // only adds lines
	DeleteOnly = "delete-only" // only removes lines
)

// ChangeKinds lists the change kinds in order.
var ChangeKinds = []string{AddDelete, AddOnly, DeleteOnly}

// ChangeKindOf returns the change kind of an edit that adds and removes
// the given numbers of lines ("" for no change).
func ChangeKindOf(added, removed int) string {
	switch {
	case added > 0 && removed > 0:
		return AddDelete
	case added > 0:
		return AddOnly
	case removed > 0:
		return DeleteOnly
	}
	return ""
}

// Diff returns the row's edit in format f, "" when the row has none.
func (r *Row) Diff(f patch.Format) string {
	if p := r.diffField(f); p != nil {
		return *p
	}
	return ""
}

func (r *Row) diffField(f patch.Format) *string {
	switch f {
	case patch.UDiff:
		return &r.UDiff
	case patch.UDiffH:
		return &r.UDiffH
	case patch.UDiffL:
		return &r.UDiffL
	case patch.SearchReplace:
		return &r.SearchReplace
	case patch.V4A:
		return &r.V4A
	}
	return nil
}

// Load reads a dataset: a JSONL file (optionally gzipped), a Parquet file,
// or a directory of such files (read in name order, as the Hugging Face
// layout data/test-00000-of-00001.parquet splits them); see package
// dataset. The format is known by the file's first bytes, not its name. The rows are returned as read;
// see [Prepare].
func Load(path string) ([]*Row, error) {
	var rows []*Row
	err := eachSourceRow(path, func(r *Row, err error) error {
		if err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// RowError is a dataset row that cannot be used, with why.
type RowError struct {
	// Index is the row's position in the dataset (from 0) and ID its id.
	Index int
	ID    string
	Err   error
}

func (e RowError) Error() string {
	return fmt.Sprintf("dataset: row %d (id %q): %v", e.Index, e.ID, e.Err)
}

func (e RowError) Unwrap() error { return e.Err }

// Prepare completes rows for a run, in place, and fails on the first row
// that cannot be used (see [PrepareRows]).
func Prepare(rows []*Row) error {
	_, bad := PrepareRows(rows)
	if len(bad) > 0 {
		return bad[0]
	}
	return nil
}

// PrepareRows completes rows for a run, in place: a row without an id gets
// its index (from 0) as id; a row without a path gets "file"; counts of
// added and removed lines and hunks, and the size class, are computed where
// missing; and every format column that is empty is generated with the
// patch engine (see [MakeDiff]). A format that cannot express the row's
// edit is recorded in Row.NotApplicable. It returns the usable rows and,
// for each other row (an id already used, old_code equal to new_code), a
// RowError: one bad row never stops a run of the others.
func PrepareRows(rows []*Row) (kept []*Row, bad []RowError) {
	checker := rowChecker{}
	kept = make([]*Row, 0, len(rows))
	for i, r := range rows {
		if e := checker.check(i, r); e != nil {
			bad = append(bad, *e)
			continue
		}
		for _, f := range patch.Formats {
			fillFormat(r, f)
		}
		kept = append(kept, r)
	}
	return kept, bad
}

// MakeDiff returns the edit from old to new of the file at path, printed in
// format f. Formats without line numbers get hunks whose context is grown
// until each hunk can land only where it belongs when hunks are placed in
// order. Context is three lines, grown further where needed until both the
// strict engine and the tolerant one (package repair, which also considers
// places before the previous hunk) turn old into exactly new: an edit that
// only an order-aware reader could place is no fair reference.
func MakeDiff(path, old, new string, f patch.Format) (string, error) {
	var first string
	for _, context := range []int{patch.DefaultContext, 5, 8, 13, 21, 34} {
		opts := patch.DefaultMakeOptions()
		opts.Context = context
		opts.Unique = !f.HasPositions()
		fp := patch.Make(path, path, old, new, opts)
		s, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f)
		if err != nil {
			return "", fmt.Errorf("printing %s: %w", f, err)
		}
		if first == "" {
			first = s
		}
		if appliesExactly(s, f, path, old, new) {
			return s, nil
		}
	}
	return first, nil // strictly correct all the same
}

// appliesExactly reports whether the edit text turns old into new both
// strictly and with the tolerant engine.
func appliesExactly(text string, f patch.Format, path, old, new string) bool {
	p, err := patch.Parse(text, f, patch.DefaultParseOptions)
	if err != nil || len(p.Files) != 1 {
		return false
	}
	if got, _, err := patch.ApplyFile(old, p.Files[0], patch.ApplyOptions{}); err != nil || got != new {
		return false
	}
	res, err := repair.Repair(text, repair.Options{Format: f, Target: path, FS: patch.MapFS{path: old}})
	if err != nil || len(res.Results) != 1 {
		return false
	}
	return string(res.Results[0].Content) == new
}

// changedLines counts the inserted and deleted lines of fp.
func changedLines(fp *patch.FilePatch) (added, removed int) {
	for _, h := range fp.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case patch.LineInsert:
				added++
			case patch.LineDelete:
				removed++
			}
		}
	}
	return added, removed
}

// WriteJSONL writes rows as JSON lines to w.
func WriteJSONL(w io.Writer, rows []*Row) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// Languages orders the rows of the language tables: these first, in the
// paper's order, then any other by name.
var Languages = []string{"python", "javascript", "java", "kotlin", "rust", "go"}
