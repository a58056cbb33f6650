package repair

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"

	"github.com/patchbench/patchbench/patch"
)

// The fast path: a large, well-formed git diff of one file whose every
// hunk fits exactly at its own place is applied by streaming it twice,
// once to check every hunk and once to write the new content straight to
// its temporary file, the file read through a window (fileWin), with no
// parsed patch, no slice of lines and no copy of the text or the file
// held whole (a diff of 100,000 hunks is larger than its file).
//
// It stands in for the engine only where the engine's decision is
// certain, and the conditions are those under which it is, step by step:
// the text is one "diff --git a/P b/P" section (an optional "index" line,
// "--- a/P", "+++ b/P") of counted hunks and nothing else, every line
// ending in a newline, no CR in a header, no "\ No newline" marker, no
// empty body line, none that starts as a ---/+++ header does, no "***
// Begin Patch" anywhere (Repair tries V4A first then); so patch.Detect
// says udiff, patch.Parse reads the same hunks and
// tolerant mode takes its strict attempt (applyStrict). Every hunk has
// context and a change, starts after the previous one ends, its new start
// is its old start plus the lines earlier hunks added (so that git's
// first try, the header's new line, is its old place), its old side is
// the file's bytes there exactly (line endings included; a file's last
// line without a newline fits no hunk line), it reaches the start or the
// end of the file where it lacks leading or trailing context (git's
// rule), and its new side is not there too, CR aside: strictOnce then
// finds every hunk's old side and not its new at its own place and lets
// the strict apply stand, and patch.Apply places every hunk at its
// header's line with offset 0. Whatever is not so is left to the engine,
// which reads the text again from the start: the fast path only ever
// makes the engine's own decision, faster.

// errNotFast says the engine must decide.
var errNotFast = errors.New("not for the fast path")

// FastMinSize is the smallest patch the fast path ([ApplyReader],
// [ApplyText]) is tried on: below it the engine costs less than the
// second read the fast path makes.
const FastMinSize = 64 << 10

// fastOK reports whether the options allow the fast path: a unified diff
// read with -p1 (the default), applied to the files it names.
func fastOK(opts ApplyOptions) bool {
	if opts.Target != "" || (opts.Format != "" && opts.Format != patch.UDiff) {
		return false
	}
	if opts.Strict || opts.FixedStrip {
		return opts.Strip == 1
	}
	return true
}

// fastFile is one pass of the fast path over the patch text.
type fastFile struct {
	br      *bufio.Reader
	line    []byte
	reverse bool
	// places, when not nil, receives each hunk's placement.
	places *[]patch.Placement
	hunks  int // hunks seen
	// work counts the file lines passed and the body lines compared: the
	// tests bound it by the lines of the file and the patch.
	work int
}

// next reads the next line, with its newline; false at the end of the
// text (line empty) or on anything else (a line without a newline, one
// longer than the buffer, a read error: the engine reads again).
func (f *fastFile) next() (ok bool, eof bool) {
	l, err := f.br.ReadSlice('\n')
	f.line = l
	if err != nil {
		return false, err == io.EOF && len(l) == 0
	}
	if bytes.Contains(l, []byte("*** Begin Patch")) {
		return false, false
	}
	return true, false
}

// header reads the file section's header and returns the file's path.
func (f *fastFile) header() (string, error) {
	if ok, _ := f.next(); !ok {
		return "", errNotFast
	}
	rest, ok := bytes.CutPrefix(f.line, []byte("diff --git a/"))
	if !ok {
		return "", errNotFast
	}
	a, b, ok := bytes.Cut(bytes.TrimSuffix(rest, []byte("\n")), []byte(" b/"))
	if !ok || !bytes.Equal(a, b) || !plainPath(a) {
		return "", errNotFast
	}
	name := string(a)
	if patch.CheckPath(name) != nil || path.Clean(name) != name {
		return "", errNotFast
	}
	if ok, _ := f.next(); !ok {
		return "", errNotFast
	}
	if idx, ok := bytes.CutPrefix(f.line, []byte("index ")); ok {
		if !plainIndex(bytes.TrimSuffix(idx, []byte("\n"))) {
			return "", errNotFast
		}
		if ok, _ := f.next(); !ok {
			return "", errNotFast
		}
	}
	if string(f.line) != "--- a/"+name+"\n" {
		return "", errNotFast
	}
	if ok, _ := f.next(); !ok || string(f.line) != "+++ b/"+name+"\n" {
		return "", errNotFast
	}
	return name, nil
}

