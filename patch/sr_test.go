package patch

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ls builds hunk lines from unified-diff style strings: " ctx", "-del",
// "+ins".
func ls(lines ...string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{Kind: LineKind(l[0]), Text: l[1:]}
	}
	return out
}

// ignorePatchLine compares hunks without where they were parsed from.
// ignorePatchLine leaves out of comparisons where a hunk was in the text
// and what the parser keeps for apply's own use.
var ignorePatchLine = cmp.Options{cmpopts.IgnoreFields(Hunk{}, "PatchLine"), cmpopts.IgnoreUnexported(FilePatch{})}

func TestParseSearchReplace(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Patch
	}{
		{
			name: "path-less block",
			in:   "<<<<<<< SEARCH\na\nb\nc\n=======\na\nB\nc\n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{Hunks: []*Hunk{{
				OldLines: 3, NewLines: 3, KeepEOL: true,
				Lines: ls(" a", "-b", "+B", " c"),
			}}}}},
		},
		{
			name: "paths, fences, prose and merging",
			in: "Here are the changes.\n\nx.go\n```go\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n\n" +
				"y.go\n<<<<<<<SEARCH   \ny\n=======  \n>>>>>>>>> REPLACE\r\n" +
				"```\n<<<<<<< SEARCH\n=======\nappended\n>>>>>>> REPLACE\n" +
				"  x.go  \n~~~\n<<<<<<< SEARCH\nold2\n=======\n>>>>>>> REPLACE\ntrailing prose\n",
			want: &Patch{Files: []*FilePatch{
				{OldPath: "x.go", NewPath: "x.go", Hunks: []*Hunk{
					{OldLines: 1, NewLines: 1, KeepEOL: true, Lines: ls("-old", "+new")},
					{OldLines: 1, KeepEOL: true, Lines: ls("-old2")},
				}},
				{OldPath: "y.go", NewPath: "y.go", Hunks: []*Hunk{
					{OldLines: 1, KeepEOL: true, Lines: ls("-y")},
					{NewLines: 1, KeepEOL: true, Lines: ls("+appended")},
				}},
			}},
		},
		{
			name: "empty block",
			in:   "a.txt\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a.txt", NewPath: "a.txt", Hunks: []*Hunk{{KeepEOL: true, Lines: []Line{}}}}}},
		},
		{
			name: "crlf lines keep their carriage return",
			in:   "a.txt\r\n<<<<<<< SEARCH\r\none\r\ntwo\r\n=======\r\none\r\n2\r\n>>>>>>> REPLACE\r\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a.txt", NewPath: "a.txt", Hunks: []*Hunk{{
				OldLines: 2, NewLines: 2, KeepEOL: true,
				Lines: ls(" one\r", "-two\r", "+2\r"),
			}}}}},
		},
		{
			name: "no newline on the old side splits the shared last line",
			in:   "a\n<<<<<<< SEARCH\nx\nlast\n\\ No newline at end of file\n=======\nx\nlast\n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{
				OldLines: 2, NewLines: 2, OldNoEOL: true,
				Lines: ls(" x", "-last", "+last"),
			}}}}},
		},
		{
			name: "no newline on the new side after insertions",
			in:   "a\n<<<<<<< SEARCH\nx\n=======\nx\ny\n\\ No newline at end of file  \n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{
				OldLines: 1, NewLines: 2, NewNoEOL: true,
				Lines: ls(" x", "+y"),
			}}}}},
		},
		{
			name: "old side ends without newline before insertions",
			in:   "a\n<<<<<<< SEARCH\nx\n\\ No newline at end of file\n=======\nx\ny\n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{
				OldLines: 1, NewLines: 2, OldNoEOL: true,
				Lines: ls("-x", "+x", "+y"),
			}}}}},
		},
		{
			name: "no newline on both sides stays context",
			in:   "a\n<<<<<<< SEARCH\nx\n\\ No newline at end of file\n=======\nw\nx\n\\ No newline at end of file\n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{
				OldLines: 1, NewLines: 2, OldNoEOL: true, NewNoEOL: true,
				Lines: ls("+w", " x"),
			}}}}},
		},
		{
			name: "marker text in the middle of a section is content",
			in:   "<<<<<<< SEARCH\n\\ No newline at end of file\nx\n=======\n>>>>>>> REPLACE\n",
			want: &Patch{Files: []*FilePatch{{Hunks: []*Hunk{{
				OldLines: 2, KeepEOL: true,
				Lines: ls(`-\ No newline at end of file`, "-x"),
			}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSearchReplace(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, ignorePatchLine, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ParseSearchReplace mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseSearchReplacePatchLine(t *testing.T) {
	p, err := ParseSearchReplace("a\n\n<<<<<<< SEARCH\nx\n=======\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, h := range p.Files[0].Hunks {
		got = append(got, h.PatchLine)
	}
	if d := cmp.Diff([]int{3, 7}, got); d != "" {
		t.Errorf("PatchLine mismatch (-want +got):\n%s", d)
	}
}

func TestParseSearchReplaceErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "parse search-replace: line 1: no SEARCH/REPLACE blocks found"},
		{"just prose\n", "parse search-replace: line 1: no SEARCH/REPLACE blocks found"},
		{"a\n<<<<<<< SEARCH\nx\n", "parse search-replace: line 3: missing ======= in block started at line 2"},
		{"a\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n", "parse search-replace: line 4: missing ======= in block started at line 2"},
		{"<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\n", "parse search-replace: line 3: missing ======= in block started at line 1"},
		{"<<<<<<< SEARCH\nx\n=======\ny\n", "parse search-replace: line 4: missing >>>>>>> REPLACE in block started at line 1"},
		{"<<<<<<< SEARCH\nx\n=======\ny\n=======\n", "parse search-replace: line 5: second ======= in block started at line 1"},
		{"<<<<<<< SEARCH\n=======\n<<<<<<< SEARCH\n", "parse search-replace: line 3: missing >>>>>>> REPLACE in block started at line 1"},
		{"a\n=======\n", "parse search-replace: line 2: ======= outside a block"},
		{"a\n>>>>>>> REPLACE\n", "parse search-replace: line 2: >>>>>>> REPLACE outside a block"},
		{"  =======\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n", `parse search-replace: line 1: indented marker "=======" before a block`},
		{"<<<<<<< SEARCH\n\\ No newline at end of file\n=======\n>>>>>>> REPLACE\n",
			`parse search-replace: line 2: "\\ No newline at end of file" with no line before it in the SEARCH section`},
		{"<<<<<<< SEARCH\n=======\n\\ No newline at end of file\n>>>>>>> REPLACE\n",
			`parse search-replace: line 3: "\\ No newline at end of file" with no line before it in the REPLACE section`},
	}
	for _, tt := range tests {
		_, err := ParseSearchReplace(tt.in)
		if err == nil {
			t.Errorf("ParseSearchReplace(%q) succeeded, want error %q", tt.in, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("ParseSearchReplace(%q) error:\n got %s\nwant %s", tt.in, err, tt.want)
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseSearchReplace(%q) error is %T, want *ParseError", tt.in, err)
		}
	}
}

func TestSearchReplaceMarkers(t *testing.T) {
	for _, s := range []string{"<<<<< SEARCH", "<<<<<<<<<SEARCH", "<<<<<<< SEARCH \t\r"} {
		if !isSearchMarker(s) {
			t.Errorf("isSearchMarker(%q) = false", s)
		}
	}
	for _, s := range []string{"<<<< SEARCH", "<<<<<<<<<< SEARCH", " <<<<<<< SEARCH", "<<<<<<<  SEARCH", "<<<<<<< search", "<<<<<<< SEARCH x"} {
		if isSearchMarker(s) {
			t.Errorf("isSearchMarker(%q) = true", s)
		}
	}
	for _, s := range []string{">>>>> REPLACE", ">>>>>>>>>REPLACE", ">>>>>>> REPLACE\r"} {
		if !isReplaceMarker(s) {
			t.Errorf("isReplaceMarker(%q) = false", s)
		}
	}
	for _, s := range []string{"=======", "======= \r"} {
		if !isDivider(s) {
			t.Errorf("isDivider(%q) = false", s)
		}
	}
	for _, s := range []string{"======", "========", " ======="} {
		if isDivider(s) {
			t.Errorf("isDivider(%q) = true", s)
		}
	}
}

func TestPrintSearchReplace(t *testing.T) {
	tests := []struct {
		name string
		p    *Patch
		want string
	}{
		{
			name: "modify with two files",
			p: &Patch{Files: []*FilePatch{
				{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
					{HasPos: true, OldStart: 1, NewStart: 1, Lines: ls(" x", "-y", "+Y")},
					{Lines: ls("-z")},
				}},
				{OldPath: "b", NewPath: "b", Hunks: []*Hunk{{KeepEOL: true, OldNoEOL: true, Lines: ls("+q")}}},
			}},
			want: "a\n<<<<<<< SEARCH\nx\ny\n=======\nx\nY\n>>>>>>> REPLACE\n" +
				"a\n<<<<<<< SEARCH\nz\n=======\n>>>>>>> REPLACE\n" +
				"b\n<<<<<<< SEARCH\n=======\nq\n>>>>>>> REPLACE\n",
		},
		{
			name: "create joins hunks and keeps the missing newline",
			p: &Patch{Files: []*FilePatch{{NewPath: "n", Op: Create, Hunks: []*Hunk{
				{Lines: ls("+1")},
				{Lines: ls("+2"), NewNoEOL: true},
			}}}},
			want: "n\n<<<<<<< SEARCH\n=======\n1\n2\n\\ No newline at end of file\n>>>>>>> REPLACE\n",
		},
		{
			name: "create an empty file",
			p:    &Patch{Files: []*FilePatch{{NewPath: "n", Op: Create}}},
			want: "n\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n",
		},
		{
			name: "both sides without newline keep both markers",
			p: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
				{Lines: ls(" x", "-y", "+z"), OldNoEOL: true, NewNoEOL: true},
			}}}},
			want: "a\n<<<<<<< SEARCH\nx\ny\n\\ No newline at end of file\n=======\nx\nz\n\\ No newline at end of file\n>>>>>>> REPLACE\n",
		},
		{
			name: "path-less first file",
			p: &Patch{Files: []*FilePatch{
				{Hunks: []*Hunk{{Lines: ls("-a", "+b")}}},
				{OldPath: "c", NewPath: "c", Hunks: []*Hunk{{Lines: ls("-c")}}},
			}},
			want: "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\nc\n<<<<<<< SEARCH\nc\n=======\n>>>>>>> REPLACE\n",
		},
		{
			name: "marker text as the last line is fine when the marker follows",
			p: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
				{Lines: ls(`-\ No newline at end of file`), OldNoEOL: true},
			}}}},
			want: "a\n<<<<<<< SEARCH\n\\ No newline at end of file\n\\ No newline at end of file\n=======\n>>>>>>> REPLACE\n",
		},
		{
			name: "a redundant AtEnd is dropped",
			p: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
				{Lines: ls("-x"), OldNoEOL: true, AtEnd: true},
				{Lines: ls("+y"), AtEnd: true, KeepEOL: true},
			}}}},
			want: "a\n<<<<<<< SEARCH\nx\n\\ No newline at end of file\n=======\n>>>>>>> REPLACE\n" +
				"a\n<<<<<<< SEARCH\n=======\ny\n>>>>>>> REPLACE\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Print(tt.p, SearchReplace)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Print mismatch (-want +got):\n%s", d)
			}
			if _, err := ParseSearchReplace(got); err != nil {
				t.Errorf("printed text does not parse: %v", err)
			}
		})
	}
}

