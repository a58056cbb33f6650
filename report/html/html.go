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
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	_ "embed"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/internal/resultsfile"
)

// Run is one run's rows, named for the page.
type Run struct {
	Name string
	// Kind is the benchmark's kind of rows; nil means detect it from the
	// rows (see Write).
	Kind *Kind
	Rows []map[string]any
	// Each, when set, gives the run's rows instead of Rows, one at a time;
	// Write calls it twice and holds one row at a time, so that the page
	// of a run of any size is written in memory for its groups and one
	// chunk.
	Each func(fn func(row map[string]any) error) error
	// Observe, when set, is called once with each row, in the pass that
	// gathers the charts: a benchmark aggregates its own report there
	// instead of reading the rows again.
	Observe func(row map[string]any) error
}

// each calls fn with every row of the run.
func (r Run) each(fn func(row map[string]any) error) error {
	if r.Each != nil {
		return r.Each(fn)
	}
	for _, row := range r.Rows {
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// ResultsFile is the file of a run directory that Load reads.
const ResultsFile = "results.jsonl"

// Load returns the run of dir/results.jsonl (or the file itself) named
// name. Its rows are read when the page is written, one at a time.
func Load(name, dir string) (Run, error) {
	path := dir
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		path = filepath.Join(dir, ResultsFile)
	}
	if _, err := os.Stat(path); err != nil {
		return Run{}, fmt.Errorf("html: %w", err)
	}
	return Run{Name: name, Each: func(fn func(map[string]any) error) error {
		_, err := resultsfile.EachRow(path, fn)
		return err
	}}, nil
}

// WriteFile writes the page of runs to path, atomically (see Write for
// kinds). It returns the number of cases written.
func WriteFile(path, title string, runs []Run, kinds ...*Kind) (int, error) {
	var cases int
	err := atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := write(bw, title, runs, kinds, &cases); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return 0, fmt.Errorf("html: %s: %w", path, err)
	}
	return cases, nil
}

