package patch

import (
	"strings"
	"testing"
)

// TestFormatDescriptions: every format has a name and a description, and
// each describes its own syntax: udiff-l is the ADD/DEL/CON markers (not
// "hunk lines carry their line numbers", which an earlier APE prompt said),
// udiff-h has no line numbers, search-replace its block markers, v4a its
// envelope.
func TestFormatDescriptions(t *testing.T) {
	want := map[Format][]string{
		UDiff:         {"`@@ -A,B +C,D @@`", "`-`", "`+`"},
		UDiffH:        {"no line numbers", "`@@ ... @@`"},
		UDiffL:        {"`CON `", "`DEL `", "`ADD `", "`@@ -A,B +C,D @@`"},
		SearchReplace: {"<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"},
		V4A:           {"`*** Begin Patch`", "`*** Update File: PATH`", "`*** End Patch`"},
	}
	for _, f := range Formats {
		name, desc := FormatName(f), FormatDescription(f)
		if !strings.Contains(name, string(f)) && f != V4A {
			t.Errorf("%s: name %q does not say the format", f, name)
		}
		if name == "" || desc == "" {
			t.Errorf("%s: name %q, description %q", f, name, desc)
		}
		for _, w := range want[f] {
			if !strings.Contains(desc, w) {
				t.Errorf("%s: description lacks %q", f, w)
			}
		}
	}
	if strings.Contains(FormatDescription(UDiffL), "carry their line numbers") {
		t.Error("udiff-l described as hunk lines with line numbers")
	}
}
