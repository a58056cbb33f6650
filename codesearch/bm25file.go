package codesearch

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/internal/atomicfile"
)

// The index file: a magic string, then unsigned varints and length-
// prefixed strings. It replaced encoding/gob, whose reflection over 77,000
// terms and 40,000 chunks took 150 ms to write sympy's index and 200 ms
// to read it. Terms are written in sorted order, so that one index always
// makes the same bytes.
//
//	magic "patchbench loc index\n"
//	version, files, avg-len (float64 bits), chunks
//	per chunk: same-path flag (0: a new path follows), [path], name, start, end
//	per chunk: doc length
//	classes; per class: path, name, start, end
//	imports; per import: same-path flag, [path], spec, line
//	blobs; per file: its blob id
//	terms; per term: term, postings; per posting: chunk id delta, tf
const indexMagic = "patchbench loc index\n"

func writeIndex(path string, ix *Index) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	err := atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error {
		// Appended to one buffer written out each MiB: a call to a
		// bufio.Writer per varint took half of writeIndex's time.
		const bufSize = 1 << 20
		b := make([]byte, 0, bufSize+binary.MaxVarintLen64)
		var werr error
		flush := func() {
			if werr == nil && len(b) > 0 {
				_, werr = w.Write(b)
			}
			b = b[:0]
		}
		num := func(v uint64) {
			if b = binary.AppendUvarint(b, v); len(b) >= bufSize {
				flush()
			}
		}
		str := func(s string) {
			num(uint64(len(s)))
			for len(s) > 0 {
				n := min(len(s), bufSize-len(b))
				b, s = append(b, s[:n]...), s[n:]
				if len(b) >= bufSize {
					flush()
				}
			}
		}
		b = append(b, indexMagic...)
		num(uint64(ix.Version))
		num(uint64(ix.NumFiles))
		num(math.Float64bits(ix.AvgLen))
		// A path is written once for a run of items of the same file.
		prev := ""
		path := func(first bool, p string) {
			if !first && p == prev {
				num(1)
				return
			}
			num(0)
			str(p)
			prev = p
		}
		num(uint64(len(ix.Chunks)))
		for i, c := range ix.Chunks {
			path(i == 0, c.Path)
			str(c.Name)
			num(uint64(c.Start))
			num(uint64(c.End))
		}
		for _, n := range ix.DocLen {
			num(uint64(n))
		}
		num(uint64(len(ix.Classes)))
		for _, c := range ix.Classes {
			str(c.Path)
			str(c.Name)
			num(uint64(c.Start))
			num(uint64(c.End))
		}
		num(uint64(len(ix.Imports)))
		for i, c := range ix.Imports {
			path(i == 0, c.Path)
			str(c.Name)
			num(uint64(c.Start))
		}
		num(uint64(len(ix.Blobs)))
		for _, b := range ix.Blobs {
			str(b)
		}
		// The terms in sorted order, as the index holds them.
		num(uint64(len(ix.Terms)))
		for i, t := range ix.Terms {
			ps := ix.Postings[i]
			str(t)
			num(uint64(len(ps)))
			last := int32(0)
			for _, p := range ps {
				num(uint64(p.Chunk - last))
				num(uint64(p.TF))
				last = p.Chunk
			}
		}
		flush()
		return werr
	})
	if err != nil {
		return fmt.Errorf("write index %s: %w", path, err)
	}
	return nil
}

// errIndexFile is a damaged index file (it is rebuilt).
var errIndexFile = errors.New("damaged index file")

func readIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ix, err := decodeIndex(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read index %s: %w", path, err)
	}
	return ix, nil
}

