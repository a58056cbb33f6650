package patch

import (
	"github.com/patchbench/patchbench/internal/testdata"

	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The fuzz targets check, for every parser: it never panics; it fails only
// with a *ParseError; what it returns is a well-formed model; and, where the
// format can express what was parsed, printing and parsing again gives the
// same model. Seeds live in testdata/fuzz/<FuzzName>; -write-seeds
// regenerates the generated ones (see TestWriteFuzzSeeds).

func FuzzParseUDiff(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseUDiff(text, DefaultParseOptions)
		if !checkParse(t, UDiff, p, err) {
			return
		}
		checkApplyNoPanic(t, text, p)
		if !hasPaths(p) {
			return // the printer writes paths the parser cannot take back
		}
		roundTrip(t, p, UDiff, true)
	})
}

func FuzzParseUDiffH(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseUDiffH(text, DefaultParseOptions)
		if !checkParse(t, UDiffH, p, err) {
			return
		}
		checkApplyNoPanic(t, text, p)
		if !hasPaths(p) {
			return
		}
		roundTrip(t, p, UDiffH, false)
	})
}

func FuzzParseUDiffL(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseUDiffL(text, DefaultParseOptions)
		if !checkParse(t, UDiffL, p, err) {
			return
		}
		checkApplyNoPanic(t, text, p)
		if !hasPaths(p) || !allHavePos(p) {
			return // udiff-l prints line numbers
		}
		roundTrip(t, p, UDiffL, true)
	})
}

func FuzzParseSearchReplace(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseSearchReplace(text)
		if !checkParse(t, SearchReplace, p, err) {
			return
		}
		checkApplyNoPanic(t, text, p)
		for _, fp := range p.Files {
			for _, h := range fp.Hunks {
				if !h.HasPos && h.KeepEOL == (h.OldNoEOL || h.NewNoEOL) {
					t.Fatalf("KeepEOL %v with OldNoEOL %v, NewNoEOL %v", h.KeepEOL, h.OldNoEOL, h.NewNoEOL)
				}
			}
		}
		// Everything the parser returns can be printed back.
		roundTrip(t, p, SearchReplace, false)
	})
}

func FuzzParseV4A(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseV4A(text)
		if !checkParse(t, V4A, p, err) {
			return
		}
		checkApplyNoPanic(t, text, p)
		if got, ok := Detect(text); !ok || got != V4A {
			t.Errorf("Detect = %q, %v for a valid v4a patch", got, ok)
		}
		roundTrip(t, p, V4A, false)
	})
}

// FuzzDetect checks that Detect never panics, that it names a known format
// or none, and that the printout of anything a parser accepts is detected
// as its own format (search-replace excepted: its content lines are raw, so
// they may look like any format).
func FuzzDetect(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := Detect(text)
		if ok != slices.Contains(Formats, got) || (!ok && got != "") {
			t.Fatalf("Detect = %q, %v", got, ok)
		}
		for _, fmtIn := range Formats {
			p, err := Parse(text, fmtIn, DefaultParseOptions)
			if err != nil {
				continue
			}
			for _, fmtOut := range []Format{UDiff, UDiffH, UDiffL, V4A} {
				if fmtOut != V4A && !hasHunks(p) {
					continue // a diff of headers alone has no marker to see
				}
				out, err := Print(p, fmtOut)
				if err != nil {
					continue
				}
				got, ok := Detect(out)
				if ok && got == UDiff && (fmtOut == UDiffH || fmtOut == UDiffL) && !hasHunks(p) {
					continue // headers alone read the same in every unified flavour
				}
				if !ok || got != fmtOut {
					t.Errorf("Detect(Print(Parse(text, %s), %s)) = %q, %v\n%s", fmtIn, fmtOut, got, ok, out)
				}
			}
		}
	})
}

