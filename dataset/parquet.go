package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// eachParquet reads a Parquet file's rows (the whole file, as Parquet is
// stored by columns) and passes each on decoded into a T.
func eachParquet[T any](r io.ReaderAt, size int64, name string, fn func(T, Pos, error) error) error {
	rows, err := ReadParquet(r, size)
	if err != nil {
		return fmt.Errorf("parquet %s: %w", name, err)
	}
	for i := range rows {
		m := rows[i]
		rows[i] = nil // handed on: the file's rows are not all kept
		at := Pos{File: name, Row: i + 1}
		row, err := fromMap[T](m)
		if err != nil {
			var zero T
			if err := fn(zero, at, &RowError{at, err}); err != nil {
				return err
			}
			continue
		}
		if err := fn(row, at, nil); err != nil {
			return err
		}
	}
	return nil
}

// fromMap turns a generic row into a T: as it is for a map, else through
// JSON, as if the row had been a JSON line.
func fromMap[T any](m map[string]any) (T, error) {
	var row T
	if p, ok := any(&row).(*map[string]any); ok {
		*p = m
		return row, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return row, err
	}
	err = json.Unmarshal(b, &row)
	return row, err
}

// ReadParquet reads every row of a Parquet file into generic rows, column
// by name, so that any columns in any order are read: a top-level column
// becomes a string (byte arrays), an int64 (integers), a bool, a float or
// nil (null); a column below the top level (a list's elements) a list of
// its non-null values under the top-level name.
func ReadParquet(r io.ReaderAt, size int64) (rows []map[string]any, err error) {
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, err
	}
	cols := pf.Schema().Columns()
	defer func() {
		// The reader panics on data it cannot decode; report it as an error.
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("%v", p)
		}
	}()
	pr := parquet.NewReader(pf)
	defer pr.Close()
	buf := make([]parquet.Row, 64)
	for {
		n, rerr := pr.ReadRows(buf)
		for _, prow := range buf[:n] {
			m := make(map[string]any, len(prow))
			for _, v := range prow {
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
			rows = append(rows, m)
		}
		if errors.Is(rerr, io.EOF) {
			return rows, nil
		}
		if rerr != nil {
			return nil, rerr
		}
	}
}

func parquetValue(v parquet.Value) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		return int64(v.Int32())
	case parquet.Int64:
		return v.Int64()
	case parquet.Float:
		return v.Float()
	case parquet.Double:
		return v.Double()
	}
	return v.String()
}
