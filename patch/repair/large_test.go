package repair_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// largeFile returns about n lines of code whose short lines ("}", "",
// "\treturn x") recur thousands of times, with block inserted after line
// 1,000 and, when twice, again near the end; it also returns the first
// line of each copy of block (1-based).
func largeFile(n int, block string, twice bool) (string, [2]int) {
	var b strings.Builder
	line := 0
	var at [2]int
	copies := 0
	for k := 0; line < n; k++ {
		if copies == 0 && line >= 1000 || copies == 1 && twice && line >= n-1000 {
			at[copies] = line + 1
			copies++
			b.WriteString(block)
			line += strings.Count(block, "\n")
		}
		fmt.Fprintf(&b, "func f%d() int {\n\tx := %d\n\treturn x\n}\n\n", k, k)
		line += 5
	}
	return b.String(), at
}

const twinBlock = "func twin() int {\n\ty := compute()\n\treturn y + 1\n}\n\n"

// In a file of 150,000 lines, a hunk that fits two places is refused at
// every tier, naming both places; and the file's recurring short lines do
// not make places of their own.
func TestLargeAmbiguousRefusedNamingBoth(t *testing.T) {
	file, at := largeFile(150000, twinBlock, true)
	for _, c := range []struct{ name, hunk string }{
		{"exact", "@@ @@\n func twin() int {\n-\ty := compute()\n+\ty := compute2()\n \treturn y + 1\n"},
		{"whitespace", "@@ @@\n func twin() int {  \n-\ty := compute()\n+\ty := compute2()\n \treturn y + 1 \n"},
		{"indentation", "@@ @@\n func twin() int {\n-    y := compute()\n+    y := compute2()\n     return y + 1\n"},
		// An invented context line: only the fuzzy tier fits.
		{"fuzzy", "@@ @@\n func twin() int {\n \t// compute y\n-\ty := compute()\n+\ty := compute2()\n \treturn y + 1\n }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edit := "--- a/big.go\n+++ b/big.go\n" + c.hunk
			res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"big.go": file}})
			if !errors.Is(err, repair.ErrRefused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			for _, l := range at {
				if !strings.Contains(err.Error(), fmt.Sprint(l)) {
					t.Errorf("error %q does not name line %d", err, l)
				}
			}
			if got := res.Files[0].Hunks[0].Candidates; len(got) != 2 || got[0] != at[0] || got[1] != at[1] {
				t.Errorf("candidates = %v, want %v", got, at)
			}
			if res.Results != nil {
				t.Error("a refused repair returned contents")
			}
		})
	}
}

// The same hunk with an exact line number applies at that copy only.
func TestLargeLineNumberDecides(t *testing.T) {
	file, at := largeFile(150000, twinBlock, true)
	edit := fmt.Sprintf("--- a/big.go\n+++ b/big.go\n@@ -%d,3 +%d,3 @@\n func twin() int {\n-\ty := compute()\n+\ty := compute2()\n \treturn y + 1\n", at[1], at[1])
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"big.go": file}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(res.Results[0].Content)
	want := file[:strings.LastIndex(file, "compute()")] + "compute2()" + file[strings.LastIndex(file, "compute()")+len("compute()"):]
	if got != want {
		t.Error("the hunk was not applied at the copy its line number names, and only there")
	}
}

// In a large file, a change already made is reported as already applied,
// and a hunk removing a line the file lacks is refused.
func TestLargeAlreadyAppliedAndMissingRemoved(t *testing.T) {
	file, _ := largeFile(150000, "func once() int {\n\ty := compute2()\n\treturn y + 1\n}\n\n", false)
	edit := "--- a/big.go\n+++ b/big.go\n@@ @@\n func once() int {\n-\ty := compute()\n+\ty := compute2()\n \treturn y + 1\n"
	res, _ := repair.Repair(edit, repair.Options{FS: patch.MapFS{"big.go": file}})
	if h := res.Files[0].Hunks[0]; h.Status != repair.StatusAlreadyApplied {
		t.Errorf("hunk status = %s (%s), want already_applied", h.Status, h.Reason)
	}
	for _, r := range res.Results {
		if string(r.Content) != file {
			t.Error("an already-applied hunk changed the file")
		}
	}

	edit = "--- a/big.go\n+++ b/big.go\n@@ @@\n func once() int {\n-\ty := compute3()\n+\ty := compute4()\n \treturn y + 1\n"
	_, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"big.go": file}})
	if !errors.Is(err, repair.ErrRefused) || !strings.Contains(err.Error(), "removes") {
		t.Fatalf("err = %v, want a refusal about the removed line", err)
	}
}
