package swe

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
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
// array, or Parquet (as on Hugging Face); ".gz" JSON is decompressed.
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
	rows, bad, err := readRowsLenient(path)
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
// a JSON array, or a JSON object keyed by instance id (as SWE-bench accepts).
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
	rows, bad, err := readJSONRowsLenient(path)
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

// readRowsLenient is ReadRows that, for JSON Lines, leaves out the lines
// that are not JSON (returned in bad) instead of failing.
func readRowsLenient(path string) ([]map[string]any, []error, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() || strings.HasSuffix(strings.ToLower(path), ".parquet") {
		rows, err := ReadRows(path)
		return rows, nil, err
	}
	return readJSONRowsLenient(path)
}

// readJSONRowsLenient reads like readJSONRows; when that fails on a JSON
// Lines file, it reads the file line by line and leaves out the lines
// that do not decode, naming them.
func readJSONRowsLenient(path string) ([]map[string]any, []error, error) {
	rows, err := readJSONRows(path)
	if err == nil {
		return rows, nil, nil
	}
	b, rerr := readMaybeGzip(path)
	if rerr != nil || bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		return nil, nil, err
	}
	var bad []error
	rows = nil
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if jerr := json.Unmarshal(line, &m); jerr != nil {
			bad = append(bad, fmt.Errorf("swe: %s: line %d: %w", path, i+1, jerr))
			continue
		}
		rows = append(rows, m)
	}
	if len(rows) == 0 {
		return nil, nil, err // not JSON Lines after all
	}
	return rows, bad, nil
}

// ReadRows reads the rows of a dataset file without interpreting them:
// JSON Lines, a JSON array or an object keyed by instance id (".gz"
// decompressed), or Parquet, or a directory of Parquet files (a split's
// shards, read in name order). Other benchmarks built on SWE-bench-schema
// datasets (loc build) read their files with it.
func ReadRows(path string) ([]map[string]any, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return readParquetDir(path)
	}
	if strings.HasSuffix(strings.ToLower(path), ".parquet") {
		return readParquet(path)
	}
	return readJSONRows(path)
}

// readJSONRows reads JSON objects from a JSON Lines file, a JSON array, or
// a single object whose values are all objects (a map keyed by id).
func readJSONRows(path string) ([]map[string]any, error) {
	b, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var rows []map[string]any
		if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, fmt.Errorf("swe: %s: %w", path, err)
		}
		return rows, nil
	}
	var rows []map[string]any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if err == io.EOF {
			break
		}
		if err != nil {
			line := 1 + bytes.Count(trimmed[:min(int(dec.InputOffset()), len(trimmed))], []byte("\n"))
			return nil, fmt.Errorf("swe: %s: line %d: %w", path, line, err)
		}
		rows = append(rows, m)
	}
	if len(rows) == 1 && rows[0]["instance_id"] == nil {
		// {"id": {...}, "id2": {...}}: SWE-bench's dict form.
		var keyed []map[string]any
		for k, v := range rows[0] {
			o, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("swe: %s: an object without instance_id", path)
			}
			if o["instance_id"] == nil {
				o["instance_id"] = k
			}
			keyed = append(keyed, o)
		}
		sortRows(keyed)
		return keyed, nil
	}
	return rows, nil
}

func sortRows(rows []map[string]any) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && str(rows[j]["instance_id"]) < str(rows[j-1]["instance_id"]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

func readMaybeGzip(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("swe: %w", err)
	}
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("swe: %s: %w", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("swe: %s: %w", path, err)
		}
	}
	return b, nil
}

// readParquetDir reads the *.parquet files of dir in name order.
func readParquetDir(dir string) ([]map[string]any, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		return nil, fmt.Errorf("swe: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("swe: %s: a directory without .parquet files", dir)
	}
	sort.Strings(names)
	var rows []map[string]any
	for _, name := range names {
		r, err := readParquet(name)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// readParquet reads every row of a Parquet file into generic rows: a
// top-level column becomes a string (or nil when null), a list column (a
// leaf below the top level) a list of strings.
func readParquet(path string) ([]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("swe: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("swe: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("swe: parquet %s: %w", path, err)
	}
	cols := pf.Schema().Columns()
	r := parquet.NewReader(pf)
	defer r.Close()
	var out []map[string]any
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			m := map[string]any{}
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(cols) || len(cols[c]) == 0 {
					continue
				}
				name := cols[c][0]
				if len(cols[c]) == 1 {
					m[name] = parquetValue(v)
					continue
				}
				list, _ := m[name].([]any)
				if list == nil {
					list = []any{}
				}
				if !v.IsNull() {
					list = append(list, parquetValue(v))
				}
				m[name] = list
			}
			out = append(out, m)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("swe: parquet %s: %w", path, err)
		}
	}
	return out, nil
}

func parquetValue(v parquet.Value) any {
	switch {
	case v.IsNull():
		return nil
	case v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray:
		return string(v.ByteArray())
	}
	return v.String()
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
