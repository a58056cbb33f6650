// Package html writes the HTML report of one or several benchmark runs: one
// self-contained page (the Vega bundles, the charts' data and every case are
// inlined, so it opens offline and requests nothing) with charts per
// benchmark and a case browser.
//
// The cases are gzipped and base64-encoded in the page: a summary table
// decoded at load, and the full rows in chunks decoded when a case of the
// chunk is opened, so that a run of 100,000 cases stays a few tens of
// megabytes and opens in seconds. Model text is untrusted: the page builds
// every element from data with textContent, and the data sits in script
// elements as base64 or as JSON with <, > and & escaped.
package html

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	_ "embed"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/patch/extract"
)

// Kinds of runs, which decide the charts.
const (
	KindDiffXYZ = "diffxyz"
	KindSWE     = "swe"
	KindGeneric = "generic"
)

// Run is one run's rows, named for the page.
type Run struct {
	Name string
	// Kind is KindDiffXYZ, KindSWE or KindGeneric; "" means detect it from
	// the rows.
	Kind string
	Rows []map[string]any
}

// ResultsFile is the file of a run directory that Load reads.
const ResultsFile = "results.jsonl"

// Load reads dir/results.jsonl (or the file itself) as a run named name.
func Load(name, dir string) (Run, error) {
	path := dir
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		path = filepath.Join(dir, ResultsFile)
	}
	rows, err := readRows(path)
	if err != nil {
		return Run{}, err
	}
	return Run{Name: name, Rows: rows}, nil
}

// readRows reads a results file as runner.ReadRows does (the last row of a
// key counts, in its first place; a last line cut short is ignored),
// without linking package runner and its cache, which the lean patchbench
// binary, whose report command writes pages, must not carry.
func readRows(path string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	lines := bytes.Split(data, []byte("\n"))
	var rows []map[string]any
	index := map[string]int{}
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			if i == len(lines)-1 { // no newline after it: cut short
				break
			}
			return nil, fmt.Errorf("html: %s: line %d: %w", path, i+1, err)
		}
		key, ok := row["key"].(string)
		if !ok {
			rows = append(rows, row)
			continue
		}
		if j, seen := index[key]; seen {
			rows[j] = row
			continue
		}
		index[key] = len(rows)
		rows = append(rows, row)
	}
	return rows, nil
}

// DetectKind says which benchmark wrote rows, from their fields.
func DetectKind(rows []map[string]any) string {
	for _, r := range rows {
		if _, ok := r["instance_id"]; ok {
			if _, ok := r["status"]; ok {
				return KindSWE
			}
		}
		if _, ok := r["task"]; ok {
			if _, ok := r["format"]; ok {
				if _, ok := r["em"]; ok {
					return KindDiffXYZ
				}
			}
		}
	}
	return KindGeneric
}

// WriteFile writes the page of runs to path, atomically.
func WriteFile(path, title string, runs []Run) error {
	var b bytes.Buffer
	if err := Write(&b, title, runs); err != nil {
		return err
	}
	if err := atomicfile.Write(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("html: %s: %w", path, err)
	}
	return nil
}

// WriteRunDir writes dir/report.html for the run in dir (its
// results.jsonl), as a benchmark run does beside report.md.
func WriteRunDir(dir, title string) error {
	run, err := Load(filepath.Base(filepath.Clean(dir)), dir)
	if err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, "report.html"), title, []Run{run})
}

// chunkSize is the number of cases per compressed chunk of full rows: small
// enough that opening a case decodes little, big enough that gzip finds the
// repetition between cases.
const chunkSize = 256

//go:embed page.html
var pageHTML string

//go:embed page.js
var pageJS string

//go:embed page.css
var pageCSS string

var pageTmpl = template.Must(template.New("page").Delims("[[", "]]").Parse(pageHTML))

// meta is what the page reads first, as JSON.
type meta struct {
	Title   string   `json:"title"`
	Runs    []string `json:"runs"`
	Kind    string   `json:"kind"`
	N       int      `json:"n"`
	Chunk   int      `json:"chunk"`
	Charts  []chart  `json:"charts"`
	Columns []string `json:"columns"`
	Filters []string `json:"filters"`
}

