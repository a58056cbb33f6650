package loc

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/runner"
)

// TestRunDeterministic: the indexed search gives every case the same
// ranks, and writes the same index files, whatever the order the cases
// run in and the number of workers, cold each time, with the default
// signals and with every signal (the import graph is built per commit
// from the index the first case of that commit loads). The second commit
// holds a blob of the first under another path (the case that made one
// case's ranks 4-10 depend on the case run before it) and changes
// another file.
func TestRunDeterministic(t *testing.T) {
	gittest.Need(t)
	repos := filepath.Join(t.TempDir(), "repos")
	dir := filepath.Join(repos, "acme", "proj")
	files := map[string]string{
		"pkg/extractor/youtube.py": "class YoutubeIE:\n    def _real_extract(self, url):\n        return self._download_json(url)\n",
		"pkg/extractor/common.py": "class InfoExtractor:\n    def _download_json(self, url):\n" +
			strings.Repeat("        # formats missing when the video download fails, formats again\n", 20) + "        return url\n",
		"pkg/array/overlap.py":  "def map_overlap(x, depth):\n    return x\n\n\ndef trim(x):\n    return x\n",
		"pkg/array/core.py":     "def compute(x):\n    y = x + 1\n    return y\n\n\ndef persist(x):\n    return x\n",
		"pkg/array/chunks.py":   "def normalize(chunks):\n    # chunk smaller than overlap depth fails, chunk chunk\n    return chunks\n",
		"tests/test_overlap.py": "from pkg.array.overlap import map_overlap\n\n\ndef test_map_overlap():\n    map_overlap(1, 2)\n",
		"pkg/array/__init__.py": "from pkg.array.overlap import map_overlap, trim\nfrom .core import *\n",
		"pkg/__init__.py":       "from pkg import array\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "one"}, {"tag", "one"}} {
		if _, err := gittest.Run(t, dir, "", args...); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "pkg/array/core.py"), []byte("def compute(x):\n    # overlap depth chunk\n    return x * 2\n"), 0o644)
	for _, args := range [][]string{{"mv", "pkg/array/overlap.py", "pkg/array/ghost.py"}, {"add", "."}, {"commit", "-q", "-m", "two"}, {"tag", "two"}} {
		if _, err := gittest.Run(t, dir, "", args...); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{
		"map_overlap fails when a chunk is smaller than the overlap depth",
		"[youtube] formats missing: _download_json fails",
		"compute returns the wrong value in pkg/array/core.py",
		"trim drops the last chunk",
		"compute fails\n```python\nimport pkg.array as pa\npa.compute(pa.map_overlap(x, 1))\n```\nTraceback:\n  File \"pkg/array/chunks.py\", line 2, in normalize\n",
	}
	var cases []Case
	for _, commit := range []string{"one", "two"} {
		for i, q := range queries {
			cases = append(cases, Case{
				ID: commit + "-" + string(rune('a'+i)), Repo: "acme/proj", BaseCommit: commit, Query: q,
				GroundTruth: GroundTruth{Files: map[string]FileTruth{"pkg/array/core.py": {Ranges: []Range{{1, 2}}}}},
			})
		}
	}
	n := len(cases)
	type run struct {
		order   []int
		workers int
	}
	var runs []run
	for _, workers := range []int{1, 4, 3} {
		// The cases in order, reversed, and the two commits interleaved.
		orders := [][]int{make([]int, n), make([]int, n), nil}
		for j := range n {
			orders[0][j], orders[1][j] = j, n-1-j
			orders[2] = append(orders[2], (j%2)*(n/2)+j/2)
		}
		for _, o := range orders {
			runs = append(runs, run{o, workers})
		}
	}
	for _, signals := range []string{"", "all"} {
		var want map[string]json.RawMessage
		var wantIndex map[string]int64
		for i, r := range runs {
			var cs []Case
			for _, j := range r.order {
				cs = append(cs, cases[j])
			}
			out, idx := t.TempDir(), t.TempDir()
			if _, err := Run(context.Background(), RunOptions{Cases: cs, Repos: repos, Out: out, Mode: ModeIndexed, IndexDir: idx,
				Signals: signals, Runner: runner.Options{Workers: r.workers}}); err != nil {
				t.Fatalf("signals %q, run %d: %v", signals, i, err)
			}
			got, gotIndex := foundByID(t, filepath.Join(out, "results.jsonl")), fileSizes(t, idx)
			if i == 0 {
				want, wantIndex = got, gotIndex
				if len(want) != len(cases) {
					t.Fatalf("%d rows, want %d", len(want), len(cases))
				}
				continue
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("signals %q, order %v, %d workers: answers differ from the first run (-first +this):\n%s", signals, r.order, r.workers, diff)
			}
			if diff := cmp.Diff(wantIndex, gotIndex); diff != "" {
				t.Errorf("signals %q, order %v, %d workers: index files differ from the first run's (-first +this):\n%s", signals, r.order, r.workers, diff)
			}
		}
	}
}

// foundByID reads each row's answer of a results file.
func foundByID(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]json.RawMessage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var row struct {
			ID    string          `json:"id"`
			Found json.RawMessage `json:"found"`
			Error string          `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.Error != "" {
			t.Fatalf("%s failed: %s", row.ID, row.Error)
		}
		out[row.ID] = row.Found
	}
	return out
}

// fileSizes lists the files under dir with their sizes.
func fileSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || slices.Contains([]string{".lock"}, filepath.Ext(p)) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
