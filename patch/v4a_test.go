package patch

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseV4A(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Patch
	}{
		{
			name: "every section kind",
			in: "\n*** Begin Patch\n" +
				"*** Add File: new.txt\n+one\n+\n" +
				"*** Delete File: gone.txt\n" +
				"*** Update File: src/a.py\n" +
				"@@ class A\n@@     def f(self):\n-        return 1\n+        return 2\n" +
				"@@\n x\n\n-y\n*** End of File\n" +
				"*** Update File: b.py\n*** Move to: c.py\n" +
				"*** End Patch\n\n",
			want: &Patch{Files: []*FilePatch{
				{NewPath: "new.txt", Op: Create, Hunks: []*Hunk{{NewLines: 2, Lines: ls("+one", "+")}}},
				{OldPath: "gone.txt", Op: Delete},
				{OldPath: "src/a.py", NewPath: "src/a.py", Hunks: []*Hunk{
					{
						Anchors:  []string{"class A", "    def f(self):"},
						OldLines: 1, NewLines: 1, KeepEOL: true,
						Lines: ls("-        return 1", "+        return 2"),
					},
					{OldLines: 3, NewLines: 2, KeepEOL: true, AtEnd: true, Lines: ls(" x", " ", "-y")},
				}},
				{OldPath: "b.py", NewPath: "c.py", Op: Rename},
			}},
		},
		{
			name: "changes before any @@ and a second chunk",
			in:   "*** Begin Patch\n*** Update File: a\n-x\n+y\n@@\n-z\n*** End Patch",
			want: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
				{OldLines: 1, NewLines: 1, KeepEOL: true, Lines: ls("-x", "+y")},
				{OldLines: 1, KeepEOL: true, Lines: ls("-z")},
			}}}},
		},
		{
			name: "crlf",
			in:   "*** Begin Patch\r\n*** Update File: a.txt \r\n@@ def f():\r\n one\r\n-two\r\n+2\r\n*** End of File\r\n*** End Patch\r\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a.txt", NewPath: "a.txt", Hunks: []*Hunk{{
				Anchors:  []string{"def f():"},
				OldLines: 2, NewLines: 2, KeepEOL: true, AtEnd: true,
				Lines: ls(" one", "-two", "+2"),
			}}}}},
		},
		{
			name: "blank anchors count as none",
			in:   "*** Begin Patch\n*** Update File: a\n@@ \n@@\t\n-x\n*** End Patch\n",
			want: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
				{OldLines: 1, KeepEOL: true, Lines: ls("-x")},
			}}}},
		},
		{
			name: "no newline markers",
			in: "*** Begin Patch\n" +
				"*** Add File: n\n+a\n+b\n\\ No newline at end of file\n" +
				"*** Update File: o\n@@\n-x\n\\ No newline at end of file\n+x\n" +
				"@@\n y\n\\ No newline at end of file\n" +
				"@@\n-p\n+q\n\\\n" +
				"*** End Patch\n",
			want: &Patch{Files: []*FilePatch{
				{NewPath: "n", Op: Create, Hunks: []*Hunk{{NewLines: 2, NewNoEOL: true, Lines: ls("+a", "+b")}}},
				{OldPath: "o", NewPath: "o", Hunks: []*Hunk{
					{OldLines: 1, NewLines: 1, OldNoEOL: true, Lines: ls("-x", "+x")},
					{OldLines: 1, NewLines: 1, OldNoEOL: true, NewNoEOL: true, Lines: ls(" y")},
					{OldLines: 1, NewLines: 1, NewNoEOL: true, Lines: ls("-p", "+q")},
				}},
			}},
		},
		{
			name: "an empty added file",
			in:   "*** Begin Patch\n*** Add File: empty\n*** End Patch\n",
			want: &Patch{Files: []*FilePatch{{NewPath: "empty", Op: Create}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseV4A(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			// Every section applies by apply_patch's rules; Add File and
			// Move to replace what is there.
			for _, fp := range tt.want.Files {
				fp.Lenient = true
				fp.Overwrite = fp.Op == Create || fp.Op == Rename
			}
			if d := cmp.Diff(tt.want, got, ignorePatchLine, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ParseV4A mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseV4AErrors(t *testing.T) {
	const begin, end = "*** Begin Patch\n", "*** End Patch\n"
	tests := []struct{ in, want string }{
		{"", `parse v4a: line 1: no "*** Begin Patch" found`},
		{"\n\n", `parse v4a: line 2: no "*** Begin Patch" found`},
		{"Here it is:\n" + begin + end, `parse v4a: line 1: expected "*** Begin Patch", found "Here it is:"`},
		{begin, `parse v4a: line 1: missing "*** End Patch"`},
		{begin + "*** Update File: a\n-x\n", `parse v4a: line 3: missing "*** End Patch"`},
		{begin + end, `parse v4a: line 2: no file sections`},
		{begin + "*** Delete File: a\n" + end + "bye\n", `parse v4a: line 4: text after "*** End Patch"`},
		{begin + "x\n" + end, `parse v4a: line 2: expected a file section ("*** Add File:", "*** Delete File:" or "*** Update File:") or "*** End Patch", found "x"`},
		{begin + "*** Add File: \n" + end, `parse v4a: line 2: missing path in "*** Add File: "`},
		{begin + "*** Update File: a\n*** Move to:\n" + end, `parse v4a: line 3: missing path in "*** Move to:"`},
		{begin + "*** Add File: a\n+x\n-y\n" + end, `parse v4a: line 4: line in an Add File section does not start with '+': "-y"`},
		{begin + "*** Add File: a\n+x\n\n" + end, `parse v4a: line 4: line in an Add File section does not start with '+': ""`},
		{begin + "*** Delete File: a\n-x\n" + end, `parse v4a: line 3: expected a file section ("*** Add File:", "*** Delete File:" or "*** Update File:") or "*** End Patch", found "-x"`},
		{begin + "*** Update File: a\n" + end, `parse v4a: line 2: update of a has no changes`},
		{begin + "*** Update File: a\n@@ f\n" + end, `parse v4a: line 3: chunk has no change lines`},
		{begin + "*** Update File: a\n@@ f\n@@ g\n*** Delete File: b\n" + end, `parse v4a: line 3: chunk has no change lines`},
		{begin + "*** Update File: a\n@@f\n-x\n" + end, `parse v4a: line 3: malformed chunk header "@@f": want "@@" or "@@ text"`},
		{begin + "*** Update File: a\n@@\nx\n" + end, `parse v4a: line 4: change line does not start with ' ', '-' or '+': "x"`},
		{begin + "*** Update File: a\n*** End of File\n" + end, `parse v4a: line 3: "*** End of File" before any change line of its chunk`},
		{begin + "*** Update File: a\n-x\n*** End of File\n+y\n" + end, `parse v4a: line 5: change line after the end of a chunk: start a new chunk with "@@"`},
		{begin + "*** Update File: a\n\\ No newline at end of file\n" + end, `parse v4a: line 3: "\\ No newline at end of file" before any change line of its chunk`},
		{begin + "*** Update File: a\n@@\n\\ No newline at end of file\n" + end, `parse v4a: line 4: "\\ No newline at end of file" before any change line of its chunk`},
		{begin + "*** Update File: a\n x\n\\ No newline at end of file\n+y\n" + end, `parse v4a: line 4: "\\ No newline at end of file" must follow the last old or new line of its chunk`},
		{begin + "*** Update File: a\n-x\n\\ No newline at end of file\n-y\n" + end, `parse v4a: line 4: "\\ No newline at end of file" must follow the last old or new line of its chunk`},
		{begin + "*** Add File: a\n+x\n\\ No newline at end of file\n+y\n" + end, `parse v4a: line 4: "\\ No newline at end of file" must follow the last old or new line of its chunk`},
	}
	for _, tt := range tests {
		_, err := ParseV4A(tt.in)
		if err == nil {
			t.Errorf("ParseV4A(%q) succeeded, want error %q", tt.in, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("ParseV4A(%q) error:\n got %s\nwant %s", tt.in, err, tt.want)
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseV4A(%q) error is %T, want *ParseError", tt.in, err)
		}
	}
}

func TestPrintV4A(t *testing.T) {
	tests := []struct {
		name string
		p    *Patch
		want string
	}{
		{
			name: "every operation",
			p: &Patch{Files: []*FilePatch{
				{NewPath: "n", Op: Create, Hunks: []*Hunk{{Lines: ls("+1", "+2"), NewNoEOL: true}}},
				{OldPath: "d", Op: Delete, Hunks: []*Hunk{{Lines: ls("-gone")}}},
				{OldPath: "m", NewPath: "m", Hunks: []*Hunk{
					{HasPos: true, OldStart: 4, NewStart: 4, Section: "func f()", Lines: ls(" a", "-b", "+B")},
					{Anchors: []string{"class C", "  def g"}, AtEnd: true, KeepEOL: true, Lines: ls("-z")},
				}},
				{OldPath: "r", NewPath: "s", Op: Rename},
				{OldPath: "t", NewPath: "t", Op: Rename},
			}},
			want: "*** Begin Patch\n" +
				"*** Add File: n\n+1\n+2\n\\ No newline at end of file\n" +
				"*** Delete File: d\n" +
				"*** Update File: m\n@@\n a\n-b\n+B\n@@ class C\n@@   def g\n-z\n*** End of File\n" +
				"*** Update File: r\n*** Move to: s\n" +
				"*** Update File: t\n*** Move to: t\n" +
				"*** End Patch\n",
		},
		{
			name: "a final newline change splits the shared line",
			p: &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{
				{Lines: ls(" x", " y"), OldNoEOL: true},
				{Lines: ls(" x", " y"), OldNoEOL: true, NewNoEOL: true},
				{Lines: ls(" x", " y"), OldNoEOL: true, KeepEOL: true},
			}}}},
			want: "*** Begin Patch\n*** Update File: a\n" +
				"@@\n x\n-y\n\\ No newline at end of file\n+y\n" +
				"@@\n x\n y\n\\ No newline at end of file\n" +
				"@@\n x\n y\n" +
				"*** End Patch\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Print(tt.p, V4A)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Print mismatch (-want +got):\n%s", d)
			}
			if _, err := ParseV4A(got); err != nil {
				t.Errorf("printed text does not parse: %v", err)
			}
		})
	}
}

