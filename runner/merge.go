package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/internal/resultsfile"
	"github.com/patchbench/patchbench/llm/cache"
)

// RunFile is the file of a run directory that records what the run was
// asked to do. Every benchmark writes it; a sharded run records its shard
// in the field "shard".
const RunFile = "run.json"

// MergeOptions configure [Merge].
type MergeOptions struct {
	// Dirs are the run directories of the shards.
	Dirs []string
	// Out is the directory the merged run is written to. It must be
	// missing or empty.
	Out string
	// ResultsFile is the name of the results file in each directory.
	ResultsFile string
	// Ignore names run.json fields that may differ between the shards of
	// one run besides "shard" (such as a start time or the shard's own
	// output directory).
	Ignore []string
	// Cache, when set, is the name of the response cache file in each run
	// directory (CacheFile): the shards' caches present are merged into
	// one in the merged run, so that rerunning the whole run asks nothing.
	Cache string
	// Finish, when set, completes the merged run in a directory holding
	// the merged results file and run.json (for example by writing its
	// report). It may edit info, which is then written as run.json.
	Finish func(dir string, info map[string]any) error
}

// MergeSummary says what Merge did.
type MergeSummary struct {
	// Shards is the number of shards merged and Rows the number of rows
	// (one per case) in the merged results file.
	Shards, Rows int
	// Caches is the number of shard caches merged, CachedResponses the
	// responses the merged cache holds from them, and CacheDiffering the
	// keys two shards answered differently (the first answer is kept).
	Caches, CachedResponses, CacheDiffering int
}

