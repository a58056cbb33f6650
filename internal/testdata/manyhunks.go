package testdata

import (
	"fmt"
	"strings"
)

// ManyHunks returns a file of 8n distinct lines, a copy with every eighth
// line changed, and the diff between them as git diff writes it (three
// lines of context, so each change is a hunk of its own): n hunks in one
// file, the case where the cost per hunk must not grow with the hunks
// before it.
func ManyHunks(n int) (old, new, diff string) {
	var o, w, d strings.Builder
	line := func(i int) string { return fmt.Sprintf("line %d of the file\n", i) }
	d.WriteString("diff --git a/f b/f\n--- a/f\n+++ b/f\n")
	for i := 0; i < 8*n; i++ {
		o.WriteString(line(i))
		if i%8 != 4 {
			w.WriteString(line(i))
			continue
		}
		changed := fmt.Sprintf("changed %d\n", i)
		w.WriteString(changed)
		fmt.Fprintf(&d, "@@ -%d,7 +%d,7 @@\n", i-2, i-2)
		for j := i - 3; j < i; j++ {
			d.WriteString(" " + line(j))
		}
		d.WriteString("-" + line(i) + "+" + changed)
		for j := i + 1; j < i+4; j++ {
			d.WriteString(" " + line(j))
		}
	}
	return o.String(), w.String(), d.String()
}
