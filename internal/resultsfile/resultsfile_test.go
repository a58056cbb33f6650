package resultsfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// EachLine gives the last line of each key as written, with its offset,
// without decoding it; a line that is not JSON is an error naming it, a
// last line cut short is not a row.
func TestEachLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	data := "{\"key\":\"a\",\"v\":1}\n{\"v\":2,\"key\":\"b\"}\n{\"key\":\"a\",\"v\":3}\n{\"key\":\"c\",\"v\""
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	n, err := EachLine(path, func(key string, line []byte, off int64) error {
		if data[off:off+int64(len(line))] != string(line) {
			t.Errorf("%s: offset %d does not hold the line", key, off)
		}
		got = append(got, key+"="+string(line))
		return nil
	})
	want := []string{`b={"v":2,"key":"b"}`, `a={"key":"a","v":3}`}
	if err != nil || n != 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("EachLine: %d, %v, %q; want 2 rows %q", n, err, got, want)
	}
	if err := os.WriteFile(path, []byte("{\"key\":\"a\"}\n{\"key\":\"b\",oops}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EachLine(path, func(string, []byte, int64) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken line: %v, want an error naming line 2", err)
	}
}
