package swe

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/dataset"
)

// Instance is one dataset row in SWE-bench's schema. Only the fields the
// evaluation uses are kept.
type Instance struct {
	InstanceID string
	Repo       string // "owner/name"
	BaseCommit string
	// Patch is the gold patch; TestPatch adds or changes the tests.
	Patch, TestPatch string
	// FailToPass and PassToPass are test ids in the test runner's notation
	// ("tests/test_x.py::test_y" for pytest, "TestX" for go test).
	FailToPass, PassToPass []string
	// TestCmd is the instance's own test command, from a test_cmd or
	// test_command field, when the dataset has one.
	TestCmd string
	Version string
}

// Prediction is one row of a predictions file in SWE-bench's schema.
type Prediction struct {
	InstanceID string `json:"instance_id"`
	Model      string `json:"model_name_or_path"`
	// ModelPatch is nil when the file has null, which SWE-bench reports as
	// patch_is_None.
	ModelPatch *string `json:"model_patch"`
	// FullOutput is the model's raw answer, searched for an edit when
	// model_patch holds none.
	FullOutput string `json:"full_output,omitempty"`
}

// LoadDataset reads a dataset in SWE-bench's schema: JSON Lines, a JSON
// array, Parquet (as on Hugging Face) or a directory of such files (see
// package dataset); gzipped JSON is decompressed.
// FAIL_TO_PASS and PASS_TO_PASS may be lists or JSON-encoded strings of
// lists. Rows must have instance_id, repo and base_commit, and ids must be
// unique.
func LoadDataset(path string) ([]Instance, error) {
	insts, bad, err := ReadDataset(path)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return insts, err
}

// ReadDataset is [LoadDataset] that goes past bad rows: a row without
// instance_id, repo or base_commit, with a malformed field, a duplicate id
// or (in JSON Lines) a line that is not JSON is returned in bad, naming
// the file, the row and the id, and the other rows are read. err is for the
// file as a whole.
func ReadDataset(path string) (insts []Instance, bad []error, err error) {
	rows, bad, err := readRows(path)
	if err != nil {
		return nil, nil, err
	}
	insts = make([]Instance, 0, len(rows))
	seen := map[string]bool{}
	for i, m := range rows {
		inst, err := instanceOf(m)
		if err != nil {
			bad = append(bad, fmt.Errorf("swe: dataset %s: row %d%s: %w", path, i+1, idOf(m), err))
			continue
		}
		if seen[inst.InstanceID] {
			bad = append(bad, fmt.Errorf("swe: dataset %s: row %d: duplicate instance_id %q", path, i+1, inst.InstanceID))
			continue
		}
		seen[inst.InstanceID] = true
		insts = append(insts, inst)
	}
	return insts, bad, nil
}

// idOf says which instance a row is, for messages.
func idOf(m map[string]any) string {
	if id := str(m["instance_id"]); id != "" {
		return fmt.Sprintf(" (instance_id %q)", id)
	}
	return ""
}

// LoadPredictions reads predictions in SWE-bench's schema: JSON Lines,
// a JSON array, or a JSON object keyed by instance id (as SWE-bench accepts),
// or any other form package dataset reads.
// instance_id is required and must be unique.
func LoadPredictions(path string) ([]Prediction, error) {
	preds, bad, err := ReadPredictions(path)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return preds, err
}

// ReadPredictions is [LoadPredictions] that goes past bad rows (no
// instance_id, a duplicate, a JSON Lines line that is not JSON), returned
// in bad with the file and row.
func ReadPredictions(path string) (preds []Prediction, bad []error, err error) {
	rows, bad, err := readRows(path)
	if err != nil {
		return nil, nil, err
	}
	preds = make([]Prediction, 0, len(rows))
	seen := map[string]bool{}
	for i, m := range rows {
		p := Prediction{
			InstanceID: str(m["instance_id"]),
			Model:      str(m["model_name_or_path"]),
			FullOutput: str(m["full_output"]),
		}
		if v, ok := m["model_patch"]; ok && v != nil {
			s := str(v)
			p.ModelPatch = &s
		}
		if p.InstanceID == "" {
			bad = append(bad, fmt.Errorf("swe: predictions %s: row %d: no instance_id", path, i+1))
			continue
		}
		if seen[p.InstanceID] {
			bad = append(bad, fmt.Errorf("swe: predictions %s: row %d: %w %q", path, i+1, ErrDuplicatePrediction, p.InstanceID))
			continue
		}
		seen[p.InstanceID] = true
		preds = append(preds, p)
	}
	return preds, bad, nil
}

// ErrDuplicatePrediction is wrapped by the bad-row error of a prediction
// whose instance_id an earlier one has. Unlike other bad rows it stops an
// evaluation (exit 2): which of the two is the model's answer is unknown.
var ErrDuplicatePrediction = errors.New("duplicate instance_id")

// readRows reads a dataset's or a predictions file's rows, uninterpreted
// (see package dataset; an object keyed by instance id is SWE-bench's dict
// form). A row that is not JSON is returned in bad, naming its file and
// line.
func readRows(path string) ([]map[string]any, []error, error) {
	rows, badRows, err := dataset.Read[map[string]any](path, dataset.Options{KeyField: "instance_id"})
	if err != nil {
		return nil, nil, fmt.Errorf("swe: %w", err)
	}
	var bad []error
	for _, e := range badRows {
		bad = append(bad, fmt.Errorf("swe: %w", e))
	}
	return rows, bad, nil
}

// instanceOf converts a generic row.
func instanceOf(m map[string]any) (Instance, error) {
	inst := Instance{
		InstanceID: str(m["instance_id"]),
		Repo:       str(m["repo"]),
		BaseCommit: str(m["base_commit"]),
		Patch:      str(m["patch"]),
		TestPatch:  str(m["test_patch"]),
		Version:    str(m["version"]),
		TestCmd:    str(m["test_cmd"]),
	}
	if inst.TestCmd == "" {
		inst.TestCmd = str(m["test_command"])
	}
	var err error
	if inst.FailToPass, err = stringList(m["FAIL_TO_PASS"]); err != nil {
		return inst, fmt.Errorf("%s: FAIL_TO_PASS: %w", inst.InstanceID, err)
	}
	if inst.PassToPass, err = stringList(m["PASS_TO_PASS"]); err != nil {
		return inst, fmt.Errorf("%s: PASS_TO_PASS: %w", inst.InstanceID, err)
	}
	switch {
	case inst.InstanceID == "":
		return inst, errors.New("no instance_id")
	case inst.Repo == "":
		return inst, fmt.Errorf("%s: no repo", inst.InstanceID)
	case inst.BaseCommit == "":
		return inst, fmt.Errorf("%s: no base_commit", inst.InstanceID)
	}
	return inst, nil
}

// str returns a string field; other scalars are formatted, nil is empty.
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case float64, bool, int, int64, int32:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// stringList accepts a list of strings, a JSON-encoded list in a string, or
// nothing.
func stringList(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string, []byte:
		s := strings.TrimSpace(str(x))
		if s == "" {
			return nil, nil
		}
		var out []string
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			return nil, fmt.Errorf("not a JSON list of strings: %w", err)
		}
		return out, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("list element %v is not a string", e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected %T", v)
}
