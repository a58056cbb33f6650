package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// A loose patch is what the tolerant parser makes of a unified diff: hunk
// counts are ignored, line numbers are hints, and a body line may have
// several readings that only the file can decide between.

type looseFile struct {
	oldName, newName string // as written, before prefix stripping
	op               patch.Operation
	git              bool // had a "diff --git" header
	// plain: a format whose names carry no a/ and b/ (V4A,
	// search-replace), so a name without them is no repair.
	plain bool
	// oldMode and newMode are the modes of git's extended headers ("new
	// file mode", "old mode", "index a..b mode", ...), 0 when absent.
	oldMode, newMode uint32
	hunks            []*looseHunk
	line             int // patch line of the file header
	// bin is the strictly parsed binary section of a git patch, binErr why
	// it did not parse (see binary.go).
	bin    *patch.FilePatch
	binErr error
	// oldHash and newHash are the blob names of the index line, "" when
	// it has none.
	oldHash, newHash string
}

type looseHunk struct {
	oldStart, newStart int // 1-based hints, 0 when absent
	hasPos             bool
	anchors            []string
	lines              []looseLine
	atEnd              bool
	oldNoEOL, newNoEOL bool
	markers            bool // "\ No newline" markers were present
	// appends: a hunk with no old lines and no position adds at the end of
	// the file (search-replace's empty SEARCH). Elsewhere such a hunk has
	// nowhere to go.
	appends bool
	line    int // patch line of the header
	diags   []string
	// unified: read from a unified diff, whose hunks end where their
	// context ends (a search-replace block ends where its search text does).
	unified bool
	// oldCount and newCount are the header's counts; both 0 when it
	// gives none (a header "-N,0 +M,0" changes nothing and is never cut).
	oldCount, newCount int
	// trailBlanks: the blank lines left out at the end of the body as
	// separators, which may be context lines that lost their space.
	trailBlanks int
	// followed: another hunk follows this one in the patch text; cutWidth:
	// the context width a whole hunk of the patch ends with, 0 when
	// unknown (see markCutEvidence).
	followed bool
	cutWidth int
	// stray: two hunks a stray "@@" line split, joined (see
	// joinStraySplits).
	stray bool
}

type looseLine struct {
	kind patch.LineKind
	// texts are the readings of a context or deleted line, most likely
	// first; an inserted line has exactly one.
	texts []string
	// elision: the line is a marker such as "..." standing for unchanged
	// code; it may match any number of file lines and never deletes them.
	elision bool
	// bare: a context line with no marker at all.
	bare bool
	line int // patch line
}

// hunkNums finds the first "-A[,B] +C[,D]" in a hunk header (blanks
// between the two ranges), as the regular expression
// `-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?` would, and returns A, B, C
// and D ("" for an absent count). It is written out because compiling the
// expression was a tenth of a one-hunk apply's start-up.
func hunkNums(hdr string) (m [4]string, ok bool) {
	digits := func(i int) int { // the end of the run of digits at i
		for i < len(hdr) && hdr[i] >= '0' && hdr[i] <= '9' {
			i++
		}
		return i
	}
	for i := 0; i < len(hdr); i++ {
		if hdr[i] != '-' {
			continue
		}
		j := digits(i + 1)
		if j == i+1 {
			continue
		}
		m = [4]string{hdr[i+1 : j]}
		if j < len(hdr) && hdr[j] == ',' {
			if k := digits(j + 1); k > j+1 {
				m[1], j = hdr[j+1:k], k
			}
		}
		k := j
		for k < len(hdr) && strings.IndexByte(" \t\n\f\r", hdr[k]) >= 0 { // \s of package regexp
			k++
		}
		if k == j || k >= len(hdr) || hdr[k] != '+' {
			continue
		}
		e := digits(k + 1)
		if e == k+1 {
			continue
		}
		m[2] = hdr[k+1 : e]
		if e < len(hdr) && hdr[e] == ',' {
			if f := digits(e + 1); f > e+1 {
				m[3] = hdr[e+1 : f]
			}
		}
		return m, true
	}
	return m, false
}

