package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseOptions controls parsing.
type ParseOptions struct {
	// Strip is the number of leading path components removed from the paths
	// in file headers, as patch -p and git apply -p do. Negative means the
	// default of 1.
	Strip int
}

func (o ParseOptions) strip() int {
	if o.Strip < 0 {
		return 1
	}
	return o.Strip
}

// DefaultParseOptions strips one component ("a/", "b/"), like git apply.
var DefaultParseOptions = ParseOptions{Strip: 1}

// ParseError reports input that is not a valid patch in the expected format.
type ParseError struct {
	Format Format
	Line   int // 1-based line of the input
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("parse %s: line %d: %s", e.Format, e.Line, e.Msg)
}

// lineMarkers maps the body-line syntax of a unified-diff flavour to line
// kinds.
type lineMarkers interface {
	// decode returns the kind and text of a hunk body line, or ok=false when
	// the line is not a body line.
	decode(s string) (k LineKind, text string, ok bool)
	// marker is what precedes the text of a line of kind k.
	marker(k LineKind) string
}

type plusMinus struct{}

func (plusMinus) decode(s string) (LineKind, string, bool) {
	if s == "" {
		// GNU diff and git accept an empty line as an empty context line.
		return LineContext, "", true
	}
	switch s[0] {
	case ' ', '-', '+':
		return LineKind(s[0]), s[1:], true
	}
	return 0, "", false
}

func (plusMinus) marker(k LineKind) string {
	switch k {
	case LineInsert:
		return "+"
	case LineDelete:
		return "-"
	}
	return " "
}

// wordMarkers is udiff-l's "ADD ", "DEL ", "CON " syntax.
type wordMarkers struct{}

func (wordMarkers) decode(s string) (LineKind, string, bool) {
	for _, m := range [...]struct {
		w string
		k LineKind
	}{{"ADD", LineInsert}, {"DEL", LineDelete}, {"CON", LineContext}} {
		if s == m.w {
			return m.k, "", true
		}
		if strings.HasPrefix(s, m.w+" ") {
			return m.k, s[len(m.w)+1:], true
		}
	}
	return 0, "", false
}

func (wordMarkers) marker(k LineKind) string {
	switch k {
	case LineInsert:
		return "ADD "
	case LineDelete:
		return "DEL "
	}
	return "CON "
}

// ParseUDiff parses a unified diff as git diff and GNU diff -u write it.
//
// Accepted: any number of file sections, each optionally introduced by a
// "diff --git a/X b/Y" line and its extended headers (old mode, new mode,
// new file mode, deleted file mode, rename from/to, copy from/to,
// similarity index, dissimilarity index, index), then "--- X" and "+++ Y"
// lines (a tab and a timestamp after the name are ignored; /dev/null marks a
// missing side; C-quoted names are unquoted), then hunks. A hunk header is
// "@@ -A[,B] +C[,D] @@ [section]"; the body holds exactly B old and D new
// lines, each prefixed by ' ', '-' or '+' (an empty line counts as an empty
// context line), and "\ No newline at end of file" after the last line of
// either side. In a "diff --git" section, "GIT binary patch" and its
// blocks (see [BinaryBlock]) and "Binary files X and Y differ" (which
// carries no data) produce a FilePatch with Binary set. Text outside file
// sections, such as a commit message, is ignored, but "Binary files X and
// Y differ" outside a git section, as GNU diff writes it, is a binary
// change without data too.
func ParseUDiff(text string, opts ParseOptions) (*Patch, error) {
	p := &udiffParser{format: UDiff, markers: plusMinus{}, counted: true, strip: opts.strip()}
	return p.parse(text)
}

// ParseUDiffH parses a unified diff whose hunk headers carry no line numbers:
// "@@ ... @@" or "@@ @@", optionally followed by section text. A hunk body
// runs to the next hunk header, file header or the end of the input. Headers
// with line numbers are accepted too; their numbers are kept as hints.
// Everything else is as in [ParseUDiff].
func ParseUDiffH(text string, opts ParseOptions) (*Patch, error) {
	p := &udiffParser{format: UDiffH, markers: plusMinus{}, strip: opts.strip()}
	return p.parse(text)
}

