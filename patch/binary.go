package patch

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// A GIT binary patch, as git diff --binary writes it after the file's
// "index OLD..NEW" line, is
//
//	GIT binary patch
//	literal 1234        (or: delta 321)
//	<data lines>
//	<empty line>
//	literal 999         (the reverse block, optional)
//	<data lines>
//	<empty line>
//
// The number is the size of the block's payload; the data lines (see
// base85.go) carry the payload compressed with zlib. A literal payload is
// the file's content, a delta payload a git delta (see delta.go) against
// the other side. The first block makes the new file from the old one,
// the second the old from the new, for reverse application.

// BinaryMethod says how a binary block encodes its side of the file.
type BinaryMethod int

// The binary block methods.
const (
	// BinaryLiteral: the payload is the file's content.
	BinaryLiteral BinaryMethod = iota
	// BinaryDelta: the payload is a git delta against the other side.
	BinaryDelta
)

func (m BinaryMethod) String() string {
	switch m {
	case BinaryLiteral:
		return "literal"
	case BinaryDelta:
		return "delta"
	}
	return fmt.Sprintf("BinaryMethod(%d)", int(m))
}

// BinaryBlock is one block of a GIT binary patch.
type BinaryBlock struct {
	Method BinaryMethod
	// Data is the payload: the content for a literal, the delta otherwise.
	Data []byte
	// Deflated is the zlib stream the patch carried, which printing writes
	// back unchanged so that a parsed patch prints byte for byte. When nil,
	// printing compresses Data. When set, it must inflate to Data.
	Deflated []byte
}

// Errors of binary file patches, for errors.Is.
var (
	// ErrBinaryNoData: the patch says a binary file changed ("Binary files
	// a/x and b/x differ") but carries no content to apply.
	ErrBinaryNoData = errors.New("binary change without data")
	// ErrBinaryMismatch: the file is not the one the binary patch was made
	// from, or the patch does not make the content its index line names.
	ErrBinaryMismatch = errors.New("binary content does not match the patch")
)

// IsBinary reports whether git would treat content as binary: it has a
// NUL byte in its first 8000 bytes (git's buffer_is_binary).
func IsBinary(content string) bool {
	return strings.IndexByte(content[:min(len(content), 8000)], 0) >= 0
}

// BlobHash returns git's name for content as a blob: the hex SHA-1 of
// "blob <length>\x00<content>".
func BlobHash(content string) string { return blobName(sha1.New(), content) }

// blobHash256 is BlobHash in a repository that uses SHA-256 names.
func blobHash256(content string) string { return blobName(sha256.New(), content) }

func blobName(h hash.Hash, content string) string {
	fmt.Fprintf(h, "blob %d\x00", len(content))
	io.WriteString(h, content)
	return hex.EncodeToString(h.Sum(nil))
}

// isNullHash reports an all-zero object name: the side does not exist.
func isNullHash(h string) bool { return h != "" && strings.Trim(h, "0") == "" }

// checkBlob verifies content against an object name from an index line: a
// full SHA-1 (40 digits) or SHA-256 (64) must be equal, an abbreviated one
// must be a prefix; the null name requires no content. An empty name
// checks nothing.
func checkBlob(content, want string) error {
	switch {
	case want == "":
		return nil
	case isNullHash(want):
		if content != "" {
			return fmt.Errorf("%w: the index line says there is no file (%s), but it has %d bytes", ErrBinaryMismatch, want, len(content))
		}
		return nil
	}
	got := BlobHash(content)
	ok := false
	switch len(want) {
	case 40:
		ok = got == want
	case 64:
		got = blobHash256(content)
		ok = got == want
	default:
		ok = strings.HasPrefix(got, want) || strings.HasPrefix(blobHash256(content), want)
	}
	if !ok {
		return fmt.Errorf("%w: its blob is %s, the index line says %s", ErrBinaryMismatch, got, want)
	}
	return nil
}

