package extract

import (
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// gitHeaders are the lines git writes between "diff --git" and the first
// hunk.
var gitHeaders = []string{
	"index ", "old mode ", "new mode ", "deleted file mode ", "new file mode ",
	"similarity index ", "dissimilarity index ", "rename from ", "rename to ",
	"copy from ", "copy to ", "Binary files ", "GIT binary patch",
}

func isGitHeader(l string) bool {
	for _, p := range gitHeaders {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// isFilePair reports a "--- " line followed by a "+++ " line at i.
func isFilePair(lines []string, i, hi int) bool {
	return strings.HasPrefix(lines[i], "--- ") && i+1 < hi && strings.HasPrefix(lines[i+1], "+++ ")
}

// isHeaderStart reports whether line i starts a file section or a hunk:
// for unified diffs "diff --git", "--- " + "+++ ", or "@@"; for V4A a
// "*** " marker or "@@".
func isHeaderStart(lines []string, i, hi int, v4a bool) bool {
	l := lines[i]
	if strings.HasPrefix(l, "@@") {
		return true
	}
	if v4a {
		return strings.HasPrefix(l, "*** ")
	}
	return strings.HasPrefix(l, "diff --git ") || isFilePair(lines, i, hi) || isBinaryFiles(l)
}

// isBinaryFiles matches GNU diff's "Binary files X and Y differ", a file
// section of its own outside git's headers.
func isBinaryFiles(l string) bool {
	l = bare(l)
	return strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ")
}

// isBody reports a hunk body line: ' ', '+', '-' or '\' first, or (not in
// V4A) a udiff-l word marker.
func isBody(l string, v4a bool) bool {
	if l == "" || l == "\r" {
		return false
	}
	switch l[0] {
	case ' ', '+', '-', '\\':
		return true
	}
	return !v4a && wordMarker(l) != 0
}

// wordMarker returns the line kind of a udiff-l line, 0 if it is not one.
func wordMarker(l string) patch.LineKind {
	for _, m := range [...]struct {
		w string
		k patch.LineKind
	}{{"ADD", patch.LineInsert}, {"DEL", patch.LineDelete}, {"CON", patch.LineContext}} {
		if strings.HasPrefix(l, m.w) && (len(l) == 3 || l[3] == ' ' || l[3] == '\r') {
			return m.k
		}
	}
	return 0
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }

// hunkCounts tracks how many old and new lines a numbered hunk header still
// expects.
type hunkCounts struct {
	in, counted bool
	old, new    int
}

func (h *hunkCounts) done() bool { return h.counted && h.old <= 0 && h.new <= 0 }

func (h *hunkCounts) take(l string) {
	k := patch.LineContext
	if l != "" {
		switch l[0] {
		case '+':
			k = patch.LineInsert
		case '-':
			k = patch.LineDelete
		case '\\':
			return
		default:
			if w := wordMarker(l); w != 0 {
				k = w
			}
		}
	}
	if k != patch.LineInsert {
		h.old--
	}
	if k != patch.LineDelete {
		h.new--
	}
}

// countsOf reads the line counts of a hunk header "@@ -A[,B] +C[,D] @@".
func countsOf(l string) hunkCounts {
	h := hunkCounts{in: true}
	body, _, ok := strings.Cut(strings.TrimPrefix(l, "@@"), "@@")
	f := strings.Fields(body)
	if !ok || len(f) != 2 || !strings.HasPrefix(f[0], "-") || !strings.HasPrefix(f[1], "+") {
		return h
	}
	n := func(r string) (int, bool) {
		_, c, has := strings.Cut(r, ",")
		if !has {
			return 1, true
		}
		v, err := strconv.Atoi(c)
		return v, err == nil && v >= 0
	}
	var okOld, okNew bool
	h.old, okOld = n(f[0][1:])
	h.new, okNew = n(f[1][1:])
	h.counted = okOld && okNew
	return h
}

// diffEnd returns the end (exclusive) of the diff that starts at lines[start],
// within lines[:hi]: the rules are in the package documentation, "Where a
// raw diff ends". With v4a set it reads the body of a V4A envelope whose
// "*** End Patch" is missing: "*** " markers and "@@" lines are headers and
// hunks have no counts.
func diffEnd(lines []string, start, hi int, v4a bool) int {
	end := start
	inHeader := false // between a file header and its first hunk
	var h hunkCounts
	if v4a {
		h.in = true // changes may follow "*** Update File:" directly
	}
	for i := start; i < hi; {
		l := bare(lines[i])
		inCounts := h.counted && !h.done()
		switch {
		case v4a && isHeaderStart(lines, i, hi, true):
			i++
			end = i
			continue
		case v4a:
		case strings.HasPrefix(l, "@@"):
			h, inHeader = countsOf(l), false
			i++
			end = i
			continue
		case strings.HasPrefix(l, "diff --git "):
			h, inHeader = hunkCounts{}, true
			i++
			end = i
			continue
		case isFilePair(lines, i, hi) && !inCounts:
			// Within a hunk's counts "--- x" is a deleted line, as git
			// reads it.
			h, inHeader = hunkCounts{}, true
			i += 2
			end = i
			continue
		case inHeader && l == "GIT binary patch":
			// Its blocks are data, not hunks; the file section ends with
			// them.
			h, inHeader = hunkCounts{}, false
			i = binaryEnd(lines, i+1, hi)
			end = i
			continue
		case inHeader:
			if !isGitHeader(l) {
				return end
			}
			i++
			end = i
			continue
		case isBinaryFiles(l):
			h = hunkCounts{}
			i++
			end = i
			continue
		}
		if !h.in {
			return end
		}
		if !v4a && (!h.counted || h.done()) && patch.MailSignature(lines[:hi], i) {
			// git format-patch's "-- " and version end the mail's diff;
			// within the counts "-- " is a removed line.
			return end
		}
		if isBody(l, v4a) {
			h.take(l)
			i++
			end = i
			continue
		}

		// A run of ambiguous lines, blank or not diff-like, then a diff
		// line at j or the end.
		j := i
		for j < hi && !isBody(bare(lines[j]), v4a) && !isHeaderStart(lines, j, hi, v4a) {
			j++
		}
		if j == i {
			// Every header start was handled above; should one slip
			// through, end the diff rather than loop.
			return end
		}
		// Lines the header's counts still expect are context lines that
		// lost their leading space, or empty context lines; at the end of
		// the text a blank line followed by prose ends the diff even so.
		tail := j // start of the blank lines that end the run
		for tail > i && isBlank(lines[tail-1]) {
			tail--
		}
		k := i
		for k < j && h.counted && !h.done() && (j < hi || k >= tail || !isBlank(lines[k])) {
			h.take("")
			k++
		}
		rest := lines[k:j]
		switch {
		case len(rest) == 0:
		case j == hi:
			return k
		case h.counted:
			if !allBlank(rest) || !isHeaderStart(lines, j, hi, v4a) {
				return k
			}
		default:
			if blankThenText(rest) {
				return k
			}
		}
		i = j
		end = j
	}
	return end
}

// gitChange reports whether a line of a git header is a change of its
// own: a rename, a copy, a mode change, a file created or deleted.
func gitChange(l string) bool {
	for _, p := range []string{"rename from ", "copy from ", "new mode ", "new file mode ", "deleted file mode "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// binaryEnd returns the end of the blocks of a GIT binary patch that start
// at lines[i]: at most a forward and a reverse block, each "literal N" or
// "delta N", data lines (a length letter, then groups of five base85
// digits) and the empty line after them.
func binaryEnd(lines []string, i, hi int) int {
	for block := 0; block < 2 && i < hi; block++ {
		l := bare(lines[i])
		if !strings.HasPrefix(l, "literal ") && !strings.HasPrefix(l, "delta ") {
			break
		}
		for i++; i < hi && isBinaryData(bare(lines[i])); i++ {
		}
		if i < hi && bare(lines[i]) == "" {
			i++
		}
	}
	return i
}

func isBinaryData(l string) bool {
	return len(l) >= 6 && (len(l)-1)%5 == 0 && ('A' <= l[0] && l[0] <= 'Z' || 'a' <= l[0] && l[0] <= 'z')
}

func allBlank(lines []string) bool {
	for _, l := range lines {
		if !isBlank(l) {
			return false
		}
	}
	return true
}

// blankThenText reports a blank line followed by a non-blank one.
func blankThenText(lines []string) bool {
	blank := false
	for _, l := range lines {
		if isBlank(l) {
			blank = true
		} else if blank {
			return true
		}
	}
	return false
}

// units counts the units of change in text of format f: hunks with a
// changed line, search-replace blocks with a divider, V4A file sections.
func units(text string, f patch.Format) int {
	lines, _ := patch.SplitLines(text)
	for i, l := range lines {
		lines[i] = bare(l)
	}
	n := 0
	switch f {
	case patch.V4A:
		for _, l := range lines {
			if strings.HasPrefix(l, "*** Update File:") || strings.HasPrefix(l, "*** Add File:") || strings.HasPrefix(l, "*** Delete File:") {
				n++
			}
		}
	case patch.SearchReplace:
		in := false
		for _, l := range lines {
			switch {
			case reSearch().MatchString(l):
				in = true
			case in && reDivider().MatchString(l):
				n++
				in = false
			}
		}
	default:
		words := f == patch.UDiffL
		inHunk, counted, inGit := false, false, false
		for i, l := range lines {
			switch {
			case l == "GIT binary patch":
				n++
				inHunk = false
			case strings.HasPrefix(l, "diff --git "):
				inHunk, inGit = false, true
			case inGit && gitChange(l):
				// A rename, copy, mode change or empty file a git header
				// makes without any hunk (git format-patch mails them so).
				n++
				inGit = false
			case strings.HasPrefix(l, "@@"):
				inHunk, counted, inGit = true, false, false
			case !inHunk || counted:
			case strings.HasPrefix(l, "diff --git ") || isFilePair(lines, i, len(lines)):
				inHunk = false
			case l != "" && (l[0] == '+' || l[0] == '-'),
				words && (wordMarker(l) == patch.LineInsert || wordMarker(l) == patch.LineDelete):
				n++
				counted = true
			}
		}
	}
	return n
}
