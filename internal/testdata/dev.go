// Package testdata loads the development corpora for tests: the large ones
// in ../shared/data beside the checkout when they are there, else the small
// ones in the repository's testdata/corpus (scripts/make-corpus.py builds
// them from the repository's own history), so that the tests run in a bare
// clone.
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

// SharedDir returns ../shared/data relative to the repository root. When
// $PATCHBENCH_CORPUS is "testdata" it returns a directory that does not
// exist, so that every test runs as in a bare clone, those that look in
// the shared directory themselves included (CI runs the tests so once
// more).
func SharedDir() string {
	if os.Getenv("PATCHBENCH_CORPUS") == "testdata" {
		return filepath.Join(CorpusDir(), "no-shared-data-with-PATCHBENCH_CORPUS=testdata")
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
}

// CorpusDir returns the repository's testdata/corpus.
func CorpusDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpus")
}

// Path returns the corpus file name: in the shared data directory when it
// is there, else in the repository's testdata/corpus (always there when
// $PATCHBENCH_CORPUS is "testdata"). It logs which one,
// and skips the test, saying why, when neither has it.
func Path(t testing.TB, name string) string {
	t.Helper()
	for _, dir := range []string{SharedDir(), CorpusDir()} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			t.Logf("corpus: %s", p)
			return p
		}
	}
	t.Skipf("%s is neither in %s nor in %s", name, SharedDir(), CorpusDir())
	return ""
}

// LoadShared is [Load] of the shared data directory alone, for a test
// that needs what only the large corpus has (its languages, say): it skips,
// saying so, where that is absent.
func LoadShared[T any](t testing.TB, name string) []T {
	t.Helper()
	path := filepath.Join(SharedDir(), name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not found: this test needs the shared multi-language corpus", path)
	}
	rows, err := ReadJSONL[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Load reads the gzipped JSONL corpus file name ([Path]) into rows of
// type T.
func Load[T any](t testing.TB, name string) []T {
	t.Helper()
	path := Path(t, name)
	rows, err := ReadJSONL[T](path)
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
