package metrics

import "strings"

// StrippedLines splits s on "\n" and returns the lines that are not blank.
// A line is blank when it is empty or holds only white space (as defined by
// unicode.IsSpace, so a lone "\r" is blank too). The remaining lines are
// returned exactly as they are: leading and trailing white space inside a
// line is kept, and so is a trailing "\r" of a CRLF line ending.
func StrippedLines(s string) []string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, line)
	}
	return out
}

// StrippedEM reports whether a and b are equal once blank lines are dropped
// from both (see [StrippedLines]). The remaining lines are compared exactly
// and in order, so indentation and trailing spaces count.
//
// Lines are split on "\n" only: "x\r\n" and "x\n" leave different lines
// ("x\r" and "x"). Normalise line endings first when they should not matter.
func StrippedEM(a, b string) bool {
	la, lb := StrippedLines(a), StrippedLines(b)
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		if la[i] != lb[i] {
			return false
		}
	}
	return true
}

// StrippedIoU returns the intersection over union of the sets of non-blank
// lines of a and b (see [StrippedLines]): |A∩B| / |A∪B|. Order and repetition
// of lines do not count. When both texts have no non-blank line the result
// is 1; when exactly one has none it is 0.
func StrippedIoU(a, b string) float64 {
	sa, sb := toSet(StrippedLines(a)), toSet(StrippedLines(b))
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := intersection(sa, sb)
	union := len(sa) + len(sb) - inter
	return float64(inter) / float64(union)
}
