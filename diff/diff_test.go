package diff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var algorithms = []Algorithm{Myers, Histogram}

// checkScript fails unless es is well formed (sorted, in range, never
// touching) and turns a into b.
func checkScript(t *testing.T, a, b []string, es []Edit) {
	t.Helper()
	var out []string
	last, lastNew := 0, 0
	for i, e := range es {
		if e.OldStart < last || e.OldEnd < e.OldStart || e.OldEnd > len(a) ||
			e.NewStart < lastNew || e.NewEnd < e.NewStart || e.NewEnd > len(b) {
			t.Fatalf("edit %d out of order or range: %+v in %+v", i, e, es)
		}
		if e.OldStart == e.OldEnd && e.NewStart == e.NewEnd {
			t.Fatalf("edit %d is empty: %+v", i, e)
		}
		if i > 0 && (e.OldStart == last || e.NewStart == lastNew) {
			t.Fatalf("edit %d touches the previous one: %+v", i, es)
		}
		if e.OldStart-last != e.NewStart-lastNew {
			t.Fatalf("edit %d: %d common lines before it in a, %d in b", i, e.OldStart-last, e.NewStart-lastNew)
		}
		out = append(out, a[last:e.OldStart]...)
		out = append(out, b[e.NewStart:e.NewEnd]...)
		last, lastNew = e.OldEnd, e.NewEnd
	}
	out = append(out, a[last:]...)
	if diff := cmp.Diff(b, out, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("applying the script does not give b (-want +got):\n%s", diff)
	}
}

func cost(es []Edit) int {
	del, ins := Changed(es)
	return del + ins
}

