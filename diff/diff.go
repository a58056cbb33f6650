// Package diff computes line diffs.
//
// The result of every algorithm is an edit script: a sorted list of [Edit]
// values, each replacing a range of old lines by a range of new lines. The
// changed-line count of a script (deleted plus inserted lines, see
// [Changed]) is what the algorithms try to keep small.
//
// # Preparation
//
// [Lines] first matches the common prefix and suffix of the two inputs by
// direct comparison, then interns the remaining lines: every distinct line
// gets a small integer, so the algorithms compare integers, never strings.
// Interning takes O(N) expected time and space, where N is the total number
// of lines.
//
// # Myers
//
// [Myers] is Eugene Myers' O(ND) algorithm ("An O(ND) Difference Algorithm
// and Its Variations", 1986) in its linear-space form: the search runs
// forward from the start and backward from the end at the same time until
// the two meet on a "middle snake", and the halves on either side of it are
// solved recursively. Time is O((N+M)·D) for inputs of N and M lines whose
// minimal script changes D lines (O(N+M+D²) expected for ordinary edits),
// space O(N+M).
//
// Before the search, lines that occur in only one of the inputs are set
// aside, as GNU diff's discard_confusing_lines and git's xdl_cleanup_records
// do: they are changed in every script, so leaving them out loses nothing
// and shrinks the problem, often to a fraction of its size.
//
// A search whose cost passes about √(N·M)/16 on a box of N×M lines, which
// happens only when the two sides have little in common, stops and solves
// that box exactly with the bit-parallel longest-common-subsequence
// recurrence (Allison and Dix; Hyyrö), 64 cells of the dynamic-programming
// table per machine word, in Hirschberg's linear-space divide and conquer:
// O(N·M/64) time. At a quarter and at a half of that cost the search
// measures how far its two ends have got; when at that pace they would
// not meet before the switch, it switches at once. Boxes of up to 2^16
// words of rows are solved in one pass that keeps every row (512 KB) and
// traces the script back, without further recursion. Once a split has
// told the LCS of a box, its passes leave out the diagonals that no
// minimal path can reach (a box whose minimal script changes D lines is
// crossed within a band about D diagonals wide), so on inputs with a
// minimal script well below N+M each level after the first costs a
// fraction of a full pass. The first split of a box starts with a pass
// over the diagonals near the box's own (a sixteenth of the columns either
// side): its LCS is a lower bound that narrows the band of that split too. The result is then minimal where GNU diff's and git's
// cost bounds settle for a larger script: two shuffled copies of 20,000
// lines change 38,908 lines (GNU diff 38,930, git 39,338) in about 20 ms.
//
// Only boxes too large for that (N·M/64 above 2^28 word operations, about
// 130,000 lines on each side) keep the cost bound: the search settles for
// the split point that has got furthest, as GNU diff (TOO_EXPENSIVE) and git
// (mxcost) do. The bound falls from 4096 in proportion to the size, down to
// about √(N+M), like git's.
//
// # Histogram
//
// [Histogram] is git's histogram diff (xdiff/xhistogram.c, after JGit). In
// a region of the inputs it finds the longest run of common lines anchored
// on a line that occurs fewest times in the old side, keeps that run, and
// recurses on the regions before and after it. Lines that occur more than
// 64 times in a region never anchor; a region whose common lines are all
// that frequent is diffed with Myers, as git does. Anchoring on rare lines
// keeps moved and rewritten blocks readable.
//
// Git rebuilds a hash index of the old side of every region. Here the old
// side is indexed once (the positions of each line, in order), a region's
// occurrences of a line are found from a cursor that only moves forward
// (regions are searched in order of their start), and maximal runs are
// remembered from one region to the next. A region then costs time in its
// new side only, plus the runs it has not met before: O(N log N) for
// ordinary inputs, quadratic at worst, like git. Space is O(N+M).
//
// Plain histogram diff can be far from minimal when lines recur many times
// or a long block moves: if the old file repeats a block, an anchor may pair
// a run of the new file with the wrong copy, and everything between the two
// copies becomes changed (git turns a 2,000-line diff into a 240,000-line
// one this way). This package guards against that in two ways:
//
//   - Among anchor candidates that git would rank equal (same occurrence
//     count, same length), it picks the one closest to the region's
//     diagonal band, so a repeated block pairs with the copy in the same
//     place. On the repeated inputs measured (blocks or whole files
//     repeated 10 to 40 times, 1% of lines edited) this alone keeps the
//     script minimal where git's grows a hundredfold.
//   - After the histogram pass it may compute the Myers script too and
//     return whichever is smaller. On inputs under 65,536 lines it does so
//     whenever the histogram script exceeds a lower bound that holds for
//     every script (the sum over distinct lines of the difference between
//     their occurrence counts in the two inputs), so the histogram result
//     is never larger than the Myers one there. On larger inputs, where a
//     second diff would double the time, it does so when the histogram
//     result shows the signature of a collapse: an anchor more than 64
//     lines and more than 1/32 of the script off its region's diagonal
//     band, or a script more than twice the lower bound. Ordinary edits,
//     even of files full of repeated lines, show neither and are diffed
//     once.
//
// # Compaction
//
// Both algorithms end with git's change compaction (xdl_change_compact with
// the indent heuristic, git's default): a block of inserted or deleted lines
// that could equally sit a few lines higher or lower is slid to line up with
// a change on the other side, or else to the position git's indentation
// scoring prefers (between functions rather than inside them, ending at a
// blank line). Sliding never changes the number of changed lines. It takes
// O(N) time.
package diff

