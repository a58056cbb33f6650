package diff

import "slices"

// maxChain is git's max_chain_length: a line that occurs more often than
// this in the old side of a region never anchors it.
const maxChain = 64

// The guard. Below guardSize middle lines, the histogram script is
// compared with the Myers one whenever it exceeds the occurrence-count
// lower bound, so it is never the larger of the two. On larger inputs a
// second diff is only worth its time when the histogram result shows the
// signature of a collapse: an anchor lying far off its region's diagonal
// band (more than 1/guardShift of the script, and more than guardMinShift
// lines), or a script more than twice the lower bound. Ordinary edits
// show neither, so they are diffed once.
const (
	guardSize     = 65536
	guardShift    = 32
	guardMinShift = 64
)

// histogramGuarded runs the histogram diff on the whole middle and falls
// back to Myers when the histogram script may be much larger than needed;
// see the package documentation.
func (d *differ) histogramGuarded() {
	maxShift, allMyers := d.histogram()
	if allMyers {
		return // the whole middle went to Myers already
	}
	hc := d.cost()
	lb := d.lowerBound()
	if d.n+d.m < guardSize {
		if hc <= lb {
			return // minimal
		}
	} else if hc <= 2*lb+guardMinShift && (maxShift <= guardMinShift || maxShift*guardShift <= hc) {
		return
	}
	ca, cb := d.ca[d.pre:d.pre+d.n], d.cb[d.pre:d.pre+d.m]
	ha, hb := slices.Clone(ca), slices.Clone(cb)
	clear(ca)
	clear(cb)
	d.myers(0, d.n, 0, d.m)
	if d.cost() < hc {
		return
	}
	copy(ca, ha)
	copy(cb, hb)
}

// histogram indexes the old side once for the whole recursion: the
// positions of each line, grouped by id in ascending order. Git rebuilds a
// hash index of the old side of every region it splits; here a region's
// occurrences of a line are a contiguous stretch of its group, found by
// binary search, so a region costs time in its new side only.
type histogram struct {
	d     *differ
	occ   []int32 // positions in a, grouped by id
	spans []span  // per id

	cache []regionCount // per id
	stamp int32         // of the current region

	maxShift int  // largest displacement of an anchor so far
	allMyers bool // the first region went to Myers

	runs  []diagRun
	runOf []int32 // per position in b, the last run found through it, or -1
}

// span locates the occurrences of one id in occ: they end at end, and
// those at or after the start of the current region begin at cur.
// Regions are searched in order of their start (the recursion finishes
// the part left of an anchor before the part right of it), so cur only
// ever moves forward.
type span struct{ cur, end int32 }

// diagRun is a maximal run of equal lines a[s:e+1] == b[s-d:e-d+1].
type diagRun struct{ d, s, e int32 }

// histogram marks the changes between the middles. It returns the largest
// displacement of an anchor it used, and whether it handed the whole
// middles to Myers.
func (d *differ) histogram() (maxShift int, allMyers bool) {
	h := histogram{
		d:     d,
		occ:   make([]int32, d.n),
		spans: make([]span, d.nid),
		runOf: make([]int32, d.m),
	}
	for j := range h.runOf {
		h.runOf[j] = -1
	}
	sum := int32(0)
	for id, c := range d.cntA {
		h.spans[id] = span{cur: sum, end: sum}
		sum += c
	}
	for p, id := range d.a {
		sp := &h.spans[id]
		h.occ[sp.end] = int32(p)
		sp.end++
	}
	h.diff(0, d.n, 0, d.m)
	return h.maxShift, h.allMyers
}

// diff marks the changes between a[a0:a1] and b[b0:b1].
func (h *histogram) diff(a0, a1, b0, b1 int) {
	d := h.d
	for {
		switch {
		case a0 == a1:
			d.markB(b0, b1)
			return
		case b0 == b1:
			d.markA(a0, a1)
			return
		}
		as, ae, bs, be, res := h.anchor(a0, a1, b0, b1)
		switch res {
		case noCommon:
			d.markA(a0, a1)
			d.markB(b0, b1)
			return
		case tooCommon:
			h.allMyers = a0 == 0 && a1 == d.n && b0 == 0 && b1 == d.m
			d.myers(a0, a1, b0, b1)
			return
		}
		h.maxShift = max(h.maxShift, displacement(as-a0, bs-b0, (a1-a0)-(b1-b0)))
		h.diff(a0, as, b0, bs)
		a0, b0 = ae, be
	}
}

// Results of histogram.anchor.
const (
	found     = iota
	noCommon  // the region's two sides share no line
	tooCommon // every shared line occurs more than maxChain times
)