func decodeIndex(r *bufio.Reader) (*Index, error) {
	magic := make([]byte, len(indexMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != indexMagic {
		return nil, fmt.Errorf("%w: no index header", errIndexFile)
	}
	var bad error
	num := func(limit uint64) uint64 {
		if bad != nil {
			return 0
		}
		v, err := binary.ReadUvarint(r)
		if err == nil && v > limit {
			err = fmt.Errorf("value %d over %d", v, limit)
		}
		if err != nil {
			bad = fmt.Errorf("%w: %v", errIndexFile, err)
			return 0
		}
		return v
	}
	str := func() string {
		n := num(1 << 20)
		if bad != nil {
			return ""
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			bad = fmt.Errorf("%w: %v", errIndexFile, err)
		}
		return string(b)
	}
	const maxCount = 1 << 28
	ix := &Index{Version: int(num(math.MaxInt32))}
	if bad == nil && ix.Version != indexVersion {
		return nil, fmt.Errorf("version %d, want %d", ix.Version, indexVersion)
	}
	ix.NumFiles = int(num(maxCount))
	ix.AvgLen = math.Float64frombits(num(math.MaxUint64))
	nChunks := num(maxCount)
	if bad != nil {
		return nil, bad
	}
	ix.Chunks = make([]Chunk, 0, min(nChunks, 1<<20))
	prev := ""
	path := func(first bool) string {
		if num(1) != 1 || first {
			prev = str()
		}
		return prev
	}
	for i := uint64(0); i < nChunks && bad == nil; i++ {
		c := Chunk{Path: path(i == 0)}
		c.Name = str()
		c.Start, c.End = int(num(math.MaxInt32)), int(num(math.MaxInt32))
		ix.Chunks = append(ix.Chunks, c)
	}
	ix.DocLen = make([]int32, 0, len(ix.Chunks))
	for i := uint64(0); i < nChunks && bad == nil; i++ {
		ix.DocLen = append(ix.DocLen, int32(num(math.MaxInt32)))
	}
	nClasses := num(maxCount)
	ix.Classes = make([]Chunk, 0, min(nClasses, 1<<20))
	for i := uint64(0); i < nClasses && bad == nil; i++ {
		c := Chunk{Path: str(), Name: str()}
		c.Start, c.End = int(num(math.MaxInt32)), int(num(math.MaxInt32))
		ix.Classes = append(ix.Classes, c)
	}
	nImports := num(maxCount)
	ix.Imports = make([]Chunk, 0, min(nImports, 1<<20))
	for i := uint64(0); i < nImports && bad == nil; i++ {
		c := Chunk{Path: path(i == 0)}
		c.Name = str()
		c.Start = int(num(math.MaxInt32))
		ix.Imports = append(ix.Imports, c)
	}
	nBlobs := num(maxCount)
	ix.Blobs = make([]string, 0, min(nBlobs, 1<<20))
	for i := uint64(0); i < nBlobs && bad == nil; i++ {
		ix.Blobs = append(ix.Blobs, str())
	}
	nTerms := num(maxCount)
	ix.Terms = make([]string, 0, min(nTerms, 1<<20))
	ix.Postings = make([][]posting, 0, min(nTerms, 1<<20))
	for i := uint64(0); i < nTerms && bad == nil; i++ {
		t := str()
		if len(ix.Terms) > 0 && t <= ix.Terms[len(ix.Terms)-1] {
			bad = fmt.Errorf("%w: term %q out of order", errIndexFile, t)
		}
		n := num(nChunks)
		ps := make([]posting, 0, n)
		id := uint64(0)
		for j := uint64(0); j < n && bad == nil; j++ {
			id += num(nChunks)
			if id >= nChunks {
				bad = fmt.Errorf("%w: term %q: chunk %d of %d", errIndexFile, t, id, nChunks)
			}
			ps = append(ps, posting{int32(id), int32(num(math.MaxInt32))})
		}
		ix.Terms = append(ix.Terms, t)
		ix.Postings = append(ix.Postings, ps)
	}
	if bad != nil {
		return nil, bad
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: bytes after the last term", errIndexFile)
	}
	return ix, nil
}
