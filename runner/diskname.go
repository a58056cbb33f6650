package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// maxDiskName bounds the readable part of a DiskName, well under the 255
// bytes a file name may have on common file systems.
const maxDiskName = 80

// DiskName turns an id (a dataset instance id, a case key) into a file or
// directory name, injectively: two ids never share a name. An id of
// letters, digits, '.', '-' and '_' of at most 80 bytes that does not
// start with '.' is its own name. Any other id is written with '_' for
// each other character, cut to 80 bytes, then '~' and the first 16 hex
// digits of the id's SHA-256: such a name has a '~', which a kept id never
// has, so it cannot meet one, and two changed ids meet only if their hashes
// do. So "a/b", "a_b" and "a:b" are three names, and a 300-byte id still
// makes a name a file system takes.
func DiskName(id string) string {
	if keepsName(id) {
		return id
	}
	b := make([]byte, 0, maxDiskName+17)
	for i := 0; i < len(id) && len(b) < maxDiskName; {
		_, n := utf8.DecodeRuneInString(id[i:])
		if n == 1 && nameByte(id[i]) && !(len(b) == 0 && id[i] == '.') {
			b = append(b, id[i])
		} else {
			b = append(b, '_')
		}
		i += n
	}
	h := sha256.Sum256([]byte(id))
	b = append(b, '~')
	return string(hex.AppendEncode(b, h[:8]))
}

func keepsName(id string) bool {
	if id == "" || len(id) > maxDiskName || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !nameByte(id[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
}