// ParseUDiffL parses udiff-l: a unified diff whose body lines carry the
// markers "ADD ", "DEL " and "CON " (for inserted, deleted and context lines)
// instead of '+', '-' and ' '. A marker alone on a line ("CON") stands for an
// empty line. Hunk headers are "@@ -A[,B] +C[,D] @@" as in udiff, or without
// numbers as in udiff-h; a hunk body runs to the next hunk header, file
// header or the end of the input. File headers are as in [ParseUDiff].
func ParseUDiffL(text string, opts ParseOptions) (*Patch, error) {
	p := &udiffParser{format: UDiffL, markers: wordMarkers{}, strip: opts.strip()}
	return p.parse(text)
}

type udiffParser struct {
	format  Format
	markers lineMarkers
	// counted: the hunk body length comes from the header counts. Otherwise
	// the body runs until a line that is not a body line.
	counted bool
	strip   int

	lines []string
	i     int // index of the next line
	out   *Patch
}

func (p *udiffParser) errf(line int, format string, args ...any) error {
	return &ParseError{Format: p.format, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *udiffParser) parse(text string) (*Patch, error) {
	p.lines = strings.Split(text, "\n")
	if n := len(p.lines); n > 0 && p.lines[n-1] == "" {
		p.lines = p.lines[:n-1]
	}
	p.out = &Patch{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if err := p.gitSection(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(l, "--- ") && p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i+1], "+++ "):
			fp := &FilePatch{}
			oldLine, newLine := p.lines[p.i][4:], p.lines[p.i+1][4:]
			if err := p.fileNames(fp); err != nil {
				return nil, err
			}
			epochSides(fp, oldLine, newLine)
			if err := p.hunks(fp); err != nil {
				return nil, err
			}
			p.out.Files = append(p.out.Files, fp)
		case isBinaryFilesLine(l):
			// GNU diff's verdict on two binary files, outside a git section.
			fp, err := p.binaryFilesLine()
			if err != nil {
				return nil, err
			}
			if fp != nil {
				p.out.Files = append(p.out.Files, fp)
			}
		case isHunkHeader(l) && len(p.out.Files) == 0:
			// Hunks with no file header: the caller names the file.
			fp := &FilePatch{}
			if err := p.hunks(fp); err != nil {
				return nil, err
			}
			p.out.Files = append(p.out.Files, fp)
		case isHunkHeader(l):
			return nil, p.errf(p.i+1, "hunk header outside a file section")
		default:
			p.i++ // preamble or trailing text
		}
	}
	if len(p.out.Files) == 0 {
		return nil, p.errf(1, "no file changes found")
	}
	return p.out, nil
}

func isHunkHeader(l string) bool { return strings.HasPrefix(l, "@@") }