// anchor finds the run a[as:ae] == b[bs:be] that the region is split
// around: among the runs of common lines, the one whose rarest line is
// rarest in the old side of the region, and among those the longest, as
// git does. Where git keeps the first of equally good runs, anchor keeps
// the one nearest the region's diagonal band (see displacement), so that
// with a repeated block a run pairs with the copy in the same place.
func (h *histogram) anchor(a0, a1, b0, b1 int) (as, ae, bs, be, res int) {
	h.stamp++
	occ, spans := h.occ, h.spans
	b := h.d.b[:b1]
	delta := (a1 - a0) - (b1 - b0)
	ok := false
	bestCnt := maxChain + 1
	bestLen, bestDisp := 0, 0 // bestLen counts like git's end1-begin1: length-1
	for bp := b0; ; {
		bp = h.skip(bp, b1, a0, a1, bestCnt)
		if bp >= b1 {
			break
		}
		bNext := bp + 1
		id := b[bp]
		first, end := int(spans[id].cur), int(spans[id].end)
		c := h.count(id, a0, a1)
		low := lowScan{}
		for i := first; i < end && int(occ[i]) < a1; {
			p := int(occ[i])
			// The match of a[p] and b[bp], as far as it goes and then
			// cut to the region (inclusive bounds, as in git).
			d := p - bp
			s, e := h.run(p, bp)
			s = max(s, a0, b0+d)
			e = min(e, a1-1, b1-1+d)
			t, f := s-d, e-d
			if bNext <= f {
				bNext = f + 1
			}
			// rc, the smallest count of a line in the run, is only
			// worth its walk when the run could win.
			x := displacement(s-a0, t-b0, delta)
			switch {
			case e-s > bestLen || c < bestCnt:
				as, ae, bs, be = s, e+1, t, f+1
				bestLen, bestCnt, bestDisp = e-s, h.minCount(s, e, c, 1, a0, a1), x
				ok = true
			case bestCnt > 1 && h.lowIn(&low, bp, bestCnt, t, f, a0, a1):
				// A rarer line within: the run wins, even if shorter.
				as, ae, bs, be = s, e+1, t, f+1
				bestLen, bestCnt, bestDisp = e-s, h.minCount(s, e, c, 1, a0, a1), x
			case e-s == bestLen && x < bestDisp && (c == bestCnt || h.minCount(s, e, c, bestCnt, a0, a1) == bestCnt):
				// As good as the best: keep the one nearer the diagonal.
				as, ae, bs, be = s, e+1, t, f+1
				bestDisp = x
			}
			// Skip occurrences inside the run just found.
			for i++; i < end && int(occ[i]) <= e; i++ {
			}
		}
		bp = bNext
	}

	switch {
	case !ok && h.skip(b0, b1, a0, a1, len(h.occ)) == b1:
		// No candidate because no line is common, not because all
		// common lines are too frequent.
		return 0, 0, 0, 0, noCommon
	case bestCnt > maxChain: // as git: also after a run of lines that all do
		return 0, 0, 0, 0, tooCommon
	}
	return as, ae, bs, be, found
}

// run returns the longest run of equal lines a[s:e+1] == b[s-d:e-d+1]
// through a[p] == b[q], d = p-q, over the whole middles. Runs are walked
// once and remembered for every line of b they cover: the recursion meets
// the same runs again in every region that holds them.
func (h *histogram) run(p, q int) (s, e int) {
	d := int32(p - q)
	if r := h.runOf[q]; r >= 0 && h.runs[r].d == d {
		return int(h.runs[r].s), int(h.runs[r].e)
	}
	// Walk over slices that end at the match, or start right after it,
	// so that the loops need no bounds checks of their own.
	x, y := h.d.a[:p], h.d.b[:q]
	i, j := len(x)-1, len(y)-1
	for i >= 0 && j >= 0 && x[i] == y[j] {
		i--
		j--
	}
	s = i + 1
	x, y = h.d.a[p+1:], h.d.b[q+1:]
	n := min(len(x), len(y))
	x, y = x[:n], y[:n]
	k := 0
	for k < len(x) && x[k] == y[k] {
		k++
	}
	e = p + k
	r := int32(len(h.runs))
	h.runs = append(h.runs, diagRun{d: d, s: int32(s), e: int32(e)})
	of := h.runOf[s-int(d) : e-int(d)+1]
	for j := range of {
		of[j] = r
	}
	return s, e
}

