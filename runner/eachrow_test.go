package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEachRowMatchesReadRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	data := `{"key":"a","v":1,"failed":true}
{"key":"b","v":2}

{"key":"a","v":3}
{"key":"c","v":4}
{"key":"b","v":5,"failed":true}
{"key":"d","v":`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]map[string]any{}
	for _, r := range want {
		byKey[r["key"].(string)] = r
	}
	var keys []string
	n, err := EachRow(path, func(row map[string]any) error {
		k := row["key"].(string)
		keys = append(keys, k)
		if !reflect.DeepEqual(row, byKey[k]) {
			t.Errorf("key %s: row %v, ReadRows has %v", k, row, byKey[k])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The last line (cut short) is dropped; each key once, last row wins,
	// in the order of the last lines.
	if n != 3 || !reflect.DeepEqual(keys, []string{"a", "c", "b"}) {
		t.Errorf("EachRow: %d rows, keys %v; want 3, [a c b]", n, keys)
	}
	if byKey["a"]["v"] != 3.0 || byKey["b"]["v"] != 5.0 {
		t.Errorf("ReadRows kept %v", want)
	}
}

func TestEachRowNamesBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(path, []byte("{\"key\":\"a\"}\nnot json\n{\"key\":\"b\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := EachRow(path, func(map[string]any) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v, want one naming line 2", err)
	}
}