// Merge unions the results of the shards of one run into a run directory
// as if the run had not been split: one row per case key, in key order,
// and the shards' run.json without the shard. It refuses, writing nothing,
// shards whose run.json differ in anything but the shard and the Ignore
// fields, a set of shards with one missing or given twice (naming it), a
// row whose key belongs to another shard (naming the case): overlapping
// shards, a shard another process holds (still running), and a shard
// whose results hold fewer cases than its run selected (see [PlanFile]:
// killed or stopped before its end).
func Merge(o MergeOptions) (MergeSummary, error) {
	var sum MergeSummary
	if len(o.Dirs) == 0 {
		return sum, errors.New("merge: no run directories")
	}
	if o.Out == "" {
		return sum, errors.New("merge: no output directory")
	}
	outOpts := DirOptions{ResultsFile: o.ResultsFile, New: true}
	if err := CheckDir(o.Out, outOpts); err != nil {
		return sum, fmt.Errorf("merge: %w", err)
	}
	ignore := append([]string{"shard", "started"}, o.Ignore...)
	var first map[string]any
	var firstComparable []byte
	shards := map[int]string{}
	count := 0
	// The rows stay in the shards' files: merge keeps, for each case,
	// where its line is and a hash of it, and at the end copies the lines
	// as they are (the key first, as the runner writes them, so readers
	// take it without decoding the row) in key order. 100,000 rows of any
	// size take the memory of their keys. A case is in one shard only: it
	// belongs to the shard its key hashes to, and a shard given twice is
	// refused, so two rows of one case cannot meet.
	type place struct {
		dir int
		off int64
		n   int
		raw keyHash // of the line, to see it unchanged when copied
	}
	rows := map[string]place{}
	total := 0 // cases of the whole run, -1 when a shard did not record its plan
	for di, dir := range o.Dirs {
		// A shard another process still writes has not all its rows yet:
		// merging it would make a run that looks whole and is not.
		if err := CheckIdle(dir, "merge it when its run has ended"); err != nil {
			return sum, fmt.Errorf("merge: %w", err)
		}
		info, err := readInfo(dir)
		if err != nil {
			return sum, err
		}
		sh, err := ParseShardEnv(stringOf(info["shard"]), func(string) string { return "" })
		if err != nil {
			return sum, fmt.Errorf("merge: %s: %w", filepath.Join(dir, RunFile), err)
		}
		if sh == (Shard{}) {
			sh = Shard{1, 1}
		}
		cmp, err := comparable(info, ignore)
		if err != nil {
			return sum, fmt.Errorf("merge: %s: %w", dir, err)
		}
		if first == nil {
			// An input identified by its hash (NAME_sha256) may lie at
			// another path (NAME) in each shard, as a resume may move it.
			for k := range info {
				if name, ok := strings.CutSuffix(k, "_sha256"); ok {
					ignore = append(ignore, name)
				}
			}
			if cmp, err = comparable(info, ignore); err != nil {
				return sum, fmt.Errorf("merge: %s: %w", dir, err)
			}
			first, firstComparable, count = info, cmp, sh.Count
		} else {
			if !bytes.Equal(cmp, firstComparable) {
				return sum, fmt.Errorf("merge: %s and %s are not shards of one run: their %s differ in %s",
					o.Dirs[0], dir, RunFile, strings.Join(differing(first, info, ignore), ", "))
			}
			if sh.Count != count {
				return sum, fmt.Errorf("merge: %s is shard %s but %s is of %d shards", dir, sh, o.Dirs[0], count)
			}
		}
		if prev, dup := shards[sh.Index]; dup {
			return sum, fmt.Errorf("merge: shard %s given twice: %s and %s", sh, prev, dir)
		}
		shards[sh.Index] = dir
		plan, planned, err := readPlan(dir)
		if err != nil {
			return sum, fmt.Errorf("merge: %w", err)
		}
		keys, err := resultsfile.EachLine(filepath.Join(dir, o.ResultsFile), func(key string, line []byte, off int64) error {
			if !sh.Contains(key) {
				return fmt.Errorf("case %q does not belong to shard %s", key, sh)
			}
			rows[key] = place{dir: di, off: off, n: len(line), raw: hashKey(string(line))}
			return nil
		})
		if err != nil {
			return sum, fmt.Errorf("merge: %s: %w", dir, err)
		}
		// A shard killed or stopped before its end looks like a run; its
		// missing cases would make a merged run that looks whole.
		if planned && keys < plan.Selected {
			return sum, fmt.Errorf("merge: %s (shard %s) holds %d of its %d cases: its run did not finish; continue it with --resume, then merge",
				dir, sh, keys, plan.Selected)
		}
		if planned && total >= 0 {
			total += plan.Selected
		} else {
			total = -1
		}
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if _, ok := shards[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return sum, fmt.Errorf("merge: missing shard %s (JOB_COMPLETION_INDEX %s)", strings.Join(missing, ", "), indexesOf(missing))
	}

	// Everything is checked; take Out (locked, as every run directory
	// is while written), write into a temporary directory beside it and
	// move the files in, so that a failure leaves nothing behind.
	out, err := OpenDir(o.Out, outOpts)
	if err != nil {
		return sum, fmt.Errorf("merge: %w", err)
	}
	defer out.Release()
	done := false
	defer func() {
		if !done && out.Created {
			os.RemoveAll(o.Out)
		}
	}()
	parent := filepath.Dir(filepath.Clean(o.Out))
	tmp, err := os.MkdirTemp(parent, ".merge-*")
	if err != nil {
		return sum, fmt.Errorf("merge: %w", err)
	}
	defer os.RemoveAll(tmp)
	files := make([]*os.File, len(o.Dirs))
	for i, dir := range o.Dirs {
		if files[i], err = os.Open(filepath.Join(dir, o.ResultsFile)); err != nil {
			return sum, fmt.Errorf("merge: %w", err)
		}
		defer files[i].Close()
	}
	err = atomicfile.WriteFunc(filepath.Join(tmp, o.ResultsFile), 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var line []byte
		for _, k := range slices.Sorted(maps.Keys(rows)) {
			p := rows[k]
			line = slices.Grow(line[:0], p.n)[:p.n]
			if _, err := files[p.dir].ReadAt(line, p.off); err != nil {
				return fmt.Errorf("%s: case %q: %w", o.Dirs[p.dir], k, err)
			}
			if hashKey(string(line)) != p.raw {
				return fmt.Errorf("%s: case %q changed during the merge", o.Dirs[p.dir], k)
			}
			bw.Write(line)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
	if err != nil {
		return sum, fmt.Errorf("merge: %w", err)
	}
	if o.Cache != "" {
		if err := mergeCaches(o, tmp, &sum); err != nil {
			return sum, err
		}
	}
	if total >= 0 {
		if err := writePlan(tmp, planInfo{Selected: total}); err != nil {
			return sum, fmt.Errorf("merge: %w", err)
		}
	}
	delete(first, "shard")
	if err := writeInfo(tmp, first); err != nil {
		return sum, err
	}
	if o.Finish != nil {
		if err := o.Finish(tmp, first); err != nil {
			return sum, fmt.Errorf("merge: %w", err)
		}
		if err := writeInfo(tmp, first); err != nil {
			return sum, err
		}
	}
	// run.json last: a directory with it is a whole run.
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return sum, fmt.Errorf("merge: %w", err)
	}
	slices.SortStableFunc(ents, func(a, b os.DirEntry) int {
		return cmpBool(a.Name() == RunFile, b.Name() == RunFile)
	})
	for _, e := range ents {
		if err := os.Rename(filepath.Join(tmp, e.Name()), filepath.Join(o.Out, e.Name())); err != nil {
			return sum, fmt.Errorf("merge: %w", err)
		}
	}
	done = true
	sum.Shards, sum.Rows = count, len(rows)
	return sum, nil
}

// mergeCaches merges the response caches of the run directories into
// dir/o.Cache.
func mergeCaches(o MergeOptions, dir string, sum *MergeSummary) error {
	ctx := context.Background()
	var store *cache.Store
	for _, d := range o.Dirs {
		path := filepath.Join(d, o.Cache)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if store == nil {
			var err error
			if store, err = cache.Open(ctx, filepath.Join(dir, o.Cache)); err != nil {
				return fmt.Errorf("merge: %w", err)
			}
		}
		added, differing, err := store.Merge(ctx, path)
		if err != nil {
			store.Close()
			return fmt.Errorf("merge: %w", err)
		}
		sum.Caches++
		sum.CachedResponses += added
		sum.CacheDiffering += differing
	}
	if store == nil {
		return fmt.Errorf("merge: --cache: no run directory has a %s", o.Cache)
	}
	return store.Close()
}

// indexesOf turns "i/n" shards into the Job's completion indexes (i-1).
func indexesOf(shards []string) string {
	var out []string
	for _, s := range shards {
		var i, n int
		fmt.Sscanf(s, "%d/%d", &i, &n)
		out = append(out, fmt.Sprint(i-1))
	}
	return strings.Join(out, ", ")
}

// ReadRunInfo reads run.json of the run directory dir as a JSON object.
func ReadRunInfo(dir string) (map[string]any, error) { return readInfo(dir) }

func readInfo(dir string) (map[string]any, error) {
	path := filepath.Join(dir, RunFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("merge: %s is not a run directory: %w", dir, err)
	}
	var info map[string]any
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("merge: %s: %w", path, err)
	}
	return info, nil
}

func writeInfo(dir string, info map[string]any) error {
	if err := WriteRunInfo(dir, info); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// WriteRunInfo writes info as dir/run.json (indented JSON), atomically.
func WriteRunInfo(dir string, info any) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", RunFile, err)
	}
	return atomicfile.Write(filepath.Join(dir, RunFile), append(b, '\n'), 0o644)
}

// comparable returns info without the ignored fields, encoded canonically
// (encoding/json sorts map keys).
func comparable(info map[string]any, ignore []string) ([]byte, error) {
	m := make(map[string]any, len(info))
	for k, v := range info {
		if !slices.Contains(ignore, k) {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// differing names the fields in which a and b differ.
func differing(a, b map[string]any, ignore []string) []string {
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range []map[string]any{a, b} {
			for k := range m {
				if !seen[k] && !yield(k) {
					return
				}
				seen[k] = true
			}
		}
	}) {
		if slices.Contains(ignore, k) {
			continue
		}
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if !bytes.Equal(x, y) {
			out = append(out, k)
		}
	}
	return out
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
