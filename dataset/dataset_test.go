package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/patchbench/patchbench/hfhub/hubtest"
)

type row struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

// bad is a bad row as a test states it: where, and a piece of the error.
type bad struct {
	Line, Row int
	Has       string
}

func gz(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

// TestForms reads every JSON form, well formed and with bad rows, into a
// struct: the rows in order, and each bad row with its line (or row).
func TestForms(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		opts       Options
		want       []row
		bad        []bad
		err        string // an error for the file as a whole
	}{
		{name: "jsonl", text: "{\"id\":\"a\",\"n\":1}\n\n{\"id\":\"b\"}\n", want: []row{{"a", 1}, {"b", 0}}},
		{name: "jsonl no final newline", text: "{\"id\":\"a\"}\n{\"id\":\"b\"}", want: []row{{"a", 0}, {"b", 0}}},
		{name: "array", text: " [{\"id\":\"a\"},\n{\"id\":\"b\",\"n\":2}]", want: []row{{"a", 0}, {"b", 2}}},
		{name: "array bad element", text: "[{\"id\":\"a\"}, 7, {\"id\":\"c\"}]", want: []row{{"a", 0}, {"c", 0}},
			bad: []bad{{0, 2, "cannot unmarshal number"}}},
		{name: "array syntax", text: "[{\"id\":\"a\"}, {", err: "unexpected EOF"},
		{name: "pretty objects", text: "{\n  \"id\": \"a\"\n}\n{\n  \"id\": \"b\"\n}\n", want: []row{{"a", 0}, {"b", 0}}},
		{name: "bad line", text: "{\"id\":\"a\"}\n{not json\n{\"id\":\"c\"}\n", want: []row{{"a", 0}, {"c", 0}},
			bad: []bad{{2, 2, "invalid character"}}},
		{name: "bad first line", text: "{oops\n{\"id\":\"b\"}\n", want: []row{{"b", 0}}, bad: []bad{{1, 1, "invalid character"}}},
		{name: "wrong type", text: "{\"id\":\"a\",\"n\":\"x\"}\n{\"id\":\"b\"}\n", want: []row{{"b", 0}},
			bad: []bad{{1, 1, "cannot unmarshal string"}}},
		{name: "not JSON", text: "hello\nworld\n", err: "line 1"},
		{name: "empty", text: ""},
		{name: "gzip", text: gz(t, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"), want: []row{{"a", 0}, {"b", 0}}},
		{name: "keyed", opts: Options{KeyField: "id"}, text: "{\"b\": {\"n\": 2}, \"a\": {\"n\": 1}}",
			want: []row{{"a", 1}, {"b", 2}}},
		{name: "keyed pretty", opts: Options{KeyField: "id"}, text: "{\n \"b\": {\"n\": 2},\n \"a\": {\"n\": 1}\n}\n",
			want: []row{{"a", 1}, {"b", 2}}},
		// One row with the key field is a row, not a map of rows.
		{name: "one row", opts: Options{KeyField: "id"}, text: "{\"id\":\"a\",\"n\":1}\n", want: []row{{"a", 1}}},
		// Two objects of objects are two rows.
		{name: "not keyed", opts: Options{KeyField: "n"}, text: "{\"id\":\"a\"}\n{\"id\":\"b\"}\n", want: []row{{"a", 0}, {"b", 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.jsonl")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			rows, badRows, err := Read[row](path, tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and %q", err, path, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			var got []bad
			for _, e := range badRows {
				if e.File != path || !strings.HasPrefix(e.Error(), path+": ") {
					t.Errorf("bad row %v does not name %s", e, path)
				}
				b := bad{Line: e.Line, Row: e.Row}
				if strings.Contains(e.Err.Error(), tc.bad[min(len(got), len(tc.bad)-1)].Has) {
					b.Has = tc.bad[min(len(got), len(tc.bad)-1)].Has
				} else {
					b.Has = e.Err.Error()
				}
				got = append(got, b)
			}
			if diff := cmp.Diff(tc.bad, got); diff != "" {
				t.Errorf("bad rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParquetAndDirectory reads a directory of a Parquet shard and a JSON
// Lines shard in name order, into maps (values typed as stored) and into
// a struct; a Parquet row that does not decode is a bad row naming its
// file and row.
func TestParquetAndDirectory(t *testing.T) {
	dir := t.TempDir()
	pq, err := hubtest.Parquet([]map[string]any{
		{"id": "p1", "n": float64(3), "note": nil},
		{"id": "p2", "n": float64(4), "note": "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a-00000.parquet"), pq, 0o644)
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("{\"id\":\"j1\",\"n\":5}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("not data"), 0o644)

	maps, bad, err := Read[map[string]any](dir, Options{})
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	wantMaps := []map[string]any{
		{"id": "p1", "n": int64(3), "note": nil},
		{"id": "p2", "n": int64(4), "note": "x"},
		{"id": "j1", "n": float64(5)},
	}
	if diff := cmp.Diff(wantMaps, maps); diff != "" {
		t.Errorf("maps (-want +got):\n%s", diff)
	}
	rows, _, err := Read[row](dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]row{{"p1", 3}, {"p2", 4}, {"j1", 5}}, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	type strict struct {
		Note int `json:"note"`
	}
	_, badRows, err := Read[strict](filepath.Join(dir, "a-00000.parquet"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(badRows) != 1 || badRows[0].Row != 2 || badRows[0].Line != 0 ||
		!strings.HasSuffix(badRows[0].File, "a-00000.parquet") || !strings.Contains(badRows[0].Error(), "a-00000.parquet: row 2: ") {
		t.Errorf("bad rows %v, want row 2 of a-00000.parquet", badRows)
	}

	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o644)
	if _, _, err := Read[row](empty, Options{}); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("directory without data files: error %v", err)
	}
}

// TestParquetLists reads a list column as a list of its values, under the
// column's name, as SWE-bench's FAIL_TO_PASS is stored on the Hub.
func TestParquetLists(t *testing.T) {
	type listRow struct {
		ID    string   `parquet:"id"`
		Tests []string `parquet:"tests,list"`
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[listRow](&b)
	if _, err := w.Write([]listRow{{"a", []string{"t1", "t2"}}, {"b", nil}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	path := filepath.Join(t.TempDir(), "l.parquet")
	os.WriteFile(path, b.Bytes(), 0o644)
	got, _, err := Read[map[string]any](path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"id": "a", "tests": []any{"t1", "t2"}}, {"id": "b", "tests": []any{}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStopsOnCallerError: an error fn returns ends the read and comes back
// as it was.
func TestStopsOnCallerError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(path, []byte("{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n"), 0o644)
	stop := errors.New("stop")
	var seen []string
	err := Each(path, Options{}, func(r row, at Pos, _ error) error {
		seen = append(seen, r.ID)
		if at.Line == 2 {
			return stop
		}
		return nil
	})
	if err != stop || len(seen) != 2 {
		t.Errorf("err %v after %v, want stop after a, b", err, seen)
	}
}

// FuzzEachFrom: any text is read without a panic, and every row read or
// reported is at a line of the text.
func FuzzEachFrom(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"a\":2}", "[1,2]", "{\n\"x\": {}\n}", "{bad\n{}\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Count(text, "\n") + 1
		EachFrom(strings.NewReader(text), "f", Options{KeyField: "id"}, func(v json.RawMessage, at Pos, err error) error {
			if at.File != "f" || at.Line < 0 || at.Line > lines || at.Row < 1 {
				t.Fatalf("position %+v in a text of %d lines", at, lines)
			}
			return nil
		})
	})
}
