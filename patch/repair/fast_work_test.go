package repair

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// insertions returns a file of 8n lines and a git diff of n hunks that
// each insert a line: every hunk's place moves by the lines the hunks
// before it added, the case where a search from each hunk's stated line
// in the file as patched so far would cost per hunk what came before it.
func insertions(n int) (old, diff string) {
	var o, w strings.Builder
	for i := range 8 * n {
		fmt.Fprintf(&o, "line %d\n", i)
		fmt.Fprintf(&w, "line %d\n", i)
		if i%8 == 4 {
			fmt.Fprintf(&w, "added after %d\n", i)
		}
	}
	fp := patch.Make("f", "f", o.String(), w.String(), patch.DefaultMakeOptions())
	text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff)
	if err != nil {
		panic(err)
	}
	if !strings.HasPrefix(text, "diff --git ") {
		text = "diff --git a/f b/f\n" + text
	}
	return o.String(), text
}

// fastCost runs the fast path's writing pass over text against content
// and returns the work it counted and the bytes it allocated.
func fastCost(t *testing.T, text, content string) (work int, alloc uint64) {
	t.Helper()
	f := &fastFile{reverse: false}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f.br = newFastReader(strings.NewReader(text), int64(len(text)))
	if _, err := f.header(); err != nil {
		t.Fatalf("header: %v", err)
	}
	if err := f.hunksOf(&fileWin{r: strings.NewReader(content), chunk: fastChunk}, io.Discard); err != nil {
		t.Fatalf("hunks: %v", err)
	}
	runtime.ReadMemStats(&after)
	return f.work, after.TotalAlloc - before.TotalAlloc
}

// TestFastPathLinear: the fast path's work is at most the lines of the
// file plus those of the patch, and the bytes it allocates do not grow
// with the hunks (the two read buffers only), at 2,000 and 8,000 hunks, for
// changed lines (ManyHunks) and for insertions that move every later
// hunk. A quadratic scan, or an allocation per hunk, fails it.
func TestFastPathLinear(t *testing.T) {
	type sample struct {
		work, lines int
		alloc       uint64
	}
	for _, kind := range []string{"changed lines", "insertions"} {
		var s []sample
		for _, n := range []int{2000, 8000} {
			var old, diff string
			if kind == "insertions" {
				old, diff = insertions(n)
			} else {
				old, _, diff = testdata.ManyHunks(n)
			}
			if got := strings.Count(diff, "\n@@ "); got != n {
				t.Fatalf("%s: %d hunks, %d wanted", kind, got, n)
			}
			work, alloc := fastCost(t, diff, old)
			s = append(s, sample{work, strings.Count(old, "\n") + strings.Count(diff, "\n"), alloc})
		}
		for _, x := range s {
			if x.work > x.lines {
				t.Errorf("%s: work %d over the %d lines of the file and the patch", kind, x.work, x.lines)
			}
		}
		for _, x := range s {
			if x.alloc > 2*fastChunk+64<<10 {
				t.Errorf("%s: %d bytes allocated, over the two buffers of %d", kind, x.alloc, fastChunk)
			}
		}
		if grow := int64(s[1].alloc) - int64(s[0].alloc); grow > 64<<10 {
			t.Errorf("%s: %d bytes allocated at 2,000 hunks, %d at 8,000: %d more", kind, s[0].alloc, s[1].alloc, grow)
		}
		t.Logf("%s: work %d / %d lines, %d bytes allocated at 2,000 hunks; %d / %d, %d bytes at 8,000", kind, s[0].work, s[0].lines, s[0].alloc, s[1].work, s[1].lines, s[1].alloc)
	}
}