// gitSection parses "diff --git" and its extended headers, then hunks.
func (p *udiffParser) gitSection() error {
	start := p.i + 1
	fp := &FilePatch{}
	oldName, newName, ok := splitGitHeader(strings.TrimPrefix(p.lines[p.i], "diff --git "))
	if ok {
		fp.OldPath, fp.NewPath = oldName, newName
	}
	p.i++
	var err error
	sawNames, sawNew, sawDeleted := false, false, false
headers:
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case strings.HasPrefix(l, "old mode "):
			fp.OldMode, err = parseMode(l[len("old mode "):])
		case strings.HasPrefix(l, "new mode "):
			fp.NewMode, err = parseMode(l[len("new mode "):])
		case strings.HasPrefix(l, "deleted file mode "):
			fp.Op, sawDeleted = Delete, true
			fp.OldMode, err = parseMode(l[len("deleted file mode "):])
		case strings.HasPrefix(l, "new file mode "):
			fp.Op, sawNew = Create, true
			fp.NewMode, err = parseMode(l[len("new file mode "):])
		case strings.HasPrefix(l, "rename from "):
			fp.Op = Rename
			fp.OldPath = unquote(l[len("rename from "):])
			sawNames = true
		case strings.HasPrefix(l, "rename to "):
			fp.Op = Rename
			fp.NewPath = unquote(l[len("rename to "):])
			sawNames = true
		case strings.HasPrefix(l, "copy from "):
			fp.Op = Copy
			fp.OldPath = unquote(l[len("copy from "):])
			sawNames = true
		case strings.HasPrefix(l, "copy to "):
			fp.Op = Copy
			fp.NewPath = unquote(l[len("copy to "):])
			sawNames = true
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
			v := strings.TrimSuffix(l[strings.LastIndexByte(l, ' ')+1:], "%")
			fp.Similarity, err = strconv.Atoi(v)
		case strings.HasPrefix(l, "index "):
			// "index abc..def 100644": the mode is that of both sides.
			if f := strings.Fields(l); len(f) == 3 {
				var m uint32
				if m, err = parseMode(f[2]); err == nil && fp.OldMode == 0 && fp.NewMode == 0 {
					fp.OldMode, fp.NewMode = m, m
				}
			}
			fp.OldHash, fp.NewHash, _ = parseIndexHashes(l)
		case isBinaryFilesLine(l):
			fp.Binary = true
			p.i++
			break headers
		case l == "GIT binary patch":
			fp.Binary = true
			p.i++
			if err := p.binaryBlocks(fp); err != nil {
				return err
			}
			break headers
		case strings.HasPrefix(l, "--- "):
			if err := p.fileNames(fp); err != nil {
				return err
			}
			sawNames = true
			if err := p.hunks(fp); err != nil {
				return err
			}
			break headers
		default:
			break headers
		}
		if err != nil {
			return p.errf(p.i+1, "%v", err)
		}
		p.i++
	}
	if !sawNames && !ok {
		return p.errf(start, "cannot tell the file names from %q", p.lines[start-1])
	}
	if !sawNames || fp.Op == Rename || fp.Op == Copy {
		// Names came from the "diff --git" line, whose prefixes remain, or
		// from rename/copy lines, which never carry prefixes.
		if !sawNames {
			var err error
			if fp.OldPath, err = stripPath(fp.OldPath, p.strip); err == nil {
				fp.NewPath, err = stripPath(fp.NewPath, p.strip)
			}
			if err != nil {
				return p.errf(start, "%v", err)
			}
		}
	}
	if fp.Op == Modify && fp.OldPath != "" && fp.NewPath != "" && fp.OldPath != fp.NewPath {
		// git apply's rule: a git diff whose names differ renames the
		// file, with "rename from" / "rename to" lines or without them
		// (git diff --no-index of two files writes none).
		fp.Op = Rename
	}
	switch fp.Op {
	case Create:
		fp.OldPath = ""
		fp.gitDevNull = !sawNew
	case Delete:
		fp.NewPath = ""
		fp.gitDevNull = !sawDeleted
	case Rename, Copy:
		if fp.OldPath == "" || fp.NewPath == "" {
			return p.errf(start, "%s needs both a from and a to name", fp.Op)
		}
	}
	if fp.Path() == "" {
		return p.errf(start, "cannot tell the file names from %q", p.lines[start-1])
	}
	p.out.Files = append(p.out.Files, fp)
	return nil
}

// splitGitHeader splits the names of a "diff --git" line. With unquoted
// names containing spaces the split is ambiguous; like git, prefer the split
// where both names agree after their first component.
func splitGitHeader(s string) (a, b string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		a, rest, ok := cutQuoted(s)
		if !ok || !strings.HasPrefix(rest, " ") {
			return "", "", false
		}
		return a, unquote(rest[1:]), true
	}
	if strings.HasSuffix(s, `"`) {
		if i := strings.LastIndex(s, ` "`); i >= 0 {
			return s[:i], unquote(s[i+1:]), true
		}
	}
	// Try every space; prefer the split that gives equal names minus their
	// first component.
	var fa, fb string
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			continue
		}
		x, y := s[:i], s[i+1:]
		if fa == "" {
			fa, fb = x, y
		}
		if dropFirst(x) == dropFirst(y) {
			return x, y, true
		}
	}
	if fa != "" && strings.Count(s, " ") == 1 {
		return fa, fb, true
	}
	return "", "", false
}

