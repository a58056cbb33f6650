package repair

import "hash/maphash"

// lineIndex groups a file's lines (normalised at one level) into classes of
// equal lines, so that a hunk's line finds every place it occurs without
// reading the file again. It is built once per file and level, in time and
// memory linear in the file: a few int32 a line, no copy of the text.
type lineIndex struct {
	lines []string
	class []int32 // file line → its class
	// The lines of class c are pos[start[c]:start[c+1]], in file order.
	start []int32
	pos   []int32
	// table is an open-addressing hash table of class+1 (0: empty slot);
	// first[c] is the first line of class c, to compare with.
	table []int32
	first []int32
	seed  maphash.Seed
}

func newLineIndex(lines []string) *lineIndex {
	size := 16
	for size < len(lines)+len(lines)/2 {
		size <<= 1
	}
	ix := &lineIndex{lines: lines, class: make([]int32, len(lines)), table: make([]int32, size), seed: maphash.MakeSeed()}
	var count []int32
	for i, l := range lines {
		k := ix.slot(l)
		c := ix.table[k] - 1
		if c < 0 {
			c = int32(len(ix.first))
			ix.table[k] = c + 1
			ix.first = append(ix.first, int32(i))
			count = append(count, 0)
		}
		ix.class[i] = c
		count[c]++
	}
	ix.start = make([]int32, len(count)+1)
	for c, n := range count {
		ix.start[c+1] = ix.start[c] + n
		count[c] = ix.start[c] // from here on: where class c's next line goes
	}
	ix.pos = make([]int32, len(lines))
	for i, c := range ix.class {
		ix.pos[count[c]] = int32(i)
		count[c]++
	}
	return ix
}

// slot returns the table slot that holds s's class, or the empty slot
// where it would go.
func (ix *lineIndex) slot(s string) int {
	mask := len(ix.table) - 1
	k := int(maphash.String(ix.seed, s)) & mask
	for {
		c := ix.table[k] - 1
		if c < 0 || ix.lines[ix.first[c]] == s {
			return k
		}
		k = (k + 1) & mask
	}
}

// find returns the class of the file lines equal to s, -1 when none is.
func (ix *lineIndex) find(s string) int32 {
	return ix.table[ix.slot(s)] - 1
}

// at returns the lines of class c in file order.
func (ix *lineIndex) at(c int32) []int32 {
	return ix.pos[ix.start[c]:ix.start[c+1]]
}
