package repair

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// naiveContiguous is contiguous as it was before the index: every position
// of the file, checked line by line.
func naiveContiguous(t *text, es []entry, lv int, alt bool) []place {
	var out []place
	for j := 0; len(es) > 0 && j+len(es) <= len(t.lines); j++ {
		ok := true
		for i := range es {
			rs := es[i].normAt(lv)
			if !alt && len(rs) > 1 {
				rs = rs[:1]
			}
			hit := false
			for _, r := range rs {
				hit = hit || t.normLevel(lv)[j+i] == r
			}
			ok = ok && hit
		}
		if ok {
			at := make([]int, len(es))
			for i := range at {
				at[i] = j + i
			}
			out = append(out, place{start: j, end: j + len(es), at: at, tier: tierOfLevel[lv], level: lv})
		}
	}
	return out
}

// randomText makes a file whose lines recur a lot and differ in whitespace,
// as code does: braces, blank lines, a few statements.
func randomText(r *rand.Rand, n int) []string {
	pool := []string{"}", "", "\treturn nil", "\tx := 1", "\tif err != nil {", "\t\treturn err", "func a() {", "func b() {", "\tx  := 1", "\treturn nil  ", "    x := 1", "\ty := 2"}
	lines := make([]string, n)
	for i := range lines {
		if r.Intn(4) == 0 {
			lines[i] = fmt.Sprintf("\tv%d := %d", r.Intn(n), i%7)
		} else {
			lines[i] = pool[r.Intn(len(pool))]
		}
	}
	return lines
}

// randomHunk takes a stretch of the file as a hunk's old side and damages
// it: a line left out, a line invented, whitespace changed, a second
// reading without the leading space.
func randomHunk(r *rand.Rand, lines []string) []entry {
	m := 2 + r.Intn(7)
	j := r.Intn(len(lines) - m)
	var es []entry
	for _, l := range lines[j : j+m] {
		switch r.Intn(12) {
		case 0:
			continue
		case 1:
			es = append(es, entry{kind: patch.LineContext, raw: []string{"\tinvented := 0"}})
		case 2:
			l = strings.ReplaceAll(l, "\t", "    ")
		case 3:
			l += " "
		}
		e := entry{kind: patch.LineContext, raw: []string{l}}
		if r.Intn(3) == 0 {
			e.kind = patch.LineDelete
		}
		if r.Intn(5) == 0 && len(l) > 1 {
			e.raw = append(e.raw, l[1:])
		}
		es = append(es, e)
	}
	for i := range es {
		es[i].signif = significant(es[i].raw[0])
	}
	return es
}

// The index finds exactly the places a scan of the whole file finds, at
// every level, and fuzzy's stretches find exactly the places an alignment
// of the whole file finds: no place that fits is lost, none is invented.
func TestIndexFindsWhatScanningFinds(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	fuzzyFound := 0
	for k := 0; k < 400; k++ {
		lines := randomText(r, 20+r.Intn(300))
		tx := newText(strings.Join(lines, "\n") + "\n")
		for h := 0; h < 5; h++ {
			es := randomHunk(r, lines)
			if len(es) == 0 {
				continue
			}
			for lv := 0; lv < numLevels; lv++ {
				for _, alt := range []bool{false, true} {
					got, want := contiguous(tx, es, lv, alt), naiveContiguous(tx, es, lv, alt)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("file %d hunk %d level %d alt %v: index found %v, scan %v", k, h, lv, alt, got, want)
					}
				}
			}
			for _, lv := range []int{levelTrailing, levelSpace} {
				budget := min(max(1, len(es)/6), 3)
				got, want := fuzzy(tx, es, budget, lv), fuzzySpan(tx, es, budget, lv, 0, len(tx.lines), nil)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("file %d hunk %d level %d: stretches found %v, whole file %v", k, h, lv, got, want)
				}
				fuzzyFound += len(want)
			}
		}
	}
	if fuzzyFound < 100 {
		t.Errorf("only %d fuzzy places in all: the test does not exercise the fuzzy tier", fuzzyFound)
	}
}
