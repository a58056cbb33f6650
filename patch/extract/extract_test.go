package extract_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/extract"
)

var update = flag.Bool("update", false, "rewrite the want, format, source and error sections of testdata/*.txtar from the current output")

// TestGolden runs the cases in testdata/*.txtar. Each file has an "input"
// section and either "want" (the extracted text) and "format", or "error"
// (a part of the error message). An optional "source" section is compared
// with Result.Source. A comment line "crlf" turns every "\n" of input and
// want into "\r\n", so that the files themselves stay LF.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no test cases in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			crlf := false
			for _, l := range strings.Split(string(ar.Comment), "\n") {
				if strings.TrimSpace(l) == "crlf" {
					crlf = true
				}
			}
			sec := map[string]string{}
			has := map[string]bool{}
			for _, f := range ar.Files {
				sec[f.Name] = string(f.Data)
				has[f.Name] = true
			}
			if !has["input"] {
				t.Fatal(`no "input" section`)
			}
			input := sec["input"]
			if crlf {
				input = strings.ReplaceAll(input, "\n", "\r\n")
			}
			res, err := extract.Extract(input)
			if *update {
				rewrite(t, file, ar, res, err, crlf)
				return
			}
			if has["error"] {
				want := strings.TrimSpace(sec["error"])
				if err == nil {
					t.Fatalf("no error, want %q; got text:\n%s", want, res.Text)
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
				switch {
				case strings.Contains(want, extract.ErrNoEdit.Error()) && !errors.Is(err, extract.ErrNoEdit):
					t.Errorf("error %v does not wrap ErrNoEdit", err)
				case strings.Contains(want, extract.ErrEmpty.Error()) && !errors.Is(err, extract.ErrEmpty):
					t.Errorf("error %v does not wrap ErrEmpty", err)
				case strings.Contains(want, extract.ErrSample.Error()) && !errors.Is(err, extract.ErrSample):
					t.Errorf("error %v does not wrap ErrSample", err)
				case strings.Contains(want, extract.ErrPartSample.Error()) && !errors.Is(err, extract.ErrPartSample):
					t.Errorf("error %v does not wrap ErrPartSample", err)
				case strings.Contains(want, extract.ErrRetracted.Error()) && !errors.Is(err, extract.ErrRetracted):
					t.Errorf("error %v does not wrap ErrRetracted", err)
				case strings.Contains(want, extract.ErrAlternatives.Error()) && !errors.Is(err, extract.ErrAlternatives):
					t.Errorf("error %v does not wrap ErrAlternatives", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := sec["want"]
			if crlf {
				want = strings.ReplaceAll(want, "\n", "\r\n")
			}
			if diff := cmp.Diff(want, res.Text); diff != "" {
				t.Errorf("text mismatch (-want +got):\n%s\nsource: %s\ncandidates:\n%s", diff, res.Source, dump(res.Candidates))
			}
			if got, want := string(res.Format), strings.TrimSpace(sec["format"]); got != want {
				t.Errorf("format %q, want %q", got, want)
			}
			if has["source"] {
				if got, want := res.Source, strings.TrimSpace(sec["source"]); got != want {
					t.Errorf("source %q, want %q", got, want)
				}
			}
			checkResult(t, input, res)
		})
	}
}

// rewrite stores the current output in the case file (go test -update).
func rewrite(t *testing.T, file string, ar *txtar.Archive, res *extract.Result, err error, crlf bool) {
	t.Helper()
	out := &txtar.Archive{Comment: ar.Comment}
	for _, f := range ar.Files {
		switch f.Name {
		case "want", "format", "source", "error":
		default:
			out.Files = append(out.Files, f)
		}
	}
	if err != nil {
		out.Files = append(out.Files, txtar.File{Name: "error", Data: []byte(err.Error() + "\n")})
	} else {
		text := res.Text
		if crlf {
			text = strings.ReplaceAll(text, "\r\n", "\n")
		}
		out.Files = append(out.Files,
			txtar.File{Name: "want", Data: []byte(text)},
			txtar.File{Name: "format", Data: []byte(string(res.Format) + "\n")},
			txtar.File{Name: "source", Data: []byte(res.Source + "\n")})
	}
	if err := os.WriteFile(file, txtar.Format(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func dump(cs []extract.Candidate) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %s %q lines %d-%d %s edit=%v chosen=%v: %s\n", c.Kind, c.Lang, c.StartLine, c.EndLine, c.Format, c.IsEdit, c.Chosen, c.Reason)
	}
	return b.String()
}

// checkResult checks what holds for every result: Text is non-empty and
// ends in a newline, Detect agrees with Format, every chosen candidate is an
// edit of Format's family, and every line of Text, but the V4A markers and
// search-replace path lines Extract writes itself, is (a part of) an input
// line.
func checkResult(t *testing.T, input string, res *extract.Result) {
	t.Helper()
	if res.Text == "" || !strings.HasSuffix(res.Text, "\n") {
		t.Fatalf("text %q is empty or unterminated", res.Text)
	}
	f, ok := patch.Detect(res.Text)
	if !ok || f != res.Format {
		t.Errorf("Detect(text) = %q, %v; Format %q", f, ok, res.Format)
	}
	chosen := 0
	var paths []string
	for _, c := range res.Candidates {
		if !c.Chosen {
			continue
		}
		chosen++
		if !c.IsEdit {
			t.Errorf("chosen candidate at lines %d-%d is not an edit", c.StartLine, c.EndLine)
		}
		if family(c.Format) != family(res.Format) {
			t.Errorf("chosen candidate at lines %d-%d is %s, result is %s", c.StartLine, c.EndLine, c.Format, res.Format)
		}
		if c.Kind == "search-replace" && c.Lang != "" {
			paths = append(paths, c.Lang)
		}
		if c.StartLine < 1 || c.EndLine < c.StartLine {
			t.Errorf("candidate lines %d-%d", c.StartLine, c.EndLine)
		}
	}
	if chosen == 0 {
		t.Error("no candidate is marked chosen")
	}
	if strings.Contains(input, `\n`) {
		return // JSON-escaped text is unescaped
	}
	got, _ := patch.SplitLines(res.Text)
	for _, l := range got {
		l = strings.TrimSuffix(l, "\r")
		if l == "*** Begin Patch" || l == "*** End Patch" || contains(paths, l) {
			continue
		}
		if !strings.Contains(input, l) {
			t.Errorf("text line %q is not in the input", l)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func family(f patch.Format) patch.Format {
	if f == patch.UDiffH {
		return patch.UDiff
	}
	return f
}
