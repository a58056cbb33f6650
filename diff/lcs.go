package diff

import "math/bits"

// A Myers search costs O((N+M)·D): on boxes whose two sides have little in
// common (D near N+M) it costs O(N·M), and a bounded search settles for a
// script that is not minimal. bitLCS solves such a box exactly with the
// bit-parallel longest-common-subsequence recurrence (Allison and Dix 1986,
// Hyyrö 2004), 64 cells of the dynamic-programming table per machine word,
// in Hirschberg's divide and conquer: O(N·M/64) time and O(N+M) space
// (plus at most 512 KB for the boxes that leaf solves in one pass).

// lcsMaxWords bounds the work of an exact solve, in word operations of one
// pass over a box (rows times words per row). Beyond it a box is left to
// the Myers cost bound: two inputs of 100,000 lines with nothing in common
// take about 1.6e8 word operations.
const lcsMaxWords = 1 << 28

// A Myers search on a box of N×M lines switches to the exact solve once
// its cost passes max(lcsMinCost, √(N·M)/lcsDiv): it has then spent about
// as much time as the exact solve needs. Variables so that tests can force
// the switch on small inputs.
var (
	lcsMinCost = 64
	lcsDiv     = 16
)

// bitLCS holds the scratch space of exact solves over a myersRun's reduced
// sequences.
type bitLCS struct {
	r *myersRun

	v            []uint64 // the row's bit vector: bit k set while column k holds no match
	pm           []uint64 // match mask of one line over the columns
	fwd, bwd     []int32  // LCS lengths of the two halves, per column split
	hist         []uint64 // leaf's kept rows
	cnt          []int32  // per id: occurrences among the columns, then bucket start
	pos          []int32  // column positions grouped by id
	dense        []int32  // per id: 1+index of its dense mask, or 0
	masks        []uint64 // dense masks of the frequent ids
	stamp        []int32  // per id: the pass that last counted it
	pass         int32
	denseIDs     []int32
	startOf, nOf []int32 // per id: bucket start and size in pos
}

func newBitLCS(r *myersRun) *bitLCS {
	nid := r.d.nid
	return &bitLCS{
		r:       r,
		cnt:     make([]int32, nid),
		dense:   make([]int32, nid),
		stamp:   make([]int32, nid),
		startOf: make([]int32, nid),
		nOf:     make([]int32, nid),
	}
}

// solve marks a minimal set of changes between r.a[x0:x1] and r.b[y0:y1],
// whose longest common subsequence is known to be at least lcs long, or
// with lcs < 0 not known at all.
func (l *bitLCS) solve(x0, x1, y0, y1, lcs int) {
	r := l.r
	a, b := r.a, r.b
	for {
		for x0 < x1 && y0 < y1 && a[x0] == b[y0] {
			x0++
			y0++
			lcs--
		}
		for x1 > x0 && y1 > y0 && a[x1-1] == b[y1-1] {
			x1--
			y1--
			lcs--
		}
		switch {
		case x0 == x1 || y0 == y1:
			r.markX(x0, x1)
			r.markY(y0, y1)
			return
		case x1-x0 == 1:
			// One old line: keep its first match, if any.
			for j := y0; j < y1; j++ {
				if b[j] == a[x0] {
					r.markY(y0, j)
					r.markY(j+1, y1)
					return
				}
			}
			r.markX(x0, x1)
			r.markY(y0, y1)
			return
		}
		if (x1-x0)*((y1-y0+63)/64) <= leafWords {
			l.leaf(x0, x1, y0, y1)
			return
		}
		// A path through cell (t, u) of the box, t old and u new lines
		// in, changes at least |t-u| + |(R-C)-(t-u)| lines; one with an
		// LCS of lcs changes R+C-2·lcs. Matches off the diagonals
		// lcs-C <= t-u <= R-lcs are on no optimal path: the passes
		// leave them out, which leaves the LCS and an optimal split
		// as they are (both passes count only matches that every
		// optimal path may use) and spares the words outside the band.
		R, C := x1-x0, y1-y0
		if lcs < 0 && C >= guessMin && 4*abs(R-C) < C {
			// Nothing known: the LCS restricted to the diagonals near
			// the box's own, a sixteenth of the columns either side,
			// costs about a sixth of a pass and is a lower bound that
			// often narrows the band of the two passes a lot.
			wd := C / 16
			kmin, kmax := min(0, R-C)-wd, max(0, R-C)+wd
			l.rows(x0, x1, y0, y1, false, &l.fwd, nil, [2]int{-kmax - 1, -kmin - 1})
			lcs = int(l.fwd[C])
		}
		lcs = max(lcs, 0)
		band := [2]int{lcs - R - 1, C - lcs - 1}
		mid := x0 + (x1-x0)/2
		l.rows(x0, mid, y0, y1, false, &l.fwd, nil, band)
		l.rows(mid, x1, y0, y1, true, &l.bwd, nil, band)
		n := y1 - y0
		best, bj := -1, 0
		for j := 0; j <= n; j++ {
			if s := int(l.fwd[j]) + int(l.bwd[n-j]); s > best {
				best, bj = s, j
			}
		}
		lower := int(l.bwd[n-bj])
		l.solve(x0, mid, y0, y0+bj, int(l.fwd[bj]))
		x0, y0, lcs = mid, y0+bj, lower
	}
}