import (
	"bytes"
	"fmt"
	"runtime"
)

// Algorithm selects a diff algorithm.
type Algorithm int

// The algorithms.
const (
	// Histogram is git's histogram diff: it anchors on lines that are rare in
	// the old input, which keeps moved and repeated blocks readable.
	Histogram Algorithm = iota
	// Myers is the classic minimal diff (minimal unless the inputs are
	// huge and very different).
	Myers
)

// String returns the algorithm's name, as ParseAlgorithm accepts it.
func (a Algorithm) String() string {
	switch a {
	case Histogram:
		return "histogram"
	case Myers:
		return "myers"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm returns the algorithm named s. The empty string names the
// default, Histogram.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch s {
	case "histogram", "":
		return Histogram, nil
	case "myers":
		return Myers, nil
	}
	return 0, fmt.Errorf("unknown diff algorithm %q (want histogram or myers)", s)
}

// Edit replaces Old[OldStart:OldEnd] by New[NewStart:NewEnd]. An edit with an
// empty old range is an insertion; one with an empty new range is a deletion.
type Edit struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// Lines returns the edit script that turns a into b. Edits are sorted, never
// overlap and never touch: between two edits there is at least one common
// line. Lines are compared as whole strings; callers that care whether the
// last line ends in a newline should make the two forms differ (for example
// by appending "\n" to a last line that lacks one). An alg other than Myers
// selects Histogram.
//
// Inputs of more than 2^17 lines in all, on a machine with more than one
// core, are cut at a run of 32 equal lines on the diagonal near their middle
// and the two halves diffed at once.
func Lines(a, b []string, alg Algorithm) []Edit {
	if len(a)+len(b) >= splitMin && runtime.GOMAXPROCS(0) > 1 {
		if i, j, ok := splitPoint(a, b); ok {
			return splitLines(a, b, i, j, alg)
		}
	}
	return diffLines(a, b, alg, 0)
}

// splitMin is the total number of lines from which Lines diffs the two
// halves of its inputs on two cores.
const splitMin = 1 << 17

// splitRun is the number of equal consecutive lines that anchor a split.
const splitRun = 32