// checkParse checks the invariants of a parse result and reports whether
// there is a patch to look at further.
func checkParse(t *testing.T, f Format, p *Patch, err error) bool {
	t.Helper()
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error is %T, want *ParseError: %v", err, err)
		}
		if pe.Format != f || pe.Line < 1 {
			t.Fatalf("bad ParseError %+v", pe)
		}
		if p != nil {
			t.Fatalf("a patch with an error")
		}
		return false
	}
	if p == nil || len(p.Files) == 0 {
		t.Fatalf("no error and no files")
	}
	for _, fp := range p.Files {
		if fp == nil {
			t.Fatal("nil file patch")
		}
		for _, h := range fp.Hunks {
			if h == nil {
				t.Fatal("nil hunk")
			}
			if !f.HasPositions() && f != UDiffH && h.HasPos {
				t.Errorf("%s hunk with a position", f)
			}
			for _, l := range h.Lines {
				if l.Kind != LineContext && l.Kind != LineDelete && l.Kind != LineInsert {
					t.Fatalf("line kind %q", l.Kind)
				}
				if strings.Contains(l.Text, "\n") {
					t.Fatalf("line text %q holds a newline", l.Text)
				}
			}
			if o, n := h.Counts(); o != len(h.Old()) || n != len(h.New()) {
				t.Fatalf("Counts %d, %d disagree with Old and New", o, n)
			}
		}
	}
	return true
}

// checkApplyNoPanic applies every file patch to the patch text itself: any
// outcome but a panic is fine.
func checkApplyNoPanic(t *testing.T, text string, p *Patch) {
	for _, fp := range p.Files {
		ApplyFile(text, fp, ApplyOptions{})
		ApplyFile(text, fp, ApplyOptions{Reverse: true})
	}
}

// roundTrip prints p in format f, parses the printout and compares.
func roundTrip(t *testing.T, p *Patch, f Format, positions bool) {
	t.Helper()
	out, err := Print(p, f)
	if err != nil {
		t.Fatalf("print %s: %v", f, err)
	}
	q, err := Parse(out, f, DefaultParseOptions)
	if err != nil {
		t.Fatalf("printout does not parse: %v\n%s", err, out)
	}
	if d := cmp.Diff(comparable(p, positions), comparable(q, positions), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("printout parses differently (-parsed +reparsed):\n%s\nprintout:\n%s", d, out)
	}
}

type cmpFile struct {
	OldPath, NewPath string
	Op               Operation
	Binary           bool
	// The index names and blocks of a binary change.
	OldHash, NewHash string
	Forward, Reverse *BinaryBlock
	Hunks            []cmpHunk
}

type cmpHunk struct {
	HasPos                             bool
	OldStart, OldLines                 int
	NewStart, NewLines                 int
	Section                            string
	Anchors                            []string
	Lines                              []Line
	OldNoEOL, NewNoEOL, KeepEOL, AtEnd bool
}

// comparable is what a printout must preserve: the model without modes,
// similarity and parse positions, and without line numbers unless
// positions is set.
func comparable(p *Patch, positions bool) []cmpFile {
	var out []cmpFile
	for _, fp := range p.Files {
		cf := cmpFile{OldPath: fp.OldPath, NewPath: fp.NewPath, Op: fp.Op, Binary: fp.Binary}
		if fp.Binary {
			cf.OldHash, cf.NewHash, cf.Forward, cf.Reverse = fp.OldHash, fp.NewHash, fp.BinaryForward, fp.BinaryReverse
		}
		for _, h := range fp.Hunks {
			ch := cmpHunk{Section: h.Section, Anchors: h.Anchors, Lines: h.Lines,
				OldNoEOL: h.OldNoEOL, NewNoEOL: h.NewNoEOL, KeepEOL: h.KeepEOL, AtEnd: h.AtEnd}
			if positions {
				ch.HasPos, ch.OldStart, ch.OldLines, ch.NewStart, ch.NewLines = h.HasPos, h.OldStart, h.OldLines, h.NewStart, h.NewLines
			}
			cf.Hunks = append(cf.Hunks, ch)
		}
		out = append(out, cf)
	}
	return out
}