func dropFirst(s string) string {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func parseMode(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("bad file mode %q", s)
	}
	return uint32(m), nil
}

// fileNames parses a "--- X" / "+++ Y" pair at p.i.
func (p *udiffParser) fileNames(fp *FilePatch) error {
	oldName, err := p.headerName(p.lines[p.i][4:])
	if err != nil {
		return p.errf(p.i+1, "%v", err)
	}
	if p.i+1 >= len(p.lines) || !strings.HasPrefix(p.lines[p.i+1], "+++ ") {
		return p.errf(p.i+2, `expected "+++ " after "--- "`)
	}
	newName, err := p.headerName(p.lines[p.i+1][4:])
	if err != nil {
		return p.errf(p.i+2, "%v", err)
	}
	p.i += 2
	// Rename and copy names come from their own lines; the ---/+++ names of a
	// git patch agree with them. Different names outside a git section do
	// not rename: one file is patched in place (see [TraditionalTarget]);
	// in a git section they do (see gitSection).
	if fp.Op != Rename && fp.Op != Copy {
		fp.OldPath, fp.NewPath = oldName, newName
	}
	switch {
	case oldName == "" && newName == "":
		return p.errf(p.i-1, "both sides are /dev/null")
	case oldName == "":
		fp.Op = Create
	case newName == "":
		fp.Op = Delete
	}
	return nil
}

// epochSides reads a traditional diff's side whose timestamp is the epoch
// (GNU diff -N writes "1970-01-01 00:00:00" for a missing file) as
// /dev/null, as git apply does: the file patch creates or deletes its
// file, named by the other side unless the old name is a prefix of the new
// one (git apply's choice).
func epochSides(fp *FilePatch, oldLine, newLine string) {
	if fp.Op != Modify {
		return
	}
	name := fp.NewPath
	if len(fp.OldPath) < len(name) && strings.HasPrefix(name, fp.OldPath) {
		name = fp.OldPath
	}
	switch {
	case EpochTimestamp(oldLine):
		fp.Op, fp.OldPath, fp.NewPath = Create, "", name
	case EpochTimestamp(newLine):
		fp.Op, fp.OldPath, fp.NewPath = Delete, name, ""
	}
}

// EpochTimestamp reports whether the rest of a "--- " or "+++ " line ends
// with a tab and the Unix epoch as a timestamp in any time zone
// ("1970-01-01 00:00:00.000000000 +0000", "1969-12-31 19:00:00 -0500"),
// GNU diff's mark of a missing side, by git apply's rule
// (has_epoch_timestamp): the seconds are 00, a fraction is all zeros.
func EpochTimestamp(rest string) bool {
	rest = strings.TrimRight(rest, "\r")
	i := strings.LastIndexByte(rest, '\t')
	if i < 0 {
		return false
	}
	ts := rest[i+1:]
	var epochHour int
	switch {
	case strings.HasPrefix(ts, "1969-12-31 "):
		epochHour = 24
	case strings.HasPrefix(ts, "1970-01-01 "):
		epochHour = 0
	default:
		return false
	}
	ts = ts[len("1970-01-01 "):]
	// hh:mm:00[.0+] [-+]hh[:]mm
	clock, zone, ok := strings.Cut(ts, " ")
	if !ok || len(clock) < 8 || clock[2] != ':' || clock[5] != ':' || clock[6:8] != "00" {
		return false
	}
	if frac := clock[8:]; frac != "" {
		if len(frac) < 2 || frac[0] != '.' || strings.Trim(frac[1:], "0") != "" {
			return false
		}
	}
	hour, err1 := strconv.Atoi(clock[0:2])
	minute, err2 := strconv.Atoi(clock[3:5])
	if err1 != nil || err2 != nil || clock[0] > '2' || clock[3] > '5' || clock[0] < '0' || clock[1] < '0' || clock[4] < '0' {
		return false
	}
	if len(zone) < 5 || (zone[0] != '+' && zone[0] != '-') {
		return false
	}
	zh, zm := zone[1:3], zone[3:]
	zm = strings.TrimPrefix(zm, ":")
	if len(zm) != 2 || zh[0] < '0' || zh[0] > '2' || zm[0] < '0' || zm[0] > '5' {
		return false
	}
	h, err1 := strconv.Atoi(zh)
	m, err2 := strconv.Atoi(zm)
	if err1 != nil || err2 != nil || h < 0 || m < 0 {
		return false
	}
	off := h*60 + m
	if zone[0] == '-' {
		off = -off
	}
	return hour*60+minute-off == epochHour*60
}