// splitPoint looks, near the middle of a, for a run of splitRun lines
// equal to a run of b on the same diagonal band: where the inputs line up
// so well, every sensible alignment matches the run, and the two sides of
// it can be diffed apart. It looks only a little way off the diagonal that
// the ends of the inputs imply, so that a repeated block pairs with the
// copy in the same place, never with a copy elsewhere.
func splitPoint(a, b []string) (int, int, bool) {
	n, m := len(a), len(b)
	const window = 256 // how far from the expected diagonal a run may sit
	for d := 0; d < n/8; d++ {
		for _, i := range [2]int{n/2 + d, n/2 - d} {
			if i < 0 || i+splitRun > n {
				continue
			}
			// The diagonal through the middle of both inputs.
			want := i + (m-n)/2
			for k := -window; k <= window; k++ {
				j := want + k
				if j < 0 || j+splitRun > m || a[i] != b[j] {
					continue
				}
				eq := 1
				for eq < splitRun && a[i+eq] == b[j+eq] {
					eq++
				}
				if eq == splitRun {
					return i, j, true
				}
			}
		}
	}
	return 0, 0, false
}

// splitLines diffs a[:i] with b[:j] and a[i:] with b[j:] at once.
func splitLines(a, b []string, i, j int, alg Algorithm) []Edit {
	var left []Edit
	done := make(chan struct{})
	go func() {
		left = diffLines(a[:i], b[:j], alg, 0)
		close(done)
	}()
	right := diffLines(a[i:], b[j:], alg, 0)
	<-done
	out := make([]Edit, 0, len(left)+len(right))
	out = append(out, left...)
	for _, e := range right {
		out = append(out, Edit{OldStart: e.OldStart + i, OldEnd: e.OldEnd + i, NewStart: e.NewStart + j, NewEnd: e.NewEnd + j})
	}
	return out
}

// diffLines is Lines with the Myers cost bound set to limit, or chosen by
// costLimit if limit is 0; tests lower it to exercise the give-up path on
// small inputs.
func diffLines(a, b []string, alg Algorithm, limit int) []Edit {
	// A common prefix and suffix are matched by every algorithm; cutting
	// them off first is cheap and keeps interning to the changed middle.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre+suf == len(a) && pre+suf == len(b) {
		return nil
	}
	d := newDiffer(a, b, pre, suf)
	d.limit = limit
	switch {
	case d.n == 0:
		d.markB(0, d.m)
	case d.m == 0:
		d.markA(0, d.n)
	case alg == Myers:
		d.myers(0, d.n, 0, d.m)
	default:
		d.histogramGuarded()
	}
	compact(a, d.ca, d.cb)
	compact(b, d.cb, d.ca)
	return script(d.ca, d.cb)
}

// Changed returns the number of old lines the script deletes and of new
// lines it inserts. Their sum is the size of the script that the algorithms
// keep small, and what a unified diff shows as - and + lines.
func Changed(script []Edit) (deleted, inserted int) {
	for _, e := range script {
		deleted += e.OldEnd - e.OldStart
		inserted += e.NewEnd - e.NewStart
	}
	return deleted, inserted
}

// script turns per-line change marks into edits.
func script(ca, cb []byte) []Edit {
	var out []Edit
	i, j := 0, 0
	for {
		// Skip the common lines up to the next change on either side.
		x := bytes.IndexByte(ca[i:], 1)
		if x < 0 {
			x = len(ca) - i
		}
		y := bytes.IndexByte(cb[j:], 1)
		if y < 0 {
			y = len(cb) - j
		}
		k := min(x, y)
		i += k
		j += k
		if i == len(ca) && j == len(cb) {
			return out
		}
		e := Edit{OldStart: i, NewStart: j}
		for i < len(ca) && ca[i] != 0 {
			i++
		}
		for j < len(cb) && cb[j] != 0 {
			j++
		}
		e.OldEnd, e.NewEnd = i, j
		out = append(out, e)
	}
}
