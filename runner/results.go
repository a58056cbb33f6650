package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/patchbench/patchbench/internal/resultsfile"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// state is what a results file says about the cases it records.
type state struct {
	// failed maps each recorded key to whether its last row failed.
	failed map[string]bool
	// rows is the number of whole rows.
	rows int
	// size is the length of the file's whole lines; a cut-short last line
	// starts there.
	size int64
	// missingNewline is set when the last row is whole but its newline was
	// cut off.
	missingNewline bool
}

// rowHead is the part of a row the runner reads back.
type rowHead struct {
	Key    *string `json:"key"`
	Failed bool    `json:"failed"`
}

// scanRows reads the lines of a results file from r and calls fn with each
// whole row. A last line without its newline is passed to fn when it is
// valid JSON and dropped otherwise: a killed writer can leave it cut short.
// Any other line that is not a JSON object with a key is an error naming
// the file (name) and line.
func scanRows(r io.Reader, name string, fn func(line []byte, head rowHead) error) (state, error) {
	st := state{failed: make(map[string]bool)}
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return st, fmt.Errorf("runner: reading %s: %w", name, err)
		}
		if len(line) == 0 {
			return st, nil
		}
		terminated := line[len(line)-1] == '\n'
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			if terminated {
				st.size += int64(len(line))
				continue
			}
			return st, nil // trailing blanks without a newline: drop them
		}
		var head rowHead
		perr := json.Unmarshal(body, &head)
		if perr == nil && head.Key == nil {
			perr = errors.New(`no "key" field`)
		}
		if perr != nil {
			if !terminated {
				return st, nil // cut short by a crash
			}
			return st, fmt.Errorf("runner: %s line %d: %w", name, lineNo, perr)
		}
		if fn != nil {
			if err := fn(body, head); err != nil {
				return st, fmt.Errorf("runner: %s line %d: %w", name, lineNo, err)
			}
		}
		st.failed[*head.Key] = head.Failed
		st.rows++
		st.size += int64(len(line))
		if !terminated {
			st.missingNewline = true
			return st, nil
		}
	}
}

// readState reads the results file at path without changing it. A missing
// file records nothing.
func readState(path string) (state, error) {
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return state{failed: map[string]bool{}}, nil
	}
	if err != nil {
		return state{}, fmt.Errorf("runner: %w", err)
	}
	defer f.Close()
	return scanRows(f, path, nil)
}