func TestPrintV4AErrors(t *testing.T) {
	tests := []printErrorCase{
		{"copy", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "b", Op: Copy}}},
			"print v4a: copy a to b: cannot be expressed in this format"},
		{"different names", &Patch{Files: []*FilePatch{{OldPath: "a.orig", NewPath: "a", Hunks: []*Hunk{{Lines: ls("-x")}}}}},
			"print v4a: modify a.orig or a (whichever exists): cannot be expressed in this format"},
		{"mode", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", OldMode: 0o100644, NewMode: 0o100755, Hunks: []*Hunk{{Lines: ls("-x")}}}}},
			"print v4a: mode change of a: cannot be expressed in this format"},
		{"binary", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Binary: true}}},
			"print v4a: binary change of a: cannot be expressed in this format"},
		{"no path", &Patch{Files: []*FilePatch{{Hunks: []*Hunk{{Lines: ls("-x")}}}}},
			"print v4a: file patch with no path: cannot be expressed in this format"},
		{"spaced path", &Patch{Files: []*FilePatch{{OldPath: "a ", NewPath: "a ", Hunks: []*Hunk{{Lines: ls("-x")}}}}},
			`print v4a: path "a " does not fit on a section line: cannot be expressed in this format`},
		{"no hunks", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a"}}},
			"print v4a: update of a with no hunks: cannot be expressed in this format"},
		{"empty hunk", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{}}}}},
			"print v4a: hunk 1 of a: empty hunk: cannot be expressed in this format"},
		{"positioned insertion", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{HasPos: true, OldStart: 2, Lines: ls("+x")}}}}},
			"print v4a: hunk 1 of a: an insertion at line 2 with no context: cannot be expressed in this format"},
		{"blank anchor", &Patch{Files: []*FilePatch{{OldPath: "a", NewPath: "a", Hunks: []*Hunk{{Anchors: []string{" "}, Lines: ls("-x")}}}}},
			`print v4a: hunk 1 of a: anchor " " does not fit on a @@ line: cannot be expressed in this format`},
		{"create with old lines", &Patch{Files: []*FilePatch{{NewPath: "a", Op: Create, Hunks: []*Hunk{{Lines: ls("-x")}}}}},
			"print v4a: create a: hunk 1 has old lines"},
	}
	checkPrintErrors(t, V4A, tests)
}