// rows computes, for every k in 0..y1-y0, the LCS length of a[x0:x1] and
// the first k columns: b[y0:y0+k], or with rev the last k, b[y1-k:y1]. The
// result goes to *out, k = 0..y1-y0.
//
// With keep, which then holds (x1-x0+1) rows of (y1-y0+63)/64 words, the
// bit vector before each row and after the last is kept there, for leaf.
//
// The t-th row processed (from 1) counts only matches in the columns
// t+band[0] to t+band[1] (in the order of the pass; see solve): the
// result is then the LCS with the matches outside left out, and the words
// outside are not touched. A band covering every column changes nothing.
func (l *bitLCS) rows(x0, x1, y0, y1 int, rev bool, out *[]int32, keep []uint64, band [2]int) {
	a, b := l.r.a, l.r.b
	n := y1 - y0
	w := (n + 63) / 64
	col := func(k int) int32 { // the line of column k
		if rev {
			return b[y1-1-k]
		}
		return b[y0+k]
	}
	// Group the columns by line: counting sort over the ids present.
	l.pass++
	ps := l.pass
	for k := range n {
		id := col(k)
		if l.stamp[id] != ps {
			l.stamp[id] = ps
			l.nOf[id] = 0
			l.dense[id] = 0
		}
		l.nOf[id]++
	}
	l.pos = grow(l.pos, n)
	l.denseIDs = l.denseIDs[:0]
	at := int32(0)
	for k := range n {
		id := col(k)
		if l.dense[id] == 0 && l.nOf[id] > 0 {
			// First column of this id: reserve its bucket.
			l.startOf[id] = at
			at += l.nOf[id]
			l.dense[id] = -1 // bucket reserved
			if int(l.nOf[id]) > w {
				l.denseIDs = append(l.denseIDs, id)
			}
			l.nOf[id] = 0
		}
		l.pos[l.startOf[id]+l.nOf[id]] = int32(k)
		l.nOf[id]++
	}
	// Lines that fill many columns get a dense mask: setting and clearing
	// their bits one by one for every row would cost more than a word pass.
	l.masks = growU(l.masks, len(l.denseIDs)*w)
	clear(l.masks)
	for i, id := range l.denseIDs {
		l.dense[id] = int32(i + 1)
		m := l.masks[i*w : (i+1)*w]
		for _, k := range l.pos[l.startOf[id] : l.startOf[id]+l.nOf[id]] {
			m[k>>6] |= 1 << (k & 63)
		}
	}
	l.v = growU(l.v, w)
	for i := range l.v {
		l.v[i] = ^uint64(0)
	}
	l.pm = growU(l.pm, w)
	clear(l.pm) // kept clear between rows
	v := l.v
	// Words from top on have not changed since they were set: all ones,
	// through which a carry runs without changing anything.
	top := 0
	for i := x0; i < x1; i++ {
		if keep != nil {
			copy(keep[(i-x0)*w:], v)
		}
		id := a[i]
		if rev {
			id = a[x1-1-(i-x0)]
		}
		if l.stamp[id] != ps {
			continue // no match in any column: the row changes nothing
		}
		ks := l.pos[l.startOf[id] : l.startOf[id]+l.nOf[id]]
		t := i - x0 + 1
		lo, hi := max(t+band[0], 0), min(t+band[1], n-1)
		if lo > hi {
			continue // no column in the band
		}
		if d := l.dense[id]; d > 0 {
			// v = (v + (v & pm)) | (v &^ pm), with the carry running
			// through the words.
			pm := l.masks[int(d-1)*w : int(d)*w]
			if lo == 0 && hi == n-1 {
				denseRow(v, pm, 0)
				top = len(v)
				continue
			}
			wl, wh := lo>>6, hi>>6
			mlo, mhi := ^uint64(0)<<(lo&63), ^uint64(0)>>(63-hi&63)
			var c uint64
			if wl == wh {
				c = denseWord(v, pm, wl, mlo&mhi, 0)
			} else {
				c = denseWord(v, pm, wl, mlo, 0)
				c = denseRow(v[wl+1:wh], pm[wl+1:wh], c)
				c = denseWord(v, pm, wh, mhi, c)
			}
			top = max(top, wh+1)
			for j := wh + 1; c != 0 && j < top; j++ {
				x := v[j]
				var s uint64
				s, c = bits.Add64(x, 0, c)
				v[j] = s | x
			}
			continue
		}
		if lo > 0 || hi < n-1 {
			// The columns of the row in the band: ks is sorted.
			p := 0
			for p < len(ks) && int(ks[p]) < lo {
				p++
			}
			q := p
			for q < len(ks) && int(ks[q]) <= hi {
				q++
			}
			ks = ks[p:q]
		}
		// A line with few columns: the same update, word by word only
		// where the mask has bits or a carry runs. Elsewhere (p = 0, no
		// carry) the word stays as it is.
		pm := l.pm
		for _, k := range ks {
			pm[k>>6] |= 1 << (k & 63)
		}
		var carry uint64
		j := 0 // words below j are done
		for _, k := range ks {
			wj := int(k >> 6)
			if wj < j {
				continue
			}
			for ; carry != 0 && j < wj; j++ {
				x := v[j]
				var s uint64
				s, carry = bits.Add64(x, 0, carry)
				v[j] = s | x
			}
			x, p := v[wj], pm[wj]
			var s uint64
			s, carry = bits.Add64(x, x&p, carry)
			v[wj] = s | (x &^ p)
			pm[wj] = 0
			j = wj + 1
			top = max(top, j)
		}
		for ; carry != 0 && j < top; j++ {
			x := v[j]
			var s uint64
			s, carry = bits.Add64(x, 0, carry)
			v[j] = s | x
		}
	}
	if keep != nil {
		copy(keep[(x1-x0)*w:], v)
	}
	// The LCS with the first k columns is the number of zero bits among
	// the first k.
	*out = grow(*out, n+1)
	o := *out
	o[0] = 0
	z := int32(0)
	for j, x := range v {
		x = ^x
		for k := 0; k < 64 && j*64+k < n; k++ {
			z += int32(x >> k & 1)
			o[j*64+k+1] = z
		}
	}
}

