// Package dataset reads the rows of a benchmark's dataset into values of
// any type: JSON Lines, a JSON array, a JSON object keyed by id, any of
// them gzipped, Parquet, or a directory of such files (a split's shards,
// read in name order). A row that cannot be read is reported with its file
// and line (or row), and the other rows are read.
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Options configure a read.
type Options struct {
	// KeyField names the field that identifies a row. When set, a JSON
	// file that is a single object without that field, whose values are
	// all objects, is read as rows keyed by id (SWE-bench's dict form):
	// each value is a row, its key the field when the row has none, in
	// the order of the field.
	KeyField string
}

// Pos is where a row is: its file, its first line in a JSON file (0 in
// Parquet and in a JSON array) and its position in the file, from 1.
type Pos struct {
	File string
	Line int
	Row  int
}

// N is the row's line when it has one, else its position: what a message
// about the row calls it.
func (p Pos) N() int {
	if p.Line > 0 {
		return p.Line
	}
	return p.Row
}

func (p Pos) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s: line %d", p.File, p.Line)
	}
	return fmt.Sprintf("%s: row %d", p.File, p.Row)
}

// RowError is a row that cannot be read as a row (a line that is not
// JSON, a value that does not decode into the row type).
type RowError struct {
	Pos
	Err error
}

func (e *RowError) Error() string { return e.Pos.String() + ": " + e.Err.Error() }

func (e *RowError) Unwrap() error { return e.Err }

// Each calls fn with each row of the dataset at path, decoded into a T, in
// order, with where it is. A row that cannot be decoded is passed as a
// zero T with a *RowError, and the read goes on; an error fn returns stops
// the read and is returned. JSON files are read a row at a time, Parquet a
// file at a time. Other errors concern the dataset as a whole (a file that
// cannot be opened or is not JSON at all, a directory without dataset
// files) and name the file.
func Each[T any](path string, opts Options, fn func(row T, at Pos, err error) error) error {
	files, err := Files(path)
	if err != nil {
		return err
	}
	for _, name := range files {
		if err := eachFile(name, opts, fn); err != nil {
			return err
		}
	}
	return nil
}

// Read is [Each] that collects the rows, and the rows that cannot be read
// in bad.
func Read[T any](path string, opts Options) (rows []T, bad []*RowError, err error) {
	err = Each(path, opts, func(row T, _ Pos, rerr error) error {
		if rerr != nil {
			bad = append(bad, rerr.(*RowError))
			return nil
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return rows, bad, nil
}

// dataSuffixes are the names a directory's dataset files have.
var dataSuffixes = []string{".parquet", ".jsonl", ".jsonl.gz", ".json", ".json.gz"}

// Files lists the files of the dataset at path: path itself, or the
// dataset files (.parquet, .jsonl, .json, gzipped or not) directly in the
// directory path, in name order.
func Files(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path) // in name order
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		if !e.IsDir() && slices.ContainsFunc(dataSuffixes, func(s string) bool { return strings.HasSuffix(name, s) }) {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: a directory without .parquet, .jsonl or .json files", path)
	}
	return files, nil
}

func eachFile[T any](name string, opts Options, fn func(T, Pos, error) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(4); bytes.Equal(head, []byte("PAR1")) {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		return eachParquet(f, st.Size(), name, fn)
	}
	return eachFrom(br, name, opts, fn)
}

// EachFrom is [Each] of a JSON text, gzipped or not, read from r; name is
// the file that rows' positions name.
func EachFrom[T any](r io.Reader, name string, opts Options, fn func(row T, at Pos, err error) error) error {
	return eachFrom(bufio.NewReaderSize(r, 1<<20), name, opts, fn)
}

func eachFrom[T any](br *bufio.Reader, name string, opts Options, fn func(T, Pos, error) error) error {
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	return eachJSON(br, name, opts, func(raw []byte, at Pos) error {
		var row T
		if err := json.Unmarshal(raw, &row); err != nil {
			var zero T
			return fn(zero, at, &RowError{at, err})
		}
		return fn(row, at, nil)
	})
}

// eachJSON calls emit with each JSON value of r: the elements of an array,
// else one value a line. A file whose first line is not a whole value is
// read as a stream of values across lines (pretty-printed objects); when
// that fails too, line by line with the bad lines reported.
func eachJSON(br *bufio.Reader, name string, opts Options, emit func(raw []byte, at Pos) error) error {
	first, err := firstByte(br)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if first == '[' {
		return eachArrayElem(br, name, emit)
	}
	k := keyed{opts: opts, name: name, emit: emit}
	row := 0
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("%s: %w", name, rerr)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if row == 0 && !json.Valid(line) {
				// Not JSON Lines: perhaps a value across lines.
				rest, err := io.ReadAll(br)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				return eachDocument(append(line, rest...), lineNo, name, k)
			}
			row++
			at := Pos{File: name, Line: lineNo, Row: row}
			if err := k.add(line, at); err != nil {
				return err
			}
		}
		if rerr != nil { // io.EOF
			return k.flush()
		}
	}
}