// lowScan remembers, for the candidate line b[q] of a region, the nearest
// lines around it that occur fewer than thr times in the region, as far as
// they have been looked for. All runs through b[q] share these lines, so
// one scan serves every occurrence of the candidate.
type lowScan struct {
	q, thr     int // zero thr: not started
	lo, hi     int // b[lo:hi+1] has been looked at
	prev, next int // nearest such lines found below and above q, or -1
}

// lowIn reports whether b[t:f+1], which holds b[q], has a line that occurs
// fewer than thr times in the region a[a0:a1].
func (h *histogram) lowIn(l *lowScan, q, thr, t, f, a0, a1 int) bool {
	if l.thr != thr || l.q != q {
		*l = lowScan{q: q, thr: thr, lo: q, hi: q, prev: -1, next: -1}
		if h.countOf(h.d.b[q], a0, a1) < thr {
			l.prev, l.next = q, q
		}
	}
	b := h.d.b
	for l.prev < 0 && l.lo > t {
		l.lo--
		if h.countOf(b[l.lo], a0, a1) < thr {
			l.prev = l.lo
		}
	}
	if l.prev >= t {
		return true
	}
	for l.next < 0 && l.hi < f {
		l.hi++
		if h.countOf(b[l.hi], a0, a1) < thr {
			l.next = l.hi
		}
	}
	return l.next >= 0 && l.next <= f
}

// minCount returns the smallest count in the current region of the lines
// a[s:e+1], or of c if that is smaller. It stops early once the result is
// known to be at most floor.
func (h *histogram) minCount(s, e, c, floor, a0, a1 int) int {
	a := h.d.a
	for q := s; q <= e && c > floor; q++ {
		c = min(c, h.countOf(a[q], a0, a1))
	}
	return c
}

// countOf is count, cached for the region: runs of repeated lines ask
// for the same lines again and again.
func (h *histogram) countOf(id int32, a0, a1 int) int {
	if h.cache == nil {
		// Only lines that occur more than once need it: allocated
		// on first use.
		h.cache = make([]regionCount, len(h.spans))
	}
	if c := &h.cache[id]; c.stamp == h.stamp {
		return int(c.n)
	}
	n := h.count(id, a0, a1)
	h.cache[id] = regionCount{stamp: h.stamp, n: int32(n)}
	return n
}

// regionCount is what histogram.count found for one id in one region.
type regionCount struct {
	stamp int32 // the region it holds for
	n     int32 // occurrences in the region, capped at maxChain+1
}

// skip returns the first position from bp on whose line occurs in the
// region's old side a[a0:a1] at least once and at most limit times, or b1.
// Most lines are visited only to learn that they occur too often to
// matter: that takes a look at the first occurrence in the region and at
// limit occurrences further.
func (h *histogram) skip(bp, b1, a0, a1, limit int) int {
	b, occ, spans := h.d.b[:b1], h.occ, h.spans
	lo, hi := int32(a0), int32(a1)
	for ; bp < len(b); bp++ {
		sp := &spans[b[bp]]
		i, end := sp.cur, sp.end
		if i >= end {
			continue
		}
		v := occ[i]
		if v < lo {
			for i++; i < end && occ[i] < lo; i++ {
			}
			sp.cur = i
			if i == end {
				continue
			}
			v = occ[i]
		}
		if v >= hi {
			continue
		}
		if j := int(i) + limit; j < int(end) && occ[j] < hi {
			continue
		}
		return bp
	}
	return bp
}

// count returns the number of occurrences of id in the current region
// a[a0:a1], capped at maxChain+1 since larger counts never anchor.
func (h *histogram) count(id int32, a0, a1 int) int {
	sp := &h.spans[id]
	first, end := int(sp.cur), int(sp.end)
	for first < end && int(h.occ[first]) < a0 {
		first++
	}
	sp.cur = int32(first)
	if first+maxChain < end && int(h.occ[first+maxChain]) < a1 {
		return maxChain + 1
	}
	lo, hi := first, min(end, first+maxChain+1)
	for lo < hi { // first occurrence at or after a1
		mid := int(uint(lo+hi) >> 1)
		if int(h.occ[mid]) < a1 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - first
}

// displacement measures how far a run starting i lines into the old side
// and j lines into the new side of a region lies off the region's diagonal
// band. The region's sides differ in length by delta, so any script changes
// at least |delta| lines; splitting around the run raises that bound to
// |k|+|delta-k| with k = i-j. The result is the excess, halved.
func displacement(i, j, delta int) int {
	k := i - j
	lo, hi := min(0, delta), max(0, delta)
	switch {
	case k < lo:
		return lo - k
	case k > hi:
		return k - hi
	}
	return 0
}