// ReadRows reads the results file at path and returns one row per key:
// when a key has several rows (a failed case run again with RetryFailed)
// the last one counts. Rows come in the order their keys first appear. A
// last line cut short by a killed run is ignored. JSON numbers decode as
// float64.
func ReadRows(path string) ([]map[string]any, error) {
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	defer f.Close()
	var rows []map[string]any
	index := make(map[string]int)
	_, err = scanRows(f, path, func(line []byte, head rowHead) error {
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			return err
		}
		if i, ok := index[*head.Key]; ok {
			rows[i] = row
			return nil
		}
		index[*head.Key] = len(rows)
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// EachRow calls fn with each row of the results file at path that ReadRows
// would return (the last row of each key), without holding more than one
// row: it reads the file twice, first for the keys, which it takes from
// the start of each line where the runner writes them (a whole-line decode
// only for a line it did not write). Rows come in the order of their last
// line. It returns the number of rows.
func EachRow(path string, fn func(row map[string]any) error) (int, error) {
	return resultsfile.EachRow(path, fn)
}

// keyHash and hashKey: see resultsfile.
type keyHash = resultsfile.KeyHash

var hashKey = resultsfile.HashKey

// SortRows orders rows (as ReadRows returns them) by key, so that whatever
// is computed from them does not depend on the order cases finished in or
// on how a run was split into shards.
func SortRows(rows []map[string]any) {
	slices.SortStableFunc(rows, func(a, b map[string]any) int {
		ka, _ := a["key"].(string)
		kb, _ := b["key"].(string)
		return strings.Compare(ka, kb)
	})
}

// resultsFile is a results file open for appending.
type resultsFile struct {
	f      *os.File
	path   string
	state  state
	closed bool
}

// openResults opens the results file at path for appending. With resume it
// reads what the file records and repairs a cut-short last line; without,
// the file must be missing or empty.
func openResults(path string, resume bool) (*resultsFile, error) {
	// Never through a symbolic link: a resume would append to its target.
	f, err := OpenNoFollow(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	rf := &resultsFile{f: f, path: path}
	st, err := scanRows(f, path, nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	rf.state = st
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runner: %w", err)
	}
	if !resume {
		if info.Size() > 0 {
			f.Close()
			return nil, fmt.Errorf("runner: %s already holds results (%d rows); resume it or choose another file", path, st.rows)
		}
		return rf, nil
	}
	repaired := false
	if info.Size() > st.size {
		if err := f.Truncate(st.size); err != nil {
			f.Close()
			return nil, fmt.Errorf("runner: dropping the cut-short last line of %s: %w", path, err)
		}
		repaired = true
	}
	if st.missingNewline {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, fmt.Errorf("runner: completing the last line of %s: %w", path, err)
		}
		repaired = true
	}
	if repaired {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("runner: %w", err)
		}
	}
	return rf, nil
}

// append writes whole rows with one write call and syncs the file.
func (rf *resultsFile) append(rows []byte) error {
	if _, err := rf.f.Write(rows); err != nil {
		return fmt.Errorf("runner: writing %s: %w", rf.path, err)
	}
	if err := rf.f.Sync(); err != nil {
		return fmt.Errorf("runner: syncing %s: %w", rf.path, err)
	}
	return nil
}

// close closes the file; later calls do nothing.
func (rf *resultsFile) close() error {
	if rf.closed {
		return nil
	}
	rf.closed = true
	if err := rf.f.Close(); err != nil {
		return fmt.Errorf("runner: closing %s: %w", rf.path, err)
	}
	return nil
}

// isReserved reports whether a row field belongs to the runner.
func isReserved(name string) bool {
	switch name {
	case "key", "id", "failed", "error", "elapsed_ms":
		return true
	}
	return false
}

// appendRow appends the results row of o, with its newline, to buf.
func appendRow(buf []byte, o outcome) ([]byte, error) {
	buf = append(buf, `{"key":`...)
	buf = appendString(buf, o.c.Key)
	buf = append(buf, `,"id":`...)
	buf = appendString(buf, o.c.ID)
	if o.res != nil {
		var err error
		buf, err = appendFields(buf, o.res)
		if err != nil {
			return buf, err
		}
	}
	buf = append(buf, `,"failed":`...)
	buf = strconv.AppendBool(buf, o.err != nil)
	if o.err != nil {
		buf = append(buf, `,"error":`...)
		buf = appendString(buf, o.err.Error())
	}
	buf = append(buf, `,"elapsed_ms":`...)
	buf = strconv.AppendInt(buf, o.elapsed.Milliseconds(), 10)
	buf = append(buf, "}\n"...)
	return buf, nil
}

// appendFields appends the fields of the JSON object res marshals to, each
// preceded by a comma.
func appendFields(buf []byte, res Result) ([]byte, error) {
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(res); err != nil {
		return buf, fmt.Errorf("encoding the result: %w", err)
	}
	dec := json.NewDecoder(&enc)
	tok, err := dec.Token()
	if err != nil {
		return buf, fmt.Errorf("encoding the result: %w", err)
	}
	if tok == nil {
		return buf, nil // a nil map or pointer: no fields
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return buf, fmt.Errorf("result %T is not a JSON object", res)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return buf, fmt.Errorf("encoding the result: %w", err)
		}
		name := tok.(string) // object keys are strings
		if isReserved(name) {
			return buf, fmt.Errorf("result %T uses the reserved field %q", res, name)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return buf, fmt.Errorf("encoding the result: %w", err)
		}
		buf = append(buf, ',')
		buf = appendString(buf, name)
		buf = append(buf, ':')
		buf = append(buf, value...)
	}
	return buf, nil
}

// appendString appends s as a JSON string.
func appendString(buf []byte, s string) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return append(buf, bytes.TrimRight(b.Bytes(), "\n")...)
}