// eachDocument reads text (starting at line firstLine of the file) as a
// stream of JSON values; when it is not one, line by line.
func eachDocument(text []byte, firstLine int, name string, k keyed) error {
	var vals []json.RawMessage
	var ats []Pos
	dec := json.NewDecoder(bytes.NewReader(text))
	for {
		start := int(dec.InputOffset())
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			return eachLine(text, firstLine, name, k)
		}
		skip := start + len(text[start:]) - len(bytes.TrimLeft(text[start:], " \t\r\n"))
		line := firstLine + bytes.Count(text[:skip], []byte("\n"))
		vals = append(vals, v)
		ats = append(ats, Pos{File: name, Line: line, Row: len(vals)})
	}
	for i, v := range vals {
		if err := k.add(v, ats[i]); err != nil {
			return err
		}
	}
	return k.flush()
}

// eachLine reads text one value a line, the lines that are not JSON
// reported as bad rows. A text none of whose lines is JSON is not JSON
// Lines: an error for the file.
func eachLine(text []byte, firstLine int, name string, k keyed) error {
	var good int
	lines := bytes.Split(text, []byte("\n"))
	for _, l := range lines {
		if json.Valid(l) && len(bytes.TrimSpace(l)) > 0 {
			good++
		}
	}
	if good == 0 {
		var v json.RawMessage
		err := json.Unmarshal(text, &v)
		if err == nil {
			err = errors.New("not a JSON value")
		}
		return fmt.Errorf("%s: line %d: %w", name, firstLine, err)
	}
	row := 0
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		row++
		at := Pos{File: name, Line: firstLine + i, Row: row}
		if err := k.add(l, at); err != nil {
			return err
		}
	}
	return k.flush()
}

func eachArrayElem(br *bufio.Reader, name string, emit func([]byte, Pos) error) error {
	dec := json.NewDecoder(br)
	if _, err := dec.Token(); err != nil { // [
		return fmt.Errorf("%s: %w", name, err)
	}
	for row := 1; dec.More(); row++ {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: row %d: %w", name, row, err)
		}
		if err := emit(v, Pos{File: name, Row: row}); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ]
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func firstByte(br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, nil
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				return 0, nil
			}
			return 0, err
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, nil
		}
	}
}

// keyed passes rows on, holding the first back until a second comes: a
// file that is one object without the key field, of objects, is the
// keyed form, whose values are the rows.
type keyed struct {
	opts    Options
	name    string
	emit    func([]byte, Pos) error
	n       int
	held    []byte
	heldPos Pos
}

// add passes on a line or value; one that is not JSON is reported by its
// decode as a bad row, and rules out the keyed form.
func (k *keyed) add(raw []byte, at Pos) error {
	k.n++
	if k.opts.KeyField == "" {
		return k.emit(raw, at)
	}
	if k.n == 1 && json.Valid(raw) {
		k.held, k.heldPos = raw, at
		return nil
	}
	if k.held != nil {
		held := k.held
		k.held = nil
		if err := k.emit(held, k.heldPos); err != nil {
			return err
		}
	}
	return k.emit(raw, at)
}

func (k *keyed) flush() error {
	if k.held == nil {
		return nil
	}
	held := k.held
	k.held = nil
	rows, ok := byKey(held, k.opts.KeyField)
	if !ok {
		return k.emit(held, k.heldPos)
	}
	for i, r := range rows {
		if err := k.emit(r, Pos{File: k.name, Row: i + 1}); err != nil {
			return err
		}
	}
	return nil
}

// byKey reads {"id": {...}, ...} as rows, the key set as field where a
// row has none, ordered by field; ok is false when raw is not of that
// form (an object with field, or with a value that is not an object).
func byKey(raw []byte, field string) (rows [][]byte, ok bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	if _, has := obj[field]; has {
		return nil, false
	}
	type keyedRow struct {
		id  string
		raw []byte
	}
	var krs []keyedRow
	for key, v := range obj {
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) != nil || m == nil {
			return nil, false
		}
		id := key
		if fv, has := m[field]; has {
			var s string
			if json.Unmarshal(fv, &s) == nil {
				id = s
			}
		} else {
			kb, _ := json.Marshal(key)
			m[field] = kb
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, false
		}
		krs = append(krs, keyedRow{id, b})
	}
	slices.SortStableFunc(krs, func(a, b keyedRow) int { return strings.Compare(a.id, b.id) })
	for _, kr := range krs {
		rows = append(rows, kr.raw)
	}
	return rows, true
}
