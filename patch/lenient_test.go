package patch

import (
	"errors"
	"testing"
)

// TestApplyLenient checks apply_patch's matching rules on one file each.
func TestApplyLenient(t *testing.T) {
	tests := []struct {
		name, old, patch, want string
		err                    error
	}{
		{"trailing whitespace ignored", "a  \nb\n", "@@\n-a\n+A", "A\nb\n", nil},
		{"punctuation made ASCII", "x = \u201chi\u201d \u2014 ok\n", "@@\n-x = \"hi\" - ok\n+x = 1", "x = 1\n", nil},
		{"exact: first place after the previous chunk", "a\nb\na\n", "@@\n-a\n+A", "A\nb\na\n", nil},
		{"loose match at two places refused", "a \nb\na \n", "@@\n-a\n+A", "", ErrAmbiguous},
		{"anchored pure addition refused", "def f():\n  pass\n", "@@ def f():\n+  x = 1", "", ErrAmbiguous},
		{"pure addition appends", "a\nb", "@@\n+c", "a\nb\nc\n", nil},
		{"lone CR kept, added line takes the first ending", "a\r\nb\rc\n", "@@\n b\n-c\n+C", "a\r\nb\rC\r\n", nil},
		{"untouched end kept without newline", "a\nb\nc", "@@\n-a\n+A", "A\nb\nc", nil},
		{"chunk reaching the end adds the newline", "a\nb", "@@\n-b\n+B", "a\nB\n", nil},
		{"context kept as the file has it", "  a\nb\n", "@@\n a\n-b\n+B", "  a\nB\n", nil},
		{"trailing blank context retried without it", "a\nb\n", "@@\n-a\n+A\n\n@@\n-b\n+B", "A\nB\n", nil},
		{"no place", "a\n", "@@\n-z\n+Z", "", ErrContextMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseV4A("*** Begin Patch\n*** Update File: f\n" + tt.patch + "\n*** End Patch\n")
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := ApplyFile(tt.old, p.Files[0], ApplyOptions{})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