// isHexName reports whether s can be an object name as an index line
// writes it: 4 to 64 lower-case hex digits.
func isHexName(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parseIndexHashes reads the object names of "index OLD..NEW[ MODE]".
func parseIndexHashes(l string) (oldHash, newHash string, ok bool) {
	f := strings.Fields(strings.TrimPrefix(l, "index "))
	if len(f) == 0 {
		return "", "", false
	}
	a, b, found := strings.Cut(f[0], "..")
	if !found || !isHexName(a) || !isHexName(b) {
		return "", "", false
	}
	return a, b, true
}

// IndexHashes reads the blob names of a git index line, "index OLD..NEW
// [MODE]"; ok is false when it is not one.
func IndexHashes(l string) (oldHash, newHash string, ok bool) { return parseIndexHashes(l) }

// BlobIs reports whether content is the blob that name, from an index
// line, names (a full or abbreviated SHA-1 or SHA-256 name). An empty name
// names nothing.
func BlobIs(content, name string) bool { return name != "" && checkBlob(content, name) == nil }

// isBinaryFilesLine matches "Binary files X and Y differ".
func isBinaryFilesLine(l string) bool {
	return strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ")
}

// binaryFilesLine reads "Binary files X and Y differ" at p.i as a binary
// change without data, or skips it (nil) when it names no two files. Names may hold " and ": like git with "diff --git"
// names, prefer the split whose names agree after their first component.
func (p *udiffParser) binaryFilesLine() (*FilePatch, error) {
	line := p.i + 1
	body := strings.TrimSuffix(strings.TrimPrefix(p.lines[p.i], "Binary files "), " differ")
	var a, b string
	for i := 0; ; {
		k := strings.Index(body[i:], " and ")
		if k < 0 {
			break
		}
		x, y := body[:i+k], body[i+k+len(" and "):]
		if a == "" || dropFirst(x) == dropFirst(y) {
			a, b = x, y
		}
		if dropFirst(x) == dropFirst(y) {
			break
		}
		i += k + 1
	}
	if a == "" || b == "" {
		// Prose that reads like it, such as a commit message's "Binary
		// files differ": no names, no change.
		p.i++
		return nil, nil
	}
	fp := &FilePatch{Binary: true}
	var err error
	if fp.OldPath, err = p.headerName(a); err == nil {
		fp.NewPath, err = p.headerName(b)
	}
	switch {
	case err != nil:
		return nil, p.errf(line, "%v", err)
	case fp.OldPath == "" && fp.NewPath == "":
		return nil, p.errf(line, "both sides are /dev/null")
	case fp.OldPath == "":
		fp.Op = Create
	case fp.NewPath == "":
		fp.Op = Delete
	}
	p.i++
	return fp, nil
}

// binaryBlocks parses the blocks after a "GIT binary patch" line at p.i:
// the forward block, then the reverse block when there is one.
func (p *udiffParser) binaryBlocks(fp *FilePatch) error {
	var err error
	if fp.BinaryForward, err = p.binaryBlock(); err != nil {
		return err
	}
	if p.i < len(p.lines) && binaryBlockHeader(p.lines[p.i]) {
		fp.BinaryReverse, err = p.binaryBlock()
	}
	return err
}

func binaryBlockHeader(l string) bool {
	return strings.HasPrefix(l, "literal ") || strings.HasPrefix(l, "delta ")
}

// binaryBlock parses "literal N" or "delta N", the data lines and the
// empty line that ends them (or the end of the input).
func (p *udiffParser) binaryBlock() (*BinaryBlock, error) {
	hdrLine := p.i + 1
	if p.i >= len(p.lines) || !binaryBlockHeader(p.lines[p.i]) {
		return nil, p.errf(hdrLine, `GIT binary patch: want "literal N" or "delta N"`)
	}
	word, num, _ := strings.Cut(p.lines[p.i], " ")
	blk := &BinaryBlock{Method: BinaryLiteral}
	if word == "delta" {
		blk.Method = BinaryDelta
	}
	size, err := strconv.ParseUint(num, 10, 63)
	if err != nil {
		return nil, p.errf(hdrLine, "GIT binary patch: bad size %q in %q", num, p.lines[p.i])
	}
	p.i++
	var deflated []byte
	for p.i < len(p.lines) && p.lines[p.i] != "" {
		if deflated, err = appendBinaryLine(deflated, p.lines[p.i]); err != nil {
			return nil, p.errf(p.i+1, "GIT binary patch: %v", err)
		}
		p.i++
	}
	if p.i < len(p.lines) {
		p.i++ // the empty line
	}
	if blk.Data, err = inflate(deflated, size); err != nil {
		return nil, p.errf(hdrLine, "GIT binary patch: %s block: %v", blk.Method, err)
	}
	blk.Deflated = deflated
	return blk, nil
}

// inflate decompresses a zlib stream that must hold exactly size bytes.
func inflate(deflated []byte, size uint64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(deflated))
	if err != nil {
		return nil, fmt.Errorf("the data is not zlib-compressed: %v", err)
	}
	// One byte past the announced size tells a longer stream.
	data, err := io.ReadAll(io.LimitReader(zr, int64(size)+1))
	if err != nil {
		return nil, fmt.Errorf("the compressed data is corrupt: %v", err)
	}
	if uint64(len(data)) != size {
		more := ""
		if uint64(len(data)) > size {
			more = " or more"
		}
		return nil, fmt.Errorf("the data holds %d%s bytes, the header says %d", len(data), more, size)
	}
	return data, nil
}

func deflate(data []byte) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(data) // a bytes.Buffer does not fail
	zw.Close()
	return b.Bytes()
}