// TestV4AApply checks the apply semantics the V4A model relies on: anchors
// move the search forward, AtEnd pins a hunk to the end, and an added file
// ends with a newline.
func TestV4AApply(t *testing.T) {
	p, err := ParseV4A("*** Begin Patch\n" +
		"*** Update File: f.py\n" +
		"@@ def b():\n-    return 0\n+    return 2\n" +
		"@@\n-x\n+y\n*** End of File\n" +
		"*** Add File: g.py\n+print()\n" +
		"*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	fsys := MapFS{"f.py": "def a():\n    return 0\nx\ndef b():\n    return 0\nx\n"}
	res, err := Apply(p, fsys, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, got, _ := Final(res)
	want := map[string][]byte{
		"f.py": []byte("def a():\n    return 0\nx\ndef b():\n    return 2\ny\n"),
		"g.py": []byte("print()\n"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Apply mismatch (-want +got):\n%s", d)
	}
}

// printErrorCase is a patch a printer must refuse, with the exact error.
type printErrorCase struct {
	name string
	p    *Patch
	want string
}

// checkPrintErrors prints each case in format f and checks the error, and
// that refusals of what the format cannot say wrap ErrNotExpressible.
func checkPrintErrors(t *testing.T, f Format, tests []printErrorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Print(tt.p, f)
			if err == nil {
				t.Fatalf("Print succeeded, want error %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Print error:\n got %s\nwant %s", err, tt.want)
			}
			if strings.HasSuffix(tt.want, ErrNotExpressible.Error()) && !errors.Is(err, ErrNotExpressible) {
				t.Errorf("Print error does not wrap ErrNotExpressible")
			}
		})
	}
}
