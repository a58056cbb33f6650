package diffxyz

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// resultRow is a whole results row: the runner's fields around a Result,
// in the order the runner writes them.
type resultRow struct {
	Key string `json:"key"`
	ID  string `json:"id"`
	Result
	Failed    bool   `json:"failed"`
	Error     string `json:"error,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// RescoreOptions configure Rescore.
type RescoreOptions struct {
	// From is the run directory to read.
	From string
	// Dataset overrides the dataset recorded in From/run.json.
	Dataset string
	// Out is the directory to write results.jsonl, report.json and
	// report.md to; "" means From, whose files are replaced atomically.
	Out string
}

// RescoreSummary says what Rescore did.
type RescoreSummary struct {
	// Rows is the number of rows written, Rescored the number that had a
	// response and were scored again, and Changed the number of those
	// whose scores differ from the stored ones.
	Rows, Rescored, Changed int
	Report                  *Report
}

// Rescore recomputes every score of an existing run from its stored
// responses, without calling any model, and rewrites its results file and
// report. When a case has several rows (failed, then run again) only the
// last is kept. Failed rows, which have no response, are kept as they are.
func Rescore(o RescoreOptions) (RescoreSummary, error) {
	var sum RescoreSummary
	dataset := o.Dataset
	info, err := ReadRunInfo(o.From)
	if dataset == "" {
		if err != nil {
			return sum, fmt.Errorf("%w (give the dataset)", err)
		}
		dataset = info.Dataset
	}
	if dataset == "" {
		return sum, fmt.Errorf("diffxyz: %s records no dataset (give the dataset)", o.From)
	}
	data, err := Load(dataset)
	if err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}
	data, _ = PrepareRows(data) // the run left its bad rows out too
	byID := make(map[string]*Row, len(data))
	for _, r := range data {
		byID[r.ID] = r
	}

	rows, err := readResultRows(filepath.Join(o.From, ResultsFile))
	if err != nil {
		return sum, err
	}
	for _, r := range rows {
		if r.Failed || r.Response == nil {
			continue
		}
		row := byID[r.ID]
		if row == nil {
			return sum, fmt.Errorf("diffxyz: results row %q: id %q is not in dataset %s", r.Key, r.ID, dataset)
		}
		f, err := patch.ParseFormat(r.Format)
		if err != nil {
			return sum, fmt.Errorf("diffxyz: results row %q: %w", r.Key, err)
		}
		before, _ := json.Marshal(r.Result)
		r.setScore(ScoreResponse(Case{Row: row, Task: r.Task, Format: f, Prompt: r.Prompt}, *r.Response))
		r.Lang, r.SizeClass, r.ChangeKind = row.Lang, row.SizeClass, row.ChangeKind
		after, _ := json.Marshal(r.Result)
		sum.Rescored++
		if !bytes.Equal(before, after) {
			sum.Changed++
		}
	}
	sum.Rows = len(rows)

	out := o.Out
	if out == "" {
		out = o.From
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return sum, fmt.Errorf("diffxyz: %w", err)
		}
	}
	if out != o.From && info != nil {
		if err := writeJSONFile(filepath.Join(out, RunFile), info); err != nil {
			return sum, err
		}
	}
	if err := writeFileAtomic(filepath.Join(out, ResultsFile), buf.Bytes()); err != nil {
		return sum, err
	}
	rep, _, _, err := WriteReport(out)
	sum.Report = rep
	return sum, err
}

// readResultRows reads a results file, keeping the last row of each key in
// the order keys first appear. A last line cut short by a killed run is
// dropped, as the runner does.
func readResultRows(path string) ([]*resultRow, error) {
	f, err := runner.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("diffxyz: %w", err)
	}
	defer f.Close()
	var rows []*resultRow
	index := map[string]int{}
	br := bufio.NewReaderSize(f, 1<<20)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("diffxyz: reading %s: %w", path, err)
		}
		last := err != nil
		if len(bytes.TrimSpace(line)) > 0 {
			var r resultRow
			if jerr := json.Unmarshal(line, &r); jerr != nil || r.Key == "" {
				if last {
					break // cut short by a killed run
				}
				if jerr == nil {
					jerr = errors.New(`no "key" field`)
				}
				return nil, fmt.Errorf("diffxyz: %s line %d: %w", path, lineNo, jerr)
			}
			if i, ok := index[r.Key]; ok {
				rows[i] = &r
			} else {
				index[r.Key] = len(rows)
				rows = append(rows, &r)
			}
		}
		if last {
			break
		}
	}
	return rows, nil
}