// leafWords bounds the box that leaf solves in one pass, in words of
// its kept rows (512 KB): below it Hirschberg's recursion would spend more
// on the set-up of its many small passes than on the rows themselves.
// A variable so that tests can send small boxes through the recursion.
var leafWords = 1 << 16

// leaf marks a minimal set of changes between a[x0:x1] and b[y0:y1] from
// one forward pass that keeps every row's bit vector, traced back from the
// bottom-right corner. Row t of the kept vectors has a zero at column k
// where the LCS of a[x0:x0+t] and b[y0:y0+k+1] exceeds that with
// b[y0:y0+k] by one.
func (l *bitLCS) leaf(x0, x1, y0, y1 int) {
	r := l.r
	a, b := r.a, r.b
	n, rows := y1-y0, x1-x0
	w := (n + 63) / 64
	l.hist = growU(l.hist, (rows+1)*w)
	l.rows(x0, x1, y0, y1, false, &l.fwd, l.hist, [2]int{-(x1 - x0) - 1, y1 - y0})
	hist := l.hist
	// lcs is the LCS of a[x0:x0+t] and b[y0:y0+k].
	lcs := func(t, k int) int {
		row := hist[t*w : t*w+w]
		c := 0
		for _, x := range row[:k>>6] {
			c += bits.OnesCount64(^x)
		}
		if k&63 != 0 {
			c += bits.OnesCount64(^row[k>>6] & (1<<(k&63) - 1))
		}
		return c
	}
	// gain is lcs(t, k+1) - lcs(t, k).
	gain := func(t, k int) int { return int(^hist[t*w+k>>6] >> (k & 63) & 1) }
	t, k := rows, n
	cur, up := lcs(t, k), lcs(t-1, k)
	for t > 0 && k > 0 {
		switch {
		case a[x0+t-1] == b[y0+k-1]:
			// Equal lines: the LCS here is one more than without both.
			t--
			k--
			cur--
			if t > 0 {
				up = lcs(t-1, k)
			}
		case up == cur:
			// The old line is not needed.
			r.markX(x0+t-1, x0+t)
			t--
			cur = up
			if t > 0 {
				up = lcs(t-1, k)
			}
		default:
			// Else the new line is not.
			k--
			r.markY(y0+k, y0+k+1)
			cur -= gain(t, k)
			up -= gain(t-1, k)
		}
	}
	r.markX(x0, x0+t)
	r.markY(y0, y0+k)
}

