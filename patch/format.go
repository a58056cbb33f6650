package patch

import (
	"fmt"
	"regexp"
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

var (
	reNumberedHeader = regexp.MustCompile(`(?m)^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)
	reBareHeader     = regexp.MustCompile(`(?m)^@@ (\.\.\. )?@@`)
	reWordMarker     = regexp.MustCompile(`(?m)^(ADD|DEL|CON)( |$)`)
	reV4A            = regexp.MustCompile(`(?m)^\*\*\* (Begin Patch|Update File: |Add File: |Delete File: )`)
	reSearch         = regexp.MustCompile(`(?m)^<{5,9} ?SEARCH\s*$`)
)

// Detect guesses the format of text from its markers. It reports false when
// text looks like no edit format at all.
func Detect(text string) (Format, bool) {
	switch {
	case reV4A.MatchString(text):
		return V4A, true
	case reSearch.MatchString(text):
		return SearchReplace, true
	case reWordMarker.MatchString(text) && (reNumberedHeader.MatchString(text) || reBareHeader.MatchString(text) || strings.Contains(text, "\n@@")):
		return UDiffL, true
	case reNumberedHeader.MatchString(text):
		return UDiff, true
	case reBareHeader.MatchString(text), strings.HasPrefix(text, "@@"), strings.Contains(text, "\n@@"):
		return UDiffH, true
	}
	return "", false
}
