package patch

import (
	"fmt"
	"strings"
)

// The data lines of a GIT binary patch are git's base85 (git's base85.c),
// not Ascii85 or RFC 1924 ordering: four bytes, big-endian, become five
// digits, most significant first, in an alphabet that needs no quoting in
// a patch. A line is one length character, 'A'-'Z' for 1-26 bytes and
// 'a'-'z' for 27-52, then the digits of that many bytes, the last group
// padded with zero bytes. git writes 52 bytes to a line.
const base85Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// binaryLineBytes is how many bytes git puts on one data line.
const binaryLineBytes = 52

// base85Digit returns the value of an alphabet character.
func base85Digit(c byte) (uint32, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint32(c - '0'), true
	case 'A' <= c && c <= 'Z':
		return uint32(c-'A') + 10, true
	case 'a' <= c && c <= 'z':
		return uint32(c-'a') + 36, true
	}
	if i := strings.IndexByte(base85Alphabet[62:], c); i >= 0 {
		return uint32(62 + i), true
	}
	return 0, false
}

// appendBase85 appends the base85 digits of src: five for every four
// bytes, the last group padded with zero bytes.
func appendBase85(dst, src []byte) []byte {
	for len(src) > 0 {
		var acc uint32
		for k := 0; k < 4; k++ {
			acc <<= 8
			if k < len(src) {
				acc |= uint32(src[k])
			}
		}
		var group [5]byte
		for k := 4; k >= 0; k-- {
			group[k] = base85Alphabet[acc%85]
			acc /= 85
		}
		dst = append(dst, group[:]...)
		src = src[min(4, len(src)):]
	}
	return dst
}

// appendDecodeBase85 decodes the digits in s, which must be exactly the
// groups for n bytes, and appends the n bytes to dst.
func appendDecodeBase85(dst []byte, s string, n int) ([]byte, error) {
	if len(s) != (n+3)/4*5 {
		return dst, fmt.Errorf("%d base85 digits cannot hold %d bytes", len(s), n)
	}
	for k := 0; k < len(s); k += 5 {
		var acc uint64
		for j := 0; j < 5; j++ {
			d, ok := base85Digit(s[k+j])
			if !ok {
				return dst, fmt.Errorf("%q is not a base85 digit", s[k+j])
			}
			acc = acc*85 + uint64(d)
		}
		if acc > 0xffffffff {
			return dst, fmt.Errorf("base85 group %q is more than 32 bits", s[k:k+5])
		}
		take := min(4, n)
		for j := 0; j < take; j++ {
			dst = append(dst, byte(acc>>(24-8*j)))
		}
		n -= take
	}
	return dst, nil
}

// appendBinaryLines appends data as the data lines of a binary block, each
// ending in "\n".
func appendBinaryLines(b *strings.Builder, data []byte) {
	var line []byte
	for len(data) > 0 {
		n := min(binaryLineBytes, len(data))
		line = line[:0]
		if n <= 26 {
			line = append(line, byte('A'+n-1))
		} else {
			line = append(line, byte('a'+n-27))
		}
		line = appendBase85(line, data[:n])
		line = append(line, '\n')
		b.Write(line)
		data = data[n:]
	}
}

// appendBinaryLine decodes one data line of a binary block, as git's
// parse_binary_hunk checks it: a length character, then whole groups of
// five digits, with no more than three padding bytes in the last group.
func appendBinaryLine(dst []byte, l string) ([]byte, error) {
	if len(l) < 6 || (len(l)-1)%5 != 0 {
		return dst, fmt.Errorf("data line of %d characters: want a length character and groups of 5 base85 digits", len(l))
	}
	var n int
	switch c := l[0]; {
	case 'A' <= c && c <= 'Z':
		n = int(c-'A') + 1
	case 'a' <= c && c <= 'z':
		n = int(c-'a') + 27
	default:
		return dst, fmt.Errorf("data line starts with %q, not a length character A-Z or a-z", c)
	}
	if most := (len(l) - 1) / 5 * 4; n > most || n <= most-4 {
		return dst, fmt.Errorf("length character %q says %d bytes but the line holds %d digit groups", l[0], n, (len(l)-1)/5)
	}
	return appendDecodeBase85(dst, l[1:], n)
}
