package diff

import "math"

// myers diffs the middle ranges a[a0:a1] and b[b0:b1] and marks the changed
// lines.
func (d *differ) myers(a0, a1, b0, b1 int) {
	// Lines that never occur on the other side are changed in every script:
	// mark them now and search only among the rest.
	if cap(d.xa) < a1-a0 {
		d.xa, d.ia = make([]int32, 0, a1-a0), make([]int32, 0, a1-a0)
	}
	if cap(d.xb) < b1-b0 {
		d.xb, d.ib = make([]int32, 0, b1-b0), make([]int32, 0, b1-b0)
	}
	xa, ia, xb, ib := d.xa[:0], d.ia[:0], d.xb[:0], d.ib[:0]
	if a0 == 0 && a1 == d.n && b0 == 0 && b1 == d.m {
		for i, id := range d.a {
			if d.cntB[id] > 0 {
				xa = append(xa, id)
				ia = append(ia, int32(i))
			} else {
				d.ca[d.pre+i] = 1
			}
		}
		for i, id := range d.b {
			if d.cntA[id] > 0 {
				xb = append(xb, id)
				ib = append(ib, int32(i))
			} else {
				d.cb[d.pre+i] = 1
			}
		}
	} else {
		// A region of a larger problem: the whole-input counts do not
		// apply, so note which ids each side holds. Stamps save clearing.
		if d.seen == nil {
			d.seen = make([]int32, 2*d.nid)
		}
		d.stamp++
		st := d.stamp
		seenA, seenB := d.seen[:d.nid], d.seen[d.nid:]
		for _, id := range d.a[a0:a1] {
			seenA[id] = st
		}
		for _, id := range d.b[b0:b1] {
			seenB[id] = st
		}
		for i := a0; i < a1; i++ {
			if id := d.a[i]; seenB[id] == st {
				xa = append(xa, id)
				ia = append(ia, int32(i))
			} else {
				d.ca[d.pre+i] = 1
			}
		}
		for i := b0; i < b1; i++ {
			if id := d.b[i]; seenA[id] == st {
				xb = append(xb, id)
				ib = append(ib, int32(i))
			} else {
				d.cb[d.pre+i] = 1
			}
		}
	}
	d.xa, d.ia, d.xb, d.ib = xa, ia, xb, ib
	if len(xa) == 0 || len(xb) == 0 {
		// Nothing in common: the set-aside lines are everything, or the
		// rest is all on one side.
		for _, i := range ia {
			d.ca[d.pre+int(i)] = 1
		}
		for _, i := range ib {
			d.cb[d.pre+int(i)] = 1
		}
		return
	}
	nv := len(xa) + len(xb) + 3
	if cap(d.fd) < nv {
		d.fd = make([]int32, nv)
		d.bd = make([]int32, nv)
	}
	r := myersRun{
		d:     d,
		a:     xa,
		b:     xb,
		ia:    ia,
		ib:    ib,
		fd:    d.fd[:nv],
		bd:    d.bd[:nv],
		off:   len(xb) + 1,
		limit: d.limit,
	}
	if r.limit == 0 {
		r.limit = costLimit(len(xa) + len(xb))
	}
	r.compare(0, len(xa), 0, len(xb), false)
}

// costLimit returns the search cost after which a middle-snake search
// settles for the best split found so far, for a problem of size lines.
// Like GNU diff's TOO_EXPENSIVE it is at least 4096 on inputs of up to
// 16,384 lines, which therefore get a minimal script unless it changes more
// than 8192 lines. On larger inputs that floor falls in proportion, so that
// the work of a hopeless search stays near 16,384·4096 steps, down to
// about √size (a power of two), as in git's xdiff.
func costLimit(size int) int {
	l := 1
	for s := size + 3; s != 0; s >>= 2 {
		l <<= 1
	}
	return max(l, 4096*16384/max(size, 16384))
}

// myersRun is the linear-space Myers search over the reduced sequences a
// and b, whose lines sit at middle positions ia and ib.
type myersRun struct {
	d      *differ
	a, b   []int32
	ia, ib []int32
	// fd[k+off] and bd[k+off] hold the furthest x reached on diagonal
	// k = x-y by the forward and the backward search.
	fd, bd []int32
	off    int
	limit  int
	lcs    *bitLCS // for boxes too costly to search, made on first use
}

