package repair

import (
	"regexp"
	"testing"
)

// reHunkNums is the expression hunkNums is written out from: the oracle.
var reHunkNums = regexp.MustCompile(`-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?`)

func checkHunkNums(t *testing.T, hdr string) {
	m, ok := hunkNums(hdr)
	want := reHunkNums.FindStringSubmatch(hdr)
	if ok != (want != nil) || (ok && (m[0] != want[1] || m[1] != want[2] || m[2] != want[3] || m[3] != want[4])) {
		t.Errorf("hunkNums(%q) = %q, %v; the expression finds %q", hdr, m, ok, want)
	}
}

func TestHunkNums(t *testing.T) {
	for _, hdr := range []string{
		"@@ -1,3 +1,4 @@", "@@ -1 +1 @@ func f()", "@@ -0,0 +1,2 @@", "@@ ... @@", "@@ @@",
		"@@ -12,+3 +4 @@", "@@ -1,3\t+2,x @@", "@@ --1,2 -3 +4,5", "@@ -a -7,8 +9 @@", "@@ -1,2+3 @@",
		"@@ -1,2 \r\n\f +3,", "-5 +6,7,8", "@@ -1, +2 @@", "", "-", "-1 +", "@@ -1,2 +x -3 +4 @@",
	} {
		checkHunkNums(t, hdr)
	}
}

func FuzzHunkNums(f *testing.F) {
	for _, s := range []string{"@@ -1,3 +1,4 @@", "-1 +2", "@@ -1,2\v+3 @@"} {
		f.Add(s)
	}
	f.Fuzz(checkHunkNums)
}