// hasPaths reports whether every file patch names its file.
func hasPaths(p *Patch) bool {
	for _, fp := range p.Files {
		if fp.Path() == "" {
			return false
		}
	}
	return true
}

func hasHunks(p *Patch) bool {
	for _, fp := range p.Files {
		if len(fp.Hunks) > 0 {
			return true
		}
	}
	return false
}

var writeSeeds = flag.Bool("write-seeds", false, "regenerate the generated seeds under testdata/fuzz")

// fuzzTargets maps each format to its fuzz target.
var fuzzTargets = map[Format]string{
	UDiff:         "FuzzParseUDiff",
	UDiffH:        "FuzzParseUDiffH",
	UDiffL:        "FuzzParseUDiffL",
	SearchReplace: "FuzzParseSearchReplace",
	V4A:           "FuzzParseV4A",
}

// TestWriteFuzzSeeds, with -write-seeds, writes seed corpora from the golden
// cases (their patches and every printout of them) and from a few real
// diffs in ../../shared/data: the smallest commits of the Diff-XYZ dev set,
// and one patch per family of the malformed dev set. Seeds are named
// "gen-*"; crashers the fuzzer found keep their hash names and are left
// alone.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*writeSeeds {
		t.Skip("run with -write-seeds to regenerate")
	}
	seeds := map[string]map[string]string{} // target -> name -> input
	add := func(target, name, text string) {
		if seeds[target] == nil {
			seeds[target] = map[string]string{}
		}
		seeds[target][name] = text
	}
	addAll := func(name, text string, f Format) {
		add(fuzzTargets[f], name, text)
		add("FuzzDetect", name, text)
		p, err := Parse(text, f, DefaultParseOptions)
		if err != nil {
			return
		}
		for _, g := range Formats {
			if g == f {
				continue
			}
			if out, err := Print(p, g); err == nil {
				add(fuzzTargets[g], name+"-as-"+string(g), out)
			}
		}
	}

	files, err := filepath.Glob("testdata/formats/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		c := loadGolden(t, file)
		addAll(strings.TrimSuffix(filepath.Base(file), ".txtar"), c.files["patch"], c.format)
	}

	type commit struct {
		UDiff string `json:"udiff"`
	}
	var dev []commit
	readJSONL(t, testdata.Path(t, "diffxyz-dev.jsonl.gz"), func(line []byte) {
		var r commit
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		dev = append(dev, r)
	})
	slices.SortStableFunc(dev, func(a, b commit) int { return len(a.UDiff) - len(b.UDiff) })
	for i, r := range dev[:min(6, len(dev))] {
		addAll(fmt.Sprintf("dev-%d", i), r.UDiff, UDiff)
	}
	families := map[string]bool{}
	readJSONL(t, testdata.Path(t, "malformed-dev.jsonl.gz"), func(line []byte) {
		var r struct {
			Family string `json:"family"`
			Patch  string `json:"patch"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if families[r.Family] || len(r.Patch) > 4000 {
			return
		}
		families[r.Family] = true
		name := "malformed-" + r.Family
		add("FuzzParseUDiff", name, r.Patch)
		add("FuzzParseUDiffH", name, r.Patch)
		add("FuzzDetect", name, r.Patch)
	})

	for target, m := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		old, _ := filepath.Glob(filepath.Join(dir, "gen-*"))
		for _, o := range old {
			os.Remove(o)
		}
		if err := os.MkdirAll(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		for name, text := range m {
			data := "go test fuzz v1\nstring(" + strconv.Quote(text) + ")\n"
			name = strings.Map(func(r rune) rune {
				if r == '-' || r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
					return r
				}
				return '-'
			}, name)
			if err := os.WriteFile(filepath.Join(dir, "gen-"+name), []byte(data), 0o666); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d seeds", target, len(m))
	}
}

// readJSONL calls fn for each line of a gzipped JSON-lines file, or skips
// the test when the file is missing.
func readJSONL(t *testing.T, path string, fn func([]byte)) {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s not found", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