// WriteRunDir writes dir/report.html for the run in dir (its
// results.jsonl) of the given kind, as a benchmark run does beside
// report.md; observe, when set, sees each row once (see Run.Observe).
func WriteRunDir(dir, title string, kind *Kind, observe func(map[string]any) error) error {
	run, err := Load(filepath.Base(filepath.Clean(dir)), dir)
	if err != nil {
		return err
	}
	run.Kind, run.Observe = kind, observe
	_, err = WriteFile(filepath.Join(dir, "report.html"), title, []Run{run})
	return err
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

// The page is written in parts: the head, the chunks of full rows as they
// are made, the meta, the case table (streamed in at [[cases]]) and the
// script.
var pageHead, pageMid, pageEnd = func() (head, mid, end *template.Template) {
	h, tail, ok1 := strings.Cut(pageHTML, "[[chunks]]\n")
	m, e, ok2 := strings.Cut(tail, "[[cases]]")
	if !ok1 || !ok2 {
		panic("html: page.html lacks its [[chunks]] line or [[cases]]")
	}
	parse := func(text string) *template.Template {
		return template.Must(template.New("page").Delims("[[", "]]").Parse(text))
	}
	return parse(h), parse(m), parse(e)
}()

// meta is what the page reads first, as JSON.
type meta struct {
	Title   string   `json:"title"`
	Runs    []string `json:"runs"`
	Kind    string   `json:"kind"`
	N       int      `json:"n"`
	Chunk   int      `json:"chunk"`
	Charts  []Chart  `json:"charts"`
	Columns []string `json:"columns"`
	Filters []string `json:"filters"`
}

// Write writes the page of runs to w. A run without its Kind is of the
// kind of the first of its rows one of kinds matches (Kind.Match), else
// Generic; runs of several kinds make a Generic page. Each run's rows are
// read once (and, for a run whose kind is detected, up to the first row
// a kind matches before): the chunks of full rows go out as they fill,
// and the charts, the columns and the table, which the page holds after
// them, are gathered on the way.
func Write(w io.Writer, title string, runs []Run, kinds ...*Kind) error {
	var cases int
	return write(w, title, runs, kinds, &cases)
}

// write is Write, and sets *cases to the number of cases written.
func write(w io.Writer, title string, runs []Run, kinds []*Kind, cases *int) error {
	if len(runs) == 0 {
		return fmt.Errorf("html: no run")
	}
	runs = slices.Clone(runs)
	for i := range runs {
		if runs[i].Kind != nil {
			continue
		}
		var found *Kind
		errFound := errors.New("found")
		err := runs[i].each(func(row map[string]any) error {
			if found = detect(kinds, row); found != nil {
				return errFound
			}
			return nil
		})
		if err != nil && !errors.Is(err, errFound) {
			return err
		}
		runs[i].Kind = cmp.Or(found, Generic())
	}
	kind := runs[0].Kind
	for _, r := range runs[1:] {
		if r.Kind.Name != kind.Name {
			kind = Generic()
		}
	}
	generic := kind.isGeneric()
	stats := make([]Stats, len(runs))
	gen := make([]*genericStats, len(runs))
	for i, r := range runs {
		if generic {
			gen[i] = newGenericStats(r.Name)
		} else if kind.NewStats != nil {
			stats[i] = kind.NewStats(r.Name)
		}
	}
	all := newGenericStats("")
	has := map[string]bool{}
	gather := func(i int, row map[string]any) error {
		if o := runs[i].Observe; o != nil {
			if err := o(row); err != nil {
				return err
			}
		}
		kind.has(row, has)
		switch {
		case generic:
			gen[i].Add(row)
			all.Add(row)
		case stats[i] != nil:
			stats[i].Add(row)
		}
		return nil
	}
	if title == "" {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		title = "patchbench: " + strings.Join(names, " vs ")
	}
	// Every column of the kind goes into the table; those no row has are
	// dropped at the end.
	cols := kind.Columns

	if err := pageHead.Execute(w, map[string]any{
		"Title": htmlEscape(title), "CSS": pageCSS, "Vega": vegaJS, "VegaLite": vegaLiteJS, "VegaEmbed": vegaEmbedJS,
	}); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	// The summary: one array per case, in the order of the columns, after
	// the run's index, gzipped as it grows. The full rows go out in
	// chunks as each fills.
	table, err := newGzipArray()
	if err != nil {
		return err
	}
	defer func() { table.close() }()
	var chunk []any
	nchunks := 0
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		s, err := gzipBase64(internChunk(chunk))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "<script type=\"text/plain\" id=\"pb-chunk-%d\">%s</script>\n", nchunks, s); err != nil {
			return fmt.Errorf("html: %w", err)
		}
		nchunks++
		chunk = chunk[:0]
		return nil
	}
	n := 0
	for ri, r := range runs {
		err := r.each(func(row map[string]any) error {
			if err := gather(ri, row); err != nil {
				return err
			}
			n++
			cells := make([]any, 0, len(cols)+1)
			cells = append(cells, ri)
			for _, c := range cols {
				cells = append(cells, kind.cell(r.Kind, row, c))
			}
			if err := table.add(cells); err != nil {
				return err
			}
			chunk = append(chunk, detail(r.Kind, row))
			if len(chunk) == chunkSize {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}

	m := meta{Title: title, Kind: kind.Name, Chunk: chunkSize, N: n}
	for _, r := range runs {
		m.Runs = append(m.Runs, r.Name)
	}
	*cases = m.N
	switch {
	case generic:
		m.Charts, err = genericCharts(gen, all)
	case kind.NewStats != nil && kind.Charts != nil:
		m.Charts, err = kind.Charts(stats)
	}
	if err != nil {
		return err
	}
	m.Columns, m.Filters = kind.columns(has)
	if len(m.Columns) < len(cols) {
		keep := []int{0} // the run's index
		for i, c := range cols {
			if slices.Contains(m.Columns, c) {
				keep = append(keep, i+1)
			}
		}
		projected, err := table.project(keep)
		if err != nil {
			return err
		}
		table.close()
		table = projected
	}
	metaJSON, err := json.Marshal(m) // escapes <, > and & for the script element
	if err != nil {
		return fmt.Errorf("html: %w", err)
	}
	// The tail of the page, with the table streamed in where [[cases]]
	// stands.
	if err := pageMid.Execute(w, map[string]any{"Meta": string(metaJSON)}); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	if err := table.writeTo(w); err != nil {
		return err
	}
	if err := pageEnd.Execute(w, map[string]any{"JS": pageJS}); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	return nil
}

// gzipArray writes a JSON array element by element into gzip, in a
// temporary file: the table of a large run is not held in memory.
type gzipArray struct {
	f   *os.File
	bw  *bufio.Writer
	zw  *gzip.Writer
	enc *json.Encoder
	n   int
}

func newGzipArray() (*gzipArray, error) {
	f, err := os.CreateTemp("", "patchbench-cases-*.gz")
	if err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	os.Remove(f.Name()) // unlinked: gone when closed
	a := &gzipArray{f: f, bw: bufio.NewWriterSize(f, 256<<10)}
	a.zw, _ = gzip.NewWriterLevel(a.bw, gzip.BestCompression)
	a.enc = json.NewEncoder(a.zw)
	a.enc.SetEscapeHTML(false)
	a.zw.Write([]byte("["))
	return a, nil
}

func (a *gzipArray) add(v any) error {
	if a.n > 0 {
		a.zw.Write([]byte(","))
	}
	a.n++
	if err := a.enc.Encode(v); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	return nil
}

// writeTo ends the array and copies it to w in base64, then frees it.
func (a *gzipArray) writeTo(w io.Writer) error {
	defer a.f.Close()
	a.zw.Write([]byte("]\n"))
	if err := a.zw.Close(); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	if err := a.bw.Flush(); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	if _, err := a.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if _, err := io.Copy(enc, a.f); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	return nil
}

// project returns a new array of the elements (arrays) of a, each cut to
// the positions keep; a is left open.
func (a *gzipArray) project(keep []int) (*gzipArray, error) {
	a.zw.Write([]byte("]\n"))
	if err := a.zw.Close(); err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	if err := a.bw.Flush(); err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	if _, err := a.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	zr, err := gzip.NewReader(bufio.NewReader(a.f))
	if err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	out, err := newGzipArray()
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(zr)
	dec.UseNumber() // numbers go out as they came
	if _, err := dec.Token(); err != nil {
		out.close()
		return nil, fmt.Errorf("html: %w", err)
	}
	for dec.More() {
		var cells []any
		if err := dec.Decode(&cells); err != nil {
			out.close()
			return nil, fmt.Errorf("html: %w", err)
		}
		kept := make([]any, 0, len(keep))
		for _, i := range keep {
			kept = append(kept, cells[i])
		}
		if err := out.add(kept); err != nil {
			out.close()
			return nil, err
		}
	}
	return out, nil
}

// close frees the array without writing it.
func (a *gzipArray) close() { a.f.Close() }

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

// internMin is the length from which a string of a row is kept once per
// chunk: the reference answers of a row's cases repeat whole files, too far
// apart for gzip's 32 KiB window to find.
const internMin = 512

// chunkData is a chunk of full rows as the page reads it: the long strings
// of its rows once each (S), and the cases (C) with {"$pb_s": i} in their
// place.
type chunkData struct {
	S []string `json:"s"`
	C []any    `json:"c"`
}

// internChunk puts each long string of the chunk's rows into the string
// table once. The rows are copied, not changed.
func internChunk(chunk []any) chunkData {
	out := chunkData{S: []string{}, C: make([]any, len(chunk))}
	index := map[string]int{}
	for i, x := range chunk {
		d := x.(caseDetail)
		row := make(map[string]any, len(d.Row))
		for k, v := range d.Row {
			if str, ok := v.(string); ok && len(str) >= internMin {
				j, seen := index[str]
				if !seen {
					j = len(out.S)
					index[str] = j
					out.S = append(out.S, str)
				}
				v = map[string]int{"$pb_s": j}
			}
			row[k] = v
		}
		d.Row = row
		out.C[i] = d
	}
	return out
}