func TestPrintSearchReplaceErrors(t *testing.T) {
	hunk := []*Hunk{{Lines: ls("-x", "+y")}}
	tests := []printErrorCase{
		{"delete", &Patch{Files: []*FilePatch{{OldPath: "a", Op: Delete, Hunks: []*Hunk{{Lines: ls("-x")}}}}},
			"print search-replace: delete a: cannot be expressed in this format"},
		{"rename", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "b", Op: Rename, Hunks: hunk}}},
			"print search-replace: rename a to b: cannot be expressed in this format"},
		{"copy", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "b", Op: Copy}}},
			"print search-replace: copy a to b: cannot be expressed in this format"},
		{"different names", &Patch{Files: []*FilePatch{{OldPath: "a.orig", NewPath: "a", Hunks: hunk}}},
			"print search-replace: modify a.orig or a (whichever exists): cannot be expressed in this format"},
		{"mode", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", OldMode: 0o100644, NewMode: 0o100755}}},
			"print search-replace: mode change of a: cannot be expressed in this format"},
		{"binary", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Binary: true}}},
			"print search-replace: binary change of a: cannot be expressed in this format"},
		{"second path-less file", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: hunk}, {Hunks: hunk}}},
			"print search-replace: file 2 has no path: cannot be expressed in this format"},
		{"fence path", &Patch{Files: []*FilePatch{{OldPath: "```", NewPath: "```", Hunks: hunk}}},
			"print search-replace: path \"```\" does not fit on a path line: cannot be expressed in this format"},
		{"divider in content", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{Lines: ls(" =======", "+x")}}}}},
			`print search-replace: hunk 1 of a: SEARCH line 1 "=======" reads as a block marker: cannot be expressed in this format`},
		{"marker text last", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{Lines: ls("-x", `+\ No newline at end of file`)}}}}},
			`print search-replace: hunk 1 of a: REPLACE line 1 "\\ No newline at end of file" reads as the no-newline marker: cannot be expressed in this format`},
		{"anchors", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{Anchors: []string{"func f"}, Lines: ls("-x")}}}}},
			"print search-replace: hunk 1 of a: anchors: cannot be expressed in this format"},
		{"at end", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{AtEnd: true, KeepEOL: true, Lines: ls("-x")}}}}},
			"print search-replace: hunk 1 of a: a hunk that must end at the end of the file: cannot be expressed in this format"},
		{"positioned insertion", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{HasPos: true, OldStart: 3, NewStart: 4, Lines: ls("+x")}}}}},
			"print search-replace: hunk 1 of a: an insertion at line 3 with no context: cannot be expressed in this format"},
		{"create with old lines", &Patch{Files: []*FilePatch{{NewPath: "a", Op: Create, Hunks: []*Hunk{{Lines: ls(" x")}}}}},
			"print search-replace: create a: hunk 1 has old lines"},
	}
	checkPrintErrors(t, SearchReplace, tests)
}

