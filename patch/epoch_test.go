package patch

import "testing"

// GNU diff -N marks a missing side with the epoch; git apply's
// has_epoch_timestamp decides which stamps count.
func TestEpochTimestamp(t *testing.T) {
	for _, c := range []struct {
		rest string
		want bool
	}{
		{"o/new.txt\t1970-01-01 00:00:00.000000000 +0000", true},
		{"o/new.txt\t1970-01-01 00:00:00 +0000", true},
		{"o/new.txt\t1969-12-31 19:00:00 -0500", true},
		{"o/new.txt\t1970-01-01 05:30:00 +05:30", true},
		{"o/new.txt\t1970-01-01 01:00:00 +0000", false}, // an hour after the epoch
		{"o/new.txt\t1970-01-01 00:00:00.000000001 +0000", false},
		{"o/new.txt\t1970-01-01 00:00:01 +0000", false},
		{"o/new.txt\t2024-01-01 00:00:00 +0000", false},
		{"o/new.txt 1970-01-01 00:00:00 +0000", false}, // no tab
		{"o/new.txt\t1970-01-01 00:00:00.000000000 +0000\r", true},
	} {
		if got := EpochTimestamp(c.rest); got != c.want {
			t.Errorf("EpochTimestamp(%q) = %v, want %v", c.rest, got, c.want)
		}
	}
	p, err := ParseUDiff("--- o/new.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ n/new.txt\t2026-01-01 10:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+x\n", DefaultParseOptions)
	if err != nil {
		t.Fatal(err)
	}
	if fp := p.Files[0]; fp.Op != Create || fp.OldPath != "" || fp.NewPath != "new.txt" {
		t.Fatalf("got %v %q -> %q, want a creation of new.txt", fp.Op, fp.OldPath, fp.NewPath)
	}
}
