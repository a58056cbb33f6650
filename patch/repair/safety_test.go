package repair_test

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestNeverAppliesToAnotherFile offers every dev patch, whole and stripped
// of its context spaces and line numbers, to files it was not written for.
// Nothing may apply.
func TestNeverAppliesToAnotherFile(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	tried, applied := 0, 0
	for i, r := range rows {
		variants := []string{r.UDiff, loosen(r.UDiff)}
		for k := 1; k <= 3; k++ {
			o := rows[(i+k*97)%len(rows)]
			if o.Path == r.Path {
				continue
			}
			for _, v := range variants {
				tried++
				res, err := repair.Repair(v, repair.Options{Target: "f", FS: patch.MapFS{"f": o.OldCode}})
				if err == nil {
					applied++
					t.Errorf("%s applied to %s (%s): %+v", r.ID, o.ID, o.Path, res.Files)
				}
			}
		}
	}
	t.Logf("%d offers to other files, %d applied", tried, applied)
}

// loosen breaks a udiff the way models do: no counts or numbers in hunk
// headers, no space before context lines.
func loosen(udiff string) string {
	lines := strings.Split(udiff, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			lines[i] = "@@ @@"
		case strings.HasPrefix(l, " "):
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "\n")
}