// compare marks the changes between a[x0:x1] and b[y0:y1]. With minimal
// set it never gives up on the cost bound: the caller knows the cost of
// the box is small.
func (r *myersRun) compare(x0, x1, y0, y1 int, minimal bool) {
	a, b := r.a, r.b
	for {
		for x0 < x1 && y0 < y1 && a[x0] == b[y0] {
			x0++
			y0++
		}
		for x1 > x0 && y1 > y0 && a[x1-1] == b[y1-1] {
			x1--
			y1--
		}
		switch {
		case x0 == x1:
			for _, j := range r.ib[y0:y1] {
				r.d.cb[r.d.pre+int(j)] = 1
			}
			return
		case y0 == y1:
			for _, i := range r.ia[x0:x1] {
				r.d.ca[r.d.pre+int(i)] = 1
			}
			return
		}
		xm, ym, loMin, hiMin, exact := r.split(x0, x1, y0, y1, minimal)
		if exact {
			if r.lcs == nil {
				r.lcs = newBitLCS(r)
			}
			r.lcs.solve(x0, x1, y0, y1, -1)
			return
		}
		// Recurse into the upper box, loop on the lower one.
		r.compare(x0, xm, y0, ym, loMin)
		x0, y0, minimal = xm, ym, hiMin
	}
}