// denseRow is the row update v = (v + (v & pm)) | (v &^ pm) over whole
// words, four at a time: within a group of four the carry stays in the
// processor's flags instead of going through a register at every word.
// It takes a carry into the first word and returns the carry out of the
// last.
func denseRow(v, pm []uint64, c uint64) uint64 {
	pm = pm[:len(v)]
	j := 0
	for ; j+4 <= len(v); j += 4 {
		vv, pp := v[j:j+4:j+4], pm[j:j+4:j+4]
		x0, x1, x2, x3 := vv[0], vv[1], vv[2], vv[3]
		p0, p1, p2, p3 := pp[0], pp[1], pp[2], pp[3]
		var s0, s1, s2, s3 uint64
		s0, c = bits.Add64(x0, x0&p0, c)
		s1, c = bits.Add64(x1, x1&p1, c)
		s2, c = bits.Add64(x2, x2&p2, c)
		s3, c = bits.Add64(x3, x3&p3, c)
		vv[0] = s0 | (x0 &^ p0)
		vv[1] = s1 | (x1 &^ p1)
		vv[2] = s2 | (x2 &^ p2)
		vv[3] = s3 | (x3 &^ p3)
	}
	for ; j < len(v); j++ {
		x, p := v[j], pm[j]
		var s uint64
		s, c = bits.Add64(x, x&p, c)
		v[j] = s | (x &^ p)
	}
	return c
}

// denseWord is denseRow on word j alone, with the mask's bits outside
// keep left out.
func denseWord(v, pm []uint64, j int, keep, c uint64) uint64 {
	x, p := v[j], pm[j]&keep
	var s uint64
	s, c = bits.Add64(x, x&p, c)
	v[j] = s | (x &^ p)
	return c
}

// guessMin is the number of columns from which solve starts a box of
// unknown LCS with the pass near its diagonal; a variable for tests.
var guessMin = 1024

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growU(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

// markX marks reduced old lines a[x0:x1] changed.
func (r *myersRun) markX(x0, x1 int) {
	for _, i := range r.ia[x0:x1] {
		r.d.ca[r.d.pre+int(i)] = 1
	}
}

// markY marks reduced new lines b[y0:y1] changed.
func (r *myersRun) markY(y0, y1 int) {
	for _, j := range r.ib[y0:y1] {
		r.d.cb[r.d.pre+int(j)] = 1
	}
}