// writeBinary writes the body of a binary file section: the index line
// when the names are known, then the GIT binary patch, or "Binary files
// ... differ" when the patch carries no data.
func writeBinary(b *strings.Builder, fp *FilePatch) {
	if fp.OldHash != "" && fp.NewHash != "" {
		fmt.Fprintf(b, "index %s..%s", fp.OldHash, fp.NewHash)
		if fp.Op != Create && fp.Op != Delete && fp.OldMode != 0 && fp.OldMode == fp.NewMode {
			fmt.Fprintf(b, " %06o", fp.OldMode)
		}
		b.WriteByte('\n')
	}
	if fp.BinaryForward == nil {
		fmt.Fprintf(b, "Binary files %s and %s differ\n", sideName("a/", fp.OldPath), sideName("b/", fp.NewPath))
		return
	}
	b.WriteString("GIT binary patch\n")
	for _, blk := range []*BinaryBlock{fp.BinaryForward, fp.BinaryReverse} {
		if blk == nil {
			continue
		}
		fmt.Fprintf(b, "%s %d\n", blk.Method, len(blk.Data))
		z := blk.Deflated
		if z == nil {
			z = deflate(blk.Data)
		}
		appendBinaryLines(b, z)
		b.WriteByte('\n')
	}
}

// applyBinary makes the new content of a binary file patch from the old
// content, as git apply does: the old content must have the index line's
// old name (a prefix of it when abbreviated), a literal block replaces it,
// a delta block is applied to it, and the result must have the new name.
func applyBinary(old string, fp *FilePatch) (string, error) {
	name := fp.Path()
	blk := fp.BinaryForward
	if blk == nil {
		if fp.BinaryReverse != nil {
			return "", fmt.Errorf("apply: %s: %w for this direction: the GIT binary patch has no reverse block", name, ErrBinaryNoData)
		}
		return "", fmt.Errorf("apply: %s: %w: the patch only says the binary files differ; make it with git diff --binary", name, ErrBinaryNoData)
	}
	if err := checkBlob(old, fp.OldHash); err != nil {
		return "", fmt.Errorf("apply: %s: %w", name, err)
	}
	var out string
	switch blk.Method {
	case BinaryLiteral:
		out = string(blk.Data)
	case BinaryDelta:
		b, err := applyDelta([]byte(old), blk.Data)
		if err != nil {
			return "", fmt.Errorf("apply: %s: %w: %w", name, ErrBinaryMismatch, err)
		}
		out = string(b)
	default:
		return "", fmt.Errorf("apply: %s: unknown binary method %v", name, blk.Method)
	}
	if err := checkBlob(out, fp.NewHash); err != nil {
		return "", fmt.Errorf("apply: %s: the result does not match: %w", name, err)
	}
	return out, nil
}

// MakeBinary returns the file patch that turns old into new the way git
// diff --binary writes it: the full blob names on the index line and a GIT
// binary patch whose forward block makes new from old and whose reverse
// block makes old from new, each a delta when that compresses smaller than
// the literal content. With data false it is what git diff writes without
// --binary: abbreviated names and "Binary files ... differ", which cannot
// be applied. Paths are as for [Make]; equal contents give a file patch
// that changes nothing.
func MakeBinary(oldPath, newPath, old, new string, data bool) *FilePatch {
	fp := newFilePatch(oldPath, newPath)
	if old == new && fp.Op == Modify {
		return fp
	}
	fp.Binary = true
	fp.OldHash, fp.NewHash = BlobHash(old), BlobHash(new)
	if fp.Op == Create {
		fp.OldHash = strings.Repeat("0", 40)
	}
	if fp.Op == Delete {
		fp.NewHash = strings.Repeat("0", 40)
	}
	if !data {
		fp.OldHash, fp.NewHash = fp.OldHash[:7], fp.NewHash[:7]
		return fp
	}
	fp.BinaryForward = makeBinaryBlock([]byte(old), []byte(new))
	fp.BinaryReverse = makeBinaryBlock([]byte(new), []byte(old))
	return fp
}

// makeBinaryBlock encodes to against from as git's emit_binary_diff_body
// does: a delta when both sides have content and the compressed delta is
// smaller than the compressed literal.
func makeBinaryBlock(from, to []byte) *BinaryBlock {
	lit := &BinaryBlock{Method: BinaryLiteral, Data: to, Deflated: deflate(to)}
	if len(from) == 0 || len(to) == 0 || len(from) > 1<<32-1 {
		return lit
	}
	d := makeDelta(from, to)
	if z := deflate(d); len(z) < len(lit.Deflated) {
		return &BinaryBlock{Method: BinaryDelta, Data: d, Deflated: z}
	}
	return lit
}
