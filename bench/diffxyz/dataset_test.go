package diffxyz

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// hfRow is the Hugging Face schema as pyarrow writes it: every column
// optional (nullable), hyphens in names, no id.
type hfRow struct {
	Repo          string `parquet:"repo,optional"`
	Commit        string `parquet:"commit,optional"`
	Path          string `parquet:"path,optional"`
	Lang          string `parquet:"lang,optional"`
	License       string `parquet:"license,optional"`
	Message       string `parquet:"message,optional"`
	OldCode       string `parquet:"old_code,optional"`
	NewCode       string `parquet:"new_code,optional"`
	NAdded        int64  `parquet:"n_added,optional"`
	NRemoved      int64  `parquet:"n_removed,optional"`
	NHunks        int64  `parquet:"n_hunks,optional"`
	ChangeKind    string `parquet:"change_kind,optional"`
	UDiff         string `parquet:"udiff,optional"`
	UDiffH        string `parquet:"udiff-h,optional"`
	UDiffL        string `parquet:"udiff-l,optional"`
	SearchReplace string `parquet:"search-replace,optional"`
}

func TestLoadParquet(t *testing.T) {
	in := []hfRow{
		{Repo: "o/r", Commit: "c1", Path: "a.py", Lang: "python", OldCode: toyOld, NewCode: toyNew, NAdded: 2, NRemoved: 1, NHunks: 1,
			ChangeKind: "modify", UDiff: "U", UDiffH: "H", UDiffL: "L", SearchReplace: "S", License: "mit", Message: "fix"},
		{Repo: "o/r", Commit: "c2", Path: "b.py", Lang: "python", OldCode: "x\n", NewCode: "y\n"}, // nulls in most columns
	}
	path := filepath.Join(t.TempDir(), "test-00000-of-00001.parquet")
	if err := parquet.WriteFile(path, in); err != nil {
		t.Fatal(err)
	}
	rows, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Row{
		{Repo: "o/r", Commit: "c1", Path: "a.py", Lang: "python", License: "mit", Message: "fix", OldCode: toyOld, NewCode: toyNew,
			NAdded: 2, NRemoved: 1, NHunks: 1, ChangeKind: "modify", UDiff: "U", UDiffH: "H", UDiffL: "L", SearchReplace: "S"},
		{Repo: "o/r", Commit: "c2", Path: "b.py", Lang: "python", OldCode: "x\n", NewCode: "y\n"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// A directory of shards reads like the file.
	dirRows, err := Load(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, dirRows); diff != "" {
		t.Errorf("directory rows (-want +got):\n%s", diff)
	}
	// Ids are the row indexes; given columns are kept, missing ones made.
	if err := Prepare(rows); err != nil {
		t.Fatal(err)
	}
	if rows[0].ID != "0" || rows[1].ID != "1" {
		t.Errorf("ids %q, %q; want 0, 1", rows[0].ID, rows[1].ID)
	}
	if rows[0].UDiffH != "H" || rows[0].V4A == "" || rows[1].UDiffH == "" {
		t.Errorf("format columns not kept or not made: %+v", rows)
	}
	if rows[1].NAdded != 1 || rows[1].NRemoved != 1 || rows[1].SizeClass != Small {
		t.Errorf("counts of row 1: +%d -%d %s", rows[1].NAdded, rows[1].NRemoved, rows[1].SizeClass)
	}
}

func TestLoadJSONL(t *testing.T) {
	dir := t.TempDir()
	text := `{"id":"x1","path":"a.go","lang":"go","old_code":"a\n","new_code":"b\n","n_added":1,"n_removed":1,"extra":[1,2]}` + "\n\n" +
		`{"path":"b.go","lang":"go","old_code":"c\n","new_code":"d\n","size_class":"large","udiff-h":"given"}`
	plain := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(plain, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	zipped := filepath.Join(dir, "d.data") // the content decides, not the name
	if err := os.WriteFile(zipped, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, zipped} {
		rows, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].ID != "x1" || rows[1].UDiffH != "given" || rows[1].SizeClass != "large" {
			t.Fatalf("%s: rows %+v", path, rows)
		}
		if err := Prepare(rows); err != nil {
			t.Fatal(err)
		}
		if rows[1].ID != "1" || rows[1].SizeClass != "large" || rows[1].UDiffH != "given" {
			t.Errorf("%s: prepared row 1: %+v", path, rows[1])
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"id\":\"a\"}\n{not json\n"), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad JSON: error %v, want one naming line 2", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("missing file: no error")
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Load(empty); err == nil {
		t.Error("directory without data files: no error")
	}
	dup := []*Row{{ID: "a", OldCode: "1\n", NewCode: "2\n"}, {ID: "a", OldCode: "1\n", NewCode: "3\n"}}
	if err := Prepare(dup); err == nil || !strings.Contains(err.Error(), "same id") {
		t.Errorf("duplicate ids: error %v", err)
	}
	same := []*Row{{ID: "a", OldCode: "1\n", NewCode: "1\n"}}
	if err := Prepare(same); err == nil {
		t.Error("equal old and new: no error")
	}
}

// Every generated column turns old into new, strictly and tolerantly,
// including files without a final newline, with CRLF, and with repeated
// blocks where the first place of a hunk's lines is not its own.
func TestMakeDiffApplies(t *testing.T) {
	repeated := strings.Repeat("x := 1\ny := 2\nz := 3\n\n", 6)
	tests := []struct{ name, old, new string }{
		{"toy", toyOld, toyNew},
		{"no final newline", "a\nb\nc", "a\nB\nc"},
		{"newline added at end", "a\nb\nc", "a\nb\nc\n"},
		{"crlf", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"},
		{"repeated blocks", repeated, strings.Replace(repeated[:len(repeated)-1], "y := 2", "y := 20", 1) + "\n"},
		{"same change twice", repeated, strings.ReplaceAll(repeated, "y := 2", "y := 22")},
		{"to empty", "a\n", ""},
	}
	for _, tt := range tests {
		for _, f := range patch.Formats {
			d, err := MakeDiff("f.go", tt.old, tt.new, f)
			if err != nil {
				t.Errorf("%s/%s: %v", tt.name, f, err)
				continue
			}
			if !appliesExactly(d, f, "f.go", tt.old, tt.new) {
				p, _ := patch.Parse(d, f, patch.DefaultParseOptions)
				res, rerr := repair.Repair(d, repair.Options{Format: f, Target: "f.go", FS: patch.MapFS{"f.go": tt.old}})
				t.Errorf("%s/%s: does not apply exactly (parsed %v, repair %v %v):\n%s", tt.name, f, p != nil, res != nil, rerr, d)
			}
		}
	}
}