// split finds a point (xm, ym) on a minimal path through the box
// a[x0:x1] × b[y0:y1], searching forward from the top-left corner and
// backward from the bottom-right one until the two searches overlap. If the
// cost passes r.limit first (and !minimal), it returns the point that one of
// the searches has driven furthest instead; loMin and hiMin tell which of
// the two sub-boxes is then known to be cheap enough to solve exactly.
func (r *myersRun) split(x0, x1, y0, y1 int, minimal bool) (xm, ym int, loMin, hiMin, exact bool) {
	// Once the search has cost about as much as the bit-parallel solve of
	// the whole box would, the box is solved that way instead: exactly,
	// in O(N·M/64).
	area := (x1 - x0) * (y1 - y0)
	lcsFrom := math.MaxInt
	if area/64 <= lcsMaxWords {
		lcsFrom = max(lcsMinCost, int(math.Sqrt(float64(area)))/lcsDiv)
	}
	a, b, fd, bd, off := r.a[:x1], r.b[:y1], r.fd, r.bd, r.off
	ax, bx := a[x0:], b[y0:]
	dmin, dmax := x0-y1, x1-y0 // diagonals of the box
	fmid, bmid := x0-y0, x1-y1 // diagonals the two searches start on
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	// The searches meet on the same step parity: the forward search
	// detects an overlap when the corners' diagonals differ by an odd
	// number, the backward one otherwise.
	odd := (fmid-bmid)&1 != 0
	fd[off+fmid] = int32(x0)
	bd[off+bmid] = int32(x1)
	for c := 1; ; c++ {
		// Widen the forward diagonal range by one, or step back inside
		// the box; the sentinel keeps the edge diagonals from reading
		// stale values.
		if fmin > dmin {
			fmin--
			fd[off+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fd[off+fmax+1] = -1
		} else {
			fmax--
		}
		// fd[off+fmin-1+i] for i in 0..fmax-fmin+2: a slice lets the
		// compiler drop the bounds checks of the hot loop.
		forward(fd[off+fmin-1:off+fmax+2], a, b, fmin-1)
		if odd {
			// Overlap with the backward search of the previous step,
			// checked in the order GNU diff checks it.
			lo, hi := max(fmin, bmin), min(fmax, bmax)
			hi -= (fmax - hi) & 1
			for k := hi; k >= lo; k -= 2 {
				if x := int(fd[off+k]); int(bd[off+k]) <= x {
					return x, x - k, true, true, false
				}
			}
		}

		if bmin > dmin {
			bmin--
			bd[off+bmin-1] = math.MaxInt32
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bd[off+bmax+1] = math.MaxInt32
		} else {
			bmax--
		}
		backward(bd[off+bmin-1:off+bmax+2], ax, bx, bmin-1-(x0-y0), x0)
		if !odd {
			lo, hi := max(fmin, bmin), min(fmax, bmax)
			hi -= (bmax - hi) & 1
			for k := hi; k >= lo; k -= 2 {
				if x := int(bd[off+k]); x <= int(fd[off+k]) {
					return x, x - k, true, true, false
				}
			}
		}

		if minimal {
			continue
		}
		if c >= lcsFrom {
			return 0, 0, false, false, true
		}
		if (c == lcsFrom/4 || c == lcsFrom/2) && c >= lcsMinCost/4 {
			// The searches advance at a roughly steady pace: if they
			// have covered so little of the box that meeting would cost
			// more than lcsFrom, switch now and spare the rest of the
			// search.
			fp, bp := 0, 0
			for k := fmax; k >= fmin; k -= 2 {
				x := min(int(fd[off+k]), x1)
				fp = max(fp, 2*x-k-(x0+y0))
			}
			for k := bmax; k >= bmin; k -= 2 {
				x := max(int(bd[off+k]), x0)
				bp = max(bp, (x1+y1)-(2*x-k))
			}
			if (fp+bp)*lcsFrom < c*((x1-x0)+(y1-y0)) {
				return 0, 0, false, false, true
			}
		}
		// The cost bound applies to boxes too large to solve exactly,
		// and to every box when a test has set it.
		if c < r.limit || (lcsFrom != math.MaxInt && r.d.limit == 0) {
			continue
		}
		// Too expensive: split where a search got furthest, measured by
		// x+y from its corner. The part it covered cost at most c, so
		// that sub-box can be solved exactly.
		fbest, fx := -1, 0
		for k := fmax; k >= fmin; k -= 2 {
			x := min(int(fd[off+k]), x1)
			y := x - k
			if y > y1 {
				x, y = y1+k, y1
			}
			if x+y > fbest {
				fbest, fx = x+y, x
			}
		}
		bbest, bx := math.MaxInt, 0
		for k := bmax; k >= bmin; k -= 2 {
			x := max(int(bd[off+k]), x0)
			y := x - k
			if y < y0 {
				x, y = y0+k, y0
			}
			if x+y < bbest {
				bbest, bx = x+y, x
			}
		}
		if (x1+y1)-bbest < fbest-(x0+y0) {
			return fx, fbest - fx, true, false, false
		}
		return bx, bbest - bx, false, true, false
	}
}

// forward advances the forward search one step: v[i] is the furthest x
// reached on diagonal k0+i, updated for every other i from len(v)-2 down to
// 1 from its neighbours, then followed along the diagonal while the lines
// match.
func forward(v, a, b []int32, k0 int) {
	for i := len(v) - 2; i >= 1; i -= 2 {
		lo, hi := v[i-1], v[i+1]
		x := int(hi) // down from diagonal k+1: an insertion
		if lo >= hi {
			x = int(lo) + 1 // right from diagonal k-1: a deletion
		}
		y := x - (k0 + i)
		for uint(x) < uint(len(a)) && uint(y) < uint(len(b)) && a[x] == b[y] {
			x++
			y++
		}
		v[i] = int32(x)
	}
}

// backward advances the backward search one step, like forward. Here a
// and b start at the box's top-left corner (x0, x0-k0 shifted): diagonal
// k0+i is relative to it, while v holds absolute x values.
func backward(v, a, b []int32, k0, x0 int) {
	for i := len(v) - 2; i >= 1; i -= 2 {
		lo, hi := v[i-1], v[i+1]
		x := int(lo) - x0 // up from diagonal k-1: an insertion
		if lo >= hi {
			x = int(hi) - 1 - x0 // left from diagonal k+1: a deletion
		}
		y := x - (k0 + i)
		// Indexing from the corner makes "x > 0" and the bounds check
		// one comparison.
		for uint(x-1) < uint(len(a)) && uint(y-1) < uint(len(b)) && a[x-1] == b[y-1] {
			x--
			y--
		}
		v[i] = int32(x + x0)
	}
}
