package diffxyz

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/dataset"
	"github.com/patchbench/patchbench/patch"
)

// ErrDataset is wrapped by errors about the dataset as a whole (a file that
// cannot be read, no rows); a bad row is a [RowError] instead.
var ErrDataset = errors.New("dataset")

// eachSourceRow calls fn with each row of the dataset at path (see
// package dataset), read one at a time for JSON Lines (plain or gzipped)
// and a file at a time for Parquet. A line that is not a row is passed as
// a nil row with the error, naming its file and line: the caller records
// it and goes on.
func eachSourceRow(path string, fn func(r *Row, err error) error) error {
	var callErr error
	err := dataset.Each(path, dataset.Options{}, func(r Row, _ dataset.Pos, rerr error) error {
		if rerr != nil {
			callErr = fn(nil, rerr)
		} else {
			callErr = fn(&r, nil)
		}
		return callErr
	})
	if err != nil && err != callErr {
		return fmt.Errorf("%w: %w", ErrDataset, err)
	}
	return err
}

// rowChecker holds what the checks of a dataset's rows need across rows:
// the ids seen.
type rowChecker map[string]int

// check gives row i (from 0) its id when it has none and refuses an id
// seen before or an edit that changes nothing; a usable row is completed
// (see prepareRow).
func (seen rowChecker) check(i int, r *Row) *RowError {
	if r.ID == "" {
		r.ID = strconv.Itoa(i)
	}
	if j, dup := seen[r.ID]; dup {
		return &RowError{i, r.ID, fmt.Errorf("row %d has the same id", j)}
	}
	seen[r.ID] = i
	if len(r.Missing) > 0 {
		return &RowError{i, r.ID, fmt.Errorf("no %s: the row cannot be scored", strings.Join(r.Missing, " and no "))}
	}
	if r.OldCode == r.NewCode {
		return &RowError{i, r.ID, errors.New("old_code and new_code are equal")}
	}
	prepareRow(r)
	return nil
}

// fillFormat makes r's edit in format f when the dataset did not give it,
// and says why the row cannot be written in f ("" when it can).
func fillFormat(r *Row, f patch.Format) string {
	if why, ok := r.NotApplicable[f]; ok {
		return why
	}
	p := r.diffField(f)
	if *p != "" {
		return ""
	}
	d, err := MakeDiff(r.Path, r.OldCode, r.NewCode, f)
	if err != nil {
		if r.NotApplicable == nil {
			r.NotApplicable = map[patch.Format]string{}
		}
		r.NotApplicable[f] = err.Error()
		return err.Error()
	}
	*p = d
	return ""
}

// prepareRow completes one row for a run, as [PrepareRows] does, except the
// format columns, which [rowStore] makes when a case needs them.
func prepareRow(r *Row) {
	if r.Path == "" {
		r.Path = "file"
	}
	if r.NAdded == 0 && r.NRemoved == 0 {
		fp := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, patch.DefaultMakeOptions())
		r.NAdded, r.NRemoved = changedLines(fp)
		r.NHunks = len(fp.Hunks)
	}
	if r.SizeClass == "" {
		r.SizeClass = SizeClassOf(r.NAdded + r.NRemoved)
	}
	if r.ChangeKind == "" {
		r.ChangeKind = ChangeKindOf(r.NAdded, r.NRemoved)
	}
}

// rowStore keeps a run's rows in a temporary file, one JSON line each, and
// reads a row back when a case of it is due, so that a run holds the rows
// in flight, not the dataset. The rows most recently used stay decoded,
// with the format columns their cases made; cases come row by row, so a
// row is read about once.
type rowStore struct {
	f    *os.File
	offs []int64 // line i starts at offs[i] and ends at offs[i+1]

	mu    sync.Mutex
	cache map[int]*list.Element
	lru   *list.List // of *storedRow, most recent first
	max   int
}

type storedRow struct {
	index int
	ready sync.WaitGroup // done when row or err is set
	row   *Row
	err   error
	users int

	mu sync.Mutex // guards the row's format columns and NotApplicable
}

