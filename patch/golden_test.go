package patch

import (
	"github.com/patchbench/patchbench/internal/testdata"

	"bytes"
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
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/formats/*.txtar")

// TestGolden runs the cases in testdata/formats. Each case is a txtar
// archive. Its comment holds directives, one "key: value" per line (other
// lines describe the case):
//
//	format: the format of the patch section (required)
//	strip:  the strip level for the unified-diff parsers (default 1)
//	target: the file a patch without paths applies to
//	noeol:  sections whose final newline is removed, space-separated
//	known-gap: formats whose printout is known not to apply like the
//	        patch (a printer gap reported upstream); the apply check of
//	        their printout is skipped, space-separated
//
// and its files are:
//
//	patch              the patch text
//	error              the parse error, when parsing must fail
//	want.json          the parsed patch, rendered by renderPatch
//	print              Print in the case's format
//	print.FORMAT       Print in another format
//	print[.FORMAT].error  the error of a Print that must fail
//	old/PATH, new/PATH the files before and after applying the patch
//	apply.error        the error of an apply that must fail
//
// With old/ or new/ files, the patch must turn the old files into the new
// ones, and so must its printout in every format that can express it,
// re-parsed: a printer may drop what its format cannot say, but never
// change what applying does.
//
// go test -run TestGolden -update rewrites want.json, print*, error and
// apply.error from what the code does now; review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/formats/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/formats")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, file)
		})
	}
}

type goldenCase struct {
	ar      *txtar.Archive
	format  Format
	opts    ParseOptions
	target  string
	gaps    []string // formats named by known-gap
	files   map[string]string
	changed bool // a section was rewritten under -update
}

func (c *goldenCase) has(name string) bool {
	_, ok := c.files[name]
	return ok
}

// check compares got with section name, or rewrites it under -update.
func (c *goldenCase) check(t *testing.T, name, got string) {
	t.Helper()
	if *update {
		if c.files[name] != got {
			for i := range c.ar.Files {
				if c.ar.Files[i].Name == name {
					c.ar.Files[i].Data = []byte(got)
				}
			}
			c.files[name] = got
			c.changed = true
		}
		return
	}
	if d := cmp.Diff(c.files[name], got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, d)
	}
}

func loadGolden(t *testing.T, file string) *goldenCase {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &goldenCase{ar: ar, opts: DefaultParseOptions, files: map[string]string{}}
	var noeol []string
	for _, l := range strings.Split(string(ar.Comment), "\n") {
		k, v, ok := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		if !ok {
			continue
		}
		switch k {
		case "format":
			if c.format, err = ParseFormat(v); err != nil {
				t.Fatal(err)
			}
		case "strip":
			if c.opts.Strip, err = strconv.Atoi(v); err != nil {
				t.Fatalf("bad strip: %v", err)
			}
		case "target":
			c.target = v
		case "noeol":
			noeol = strings.Fields(v)
		case "known-gap":
			c.gaps = strings.Fields(v)
		}
	}
	if c.format == "" {
		t.Fatal("no format: directive")
	}
	for _, f := range ar.Files {
		if c.has(f.Name) {
			t.Fatalf("duplicate section %s", f.Name)
		}
		c.files[f.Name] = string(f.Data)
	}
	for _, name := range noeol {
		s, ok := c.files[name]
		if !ok {
			t.Fatalf("noeol names a missing section %s", name)
		}
		c.files[name] = strings.TrimSuffix(s, "\n")
	}
	if !c.has("patch") {
		t.Fatal("no patch section")
	}
	return c
}

func runGolden(t *testing.T, file string) {
	c := loadGolden(t, file)
	defer func() {
		if c.changed {
			if err := os.WriteFile(file, txtar.Format(c.ar), 0o666); err != nil {
				t.Error(err)
			}
		}
	}()
	p, err := Parse(c.files["patch"], c.format, c.opts)
	if c.has("error") {
		got := "<no error>\n"
		if err != nil {
			got = err.Error() + "\n"
		}
		c.check(t, "error", got)
		return
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if c.has("want.json") {
		c.check(t, "want.json", renderPatch(t, p))
	}

	if c.target != "" {
		p = withTarget(p, c.target)
	}
	applies := c.applyCheck(t)
	if applies != nil {
		applies("patch", p)
	}
	for _, f := range Formats {
		name := "print." + string(f)
		if f == c.format {
			name = "print"
		}
		out, err := Print(p, f)
		switch {
		case c.has(name + ".error"):
			got := "<no error>\n"
			if err != nil {
				got = err.Error() + "\n"
			}
			c.check(t, name+".error", got)
		case c.has(name):
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			c.check(t, name, out)
		case err != nil && !errors.Is(err, ErrNotExpressible) && !(f.HasPositions() && !allHavePos(p)):
			t.Errorf("print %s: %v (neither expected nor ErrNotExpressible)", f, err)
		}
		if err != nil || applies == nil {
			continue
		}
		if slices.Contains(c.gaps, string(f)) {
			t.Logf("%s: apply check skipped (known-gap)", name)
			continue
		}
		// The printout, re-parsed, must apply to the same result.
		q, err := Parse(out, f, DefaultParseOptions)
		if err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, out)
			continue
		}
		if c.target != "" {
			q = withTarget(q, c.target)
		}
		applies(name, q)
	}
}

// applyCheck returns a function that applies a patch to the old/ files and
// compares the outcome with the new/ files, or with apply.error; nil when
// the case has none of them.
func (c *goldenCase) applyCheck(t *testing.T) func(what string, p *Patch) {
	old, want := map[string]string{}, map[string]string{}
	for name, data := range c.files {
		if p, ok := strings.CutPrefix(name, "old/"); ok {
			old[p] = data
		}
		if p, ok := strings.CutPrefix(name, "new/"); ok {
			want[p] = data
		}
	}
	if len(old) == 0 && len(want) == 0 && !c.has("apply.error") {
		return nil
	}
	return func(what string, p *Patch) {
		t.Helper()
		res, err := Apply(p, MapFS(old), ApplyOptions{})
		if c.has("apply.error") {
			if what == "patch" {
				got := "<no error>\n"
				if err != nil {
					got = err.Error() + "\n"
				}
				c.check(t, "apply.error", got)
			} else if err == nil {
				// Other formats may word the failure differently, but
				// they must fail.
				t.Errorf("%s applied, want an error", what)
			}
			return
		}
		if err != nil {
			t.Errorf("apply %s: %v", what, err)
			return
		}
		got := map[string]string{}
		for k, v := range old {
			got[k] = v
		}
		_, content, _ := Final(res)
		for path, data := range content {
			if data == nil {
				delete(got, path)
			} else {
				got[path] = string(data)
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("apply %s: files mismatch (-want +got):\n%s", what, d)
		}
	}
}

// withTarget returns p with target as the path of every file patch that
// names none, as a caller's --target does.
func withTarget(p *Patch, target string) *Patch {
	q := &Patch{Diagnostics: p.Diagnostics}
	for _, fp := range p.Files {
		if fp.Path() == "" {
			c := *fp
			c.OldPath, c.NewPath = target, target
			fp = &c
		}
		q.Files = append(q.Files, fp)
	}
	return q
}

func allHavePos(p *Patch) bool {
	for _, fp := range p.Files {
		for _, h := range fp.Hunks {
			if !h.HasPos {
				return false
			}
		}
	}
	return true
}

// renderPatch renders p as indented JSON for want.json sections: lines as
// unified-diff style strings, modes in octal, zero values left out.
func renderPatch(t *testing.T, p *Patch) string {
	type hunk struct {
		Pos      string   `json:"pos,omitempty"`
		Section  string   `json:"section,omitempty"`
		Anchors  []string `json:"anchors,omitempty"`
		Lines    []string `json:"lines"`
		OldNoEOL bool     `json:"oldNoEOL,omitempty"`
		NewNoEOL bool     `json:"newNoEOL,omitempty"`
		KeepEOL  bool     `json:"keepEOL,omitempty"`
		AtEnd    bool     `json:"atEnd,omitempty"`
		Line     int      `json:"line,omitempty"`
	}
	type file struct {
		Old        string `json:"old,omitempty"`
		New        string `json:"new,omitempty"`
		Op         string `json:"op"`
		OldMode    string `json:"oldMode,omitempty"`
		NewMode    string `json:"newMode,omitempty"`
		Similarity int    `json:"similarity,omitempty"`
		Binary     bool   `json:"binary,omitempty"`
		OldHash    string `json:"oldHash,omitempty"`
		NewHash    string `json:"newHash,omitempty"`
		// Forward and Reverse are binary blocks as "literal N" or "delta N".
		Forward string `json:"forward,omitempty"`
		Reverse string `json:"reverse,omitempty"`
		Hunks   []hunk `json:"hunks,omitempty"`
	}
	block := func(b *BinaryBlock) string {
		if b == nil {
			return ""
		}
		return fmt.Sprintf("%s %d", b.Method, len(b.Data))
	}
	type patch struct {
		Files       []file       `json:"files"`
		Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	}
	mode := func(m uint32) string {
		if m == 0 {
			return ""
		}
		return fmt.Sprintf("%06o", m)
	}
	out := patch{Diagnostics: p.Diagnostics}
	for _, fp := range p.Files {
		f := file{Old: fp.OldPath, New: fp.NewPath, Op: fp.Op.String(), OldMode: mode(fp.OldMode), NewMode: mode(fp.NewMode), Similarity: fp.Similarity, Binary: fp.Binary}
		if fp.Binary {
			// Text cases predate the index names; only binary ones show them.
			f.OldHash, f.NewHash = fp.OldHash, fp.NewHash
			f.Forward, f.Reverse = block(fp.BinaryForward), block(fp.BinaryReverse)
		}
		for _, h := range fp.Hunks {
			jh := hunk{Section: h.Section, Anchors: h.Anchors, Lines: []string{}, OldNoEOL: h.OldNoEOL, NewNoEOL: h.NewNoEOL, KeepEOL: h.KeepEOL, AtEnd: h.AtEnd, Line: h.PatchLine}
			if h.HasPos {
				jh.Pos = fmt.Sprintf("-%d,%d +%d,%d", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
			}
			for _, l := range h.Lines {
				jh.Lines = append(jh.Lines, string(l.Kind)+l.Text)
			}
			f.Hunks = append(f.Hunks, jh)
		}
		out.Files = append(out.Files, f)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDevConversions converts the real diffs of the Diff-XYZ dev set to
// search-replace and v4a and applies the printouts: each must do exactly
// what the parsed diff does once its line numbers are dropped (the two
// formats have none), and almost always give the commit's new file.
func TestDevConversions(t *testing.T) {
	total, exact := 0, 0
	readJSONL(t, testdata.Path(t, "diffxyz-dev.jsonl.gz"), func(line []byte) {
		var r struct {
			ID    string `json:"id"`
			Old   string `json:"old_code"`
			New   string `json:"new_code"`
			UDiff string `json:"udiff"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		p, err := ParseUDiff(r.UDiff, DefaultParseOptions)
		if err != nil {
			t.Errorf("%s: %v", r.ID, err)
			return
		}
		ref := *p.Files[0]
		ref.Hunks = nil
		for _, h := range p.Files[0].Hunks {
			c := *h
			c.HasPos = false
			ref.Hunks = append(ref.Hunks, &c)
		}
		want, _, wantErr := ApplyFile(r.Old, &ref, ApplyOptions{})
		total++
		if wantErr == nil && want == r.New {
			exact++
		}
		for _, f := range []Format{SearchReplace, V4A} {
			out, err := Print(p, f)
			if err != nil {
				t.Errorf("%s: %v", r.ID, err)
				continue
			}
			q, err := Parse(out, f, DefaultParseOptions)
			if err != nil {
				t.Errorf("%s: %s printout does not parse: %v", r.ID, f, err)
				continue
			}
			got, _, err := ApplyFile(r.Old, q.Files[0], ApplyOptions{})
			if (err == nil) != (wantErr == nil) || got != want {
				t.Errorf("%s: %s printout applies differently: error %v, want %v", r.ID, f, err, wantErr)
			}
		}
	})
	// Without line numbers a hunk goes to the first place its lines fit,
	// which is not always where git put it.
	t.Logf("%d of %d diffs give the new file without line numbers", exact, total)
	if exact < total*98/100 {
		t.Errorf("only %d of %d diffs give the new file without line numbers", exact, total)
	}
}
