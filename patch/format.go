package patch

import (
	"fmt"
	"strings"
)

// Parse parses text in format f.
func Parse(text string, f Format, opts ParseOptions) (*Patch, error) {
	switch f {
	case UDiff:
		return ParseUDiff(text, opts)
	case UDiffH:
		return ParseUDiffH(text, opts)
	case UDiffL:
		return ParseUDiffL(text, opts)
	case SearchReplace:
		return ParseSearchReplace(text)
	case V4A:
		return ParseV4A(text)
	}
	return nil, fmt.Errorf("parse: unknown format %q", f)
}

// Print writes p in format f. Formats with line numbers (udiff, udiff-l)
// need hunks whose HasPos is set.
func Print(p *Patch, f Format) (string, error) {
	var b strings.Builder
	b.Grow(printSize(p))
	var err error
	switch f {
	case UDiff, UDiffH, UDiffL:
		err = printUnified(&b, p, f)
	case SearchReplace:
		err = printSearchReplace(&b, p)
	case V4A:
		err = printV4A(&b, p)
	default:
		err = fmt.Errorf("print: unknown format %q", f)
	}
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// Detect guesses the format of text from its markers. It reports false when
// text looks like no edit format at all. It reads each line once, without
// regular expressions, since it runs on every model response.
func Detect(text string) (Format, bool) {
	var v4a, sr, words, numbered, hunk, git bool
	for len(text) > 0 {
		var l string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			l, text = text, ""
		}
		l = strings.TrimSuffix(l, "\r")
		switch {
		case strings.HasPrefix(l, "*** "):
			for _, p := range []string{"*** Begin Patch", "*** Update File: ", "*** Add File: ", "*** Delete File: "} {
				if strings.HasPrefix(l, p) {
					v4a = true
				}
			}
		case strings.HasPrefix(l, "<<<<<"):
			sr = sr || isSearchMarker(l)
		case strings.HasPrefix(l, "diff --git "):
			git = true
		case strings.HasPrefix(l, "@@"):
			hunk = true
			numbered = numbered || isNumberedHeader(l)
		case strings.HasPrefix(l, "ADD") || strings.HasPrefix(l, "DEL") || strings.HasPrefix(l, "CON"):
			words = words || len(l) == 3 || l[3] == ' '
		}
	}
	switch {
	case v4a:
		return V4A, true
	case sr:
		return SearchReplace, true
	case words && hunk:
		return UDiffL, true
	case numbered:
		return UDiff, true
	case hunk:
		return UDiffH, true
	case git:
		// Only file headers: a creation of an empty file, a mode change or
		// a pure rename.
		return UDiff, true
	}
	return "", false
}

// isNumberedHeader matches "@@ -A[,B] +C[,D] @@".
func isNumberedHeader(l string) bool {
	h, err := parseHunkHeader(l)
	return err == nil && h.HasPos
}

// printSize estimates the printed size of p, to allocate once.
func printSize(p *Patch) int {
	n := 0
	for _, fp := range p.Files {
		n += 2*len(fp.OldPath) + 2*len(fp.NewPath) + 64
		for _, h := range fp.Hunks {
			n += 32 + len(h.Section)
			for _, l := range h.Lines {
				n += len(l.Text) + 5
			}
		}
	}
	return n
}
