package patch

import (
	"errors"
	"fmt"
)

// A git delta (the "delta N" blocks of a GIT binary patch, and packed
// objects) is the size of the source and the size of the result, each a
// little-endian base-128 number (seven bits a byte, high bit set on every
// byte but the last), then instructions:
//
//   - 1xxxxxxx: copy from the source. The low four bits say which of four
//     offset bytes follow, the next three which of three size bytes, least
//     significant first; absent bytes are zero, and a size of zero means
//     0x10000.
//   - 0nnnnnnn, n > 0: insert the next n bytes of the delta.
//   - 00000000 is reserved, and an error.
//
// The instructions must produce exactly the announced result size.

// errDelta marks a delta that does not decode or does not fit its source.
var errDelta = errors.New("bad delta")

// deltaHeader reads the two sizes at the start of a delta.
func deltaHeader(delta []byte) (srcSize, dstSize uint64, rest []byte, err error) {
	if srcSize, delta, err = deltaVarint(delta); err != nil {
		return 0, 0, nil, fmt.Errorf("%w: source size: %v", errDelta, err)
	}
	if dstSize, delta, err = deltaVarint(delta); err != nil {
		return 0, 0, nil, fmt.Errorf("%w: result size: %v", errDelta, err)
	}
	return srcSize, dstSize, delta, nil
}

func deltaVarint(b []byte) (uint64, []byte, error) {
	var v uint64
	for i, shift := 0, uint(0); i < len(b); i, shift = i+1, shift+7 {
		if shift > 63 || (shift == 63 && b[i]&0x7f > 1) {
			return 0, nil, errors.New("more than 64 bits")
		}
		v |= uint64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], nil
		}
	}
	return 0, nil, errors.New("the delta ends inside it")
}

// applyDelta rebuilds the result of delta from src, checking every size
// as git's patch_delta does.
func applyDelta(src, delta []byte) ([]byte, error) {
	srcSize, dstSize, ops, err := deltaHeader(delta)
	if err != nil {
		return nil, err
	}
	if srcSize != uint64(len(src)) {
		return nil, fmt.Errorf("%w: the delta is for a %d-byte file, this one has %d bytes", errDelta, srcSize, len(src))
	}
	// The result can be no longer than every instruction copying the
	// whole source or inserting 127 bytes. A corrupt size must not
	// allocate more than that, nor, up front, more than 64 MiB: the
	// instructions must first prove they make that much.
	bound := uint64(len(ops)) * uint64(max(len(src), 127))
	out := make([]byte, 0, min(dstSize, bound, 64<<20))
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for bit := 0; bit < 7; bit++ {
				if op&(1<<bit) == 0 {
					continue
				}
				if len(ops) == 0 {
					return nil, fmt.Errorf("%w: copy instruction cut short at the end of the delta", errDelta)
				}
				if bit < 4 {
					off |= uint64(ops[0]) << (8 * bit)
				} else {
					n |= uint64(ops[0]) << (8 * (bit - 4))
				}
				ops = ops[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(src)) {
				return nil, fmt.Errorf("%w: copy of %d bytes at offset %d runs past the %d-byte source", errDelta, n, off, len(src))
			}
			if n > dstSize-uint64(len(out)) {
				return nil, fmt.Errorf("%w: copy of %d bytes runs past the announced %d-byte result", errDelta, n, dstSize)
			}
			out = append(out, src[off:off+n]...)
		case op != 0:
			n := int(op)
			if n > len(ops) {
				return nil, fmt.Errorf("%w: insert of %d bytes runs past the end of the delta", errDelta, n)
			}
			if uint64(n) > dstSize-uint64(len(out)) {
				return nil, fmt.Errorf("%w: insert of %d bytes runs past the announced %d-byte result", errDelta, n, dstSize)
			}
			out = append(out, ops[:n]...)
			ops = ops[n:]
		default:
			return nil, fmt.Errorf("%w: reserved instruction 0", errDelta)
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, fmt.Errorf("%w: the instructions make %d bytes, the delta announces %d", errDelta, len(out), dstSize)
	}
	return out, nil
}

// deltaBlock is the length of the source windows makeDelta indexes, as in
// git's diff-delta.
const deltaBlock = 16

// maxDeltaCopy is the longest copy makeDelta writes in one instruction:
// git's encoder stops at 0x10000, which every reader understands.
const maxDeltaCopy = 0x10000

// makeDelta returns a delta that turns src into dst. It indexes every
// aligned 16-byte window of src, then walks dst: where the next 16 bytes
// are a window of src, the match is extended both ways and copied; other
// bytes are inserted.
func makeDelta(src, dst []byte) []byte {
	out := appendDeltaVarint(nil, uint64(len(src)))
	out = appendDeltaVarint(out, uint64(len(dst)))
	index := make(map[[deltaBlock]byte]int, len(src)/deltaBlock)
	for i := len(src) - deltaBlock - len(src)%deltaBlock; i >= 0; i -= deltaBlock {
		// Walking down keeps the earliest window for repeated content.
		index[[deltaBlock]byte(src[i:i+deltaBlock])] = i
	}
	pending := 0 // start of dst bytes not yet written
	for t := 0; t+deltaBlock <= len(dst); {
		s, ok := index[[deltaBlock]byte(dst[t:t+deltaBlock])]
		if !ok {
			t++
			continue
		}
		// Grow the match backwards over bytes not yet written, then
		// forwards.
		for t > pending && s > 0 && dst[t-1] == src[s-1] {
			t--
			s--
		}
		n := deltaBlock
		for t+n < len(dst) && s+n < len(src) && dst[t+n] == src[s+n] {
			n++
		}
		out = appendDeltaInsert(out, dst[pending:t])
		for done := 0; done < n; {
			c := min(n-done, maxDeltaCopy)
			out = appendDeltaCopy(out, s+done, c)
			done += c
		}
		t += n
		pending = t
	}
	return appendDeltaInsert(out, dst[pending:])
}

func appendDeltaVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendDeltaInsert(b, data []byte) []byte {
	for len(data) > 0 {
		n := min(len(data), 0x7f)
		b = append(b, byte(n))
		b = append(b, data[:n]...)
		data = data[n:]
	}
	return b
}

func appendDeltaCopy(b []byte, off, n int) []byte {
	at := len(b)
	op := byte(0x80)
	b = append(b, 0)
	for k := 0; k < 4; k++ {
		if c := byte(off >> (8 * k)); c != 0 {
			op |= 1 << k
			b = append(b, c)
		}
	}
	if n == 0x10000 {
		n = 0 // no size bytes: 0x10000
	}
	for k := 0; k < 3; k++ {
		if c := byte(n >> (8 * k)); c != 0 {
			op |= 1 << (4 + k)
			b = append(b, c)
		}
	}
	b[at] = op
	return b
}
