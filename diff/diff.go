// Package diff computes line diffs.
//
// The result of every algorithm is an edit script: a sorted list of [Edit]
// values, each replacing a range of old lines by a range of new lines.
package diff

import "fmt"

// Algorithm selects a diff algorithm.
type Algorithm int

// The algorithms.
const (
	// Histogram is git's histogram diff: it anchors on lines that are rare in
	// both inputs, which keeps moved and repeated blocks readable.
	Histogram Algorithm = iota
	// Myers is the classic minimal diff.
	Myers
)

func (a Algorithm) String() string {
	switch a {
	case Histogram:
		return "histogram"
	case Myers:
		return "myers"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm returns the algorithm named s.
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
// line.
func Lines(a, b []string, alg Algorithm) []Edit {
	return myers(a, b)
}

// myers is a plain O(ND) Myers diff, kept simple as a reference.
func myers(a, b []string) []Edit {
	// Common prefix and suffix cost nothing to match.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	x0, y0 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(x0), len(y0)
	if n == 0 && m == 0 {
		return nil
	}
	max := n + m
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	var dEnd int
outer:
	for d := 0; d <= max; d++ {
		snap := make([]int, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && x0[x] == y0[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				dEnd = d
				break outer
			}
		}
	}
	// Walk back through the snapshots, marking deleted and inserted lines.
	delA := make([]bool, n)
	insB := make([]bool, m)
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		snap := trace[d]
		get := func(k int) int { return snap[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		// The point right after the non-diagonal move from (px, py).
		sx, sy := px+1, py
		if pk == k+1 {
			sx, sy = px, py+1
		}
		for x > sx && y > sy {
			x--
			y--
		}
		if pk == k+1 {
			insB[py] = true
		} else {
			delA[px] = true
		}
		x, y = px, py
	}
	return fromMarks(delA, insB, pre)
}

// fromMarks turns per-line deletion and insertion marks into edits, offsetting
// both sides by pre.
func fromMarks(delA, insB []bool, pre int) []Edit {
	var out []Edit
	i, j := 0, 0
	for i < len(delA) || j < len(insB) {
		if (i < len(delA) && delA[i]) || (j < len(insB) && insB[j]) {
			e := Edit{OldStart: i + pre, NewStart: j + pre}
			for i < len(delA) && delA[i] {
				i++
			}
			for j < len(insB) && insB[j] {
				j++
			}
			e.OldEnd, e.NewEnd = i+pre, j+pre
			out = append(out, e)
			continue
		}
		i++
		j++
	}
	return out
}