// parseUnified reads udiff, udiff-h and udiff-l text tolerantly.
func parseUnified(text string, d *diags) []*looseFile {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	// A patch sent through a CRLF channel: the structure lines end in \r.
	crlf := 0
	for _, l := range lines {
		if strings.HasSuffix(l, "\r") {
			crlf++
		}
	}
	if len(lines) > 0 && crlf*2 > len(lines) {
		// Body lines keep their CR: the file decides whether it is content
		// (a CRLF file) or transport (matching ignores it, added lines take
		// the file's endings). Structure lines are read without it.
		d.add(0, "crlf", "the patch has CRLF line endings")
	}
	words := usesWordMarkers(lines)

	var files []*looseFile
	var cur *looseFile
	newFile := func(line int) *looseFile {
		f := &looseFile{line: line}
		files = append(files, f)
		return f
	}
	isFileHeader := func(i int) bool {
		return strings.HasPrefix(lines[i], "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ")
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur = newFile(i + 1)
			cur.git = true
			if a, b, ok := splitGitNames(l[len("diff --git "):]); ok {
				cur.oldName, cur.newName = a, b
			}
			i++
		case strings.HasPrefix(l, "new file mode "):
			if cur != nil {
				cur.op = patch.Create
				cur.newMode = parseMode(l[len("new file mode "):])
			}
			i++
		case strings.HasPrefix(l, "deleted file mode "):
			if cur != nil {
				cur.op = patch.Delete
				cur.oldMode = parseMode(l[len("deleted file mode "):])
			}
			i++
		case strings.HasPrefix(l, "old mode ") && cur != nil:
			cur.oldMode = parseMode(l[len("old mode "):])
			i++
		case strings.HasPrefix(l, "new mode ") && cur != nil:
			cur.newMode = parseMode(l[len("new mode "):])
			i++
		case strings.HasPrefix(l, "index ") && cur != nil && cur.git && len(cur.hunks) == 0:
			// "index abc..def 100644": the mode of both sides.
			if f := strings.Fields(l); len(f) == 3 && cur.oldMode == 0 && cur.newMode == 0 {
				m := parseMode(f[2])
				cur.oldMode, cur.newMode = m, m
			}
			cur.oldHash, cur.newHash, _ = patch.IndexHashes(strings.TrimRight(l, "\r"))
			i++
		case strings.HasPrefix(l, "rename from ") && cur != nil:
			cur.op, cur.oldName = patch.Rename, "a/"+strings.TrimRight(l[len("rename from "):], "\r")
			i++
		case strings.HasPrefix(l, "rename to ") && cur != nil:
			cur.op, cur.newName = patch.Rename, "b/"+strings.TrimRight(l[len("rename to "):], "\r")
			i++
		case strings.HasPrefix(l, "copy from ") && cur != nil:
			// A copy keeps its source: read as a rename, the source would
			// be deleted.
			cur.op, cur.oldName = patch.Copy, "a/"+strings.TrimRight(l[len("copy from "):], "\r")
			i++
		case strings.HasPrefix(l, "copy to ") && cur != nil:
			cur.op, cur.newName = patch.Copy, "b/"+strings.TrimRight(l[len("copy to "):], "\r")
			i++
		case isFileHeader(i):
			if cur == nil || len(cur.hunks) > 0 || cur.oldName != "" && !cur.git {
				cur = newFile(i + 1)
			}
			o, n := headerName(l[4:]), headerName(lines[i+1][4:])
			if !cur.git && o != "/dev/null" && n != "/dev/null" {
				// GNU diff -N marks a missing side with the epoch as its
				// timestamp; git apply reads it as /dev/null.
				if patch.EpochTimestamp(l[4:]) {
					o = "/dev/null"
				} else if patch.EpochTimestamp(lines[i+1][4:]) {
					n = "/dev/null"
				}
			}
			if cur.op != patch.Rename && cur.op != patch.Copy {
				cur.oldName, cur.newName = o, n
			}
			switch {
			case o == "/dev/null":
				cur.op = patch.Create
			case n == "/dev/null":
				cur.op = patch.Delete
			}
			i += 2
		case cur != nil && cur.git && len(cur.hunks) == 0 && isBinaryStart(l):
			i = readBinary(cur, lines, i)
		case isBinaryStart(l):
			if f := binaryFilesLine(l, i+1); f != nil {
				files = append(files, f)
				cur = f
			}
			i++
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				cur = newFile(0)
			}
			h, next := parseLooseHunk(lines, i, words, isFileHeader, d)
			cur.hunks = append(cur.hunks, h)
			i = next
		default:
			i++
		}
	}
	return files
}

// parseMode reads an octal file mode, 0 when it is not one.
func parseMode(s string) uint32 {
	m, err := strconv.ParseUint(strings.TrimSpace(s), 8, 32)
	if err != nil {
		return 0
	}
	return uint32(m)
}

// usesWordMarkers reports whether body lines are written with udiff-l's
// ADD / DEL / CON markers.
func usesWordMarkers(lines []string) bool {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "ADD ") || strings.HasPrefix(l, "DEL ") || strings.HasPrefix(l, "CON ") || l == "CON" || l == "ADD" || l == "DEL" {
			n++
		}
	}
	return n > 0
}

