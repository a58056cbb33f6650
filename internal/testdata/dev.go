// Package testdata loads the shared development corpora for tests.
package testdata

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Triple is one row of diffxyz-dev.jsonl.gz.
type Triple struct {
	ID       string `json:"id"`
	Repo     string `json:"repo"`
	Commit   string `json:"commit"`
	Path     string `json:"path"`
	Lang     string `json:"lang"`
	OldCode  string `json:"old_code"`
	NewCode  string `json:"new_code"`
	UDiff    string `json:"udiff"`
	NAdded   int    `json:"n_added"`
	NRemoved int    `json:"n_removed"`
	NHunks   int    `json:"n_hunks"`
	Size     string `json:"size_class"`
}

// Malformed is one row of malformed-dev.jsonl.gz.
type Malformed struct {
	ID       string  `json:"id"`
	Family   string  `json:"family"`
	Path     string  `json:"path"`
	Lang     string  `json:"lang"`
	OldCode  string  `json:"old_code"`
	Patch    string  `json:"patch"`
	Expected *string `json:"expected"`
}

// SharedDir returns ../shared/data relative to the repository root.
func SharedDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
}

// Load reads a gzipped JSONL file from the shared data directory into rows
// of type T, skipping the test when the file is absent.
func Load[T any](t testing.TB, name string) []T {
	t.Helper()
	path := filepath.Join(SharedDir(), name)
	rows, err := ReadJSONL[T](path)
	if os.IsNotExist(err) {
		t.Skipf("%s not found: the shared corpus is not beside this checkout", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// ReadJSONL reads a gzipped JSONL file.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var rows []T
	for n := 1; sc.Scan(); n++ {
		var r T
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}
