package diff

import "slices"

// maxChain is git's max_chain_length: a line that occurs more often than
// this in the old side of a region never anchors it.
const maxChain = 64

// guardSize is the input size (in middle lines) below which the histogram
// result must never be larger than the Myers one. Above it a slack of
// 1/guardSlack of the lower bound is tolerated before Myers is run to
// compare, so that ordinary edits to large files are not diffed twice.
const (
	guardSize  = 20000
	guardSlack = 32
)

// histogramGuarded runs the histogram diff on the whole middle and falls
// back to Myers when the histogram script may be much larger than needed;
// see the package documentation.
func (d *differ) histogramGuarded() {
	d.histogram()
	hc := d.cost()
	lb := d.lowerBound()
	slack := 0
	if d.n+d.m >= guardSize {
		slack = lb / guardSlack
	}
	if hc <= lb+slack {
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
	d        *differ
	occStart []int32 // occurrences of id are occ[occStart[id]:occStart[id+1]]
	occ      []int32 // positions in a

	cache []regionCount // per id
	stamp int32         // of the current region
}

// histogram marks the changes between the middles.
func (d *differ) histogram() {
	h := histogram{
		d:        d,
		occStart: make([]int32, d.nid+1),
		occ:      make([]int32, d.n),
		cache:    make([]regionCount, d.nid),
	}
	sum := int32(0)
	for id, c := range d.cntA {
		h.occStart[id] = sum
		sum += c
	}
	h.occStart[d.nid] = sum
	next := make([]int32, d.nid) // next free slot in each id's group
	copy(next, h.occStart)
	for p, id := range d.a {
		i := next[id]
		next[id]++
		h.occ[i] = int32(p)
	}
	h.diff(0, d.n, 0, d.m)
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
			d.myers(a0, a1, b0, b1)
			return
		}
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
	a, b, occ := h.d.a, h.d.b, h.occ
	h.stamp++
	delta := (a1 - a0) - (b1 - b0)
	hasCommon, ok := false, false
	bestCnt := maxChain + 1
	bestLen, bestDisp := 0, 0 // bestLen counts like git's end1-begin1: length-1
	for bp := b0; bp < b1; {
		bNext := bp + 1
		id := b[bp]
		first, c := h.count(id, a0, a1)
		if c == 0 {
			bp = bNext
			continue
		}
		hasCommon = true
		if c > bestCnt {
			bp = bNext
			continue
		}
		end := int(h.occStart[id+1])
		for i := first; i < end && int(occ[i]) < a1; {
			p := int(occ[i])
			// Grow the match of a[p] and b[bp] both ways; rc tracks the
			// smallest count of a line in it.
			s, t, e, f := p, bp, p, bp // inclusive bounds, as in git
			rc := c
			for s > a0 && t > b0 && a[s-1] == b[t-1] {
				s--
				t--
				if rc > 1 {
					_, n := h.count(a[s], a0, a1)
					rc = min(rc, n)
				}
			}
			for e < a1-1 && f < b1-1 && a[e+1] == b[f+1] {
				e++
				f++
				if rc > 1 {
					_, n := h.count(a[e], a0, a1)
					rc = min(rc, n)
				}
			}
			if bNext <= f {
				bNext = f + 1
			}
			if e-s > bestLen || rc < bestCnt {
				as, ae, bs, be = s, e+1, t, f+1
				bestLen, bestCnt = e-s, rc
				bestDisp = displacement(s-a0, t-b0, delta)
				ok = true
			} else if ok && e-s == bestLen && rc == bestCnt {
				if x := displacement(s-a0, t-b0, delta); x < bestDisp {
					as, ae, bs, be = s, e+1, t, f+1
					bestDisp = x
				}
			}
			// Skip occurrences inside the run just found.
			for i++; i < end && int(occ[i]) <= e; i++ {
			}
		}
		bp = bNext
	}

	switch {
	case hasCommon && bestCnt > maxChain:
		return 0, 0, 0, 0, tooCommon
	case !ok:
		return 0, 0, 0, 0, noCommon
	}
	return as, ae, bs, be, found
}

// regionCount is what histogram.count found for one id in one region.
type regionCount struct {
	stamp int32 // the region it holds for
	first int32 // index in occ of the first occurrence in the region
	n     int32 // occurrences in the region, capped at maxChain+1
}

// count returns the index in occ of the first occurrence of id in the
// current region a[a0:a1] and the number of its occurrences there, capped
// at maxChain+1 since larger counts never anchor. Results are cached per
// region, so each id of a region costs one binary search.
func (h *histogram) count(id int32, a0, a1 int) (first, n int) {
	rc := &h.cache[id]
	if rc.stamp == h.stamp {
		return int(rc.first), int(rc.n)
	}
	lo, hi := int(h.occStart[id]), int(h.occStart[id+1])
	end := hi
	for lo < hi { // first occurrence at or after a0
		mid := int(uint(lo+hi) >> 1)
		if int(h.occ[mid]) < a0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	first = lo
	if first+maxChain < end && int(h.occ[first+maxChain]) < a1 {
		n = maxChain + 1
	} else {
		hi = min(end, first+maxChain+1)
		for lo < hi { // first occurrence at or after a1
			mid := int(uint(lo+hi) >> 1)
			if int(h.occ[mid]) < a1 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		n = lo - first
	}
	*rc = regionCount{stamp: h.stamp, first: int32(first), n: int32(n)}
	return first, n
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