// headerName extracts the path from the rest of a ---/+++ line: unquote,
// drop a tab and what follows (a timestamp), map /dev/null to "", strip.
func (p *udiffParser) headerName(s string) (string, error) {
	var name string
	if strings.HasPrefix(s, `"`) {
		n, _, ok := cutQuoted(s)
		if !ok {
			return "", fmt.Errorf("unterminated quoted name %s", s)
		}
		name = n
	} else if n, _, tab := strings.Cut(s, "\t"); tab {
		name = n
	} else {
		name = strings.TrimRight(s, " ")
	}
	if name == "/dev/null" {
		return "", nil
	}
	if name == "" {
		return "", fmt.Errorf("empty file name")
	}
	return stripPath(name, p.strip)
}

func stripPath(name string, n int) (string, error) {
	if strings.HasPrefix(name, "/") {
		// An absolute name is kept whole, to be refused where it is read
		// or written (see [CheckPath]), as the tolerant path does: with
		// its first components stripped it would name another file.
		return name, nil
	}
	s := name
	for k := 0; k < n; k++ {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return "", fmt.Errorf("cannot strip %d leading components from %q", n, name)
		}
		s = s[i+1:]
		for strings.HasPrefix(s, "/") {
			s = s[1:]
		}
	}
	if s == "" {
		return "", fmt.Errorf("no file name left in %q after stripping %d components", name, n)
	}
	return s, nil
}

const hunkHeaderErr = "malformed hunk header %q"

// parseHunkHeader reads "@@ -A[,B] +C[,D] @@ section". With numbers absent
// ("@@ @@", "@@ ... @@") hasPos is false.
func parseHunkHeader(l string) (h *Hunk, err error) {
	rest, ok := strings.CutPrefix(l, "@@")
	if !ok {
		return nil, fmt.Errorf(hunkHeaderErr, l)
	}
	body, section, found := strings.Cut(rest, "@@")
	if !found {
		body, section = rest, ""
	}
	h = &Hunk{Section: strings.TrimPrefix(section, " ")}
	f := strings.Fields(body)
	if len(f) == 0 || (len(f) == 1 && f[0] == "...") {
		return h, nil
	}
	if len(f) != 2 || !strings.HasPrefix(f[0], "-") || !strings.HasPrefix(f[1], "+") || !found {
		return nil, fmt.Errorf(hunkHeaderErr, l)
	}
	if h.OldStart, h.OldLines, err = parseRange(f[0][1:]); err != nil {
		return nil, fmt.Errorf(hunkHeaderErr, l)
	}
	if h.NewStart, h.NewLines, err = parseRange(f[1][1:]); err != nil {
		return nil, fmt.Errorf(hunkHeaderErr, l)
	}
	h.HasPos = true
	return h, nil
}

func parseRange(s string) (start, n int, err error) {
	a, b, hasCount := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, fmt.Errorf("bad range %q", s)
	}
	n = 1
	if hasCount {
		if n, err = strconv.Atoi(b); err != nil || n < 0 {
			return 0, 0, fmt.Errorf("bad range %q", s)
		}
	}
	return start, n, nil
}

// hunks parses the hunks of one file section starting at p.i.
func (p *udiffParser) hunks(fp *FilePatch) error {
	for p.i < len(p.lines) && isHunkHeader(p.lines[p.i]) {
		hdrLine := p.i + 1
		h, err := parseHunkHeader(p.lines[p.i])
		if err != nil {
			return p.errf(hdrLine, "%v", err)
		}
		if p.counted && !h.HasPos {
			return p.errf(hdrLine, "hunk header without line numbers (use udiff-h)")
		}
		p.i++
		if p.counted {
			err = p.countedBody(h, hdrLine)
		} else {
			err = p.openBody(h, hdrLine)
		}
		if err != nil {
			return err
		}
		h.PatchLine = hdrLine
		fp.Hunks = append(fp.Hunks, h)
	}
	return nil
}

