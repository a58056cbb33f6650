package extract_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/patchbench/patchbench/patch/extract"
)

// FuzzExtract checks that Extract never panics, that it fails only with
// ErrEmpty, ErrNoEdit, ErrMixed, ErrRetracted, ErrAlternatives, ErrSample or ErrPartSample, and that every result holds what checkResult
// requires: non-empty text that Detect reads as Format, chosen candidates
// that are edits of that format, and no line that is not in the input.
// Besides testdata/fuzz/FuzzExtract, the inputs of testdata/*.txtar seed it.
func FuzzExtract(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, sec := range ar.Files {
			if sec.Name == "input" {
				f.Add(string(sec.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, input string) {
		res, err := extract.Extract(input)
		if err != nil {
			if !errors.Is(err, extract.ErrEmpty) && !errors.Is(err, extract.ErrNoEdit) && !errors.Is(err, extract.ErrMixed) && !errors.Is(err, extract.ErrRetracted) && !errors.Is(err, extract.ErrAlternatives) && !errors.Is(err, extract.ErrSample) && !errors.Is(err, extract.ErrPartSample) {
				t.Fatalf("error %v wraps none of ErrEmpty, ErrNoEdit, ErrMixed, ErrRetracted, ErrAlternatives, ErrSample, ErrPartSample", err)
			}
			if errors.Is(err, extract.ErrEmpty) != (res == nil) {
				t.Fatalf("error %v with result %v", err, res)
			}
			if res != nil && res.Text != "" {
				t.Fatalf("error %v with text %q", err, res.Text)
			}
			if strings.TrimSpace(input) == "" && !errors.Is(err, extract.ErrEmpty) {
				t.Fatalf("blank input: %v, want ErrEmpty", err)
			}
			return
		}
		checkResult(t, input, res)
		n := strings.Count(input, "\n") + 1
		for _, c := range res.Candidates {
			if c.EndLine > n {
				t.Errorf("candidate at lines %d-%d, input has %d lines", c.StartLine, c.EndLine, n)
			}
		}
	})
}
