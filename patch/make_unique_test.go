package patch

import (
	"slices"
	"strings"
	"testing"
)

// TestMakeUniqueNewSide: a hunk for a format without line numbers gets
// context until neither its old side occurs elsewhere in the old file nor
// its new side anywhere in it. Its new side at another place makes the
// engine refuse it ("applied already, or to be applied there?"); cobra
// commit 83773614293e's init.go made such a hunk in udiff-h, search-replace
// and V4A.
func TestMakeUniqueNewSide(t *testing.T) {
	old := "p\na\nb\nc\nq\na\nb\nd\n"
	new := "p\na\nb\nc\nq\na\nb\nc\n"
	opts := DefaultMakeOptions()
	opts.Context, opts.Unique = 2, true
	fp := Make("f", "f", old, new, opts)
	if len(fp.Hunks) != 1 {
		t.Fatalf("%d hunks, want 1", len(fp.Hunks))
	}
	h := fp.Hunks[0]
	lines := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	count := func(side []string) int {
		n := 0
		for i := 0; i+len(side) <= len(lines); i++ {
			if slices.Equal(lines[i:i+len(side)], side) {
				n++
			}
		}
		return n
	}
	if n := count(h.Old()); n != 1 {
		t.Errorf("old side %q is %d times in the old file, want once", h.Old(), n)
	}
	if n := count(h.New()); n != 0 {
		t.Errorf("new side %q is %d times in the old file, want none", h.New(), n)
	}
	got, _, err := ApplyFile(old, fp, ApplyOptions{Unique: true})
	if err != nil || got != new {
		t.Errorf("apply: %q, %v; want %q", got, err, new)
	}
}