func parseLooseHunk(lines []string, i int, words bool, isFileHeader func(int) bool, d *diags) (*looseHunk, int) {
	hdr := lines[i]
	h := &looseHunk{line: i + 1, unified: true}
	wantOld, wantNew := -1, -1
	if m, ok := hunkNums(hdr); ok {
		h.oldStart, _ = strconv.Atoi(m[0])
		h.newStart, _ = strconv.Atoi(m[2])
		h.hasPos = true
		wantOld, wantNew = count(m[1]), count(m[3])
		h.oldCount, h.newCount = wantOld, wantNew
	}
	i++
	blanks := 0
	gotOld, gotNew := 0, 0
	for ; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "diff --git ") || isFileHeader(i) {
			break
		}
		if (wantOld < 0 || gotOld >= wantOld && gotNew >= wantNew) && patch.MailSignature(lines, i) {
			// git format-patch's signature ends the mail; within the
			// header's counts "-- " is a removed line "- ".
			break
		}
		if strings.HasPrefix(l, `\ `) || l == `\` {
			noEOLMarker(h)
			continue
		}
		ll := bodyLine(l, words, i+1, h)
		if strings.TrimSuffix(l, "\r") == "" {
			blanks++
		} else {
			blanks = 0
		}
		h.lines = append(h.lines, ll)
		if ll.kind != patch.LineInsert {
			gotOld++
		}
		if ll.kind != patch.LineDelete {
			gotNew++
		}
	}
	// Blank lines at the end of a hunk body are separators, not context.
	h.lines = h.lines[:len(h.lines)-blanks]
	h.trailBlanks = blanks
	if wantOld >= 0 {
		o, n := 0, 0
		for _, l := range h.lines {
			if l.kind != patch.LineInsert {
				o++
			}
			if l.kind != patch.LineDelete {
				n++
			}
		}
		if o != wantOld || n != wantNew {
			h.diags = append(h.diags, "recount")
		}
	}
	return h, i
}

var reLineNumber = lazyRegexp(`^\s*\d{1,7}\s*(?:\||│|:)\s?`)

// withoutLineNumbers returns a copy of h without the "12 | " prefixes a
// model copied from a numbered view of the file, when nearly every line has
// one; nil otherwise. Code can look like that too (a dict keyed by
// numbers), so the file decides: the copy is tried only when h fits nowhere.
func withoutLineNumbers(h *looseHunk) *looseHunk {
	n, with := 0, 0
	for _, l := range h.lines {
		if l.texts[0] == "" {
			continue
		}
		n++
		if reLineNumber().MatchString(l.texts[0]) {
			with++
		}
	}
	if n < 2 || with*5 < n*4 {
		return nil
	}
	c := *h
	c.lines = make([]looseLine, len(h.lines))
	for i, l := range h.lines {
		texts := make([]string, 0, len(l.texts))
		for _, r := range l.texts {
			r = reLineNumber().ReplaceAllString(r, "")
			if len(texts) == 0 || texts[len(texts)-1] != r {
				texts = append(texts, r)
			}
		}
		l.texts = texts
		l.elision = l.kind != patch.LineInsert && isElision(l.texts[0])
		c.lines[i] = l
	}
	return &c
}

// count reads a hunk-header count, 1 when absent.
func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// bodyLine reads one hunk body line: its kind by its marker (ADD / DEL /
// CON too when words), with both readings of a line that starts with a
// space, and a line with no marker as context that lost its space.
func bodyLine(l string, words bool, line int, h *looseHunk) looseLine {
	ll := looseLine{line: line}
	switch {
	case words && (strings.HasPrefix(l, "ADD ") || l == "ADD"):
		ll.kind, ll.texts = patch.LineInsert, []string{cutWord(l)}
	case words && (strings.HasPrefix(l, "DEL ") || l == "DEL"):
		ll.kind, ll.texts = patch.LineDelete, []string{cutWord(l)}
	case words && (strings.HasPrefix(l, "CON ") || l == "CON"):
		ll.kind, ll.texts = patch.LineContext, []string{cutWord(l)}
	case strings.HasPrefix(l, "+"):
		ll.kind, ll.texts = patch.LineInsert, []string{l[1:]}
	case strings.HasPrefix(l, "-"):
		ll.kind, ll.texts = patch.LineDelete, []string{l[1:]}
	case strings.HasPrefix(l, " "):
		// A context line, or an indented line that lost its context
		// space: the file decides.
		ll.kind, ll.texts = patch.LineContext, []string{l[1:], l}
	default:
		blank := strings.TrimSuffix(l, "\r") == ""
		ll.kind, ll.texts, ll.bare = patch.LineContext, []string{l}, !blank
		if !blank {
			h.diags = append(h.diags, "context-space")
		}
	}
	ll.elision = ll.kind != patch.LineInsert && isElision(ll.texts[0])
	return ll
}

func cutWord(l string) string {
	if len(l) <= 4 {
		return ""
	}
	return l[4:]
}

// headerName extracts the name from the rest of a ---/+++ line.
func headerName(s string) string {
	s = strings.TrimRight(s, "\r")
	if strings.HasPrefix(s, `"`) {
		if v, err := strconv.Unquote(s[:strings.LastIndexByte(s, '"')+1]); err == nil {
			return v
		}
	}
	name, _, _ := strings.Cut(s, "\t")
	return strings.TrimSpace(name)
}

