package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch/extract"
)

// Edits of calc.py (add, sub, total) and other.py for the answers below.
const (
	rdAdd = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```\n"
	// Another fix of the same lines.
	rdAdd2 = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return b + a\n```\n"
	rdSub  = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -5,2 +5,2 @@\n def sub(a, b):\n-    return a + b\n+    return a - b\n```\n"
	rdTot  = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -9,5 +9,2 @@\n def total(xs):\n-    t = 0\n-    for x in xs:\n-        t = add(t, x)\n-    return t\n+    return sum(xs)\n```\n"
	rdOth  = "```diff\n--- a/other.py\n+++ b/other.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n```\n"
	// The same fix of add as a search/replace block.
	// Two blocks in one fence: add and sub.
	rdSR2   = "calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return b + a\n>>>>>>> REPLACE\n<<<<<<< SEARCH\ndef sub(a, b):\n    return a + b\n=======\ndef sub(a, b):\n    return a - b\n>>>>>>> REPLACE\n```\n"
	rdAddSR = "calc.py\n```python\n<<<<<<< SEARCH\ndef add(a, b):\n    return a - b\n=======\ndef add(a, b):\n    return b + a\n>>>>>>> REPLACE\n```\n"
)

// TestRetractedEdits: an answer whose prose takes an edit back, or offers
// a second edit as an alternative to the one before, is refused unless it
// says which alternative to use; prose that only reads like it (a second,
// different change "instead" of the old code, "the fixed version of
// total") merges both edits.
func TestRetractedEdits(t *testing.T) {
	j := func(parts ...string) string { return strings.Join(parts, "\n") }
	tests := []struct {
		name, input string
		// err is the error the answer must give; nil: the edit whose
		// source is source.
		err    error
		source string
	}{
		// Alternatives for one change are not two changes.
		{"alternatively, another function", j(rdAdd, "Alternatively, you can fix it in `sub`:", "", rdSub), extract.ErrAlternatives, ""},
		{"a better fix, same lines", j(rdAdd, "A better fix:", "", rdAdd2), extract.ErrAlternatives, ""},
		{"or simpler, same lines", j(rdAdd, "Or, simpler:", "", rdAdd2), extract.ErrAlternatives, ""},
		{"option headers", j("Option 1:", "", rdAdd, "Option 2:", "", rdAdd2), extract.ErrAlternatives, ""},
		{"alternative in another format", j(rdAdd, "Another option is to swap the operands:", "", rdAddSR), extract.ErrAlternatives, ""},
		{"alternatives beside another file", j(rdOth, "Then in calc.py:", "", rdAdd, "Alternatively:", "", rdAdd2, "I'd use the second."), extract.ErrAlternatives, ""},
		// ... unless the answer says which to use.
		{"the second chosen", j(rdAdd, "A better fix:", "", rdAdd2, "Use the second one."), nil, "```diff fence (lines 12-19)"},
		{"option 1 recommended", j("Option 1:", "", rdAdd, "Option 2:", "", rdAdd2, "I recommend option 1: it keeps the operand order."), nil, "```diff fence (lines 3-10)"},
		{"the former is better", j(rdAdd, "Or, simpler:", "", rdAdd2, "The former is better."), nil, "```diff fence (lines 1-8)"},
		{"the second of several blocks chosen", j(rdAdd, "Or, simpler:", "", rdSR2, "Use the second one."), nil, "2 search-replace blocks (lines 14-18, 19-25), merged"},
		{"several blocks, no choice", j(rdAdd, "Or, simpler:", "", rdSR2), extract.ErrAlternatives, ""},
		{"two choices", j(rdAdd, "Or:", "", rdAdd2, "I'd use the first. Some prefer the second."), extract.ErrAlternatives, ""},
		// A retraction whose correction is in another format, after
		// another file's edit, or missing.
		{"correction in another format", j(rdAdd, "Scratch that, a search/replace block is clearer:", "", rdAddSR), extract.ErrRetracted, ""},
		{"another file between", j(rdAdd, "Scratch that.", "", rdOth, "The real fix for calc.py:", "", rdAdd2), extract.ErrRetracted, ""},
		{"no correction", j(rdAdd, "Scratch that — no change is needed."), extract.ErrRetracted, ""},
		{"on second thought, no correction", j(rdAdd, "", "On second thought, the original code is correct; leave it."), extract.ErrRetracted, ""},
		{"ignore that diff", j(rdAdd, "Ignore that diff, the bug is in other.py:", "", rdOth), extract.ErrRetracted, ""},
		{"withdrawn, another file follows", j(rdAdd, "Actually, ignore the above. The bug is in other.py:", "", rdOth), extract.ErrRetracted, ""},
		// A replacement of the same lines, announced without pointing back.
		{"instead, same lines", j(rdAdd, "Now return `b + a` instead:", "", rdAdd2), extract.ErrRetracted, ""},
		{"fixed version, same lines", j(rdAdd, "Here is the fixed version of `add`:", "", rdAdd2), extract.ErrRetracted, ""},
		// Prose that reads like a retraction and is not.
		{"instead, another change", j(rdAdd, "Now make `total` use `sum` instead:", "", rdTot), nil, "2 ```diff fences (lines 1-8, 12-22), merged"},
		{"fixed version of another function", j(rdAdd, "Here is the fixed version of `total`:", "", rdTot), nil, "2 ```diff fences (lines 1-8, 12-22), merged"},
		{"the above, incorrect elsewhere", j(rdAdd, "The above makes the incorrect sign go away. Then `total` can use `sum`:", "", rdTot), nil, "2 ```diff fences (lines 1-8, 12-22), merged"},
		{"closing line names a fault", j(rdAdd, "Let me know if this patch doesn't work."), nil, "```diff fence (lines 1-8)"},
		{"closing line ignores a warning", j(rdAdd, "You can ignore that warning about the deprecated call."), nil, "```diff fence (lines 1-8)"},
		{"an alternative in prose only", j(rdAdd, "Alternatively, callers could pass the operands the other way round."), nil, "```diff fence (lines 1-8)"},
		{"use the first argument", j(rdAdd, "We also need `sub`; it should use the first argument as the minuend:", "", rdSub), nil, "2 ```diff fences (lines 1-8, 12-19), merged"},
		{"a repeat after a retraction word", j(rdAdd, "Here is the corrected diff again, in full:", "", rdAdd), nil, "```diff fence (lines 1-8); 1 repeated copy dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := extract.Extract(tt.input)
			switch {
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Errorf("err %v, want %v", err, tt.err)
			case tt.err == nil && err != nil:
				t.Errorf("err %v, want %s", err, tt.source)
			case tt.err == nil && res.Source != tt.source:
				t.Errorf("source %q, want %q", res.Source, tt.source)
			}
		})
	}
}
