package ape

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/patchbench/patchbench/dataset"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// CodeRow is one whole-file code row to check: APE-Bench's gathered patch
// format (the patched file and the commit whose environment checks it).
type CodeRow struct {
	ID     string
	Commit string
	Path   string
	Code   string
}

// CodeKeys name the columns of a code dataset (see ReadCodeRows).
type CodeKeys struct {
	// Code and Commit are the columns of the file's content and of the
	// commit (APE-Bench: code, commit_hash).
	Code, Commit string
	// Path is the column of the file's path in the tree; DefaultPath the
	// path of rows without one. Without DefaultPath such a row is checked
	// in a temporary file of extension TempExt ("lean" when empty) at the
	// tree's root, named by the row, as Eleanstic checks every row of
	// APE-Bench (whose rows have no path) in a temporary .lean file.
	Path, DefaultPath, TempExt string
	// ID is the column naming a row; a row without it is named by the
	// hash of its commit, path and code, so that the same code checked in
	// the same place is one row.
	ID string
}

// ReadCodeRows reads the rows of a JSONL or Parquet file. Rows that cannot
// be read, lack a column or name a path that may not be written (see
// patch.CheckPath) are returned in bad, each naming the file, the line
// and the reason; a row repeating an earlier one is left out.
func ReadCodeRows(file string, keys CodeKeys) (rows []CodeRow, bad []error, err error) {
	seen := map[string]bool{}
	err = dataset.Each(file, dataset.Options{}, func(m map[string]any, at dataset.Pos, rerr error) error {
		if rerr != nil {
			bad = append(bad, fmt.Errorf("ape check: %s:%d: %w", at.File, at.N(), errors.Unwrap(rerr)))
			return nil
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		r := CodeRow{Commit: str(keys.Commit), Path: str(keys.Path), Code: str(keys.Code), ID: str(keys.ID)}
		if r.Path == "" {
			r.Path = keys.DefaultPath
		}
		if r.Path == "" {
			r.Path = tempPath(r, keys.TempExt)
		}
		var err error
		switch {
		case r.Commit == "":
			err = fmt.Errorf("no %s", keys.Commit)
		default:
			err = patch.CheckPath(r.Path)
		}
		if err != nil {
			bad = append(bad, fmt.Errorf("ape check: %s:%d: %w", at.File, at.N(), err))
			return nil
		}
		if r.ID == "" {
			sum := sha256.Sum256([]byte(r.Commit + "\x00" + r.Path + "\x00" + r.Code))
			r.ID = hex.EncodeToString(sum[:8])
		}
		if seen[r.ID] {
			return nil
		}
		seen[r.ID] = true
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ape check: %w", err)
	}
	return rows, bad, nil
}

// tempPath is the file a row without a path is checked in: at the tree's
// root, named by the row's commit and code (so the same code is one file),
// with extension ext ("lean" when empty).
func tempPath(r CodeRow, ext string) string {
	if ext == "" {
		ext = "lean"
	}
	sum := sha256.Sum256([]byte(r.Commit + "\x00" + r.Code))
	return "patchbench_check_" + hex.EncodeToString(sum[:6]) + "." + strings.TrimPrefix(ext, ".")
}

// Verification is one code row's line in results.jsonl.
type Verification struct {
	Row    string   `json:"row"`
	Commit string   `json:"commit_hash"`
	Path   string   `json:"path"`
	Pass   bool     `json:"pass"`
	Errors []string `json:"errors,omitempty"`
	// Millis is the time of the check, SetupMillis that of restoring the
	// environment and writing the file.
	Millis      int64  `json:"time_ms"`
	SetupMillis int64  `json:"setup_ms"`
	Kind        string `json:"error_kind,omitempty"`
	// Status and NotEvaluated: as in Result, for a row whose environment
	// could not be had.
	Status       string `json:"status,omitempty"`
	NotEvaluated string `json:"not_evaluated,omitempty"`
}

// Usage is none: a check calls no model.
func (*Verification) Usage() runner.Usage { return runner.Usage{} }

// VerifyOptions configure Verify.
type VerifyOptions struct {
	Runner runner.Options
	Check  CheckOptions
}

// Verify checks each row's code in the environment of its commit, the
// file written at its path, as APE-Bench's Eleanstic verifies gathered
// patches; a row per code row goes to opts.Runner.Out through the runner,
// so that a run resumes. A row whose environment cannot be had is failed
// for the runner (--resume --retry-failed checks it again) with status
// StatusEnvironment.
func Verify(ctx context.Context, rows []CodeRow, opts VerifyOptions) (runner.Summary, error) {
	check, done, err := withGoCache(opts.Check)
	if err != nil {
		return runner.Summary{}, err
	}
	defer done()
	check.EnvCommit = EnvCommitTask
	cases := make([]runner.Case, len(rows))
	for i := range rows {
		cases[i] = runner.Case{ID: rows[i].ID, Key: rows[i].ID, Data: &rows[i]}
	}
	fn := func(ctx context.Context, c runner.Case) (runner.Result, error) {
		r := c.Data.(*CodeRow)
		v := &Verification{Row: r.ID, Commit: r.Commit, Path: r.Path}
		t := &Task{ID: r.ID, CommitHash: r.Commit, FilePathBefore: r.Path, FilePathAfter: r.Path}
		res, err := Compile(ctx, t, r.Code, check)
		switch {
		case errors.Is(err, patch.ErrUnsafePath):
			v.Status, v.NotEvaluated = StatusInput, err.Error()
			return v, err
		case errors.Is(err, ErrEnvironment):
			v.Status, v.NotEvaluated = StatusEnvironment, err.Error()
			return v, err
		case err != nil:
			return v, err
		}
		v.Pass, v.Errors, v.Millis, v.SetupMillis, v.Kind = res.Pass, res.Errors, res.Millis, res.SetupMillis, res.Kind()
		if v.Kind == KindEnvironment {
			v.Status, v.NotEvaluated = StatusEnvironment, res.Errors[0]
			return v, fmt.Errorf("ape check %s: %w: %s", r.ID, ErrEnvironment, res.Errors[0])
		}
		return v, nil
	}
	return runner.Run(ctx, cases, fn, opts.Runner)
}

// VerifySummary counts a check run's rows in dir/results.jsonl.
type VerifySummary struct {
	// Rows counts the rows; Pass and Fail those checked, Failed those the
	// runner could not finish (interrupted, timed out).
	Rows, Pass, Fail, Failed int
	// NotEvaluated names the rows whose environment could not be had.
	NotEvaluated []string
}

// SummarizeVerify reads dir/results.jsonl (the last row of each key).
func SummarizeVerify(dir string) (VerifySummary, error) {
	var s VerifySummary
	rows, err := runner.ReadRows(filepath.Join(dir, ResultsFile))
	if err != nil {
		return s, err
	}
	runner.SortRows(rows)
	for _, r := range rows {
		s.Rows++
		if st, _ := r["status"].(string); st != "" {
			why, _ := r["not_evaluated"].(string)
			s.NotEvaluated = append(s.NotEvaluated, fmt.Sprintf("%v: %s: %s", r["row"], st, why))
			continue
		}
		switch {
		case r["failed"] == true:
			s.Failed++
		case r["pass"] == true:
			s.Pass++
		default:
			s.Fail++
		}
	}
	return s, nil
}