// Write writes the page of runs to w.
func Write(w io.Writer, title string, runs []Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("html: no run")
	}
	kind := ""
	for i := range runs {
		if runs[i].Kind == "" {
			runs[i].Kind = DetectKind(runs[i].Rows)
		}
		if i == 0 {
			kind = runs[i].Kind
		} else if runs[i].Kind != kind {
			kind = KindGeneric
		}
	}
	if title == "" {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		title = "patchbench: " + strings.Join(names, " vs ")
	}
	m := meta{Title: title, Kind: kind, Chunk: chunkSize}
	for _, r := range runs {
		m.Runs = append(m.Runs, r.Name)
		m.N += len(r.Rows)
	}
	charts, err := makeCharts(kind, runs)
	if err != nil {
		return err
	}
	m.Charts = charts
	m.Columns, m.Filters = columns(kind, runs)

	// The summary: one array per case, in the order of m.Columns, after
	// the run's index.
	table := make([][]any, 0, m.N)
	var chunks []string
	var chunk []any
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		s, err := gzipBase64(chunk)
		if err != nil {
			return err
		}
		chunks = append(chunks, s)
		chunk = chunk[:0]
		return nil
	}
	for ri, r := range runs {
		for _, row := range r.Rows {
			cells := make([]any, 0, len(m.Columns)+1)
			cells = append(cells, ri)
			for _, c := range m.Columns {
				cells = append(cells, cell(kind, row, c))
			}
			table = append(table, cells)
			chunk = append(chunk, detail(row))
			if len(chunk) == chunkSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	cases, err := gzipBase64(table)
	if err != nil {
		return err
	}
	metaJSON, err := json.Marshal(m) // escapes <, > and & for the script element
	if err != nil {
		return fmt.Errorf("html: %w", err)
	}
	return pageTmpl.Execute(w, map[string]any{
		"Title":     htmlEscape(title),
		"CSS":       pageCSS,
		"Vega":      vegaJS,
		"VegaLite":  vegaLiteJS,
		"VegaEmbed": vegaEmbedJS,
		"Meta":      string(metaJSON),
		"Cases":     cases,
		"Chunks":    chunks,
		"JS":        pageJS,
	})
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// gzipBase64 encodes v as JSON, gzipped, in base64 (which holds no
// character that could end a script element).
func gzipBase64(v any) (string, error) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("html: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("html: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// columns returns the case table's columns and the ones it has a filter
// for, by kind: the fields present in some row, in a fixed order.
func columns(kind string, runs []Run) (cols, filters []string) {
	var want []string
	switch kind {
	case KindDiffXYZ:
		want = []string{"id", "task", "format", "prompt", "lang", "size_class", "status", "em", "iou", "applied", "parsed"}
	case KindSWE:
		want = []string{"instance_id", "status", "patch_status", "format", "repairs", "reason"}
	default:
		want = []string{"id", "task", "format", "status", "score", "error"}
	}
	has := map[string]bool{"status": kind == KindDiffXYZ || kind == KindGeneric}
	for _, r := range runs {
		for _, row := range r.Rows {
			for k := range row {
				has[k] = true
			}
		}
	}
	for _, c := range want {
		if has[c] {
			cols = append(cols, c)
		}
	}
	for _, f := range []string{"status", "task", "format"} {
		if slices.Contains(cols, f) {
			filters = append(filters, f)
		}
	}
	return cols, filters
}

// cell is the table's value of column c for row: the field, or what the
// page derives for "status" and "repairs".
func cell(kind string, row map[string]any, c string) any {
	switch {
	case c == "status" && kind != KindSWE:
		return caseStatus(row)
	case c == "status" && row["failed"] == true:
		return "infra_error"
	case c == "repairs":
		if l, ok := row[c].([]any); ok {
			return len(l)
		}
		return 0
	}
	switch v := row[c].(type) {
	case string:
		if len(v) > 200 {
			return v[:200] + "…"
		}
		return v
	case float64, bool, nil:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// caseStatus is one word for a Diff-XYZ or other row: failed (the runner
// could not score it), exact (EM 1), applied (the edit applied, not
// exactly), or wrong; for other rows its status field or ok.
func caseStatus(row map[string]any) string {
	if row["failed"] == true {
		return "failed"
	}
	if s, ok := row["status"].(string); ok && s != "" {
		return s
	}
	if em, ok := row["em"].(float64); ok {
		if em == 1 {
			return "exact"
		}
		if row["applied"] == true {
			return "applied"
		}
		return "wrong"
	}
	return "ok"
}

// caseDetail is what opening a case shows beyond its row: the edit found
// in the response and how it was found.
type caseDetail struct {
	Row        map[string]any `json:"row"`
	Edit       *editInfo      `json:"edit,omitempty"`
	Candidates []candInfo     `json:"candidates,omitempty"`
}

type editInfo struct {
	Text   string `json:"text"`
	Format string `json:"format"`
	Source string `json:"source"`
}

type candInfo struct {
	Kind   string `json:"kind"`
	Lines  string `json:"lines"`
	Format string `json:"format"`
	Chosen bool   `json:"chosen"`
	Reason string `json:"reason"`
}

// detail makes a case's detail: for a row with a repaired_patch (SWE) that
// is its edit; otherwise the edit extract finds in the response.
func detail(row map[string]any) caseDetail {
	d := caseDetail{Row: row}
	if p, ok := row["repaired_patch"].(string); ok && p != "" {
		d.Edit = &editInfo{Text: p, Format: "udiff", Source: "repaired_patch"}
		return d
	}
	resp, ok := row["response"].(string)
	if !ok || resp == "" {
		return d
	}
	res, err := extract.Extract(resp)
	if res == nil {
		return d
	}
	if err == nil && res.Text != "" {
		d.Edit = &editInfo{Text: res.Text, Format: string(res.Format), Source: res.Source}
	}
	for _, c := range res.Candidates {
		d.Candidates = append(d.Candidates, candInfo{
			Kind: c.Kind, Lines: fmt.Sprintf("%d-%d", c.StartLine, c.EndLine),
			Format: string(c.Format), Chosen: c.Chosen, Reason: c.Reason,
		})
	}
	return d
}