// TestSearchReplaceNoEOLAtEnd shows why both markers are printed when both
// sides lack a final newline: the marker is what keeps the hunk at the end
// of the file when its lines also occur earlier.
func TestSearchReplaceNoEOLAtEnd(t *testing.T) {
	fp := &FilePatch{OldPath: "f", NewPath: "f", Hunks: []*Hunk{{
		HasPos: true, OldStart: 3, OldLines: 2, NewStart: 3, NewLines: 2,
		Lines: ls(" a", "-b", "+c"), OldNoEOL: true, NewNoEOL: true,
	}}}
	const old, want = "a\nb\na\nb", "a\nb\na\nc"
	text, err := Print(&Patch{Files: []*FilePatch{fp}}, SearchReplace)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseSearchReplace(text)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ApplyFile(old, p.Files[0], ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("applying\n%s\ngave %q, want %q", text, got, want)
	}
}

func TestSplitNoEOLContext(t *testing.T) {
	tests := []struct {
		in       []Line
		old, new bool
		want     []Line
	}{
		{ls(" a", " x"), true, true, ls(" a", " x")},
		{ls(" a", " x"), true, false, ls(" a", "-x", "+x")},
		{ls(" a", " x"), false, true, ls(" a", "-x", "+x")},
		{ls("-d", " x"), false, true, ls("-d", "-x", "+x")},
		{ls(" x", "+y"), true, false, ls("-x", "+x", "+y")},
		{ls(" x", "+y"), true, true, ls("-x", "+x", "+y")},
		{ls("+b", " x", "-c"), false, true, ls("-x", "-c", "+b", "+x")},
		{ls(" x", "-y"), true, false, ls(" x", "-y")},
		{ls("+y"), true, true, ls("+y")},
		{nil, true, true, nil},
	}
	for _, tt := range tests {
		got := splitNoEOLContext(tt.in, tt.old, tt.new)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("splitNoEOLContext(%v, %v, %v) mismatch (-want +got):\n%s", tt.in, tt.old, tt.new, d)
		}
	}
}