// countedBody reads exactly the number of lines the header announces.
func (p *udiffParser) countedBody(h *Hunk, hdrLine int) error {
	oldLeft, newLeft := h.OldLines, h.NewLines
	if oldLeft == 0 && newLeft == 0 {
		return p.errf(hdrLine, "empty hunk: the header announces no lines")
	}
	for oldLeft > 0 || newLeft > 0 {
		if p.i >= len(p.lines) {
			return p.errf(hdrLine, "hunk ends early: %d old and %d new lines missing", oldLeft, newLeft)
		}
		l := p.lines[p.i]
		if strings.HasPrefix(l, `\`) {
			if err := p.noEOL(h); err != nil {
				return err
			}
			continue
		}
		k, text, ok := p.markers.decode(l)
		if !ok {
			return p.errf(p.i+1, "hunk line does not start with ' ', '-' or '+' (%d old and %d new lines still expected)", oldLeft, newLeft)
		}
		switch k {
		case LineContext:
			oldLeft--
			newLeft--
		case LineDelete:
			oldLeft--
		case LineInsert:
			newLeft--
		}
		if oldLeft < 0 || newLeft < 0 {
			return p.errf(p.i+1, "hunk has more lines than its header says")
		}
		if err := p.afterNoEOL(h, k); err != nil {
			return err
		}
		h.Lines = append(h.Lines, Line{Kind: k, Text: text})
		p.i++
	}
	if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], `\`) {
		return p.noEOL(h)
	}
	return nil
}

// openBody reads body lines until something that is not one.
func (p *udiffParser) openBody(h *Hunk, hdrLine int) error {
	blanks := 0 // raw empty lines at the end of the body so far
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if isHunkHeader(l) || strings.HasPrefix(l, "diff --git ") ||
			(strings.HasPrefix(l, "--- ") && p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i+1], "+++ ")) {
			break
		}
		if strings.HasPrefix(l, `\`) {
			if err := p.noEOL(h); err != nil {
				return err
			}
			blanks = 0
			continue
		}
		k, text, ok := p.markers.decode(l)
		if !ok {
			break
		}
		if l == "" {
			if ((h.OldNoEOL && k != LineInsert) || (h.NewNoEOL && k != LineDelete)) && p.blanksEnd(p.i) {
				// Empty lines after the side's last line that end the
				// body are separators, as at the end of any open body.
				break
			}
			blanks++
		} else {
			blanks = 0
		}
		if err := p.afterNoEOL(h, k); err != nil {
			return err
		}
		h.Lines = append(h.Lines, Line{Kind: k, Text: text})
		p.i++
	}
	// Blank lines at the end of an open body are more likely separators
	// than empty context lines: every printer writes an empty context line
	// as " ".
	h.Lines = h.Lines[:len(h.Lines)-blanks]
	if len(h.Lines) == 0 {
		return p.errf(hdrLine, "empty hunk")
	}
	h.OldLines, h.NewLines = h.Counts()
	return nil
}

// blanksEnd reports whether the lines from i are empty up to the end of
// the input or up to a hunk or file header.
func (p *udiffParser) blanksEnd(i int) bool {
	for ; i < len(p.lines) && p.lines[i] == ""; i++ {
	}
	if i == len(p.lines) {
		return true
	}
	l := p.lines[i]
	return isHunkHeader(l) || strings.HasPrefix(l, "diff --git ") ||
		(strings.HasPrefix(l, "--- ") && i+1 < len(p.lines) && strings.HasPrefix(p.lines[i+1], "+++ "))
}

// afterNoEOL refuses a line of a side whose last line was already marked
// as lacking its newline.
func (p *udiffParser) afterNoEOL(h *Hunk, k LineKind) error {
	if (h.OldNoEOL && k != LineInsert) || (h.NewNoEOL && k != LineDelete) {
		return p.errf(p.i+1, `line after a "\ No newline at end of file" marker for the same side`)
	}
	return nil
}

// noEOL handles "\ No newline at end of file" after the line it is about.
func (p *udiffParser) noEOL(h *Hunk) error {
	if len(h.Lines) == 0 {
		return p.errf(p.i+1, `"\" line before any hunk line`)
	}
	switch h.Lines[len(h.Lines)-1].Kind {
	case LineContext:
		h.OldNoEOL, h.NewNoEOL = true, true
	case LineDelete:
		h.OldNoEOL = true
	case LineInsert:
		h.NewNoEOL = true
	}
	p.i++
	return nil
}

// cutQuoted parses a C-quoted string at the start of s, as git writes names
// with unusual bytes.
func cutQuoted(s string) (val, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), s[i+1:], true
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '0', '1', '2', '3':
				if i+2 < len(s) {
					if v, err := strconv.ParseUint(s[i:i+3], 8, 8); err == nil {
						b.WriteByte(byte(v))
						i += 2
						continue
					}
				}
				return "", s, false
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", s, false
}