// newRowStore makes the store in dir, keeping up to max rows decoded (and
// more while cases use them).
func newRowStore(dir string, max int) (*rowStore, error) {
	f, err := os.CreateTemp(dir, ".rows-*.jsonl")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // unlinked: gone when closed, even after a crash
	return &rowStore{f: f, offs: []int64{0}, cache: map[int]*list.Element{}, lru: list.New(), max: max}, nil
}

// add appends a row; rows are numbered from 0 in the order added.
func (s *rowStore) add(r *Row) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := s.f.WriteAt(b, s.offs[len(s.offs)-1]); err != nil {
		return err
	}
	s.offs = append(s.offs, s.offs[len(s.offs)-1]+int64(len(b)))
	return nil
}

func (s *rowStore) close() error { return s.f.Close() }

// get returns row i, decoded, and a function to call when done with it.
func (s *rowStore) get(i int) (*storedRow, func(), error) {
	s.mu.Lock()
	var e *storedRow
	if el, ok := s.cache[i]; ok {
		e = el.Value.(*storedRow)
		s.lru.MoveToFront(el)
		e.users++
		s.mu.Unlock()
		e.ready.Wait()
	} else {
		e = &storedRow{index: i, users: 1}
		e.ready.Add(1)
		s.cache[i] = s.lru.PushFront(e)
		s.evict()
		s.mu.Unlock()
		e.row, e.err = s.read(i)
		e.ready.Done() // (close, the builtin, is shadowed in this package)
	}
	release := func() {
		s.mu.Lock()
		e.users--
		s.evict()
		s.mu.Unlock()
	}
	if e.err != nil {
		release()
		return nil, nil, e.err
	}
	return e, release, nil
}

// evict drops the least recently used rows that no case uses beyond max.
// The caller holds s.mu.
func (s *rowStore) evict() {
	for el := s.lru.Back(); el != nil && s.lru.Len() > s.max; {
		prev := el.Prev()
		if e := el.Value.(*storedRow); e.users == 0 {
			s.lru.Remove(el)
			delete(s.cache, e.index)
		}
		el = prev
	}
}

func (s *rowStore) read(i int) (*Row, error) {
	buf := make([]byte, s.offs[i+1]-s.offs[i])
	if _, err := s.f.ReadAt(buf, s.offs[i]); err != nil {
		return nil, fmt.Errorf("row %d: %w", i, err)
	}
	var r Row
	if err := json.Unmarshal(buf, &r); err != nil {
		return nil, fmt.Errorf("row %d: %w", i, err)
	}
	return &r, nil
}

// format makes the row's edit in format f when the dataset did not give
// it, and says why the row cannot be written in f ("" when it can).
func (e *storedRow) format(f patch.Format) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fillFormat(e.row, f)
}

// spillRows reads the dataset of o (or o.Rows) into a rowStore in dir and
// returns a stub of each usable row (its id, path, language and size)
// and the rows left out. The checks are those of [PrepareRows]; a line
// that is not a row is left out too, with its line.
func spillRows(o Options, dir string, max int) (*rowStore, []*Row, []RowError, error) {
	store, err := newRowStore(dir, max)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("diffxyz: %w", err)
	}
	var stubs []*Row
	var bad []RowError
	checker := rowChecker{}
	i := 0
	add := func(r *Row, rerr error) error {
		defer func() { i++ }()
		if rerr != nil {
			bad = append(bad, RowError{i, "", rerr})
			return nil
		}
		if e := checker.check(i, r); e != nil {
			bad = append(bad, *e)
			return nil
		}
		if err := store.add(r); err != nil {
			return fmt.Errorf("diffxyz: %w", err)
		}
		// What a case needs before its row is read back: its key and the
		// result's columns.
		stubs = append(stubs, &Row{ID: r.ID, Path: r.Path, Lang: r.Lang, SizeClass: r.SizeClass, ChangeKind: r.ChangeKind})
		return nil
	}
	if o.Rows != nil {
		for _, r := range o.Rows {
			cp := *r
			if err = add(&cp, nil); err != nil {
				break
			}
		}
	} else if o.Dataset == "" {
		err = fmt.Errorf("%w: no dataset given", ErrDataset)
	} else {
		err = eachSourceRow(o.Dataset, add)
	}
	if err != nil {
		store.close()
		return nil, nil, nil, fmt.Errorf("diffxyz: %w", err)
	}
	return store, stubs, bad, nil
}