// splitGitNames splits "a/x b/x", preferring a split with equal halves.
func splitGitNames(s string) (string, string, bool) {
	s = strings.TrimRight(s, "\r")
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && dropFirst(s[:i]) == dropFirst(s[i+1:]) {
			return s[:i], s[i+1:], true
		}
	}
	if a, b, ok := strings.Cut(s, " "); ok && !strings.Contains(b, " ") {
		return a, b, true
	}
	return "", "", false
}

func dropFirst(s string) string {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

var reElision = lazyRegexp(`^\s*(?:(?://|#|--|/\*|\*|<!--|;)\s*)?(?:\.\.\.|…)\s*(?:(?:rest of|existing|remaining|other|unchanged|more|previous|same)\b[^.]*?)?(?:\.\.\.|…)?\s*(?:\*/|-->)?\s*$`)

// isElision reports whether a line stands for omitted code, such as "...",
// "// ... existing code ..." or "# ... rest of the file ...".
func isElision(s string) bool {
	t := strings.TrimSpace(s)
	if !strings.Contains(t, "...") && !strings.Contains(t, "…") {
		return false
	}
	return reElision().MatchString(t)
}

// fromStrict converts a strictly parsed patch (search-replace, V4A) into the
// loose model.
func fromStrict(p *patch.Patch) []*looseFile {
	var out []*looseFile
	for _, fp := range p.Files {
		f := &looseFile{oldName: fp.OldPath, newName: fp.NewPath, op: fp.Op, oldMode: fp.OldMode, newMode: fp.NewMode}
		for _, h := range fp.Hunks {
			f.hunks = append(f.hunks, looseOf(h))
		}
		out = append(out, f)
	}
	return out
}

// looseOf is a strictly parsed hunk as the pipeline holds hunks.
func looseOf(h *patch.Hunk) *looseHunk {
	lh := &looseHunk{anchors: h.Anchors, atEnd: h.AtEnd, line: h.PatchLine, oldNoEOL: h.OldNoEOL, newNoEOL: h.NewNoEOL, markers: !h.KeepEOL, appends: true}
	if h.HasPos {
		lh.oldStart, lh.newStart, lh.hasPos = h.OldStart, h.NewStart, true
	}
	// One array of texts for the hunk, not one a line.
	texts := make([]string, len(h.Lines))
	lh.lines = make([]looseLine, 0, len(h.Lines))
	for i, l := range h.Lines {
		texts[i] = l.Text
		ll := looseLine{kind: l.Kind, texts: texts[i : i+1 : i+1]}
		ll.elision = l.Kind != patch.LineInsert && isElision(l.Text)
		lh.lines = append(lh.lines, ll)
	}
	return lh
}

// reverse turns the section into the one that undoes it.
func (f *looseFile) reverse() {
	f.oldName, f.newName = f.newName, f.oldName
	f.oldMode, f.newMode = f.newMode, f.oldMode
	// Swapped, git's names read "b/x" then "a/x"; keep them a/ then b/,
	// which resolvePath strips as one component (a reversed deletion would
	// otherwise create "a/x").
	if (strings.HasPrefix(f.oldName, "b/") || f.oldName == "/dev/null") && (strings.HasPrefix(f.newName, "a/") || f.newName == "/dev/null") {
		if f.oldName != "/dev/null" {
			f.oldName = "a/" + f.oldName[2:]
		}
		if f.newName != "/dev/null" {
			f.newName = "b/" + f.newName[2:]
		}
	}
	if f.bin != nil {
		f.bin = f.bin.Reverse()
	}
	switch f.op {
	case patch.Create:
		f.op = patch.Delete
	case patch.Delete:
		f.op = patch.Create
	}
	for _, h := range f.hunks {
		h.reverse()
	}
}

// reverse turns the hunk into the one that undoes it.
func (h *looseHunk) reverse() {
	h.oldStart, h.newStart = h.newStart, h.oldStart
	h.oldCount, h.newCount = h.newCount, h.oldCount
	h.oldNoEOL, h.newNoEOL = h.newNoEOL, h.oldNoEOL
	for i := range h.lines {
		l := &h.lines[i]
		switch l.kind {
		case patch.LineInsert:
			l.kind = patch.LineDelete
			l.elision = isElision(l.texts[0])
		case patch.LineDelete:
			l.kind = patch.LineInsert
			l.texts = l.texts[:1]
			l.elision = false
		}
	}
}

// parseV4A reads an apply_patch envelope tolerantly: change lines that lost
// their leading space are context, a missing "*** End Patch" is no error,
// and added-file lines without their '+' are still content.
//
// A section header without a path is malformed: the edit is refused as
// one, not given a file by guess.
func parseV4A(text string, d *diags) ([]*looseFile, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var files []*looseFile
	var cur *looseFile
	var h *looseHunk
	flush := func() {
		if cur != nil && h != nil && len(h.lines) > 0 {
			cur.hunks = append(cur.hunks, h)
		}
		h = nil
	}
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "*** Begin Patch") {
			start = i + 1
			break
		}
	}
	for i := start; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "*** End Patch"):
			i = len(lines)
		case strings.HasPrefix(l, "*** Update File:"), strings.HasPrefix(l, "*** Add File:"), strings.HasPrefix(l, "*** Delete File:"):
			flush()
			name := strings.TrimSpace(l[strings.IndexByte(l, ':')+1:])
			if name == "" {
				return nil, fmt.Errorf("line %d: %q names no file", i+1, strings.TrimSpace(l))
			}
			cur = &looseFile{oldName: name, newName: name, line: i + 1}
			switch {
			case strings.HasPrefix(l, "*** Add File:"):
				cur.op, cur.oldName = patch.Create, "/dev/null"
				h = &looseHunk{line: i + 1, markers: true}
			case strings.HasPrefix(l, "*** Delete File:"):
				cur.op, cur.newName = patch.Delete, "/dev/null"
			}
			files = append(files, cur)
		case strings.HasPrefix(l, "*** Move to:") && cur != nil:
			cur.op, cur.newName = patch.Rename, strings.TrimSpace(l[len("*** Move to:"):])
			if cur.newName == "" {
				return nil, fmt.Errorf("line %d: %q names no file", i+1, strings.TrimSpace(l))
			}
		case strings.HasPrefix(l, "*** End of File"):
			if h != nil {
				h.atEnd = true
			}
		case strings.HasPrefix(l, "@@") && cur != nil && cur.op != patch.Create:
			if h != nil && len(h.lines) > 0 {
				flush()
			}
			if h == nil {
				h = &looseHunk{line: i + 1}
			}
			if a := strings.TrimSpace(l[2:]); a != "" {
				h.anchors = append(h.anchors, a)
			}
		case cur == nil:
			// Text before the first file section.
		case strings.HasPrefix(l, `\ `) && h != nil:
			noEOLMarker(h)
		case cur.op == patch.Create:
			text := strings.TrimPrefix(l, "+")
			if !strings.HasPrefix(l, "+") && l != "" {
				h.diags = append(h.diags, "missing-plus")
			}
			h.lines = append(h.lines, looseLine{kind: patch.LineInsert, texts: []string{text}, line: i + 1})
		default:
			if h == nil {
				h = &looseHunk{line: i + 1}
			}
			ll := bodyLine(l, false, i+1, h)
			h.lines = append(h.lines, ll)
		}
	}
	flush()
	// Blank lines closing a chunk are separators.
	for _, f := range files {
		for _, h := range f.hunks {
			for n := len(h.lines); n > 0 && h.lines[n-1].kind == patch.LineContext && h.lines[n-1].texts[0] == "" && f.op != patch.Create; n-- {
				h.lines = h.lines[:n-1]
			}
		}
	}
	if d != nil && start == 0 {
		d.add(0, "v4a-envelope", "no *** Begin Patch line")
	}
	return files, nil
}

// noEOLMarker records "\ No newline at end of file" after the last line.
func noEOLMarker(h *looseHunk) {
	h.markers = true
	if n := len(h.lines); n > 0 {
		switch h.lines[n-1].kind {
		case patch.LineContext:
			h.oldNoEOL, h.newNoEOL = true, true
		case patch.LineDelete:
			h.oldNoEOL = true
		case patch.LineInsert:
			h.newNoEOL = true
		}
	}
}