// minCost is the size of a minimal script, by dynamic programming.
func minCost(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				cur[j] = prev[j+1] + 1
			} else {
				cur[j] = max(prev[j], cur[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return len(a) + len(b) - 2*prev[0]
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

// The cases every algorithm must get right. Small inputs always get a
// minimal script (histogram through its guard), so the expected size is
// the minimum; edits are given where the best script is unambiguous.
var cases = []struct {
	name  string
	a, b  string // lines separated by spaces
	edits []Edit // nil: only the size is checked
}{
	{name: "both empty"},
	{name: "old empty", b: "a b c", edits: []Edit{{0, 0, 0, 3}}},
	{name: "new empty", a: "a b c", edits: []Edit{{0, 3, 0, 0}}},
	{name: "identical", a: "a b c", b: "a b c", edits: []Edit{}},
	{name: "all different", a: "a b c", b: "d e", edits: []Edit{{0, 3, 0, 2}}},
	{name: "insert at start", a: "b c", b: "a b c", edits: []Edit{{0, 0, 0, 1}}},
	{name: "insert at end", a: "a b", b: "a b c", edits: []Edit{{2, 2, 2, 3}}},
	{name: "insert in middle", a: "a c", b: "a b c", edits: []Edit{{1, 1, 1, 2}}},
	{name: "delete at start", a: "a b c", b: "b c", edits: []Edit{{0, 1, 0, 0}}},
	{name: "delete at end", a: "a b c", b: "a b", edits: []Edit{{2, 3, 2, 2}}},
	{name: "replace one", a: "a b c", b: "a x c", edits: []Edit{{1, 2, 1, 2}}},
	{name: "two hunks", a: "a b c d e", b: "x b c d y", edits: []Edit{{0, 1, 0, 1}, {4, 5, 4, 5}}},
	{name: "repeated line removed", a: "a a a", b: "a a"},
	{name: "repeated line added", a: "x x", b: "x x x"},
	{name: "alternating shift", a: "a b a b a", b: "b a b a b"},
	{name: "myers paper", a: "a b c a b b a", b: "c b a b a c"},
	{name: "moved block", a: "p q r s t u v", b: "t u v p q r s"},
	{name: "swap halves with unique middle", a: "a b c x d e f", b: "d e f x a b c"},
	{name: "no common line", a: "a b", b: "c d e f"},
	{name: "blank lines", a: "x _ y", b: "x _ z _ y"},
	// A last line without a newline compares different from the same
	// text with one: callers mark it, as package patch does.
	{name: "missing final newline", a: "a b\n", b: "a b", edits: []Edit{{1, 2, 1, 2}}},
}

func TestCases(t *testing.T) {
	for _, tc := range cases {
		for _, alg := range algorithms {
			t.Run(tc.name+"/"+alg.String(), func(t *testing.T) {
				a, b := lines(tc.a), lines(tc.b)
				es := Lines(a, b, alg)
				checkScript(t, a, b, es)
				if got, want := cost(es), minCost(a, b); got != want {
					t.Errorf("script %v changes %d lines, minimum %d", es, got, want)
				}
				if tc.edits != nil {
					if diff := cmp.Diff(tc.edits, es, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("edits (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}

// TestCompaction checks that an ambiguous insertion lands where git puts
// it: a new function goes between two others with its blank line after it.
func TestCompaction(t *testing.T) {
	a := []string{"func a() {", "\treturn 1", "}", "", "func c() {", "\treturn 3", "}"}
	b := []string{"func a() {", "\treturn 1", "}", "", "func b() {", "\treturn 2", "}", "", "func c() {", "\treturn 3", "}"}
	for _, alg := range algorithms {
		es := Lines(a, b, alg)
		if want := []Edit{{4, 4, 4, 8}}; fmt.Sprint(es) != fmt.Sprint(want) {
			t.Errorf("%v: got %v, want %v (as git diff)", alg, es, want)
		}
	}
	// Without indentation to go by, a deletion next to a change on the
	// other side lines up with it.
	a = lines("x y y z")
	b = lines("x w y z")
	for _, alg := range algorithms {
		es := Lines(a, b, alg)
		if want := []Edit{{1, 2, 1, 2}}; fmt.Sprint(es) != fmt.Sprint(want) {
			t.Errorf("%v: got %v, want %v", alg, es, want)
		}
	}
}

func randomLines(r *rand.Rand, n, alphabet int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = string(rune('a' + r.IntN(alphabet)))
	}
	return s
}

// mutate returns a copy of a with a few random deletions, insertions and
// replacements, so that a and the result have much in common.
func mutate(r *rand.Rand, a []string, alphabet, edits int) []string {
	b := append([]string(nil), a...)
	for range edits {
		i := r.IntN(len(b) + 1)
		switch r.IntN(3) {
		case 0:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		case 1:
			b = append(b[:i], append([]string{string(rune('a' + r.IntN(alphabet)))}, b[i:]...)...)
		case 2:
			if i < len(b) {
				b[i] = string(rune('a' + r.IntN(alphabet)))
			}
		}
	}
	return b
}

// TestRandomMinimal checks on many small random inputs that every
// algorithm's script turns a into b and is minimal.
func TestRandomMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		alphabet := 2 + r.IntN(6)
		var a, b []string
		if iter%2 == 0 {
			a, b = randomLines(r, r.IntN(14), alphabet), randomLines(r, r.IntN(14), alphabet)
		} else {
			a = randomLines(r, r.IntN(60), alphabet)
			b = mutate(r, a, alphabet, r.IntN(8))
		}
		want := minCost(a, b)
		for _, alg := range algorithms {
			es := Lines(a, b, alg)
			checkScript(t, a, b, es)
			if got := cost(es); got != want {
				t.Fatalf("%v: %q -> %q: script %v changes %d lines, minimum %d", alg, a, b, es, got, want)
			}
		}
	}
}

// TestRandomLarger runs inputs big enough for the histogram recursion and
// its fallbacks to matter, some with lines repeated more than maxChain
// times, still checking minimality by dynamic programming.
func TestRandomLarger(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 60 {
		alphabet := []int{3, 20, 300}[r.IntN(3)]
		a := randomLines(r, 200+r.IntN(600), alphabet)
		b := mutate(r, a, alphabet, r.IntN(40))
		want := minCost(a, b)
		for _, alg := range algorithms {
			es := Lines(a, b, alg)
			checkScript(t, a, b, es)
			if got := cost(es); got != want {
				t.Fatalf("%v: %d and %d lines over %d symbols: %d changed, minimum %d", alg, len(a), len(b), alphabet, got, want)
			}
		}
	}
}

// TestCostLimit forces the Myers search to give up after 4 steps, far
// sooner than it does even on huge dissimilar inputs, and checks that the
// script stays valid and within a small factor of minimal.
func TestCostLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	worst := 0.0
	for range 200 {
		alphabet := 2 + r.IntN(10)
		a := randomLines(r, r.IntN(300), alphabet)
		b := mutate(r, a, alphabet, r.IntN(100))
		if r.IntN(3) == 0 {
			b = randomLines(r, r.IntN(300), alphabet)
		}
		for _, alg := range algorithms {
			es := diffLines(a, b, alg, 4)
			checkScript(t, a, b, es)
			if m := minCost(a, b); m > 0 {
				worst = max(worst, float64(cost(es))/float64(m))
			}
		}
	}
	t.Logf("worst size relative to minimal with cost limit 4: %.2f", worst)
	if worst > 4 {
		t.Errorf("scripts up to %.2f times the minimal size", worst)
	}
}

// TestRepeatedBlocks is the input on which git's histogram diff collapses:
// one block of lines repeated many times, edited here and there. The
// histogram script must be as small as the Myers one.
func TestRepeatedBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var block []string
	for i := range 200 {
		switch {
		case i%7 == 0:
			block = append(block, "}")
		case i%5 == 0:
			block = append(block, "")
		default:
			block = append(block, fmt.Sprintf("line %d", i))
		}
	}
	var a []string
	for range 40 {
		a = append(a, block...)
	}
	b := append([]string(nil), a...)
	for range 60 {
		i := r.IntN(len(b))
		switch r.IntN(3) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			b = append(b[:i], append([]string{block[r.IntN(len(block))]}, b[i:]...)...)
		case 2:
			b[i] = "edited"
		}
	}
	m := Lines(a, b, Myers)
	h := Lines(a, b, Histogram)
	checkScript(t, a, b, m)
	checkScript(t, a, b, h)
	if cost(h) > cost(m) {
		t.Errorf("histogram changes %d lines, Myers %d", cost(h), cost(m))
	}
	if cost(m) > 150 {
		t.Errorf("Myers changes %d lines for 60 edits", cost(m))
	}
}

func TestParseAlgorithm(t *testing.T) {
	for _, alg := range algorithms {
		got, err := ParseAlgorithm(alg.String())
		if err != nil || got != alg {
			t.Errorf("ParseAlgorithm(%q) = %v, %v", alg.String(), got, err)
		}
	}
	if got, err := ParseAlgorithm(""); err != nil || got != Histogram {
		t.Errorf(`ParseAlgorithm("") = %v, %v; want the default, histogram`, got, err)
	}
	if _, err := ParseAlgorithm("patience"); err == nil {
		t.Error(`ParseAlgorithm("patience") succeeded`)
	}
	if s := Algorithm(7).String(); s != "Algorithm(7)" {
		t.Errorf("Algorithm(7).String() = %q", s)
	}
}

func FuzzLines(f *testing.F) {
	f.Add("a\nb\nc", "a\nc\nd")
	f.Add("x\n\nx\n\nx", "\nx\n\n")
	f.Add("", "a")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := strings.Split(x, "\n"), strings.Split(y, "\n")
		if len(a) > 300 || len(b) > 300 {
			return
		}
		want := minCost(a, b)
		for _, alg := range algorithms {
			es := Lines(a, b, alg)
			checkScript(t, a, b, es)
			if got := cost(es); got != want {
				t.Fatalf("%v: %d changed lines, minimum %d", alg, got, want)
			}
		}
	})
}

// TestGuardLarge moves a block that outlasts every unchanged run of a
// large file: git's histogram anchors on it and deletes and reinserts the
// rest of the file. The guard must notice and return the Myers script.
func TestGuardLarge(t *testing.T) {
	var p, q []string
	for i := range 2000 {
		p = append(p, fmt.Sprintf("moved %d", i))
	}
	for i := range 20000 {
		q = append(q, fmt.Sprintf("kept %d", i))
	}
	a := append(append([]string(nil), p...), q...)
	var b []string
	for i, l := range q {
		if i%150 == 75 {
			l += " edited"
		}
		b = append(b, l)
	}
	b = append(b, p...)
	m := Lines(a, b, Myers)
	h := Lines(a, b, Histogram)
	checkScript(t, a, b, m)
	checkScript(t, a, b, h)
	if cost(h) > cost(m) {
		t.Errorf("histogram changes %d lines, Myers %d", cost(h), cost(m))
	}
	t.Logf("histogram %d, Myers %d changed lines", cost(h), cost(m))
}

// TestSplitMatchesWhole: on inputs large enough to be split across cores,
// the split script rebuilds b and changes as few lines as the whole diff.
func TestSplitMatchesWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	r := rand.New(rand.NewPCG(3, 3))
	var a []string
	for i := 0; i < 70000; i++ {
		// Realistic repetition: a few hundred distinct lines, many repeated.
		a = append(a, fmt.Sprintf("line %d", r.IntN(400)))
	}
	var b []string
	for _, l := range a {
		switch x := r.IntN(100); {
		case x == 0:
			continue
		case x == 1:
			b = append(b, "inserted "+l)
		}
		b = append(b, l)
	}
	if _, _, ok := splitPoint(a, b); !ok {
		t.Fatal("no split point found on well-aligned inputs")
	}
	for _, alg := range []Algorithm{Histogram, Myers} {
		split := Lines(a, b, alg)
		whole := diffLines(a, b, alg, 0)
		checkScript(t, a, b, split)
		if cs, cw := cost(split), cost(whole); cs > cw {
			t.Errorf("%v: split changes %d lines, whole %d", alg, cs, cw)
		}
	}
}

// TestExactSolve forces the switch from the Myers search to the
// bit-parallel exact solve on small random inputs, with and without lines
// that recur, and checks that every script is valid and minimal.
func TestExactSolve(t *testing.T) {
	defer func(c, d, w, g int) { lcsMinCost, lcsDiv, leafWords, guessMin = c, d, w, g }(lcsMinCost, lcsDiv, leafWords, guessMin)
	lcsMinCost, lcsDiv = 1, 1<<20
	// Boxes solved in one pass (leaf), and split down to single rows by
	// passes restricted to the diagonal band, without and with the
	// first pass near the diagonal that narrows the band.
	for _, c := range [][2]int{{leafWords, guessMin}, {0, guessMin}, {0, 0}} {
		leafWords, guessMin = c[0], c[1]
		exactSolve(t)
	}
}

func exactSolve(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := range 400 {
		alphabet := 2 + r.IntN(40)
		a := randomLines(r, r.IntN(200+n), alphabet)
		b := mutate(r, a, alphabet, r.IntN(150))
		if r.IntN(3) == 0 {
			b = randomLines(r, r.IntN(300), alphabet)
		}
		want := minCost(a, b)
		for _, alg := range algorithms {
			es := Lines(a, b, alg)
			checkScript(t, a, b, es)
			if got := cost(es); got != want {
				t.Fatalf("%v, %d and %d lines over %d symbols (leafWords %d): %d changed lines, minimal %d", alg, len(a), len(b), alphabet, leafWords, got, want)
			}
		}
	}
}
