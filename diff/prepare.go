package diff

import (
	"bytes"
	"hash/maphash"
)

// differ holds one diff problem: the changed middles of the two inputs as
// interned line ids, and the change marks that the algorithms set.
type differ struct {
	pre  int     // length of the common prefix, where the middles start
	a, b []int32 // ids of the middle lines: equal lines, equal ids
	n, m int     // len(a), len(b)
	nid  int     // number of distinct ids

	cntA, cntB []int32 // occurrences of each id in a and in b
	ca, cb     []byte  // change marks over the whole inputs: 1 changed
	limit      int     // cost bound of a Myers search; 0 for costLimit

	// Scratch space reused by every Myers call: a call from the histogram
	// fallback must not allocate afresh each time.
	seen           []int32 // per id, the stamp of the last region that held it
	stamp          int32
	xa, xb, ia, ib []int32
	fd, bd         []int32
}

// resyncWindow is how many lines either side of the expected place in a
// newDiffer looks for a line of b before hashing it.
const resyncWindow = 4

// newDiffer interns la[pre:len(la)-suf] and lb[pre:len(lb)-suf].
func newDiffer(la, lb []string, pre, suf int) *differ {
	ma, mb := la[pre:len(la)-suf], lb[pre:len(lb)-suf]
	n, m := len(ma), len(mb)
	d := &differ{
		pre: pre,
		n:   n,
		m:   m,
		ca:  make([]byte, len(la)),
		cb:  make([]byte, len(lb)),
	}
	ids := make([]int32, n+m)
	d.a, d.b = ids[:n:n], ids[n:]
	t := newTable(ma, mb)
	for i, s := range ma {
		d.a[i] = t.id(s, i, true)
	}
	na := len(t.rep) // ids below na occur in a
	cnt := make([]int32, na)
	for _, id := range d.a {
		cnt[id]++
	}
	// Most lines of b usually sit a fixed offset away from their copy in
	// a, the offset changing only where lines were inserted or deleted.
	// Trying the line at the current offset, then at offsets a few lines
	// either side, saves most hash lookups; a line that occurs once in a
	// tells the new offset. Any equal line gives the right id, so a wrong
	// guess costs time, never correctness.
	off := 0
next:
	for j, s := range mb {
		if i := j + off; i >= 0 && i < n && ma[i] == s {
			d.b[j] = d.a[i]
			continue
		}
		for k := 1; k <= resyncWindow; k++ {
			if i := j + off - k; i >= 0 && i < n && ma[i] == s {
				d.b[j] = d.a[i]
				off -= k
				continue next
			}
			if i := j + off + k; i >= 0 && i < n && ma[i] == s {
				d.b[j] = d.a[i]
				off += k
				continue next
			}
		}
		id := t.id(s, n+j, false)
		d.b[j] = id
		if int(id) < na && cnt[id] == 1 {
			off = int(t.rep[id]) - j
		}
	}
	d.nid = len(t.rep)
	counts := make([]int32, 2*d.nid)
	d.cntA, d.cntB = counts[:d.nid:d.nid], counts[d.nid:]
	copy(d.cntA, cnt)
	for _, id := range d.b {
		d.cntB[id]++
	}
	return d
}

// table interns lines: equal lines get equal ids, numbered from 0 in order
// of first appearance. It is an open-addressing hash table whose entries
// hold no pointers, so it costs the garbage collector nothing, and whose
// slots keep part of the hash so that most mismatches never touch a line.
type table struct {
	seed   maphash.Seed
	slots  []uint64 // tag<<32 | id+1, 0 when free
	mask   uint64
	rep    []int32 // per id, the position of one of its lines: ma[p] or mb[p-n]
	ma, mb []string
}

func newTable(ma, mb []string) *table {
	// The table starts small and grows with the number of distinct
	// lines, which repetitive inputs keep far below the number of lines:
	// a table no larger than needed stays in cache.
	return &table{
		seed:  maphash.MakeSeed(),
		slots: make([]uint64, 1024),
		mask:  1023,
		ma:    ma,
		mb:    mb,
	}
}

// id returns the id of s, which sits at position p (see table.rep). With
// latest set, a line already seen moves the id's representative to p:
// the next comparison with it then touches memory that is still in cache.
func (t *table) id(s string, p int, latest bool) int32 {
	h := maphash.String(t.seed, s)
	tag := h >> 32
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i]
		if e == 0 {
			id := int32(len(t.rep))
			t.slots[i] = tag<<32 | uint64(id+1)
			t.rep = append(t.rep, int32(p))
			// Linear probing copes with a high load: the next slot is
			// usually in the same cache line.
			if 3*len(t.rep) > 2*len(t.slots) {
				t.grow()
			}
			return id
		}
		if e>>32 == tag {
			id := int32(uint32(e)) - 1
			if t.line(id) == s {
				if latest {
					t.rep[id] = int32(p)
				}
				return id
			}
		}
	}
}

// line returns the line at the representative position of id.
func (t *table) line(id int32) string {
	if p := int(t.rep[id]); p < len(t.ma) {
		return t.ma[p]
	}
	return t.mb[int(t.rep[id])-len(t.ma)]
}

// grow quadruples the table. Hashing the lines again costs less than
// keeping every hash: the table grows rarely, by large steps.
func (t *table) grow() {
	t.slots = make([]uint64, 4*len(t.slots))
	t.mask = uint64(len(t.slots) - 1)
	for id := range t.rep {
		h := maphash.String(t.seed, t.line(int32(id)))
		i := h & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = h>>32<<32 | uint64(id+1)
	}
}

// markA marks middle lines a[i:j] changed.
func (d *differ) markA(i, j int) {
	for ; i < j; i++ {
		d.ca[d.pre+i] = 1
	}
}

// markB marks middle lines b[i:j] changed.
func (d *differ) markB(i, j int) {
	for ; i < j; i++ {
		d.cb[d.pre+i] = 1
	}
}

// cost returns the number of changed middle lines.
func (d *differ) cost() int {
	one := []byte{1}
	return bytes.Count(d.ca[d.pre:d.pre+d.n], one) + bytes.Count(d.cb[d.pre:d.pre+d.m], one)
}

// lowerBound returns a size no script can beat: a line that occurs k times
// more often on one side than on the other is changed at least k times.
func (d *differ) lowerBound() int {
	lb := 0
	for id := range d.nid {
		if x := int(d.cntA[id]) - int(d.cntB[id]); x > 0 {
			lb += x
		} else {
			lb -= x
		}
	}
	return lb
}