func unquote(s string) string {
	if v, rest, ok := cutQuoted(s); ok && rest == "" {
		return v
	}
	return s
}

// forceQuote C-quotes a name whatever it holds.
func forceQuote(s string) string {
	if q := quoteName(s); strings.HasPrefix(q, `"`) {
		return q
	}
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// quoteName quotes a path the way git does when it holds unusual bytes.
func quoteName(s string) string {
	// Blanks at either end of a name or of a component would be lost when
	// the name is read back.
	needs := s != strings.TrimSpace(s) || strings.Contains(s, "/ ") || strings.Contains(s, " /")
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case ' ':
			b.WriteByte(' ')
		case '\t':
			b.WriteString(`\t`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// printUnified writes p as a unified diff in one of the three flavours.
func printUnified(b *strings.Builder, p *Patch, f Format) error {
	var m lineMarkers = plusMinus{}
	if f == UDiffL {
		m = wordMarkers{}
	}
	for _, fp := range p.Files {
		if !differentNames(fp) || fp.Binary {
			// A traditional diff with two names has no git header, which
			// would make it a rename.
			writeGitHeader(b, fp)
		}
		if fp.Binary {
			writeBinary(b, fp)
			continue
		}
		hunks := nonEmpty(fp.Hunks)
		if len(hunks) == 0 && len(fp.Hunks) > 0 && fp.Op == Modify {
			// Search-replace's empty SEARCH and REPLACE: create the file
			// empty if it is missing. A unified diff must say which.
			return fmt.Errorf("print %s: %s: %w: an edit that creates the file only if it is missing", f, fp.Path(), ErrNotExpressible)
		}
		if len(hunks) == 0 && !differentNames(fp) {
			continue
		}
		fmt.Fprintf(b, "--- %s\n+++ %s\n", sideName("a/", fp.OldPath), sideName("b/", fp.NewPath))
		for hi, h := range hunks {
			if f == UDiffH {
				if err := checkPositionless(h); err != nil {
					return fmt.Errorf("print %s: hunk %d of %s: %w", f, hi+1, fp.Path(), err)
				}
			}
			switch {
			case f == UDiffH:
				b.WriteString("@@ ... @@")
			case !h.HasPos && fp.Op == Create && len(fp.Hunks) == 1 && len(h.Old()) == 0:
				// A new file's only hunk starts at its first line.
				fmt.Fprintf(b, "@@ -0,0 +%s @@", formatRange(1, len(h.New())))
			case !h.HasPos:
				return fmt.Errorf("print %s: hunk %d of %s has no line numbers", f, hi+1, fp.Path())
			default:
				o, n := h.Counts()
				fmt.Fprintf(b, "@@ -%s +%s @@", formatRange(h.OldStart, o), formatRange(h.NewStart, n))
			}
			if h.Section != "" {
				b.WriteByte(' ')
				b.WriteString(h.Section)
			}
			b.WriteByte('\n')
			writeHunkBody(b, h, m)
		}
	}
	return nil
}

// nonEmpty drops hunks without lines: they change nothing, and a bare
// header would not parse back.
func nonEmpty(hs []*Hunk) []*Hunk {
	out := hs[:0:0]
	for _, h := range hs {
		if len(h.Lines) > 0 {
			out = append(out, h)
		}
	}
	return out
}

// checkPositionless refuses what udiff-h cannot say: a hunk is found only
// by its lines, so V4A anchors and end-of-file pins would be lost, and a
// removed "-- x" followed by an added "++ y" would read as a file header.
func checkPositionless(h *Hunk) error {
	if len(h.Anchors) > 0 || h.AtEnd {
		return fmt.Errorf("%w: anchors and end-of-file markers have no udiff-h form", ErrNotExpressible)
	}
	for i := 0; i+1 < len(h.Lines); i++ {
		a, c := h.Lines[i], h.Lines[i+1]
		if a.Kind == LineDelete && strings.HasPrefix(a.Text, "-- ") && c.Kind == LineInsert && strings.HasPrefix(c.Text, "++ ") {
			return fmt.Errorf("%w: lines %q and %q would read as file headers", ErrNotExpressible, "-"+a.Text, "+"+c.Text)
		}
	}
	return nil
}

// writeHunkBody writes the lines of h with "\ No newline" markers.
func writeHunkBody(b *strings.Builder, h *Hunk, m lineMarkers) {
	lastOld, lastNew := -1, -1
	for i, l := range h.Lines {
		if l.Kind != LineInsert {
			lastOld = i
		}
		if l.Kind != LineDelete {
			lastNew = i
		}
	}
	for i, l := range h.Lines {
		b.WriteString(m.marker(l.Kind))
		b.WriteString(l.Text)
		b.WriteByte('\n')
		if (i == lastOld && h.OldNoEOL) || (i == lastNew && h.NewNoEOL) {
			b.WriteString("\\ No newline at end of file\n")
		}
	}
}

func formatRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

func sideName(prefix, path string) string {
	if path == "" {
		return "/dev/null"
	}
	q := quoteName(prefixed(prefix, path))
	if strings.ContainsAny(q, " \t") && !strings.HasPrefix(q, `"`) {
		// As git does: a tab ends a name with spaces, which would
		// otherwise be lost as trailing blanks.
		q += "\t"
	}
	return q
}

// prefixed puts prefix before a relative path; an absolute one, which the
// parser keeps whole, is written as it is.
func prefixed(prefix, path string) string {
	if strings.HasPrefix(path, "/") {
		return path
	}
	return prefix + path
}

func writeGitHeader(b *strings.Builder, fp *FilePatch) {
	oldP, newP := fp.OldPath, fp.NewPath
	if oldP == "" {
		oldP = newP
	}
	if newP == "" {
		newP = oldP
	}
	a, c := quoteName(prefixed("a/", oldP)), quoteName(prefixed("b/", newP))
	if oldP != newP && strings.ContainsAny(a+c, " ") {
		// Different names with spaces cannot be split apart unquoted.
		a, c = forceQuote(prefixed("a/", oldP)), forceQuote(prefixed("b/", newP))
	}
	fmt.Fprintf(b, "diff --git %s %s\n", a, c)
	switch fp.Op {
	case Create:
		fmt.Fprintf(b, "new file mode %06o\n", modeOr(fp.NewMode))
	case Delete:
		fmt.Fprintf(b, "deleted file mode %06o\n", modeOr(fp.OldMode))
	default:
		if fp.OldMode != 0 && fp.NewMode != 0 && fp.OldMode != fp.NewMode {
			fmt.Fprintf(b, "old mode %06o\nnew mode %06o\n", fp.OldMode, fp.NewMode)
		}
		if fp.Op == Rename || fp.Op == Copy {
			word := "rename"
			if fp.Op == Copy {
				word = "copy"
			}
			if fp.Similarity > 0 {
				fmt.Fprintf(b, "similarity index %d%%\n", fp.Similarity)
			}
			fmt.Fprintf(b, "%s from %s\n%s to %s\n", word, quoteName(fp.OldPath), word, quoteName(fp.NewPath))
		}
	}
}

func modeOr(m uint32) uint32 {
	if m == 0 {
		return 0o100644
	}
	return m
}