// plainPath: printable ASCII without space, quote or backslash, which
// git writes unquoted and every reader splits alike.
func plainPath(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	for _, c := range p {
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainIndex: "H..H" or "H..H 100644" (or 100755), lower-case hex: no
// mode change, no symbolic link.
func plainIndex(s []byte) bool {
	hashes, mode, hasMode := bytes.Cut(s, []byte(" "))
	if hasMode && string(mode) != "100644" && string(mode) != "100755" {
		return false
	}
	x, y, ok := bytes.Cut(hashes, []byte(".."))
	return ok && isHex(x) && isHex(y)
}

func isHex(s []byte) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// hunkHeader parses "@@ -A,B +C,D @@" (a count may be left out: 1),
// then a newline or a space and section text, with no CR.
func hunkHeader(l []byte) (a, b, c, d int, ok bool) {
	if bytes.IndexByte(l, '\r') >= 0 {
		return 0, 0, 0, 0, false
	}
	p := 0
	lit := func(s string) bool {
		if !bytes.HasPrefix(l[p:], []byte(s)) {
			return false
		}
		p += len(s)
		return true
	}
	num := func() (int, bool) {
		n, start := 0, p
		for ; p < len(l) && '0' <= l[p] && l[p] <= '9'; p++ {
			if p-start >= 12 {
				return 0, false
			}
			n = n*10 + int(l[p]-'0')
		}
		return n, p > start
	}
	rng := func() (start, count int, ok bool) {
		if start, ok = num(); !ok {
			return 0, 0, false
		}
		count = 1
		if lit(",") {
			count, ok = num()
		}
		return start, count, ok
	}
	if !lit("@@ -") {
		return 0, 0, 0, 0, false
	}
	if a, b, ok = rng(); !ok || !lit(" +") {
		return 0, 0, 0, 0, false
	}
	if c, d, ok = rng(); !ok || !lit(" @@") {
		return 0, 0, 0, 0, false
	}
	if rest := l[p:]; string(rest) != "\n" && (len(rest) < 2 || rest[0] != ' ') {
		return 0, 0, 0, 0, false
	}
	return a, b, c, d, true
}

// fileWin reads the file being patched forward, holding only its bytes
// from keep on: the unchanged lines pass through it, and it holds no
// more than a hunk's span and a read at a time (plus the lines a hunk's
// new side is compared with). It sums what it reads, so that the second
// pass can tell it read the file the first pass checked.
type fileWin struct {
	r     io.Reader
	chunk int    // bytes read at a time
	buf   []byte // the file's bytes from offset base on
	base  int
	keep  int // offset before which the bytes may be dropped
	eof   bool
	err   error // a read error: the engine decides
	crc   uint32
	size  int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fill reads more of the file, making room first by dropping what is
// before keep or growing the buffer.
func (w *fileWin) fill() {
	if len(w.buf) == cap(w.buf) {
		drop := w.keep - w.base
		if drop > 0 && 2*drop >= len(w.buf) {
			w.buf = w.buf[:copy(w.buf, w.buf[drop:])]
		} else {
			nb := make([]byte, len(w.buf)-drop, max(2*(len(w.buf)-drop), w.chunk))
			copy(nb, w.buf[drop:])
			w.buf = nb
		}
		w.base = w.keep
	}
	n, err := w.r.Read(w.buf[len(w.buf):min(cap(w.buf), len(w.buf)+w.chunk)])
	w.crc = crc32.Update(w.crc, castagnoli, w.buf[len(w.buf):len(w.buf)+n])
	w.buf, w.size = w.buf[:len(w.buf)+n], w.size+n
	if err == io.EOF {
		w.eof = true
	} else if err != nil {
		w.eof, w.err = true, err
	}
}

// line returns the file's line at offset off (at or after keep), with
// its newline when it has one; false where the file ends. The bytes are
// the window's, good until the next call.
func (w *fileWin) line(off int) ([]byte, bool) {
	from := off // where the search for the newline goes on
	for {
		if j := bytes.IndexByte(w.buf[from-w.base:], '\n'); j >= 0 {
			return w.buf[off-w.base : from-w.base+j+1], true
		}
		from = w.base + len(w.buf)
		if w.eof {
			if off < from {
				return w.buf[off-w.base:], true
			}
			return nil, false
		}
		w.fill()
	}
}

// bytes returns the file's bytes from offset from (at or after keep) to
// to, which were read.
func (w *fileWin) bytes(from, to int) []byte { return w.buf[from-w.base : to-w.base] }

// sameButCR compares two lines as sideAt does: without the newline and
// one CR before it.
func sameButCR(x, y []byte) bool {
	x = bytes.TrimSuffix(bytes.TrimSuffix(x, []byte("\n")), []byte("\r"))
	y = bytes.TrimSuffix(bytes.TrimSuffix(y, []byte("\n")), []byte("\r"))
	return bytes.Equal(x, y)
}

// flushEvery bounds the unchanged bytes held before they are written.
const flushEvery = 64 << 10

// hunksOf checks every hunk against the file that win reads and, with w
// set, writes the new content to w.
func (f *fastFile) hunksOf(win *fileWin, w io.Writer) error {
	written := 0 // the file's bytes before it are written, or skipped
	// flush writes the file's bytes up to offset to, which it may then
	// drop.
	flush := func(to int) error {
		if w != nil && to > written {
			if _, err := w.Write(win.bytes(written, to)); err != nil {
				return err
			}
		}
		written, win.keep = to, to
		return nil
	}
	line, off := 0, 0 // the file's cursor: line number and its byte offset
	prevEnd, cum := 0, 0
	ok, eof := f.next()
	for ok {
		a, b, cn, d, hok := hunkHeader(f.line)
		if !hok {
			return errNotFast
		}
		if f.reverse {
			a, b, cn, d = cn, d, a, b
		}
		at := a - 1
		if b == 0 || d == 0 || at < prevEnd || cn != a+cum {
			return errNotFast
		}
		for line < at {
			l, lok := win.line(off)
			if !lok {
				return errNotFast
			}
			off, line = off+len(l), line+1
			f.work++
			if off-written >= flushEvery {
				if err := flush(off); err != nil {
					return err
				}
			}
		}
		if err := flush(off); err != nil {
			return err
		}
		// o: the old side's cursor; n: the new side's, while the new
		// side matches.
		oLine, oOff, nOff, nMatch := line, off, off, true
		oldLeft, newLeft := b, d
		var first, last byte
		changed, context := false, false
		for oldLeft > 0 || newLeft > 0 {
			if ok, _ := f.next(); !ok {
				return errNotFast
			}
			l := f.line
			f.work++
			if bytes.HasPrefix(l, []byte("--- ")) || bytes.HasPrefix(l, []byte("+++ ")) {
				// A body line that reads as a file header to the engine's
				// scans of the whole text (crlfHeaders, prefixedNames):
				// they may send the patch down the pipeline.
				return errNotFast
			}
			k := l[0]
			if f.reverse && (k == '+' || k == '-') {
				k ^= '+' ^ '-'
			}
			if k != ' ' && k != '-' && k != '+' {
				return errNotFast
			}
			if first == 0 {
				first = k
			}
			last = k
			text := l[1:]
			changed, context = changed || k != ' ', context || k == ' '
			if k != '+' {
				oldLeft--
				fl, lok := win.line(oOff)
				if oldLeft < 0 || !lok || !bytes.Equal(fl, text) {
					return errNotFast
				}
				oLine, oOff = oLine+1, oOff+len(fl)
			}
			if k != '-' {
				if newLeft--; newLeft < 0 {
					return errNotFast
				}
				if nMatch {
					fl, lok := win.line(nOff)
					nMatch = lok && sameButCR(fl, text)
					nOff += len(fl)
				}
				if w != nil {
					if _, err := w.Write(text); err != nil {
						return err
					}
				}
			}
		}
		if !changed || !context || nMatch || first != ' ' && at != 0 || a <= 1 && at != 0 {
			return errNotFast
		}
		if last != ' ' {
			// No trailing context: the old side ends the file.
			if _, more := win.line(oOff); more {
				return errNotFast
			}
		}
		f.hunks++
		if f.places != nil {
			*f.places = append(*f.places, patch.Placement{Line: cn})
		}
		line, off = oLine, oOff
		written, win.keep = off, off // the old side is not written
		prevEnd, cum = at+b, cum+d-b
		ok, eof = f.next()
	}
	if !eof || f.hunks == 0 {
		return errNotFast
	}
	// The rest of the file, read to its end (the sum covers it all).
	for {
		if err := flush(win.base + len(win.buf)); err != nil {
			return err
		}
		if win.eof {
			break
		}
		win.fill()
	}
	if win.err != nil {
		return errNotFast
	}
	return nil
}

// fastChunk is the size of the buffer of the patch text, and of the
// reads of the file being patched: no larger than they are (a small
// patch needs no large buffer). A patch line longer than it goes to the
// engine; the file's lines may be longer (the window grows).
const fastChunk = 64 << 10

// newFastReader buffers the patch text, size bytes: a line longer than
// the buffer leaves the patch to the engine.
func newFastReader(r io.Reader, size int64) *bufio.Reader {
	return bufio.NewReaderSize(r, int(min(fastChunk, size+1)))
}

// fastPass runs one pass over the patch text from r: the header, then
// the hunks against the file that open opens, writing to w when it is
// set. It returns the file's name, the hunks, and the file's size and
// checksum.
func fastPass(r io.Reader, textSize int64, reverse bool, places *[]patch.Placement, open func(name string) (io.ReadCloser, error), chunk int, w io.Writer) (name string, hunks, size int, crc uint32, err error) {
	f := &fastFile{br: newFastReader(r, textSize), reverse: reverse, places: places}
	if name, err = f.header(); err != nil {
		return "", 0, 0, 0, err
	}
	fr, err := open(name)
	if err != nil {
		return "", 0, 0, 0, errNotFast
	}
	defer fr.Close()
	if st, ok := fr.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			chunk = int(min(int64(chunk), fi.Size()+1))
		}
	}
	win := &fileWin{r: fr, chunk: chunk}
	if err := f.hunksOf(win, w); err != nil {
		return "", 0, 0, 0, err
	}
	return name, f.hunks, win.size, win.crc, nil
}

// applyFast tries the fast path on the patch text in src (size bytes):
// false, leaving rep alone, when the engine must decide. Per-hunk reports
// are made unless brief.
func applyFast(root *patch.Root, src io.ReaderAt, size int64, opts ApplyOptions, brief bool, rep *Report) bool {
	if size < FastMinSize || !fastOK(opts) {
		return false
	}
	open := func(name string) (io.ReadCloser, error) { return root.Open(name) }
	var places *[]patch.Placement
	if !brief {
		places = new([]patch.Placement)
	}
	name, hunks, fsize, crc, err := fastPass(io.NewSectionReader(src, 0, size), size, opts.Reverse, places, open, fastChunk, nil)
	if err != nil {
		return false
	}
	res := patch.FileResult{OldPath: name, Path: name, Op: patch.Modify, Content: []byte{}}
	if places != nil {
		res.Placements = *places
	}
	res.WriteContent = func(w io.Writer) error {
		// The second pass checks all again: a patch or a file changed
		// in between fails the write, which is undone.
		n, h, fs, c, err := fastPass(io.NewSectionReader(src, 0, size), size, opts.Reverse, nil, open, fastChunk, w)
		if errors.Is(err, errNotFast) || err == nil && (n != name || h != hunks || fs != fsize || c != crc) {
			// errNotFast is the fast path's own word, not the user's.
			return fmt.Errorf("%s: the patch or %s changed while it was applied", opts.Name, name)
		}
		return err
	}
	rep.Format = patch.UDiff
	rep.Files = []FileReport{ResultReport(res)}
	rep.Results = []patch.FileResult{res}
	return true
}
