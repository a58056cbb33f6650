package patch

import "strings"

// MailSignature reports whether lines[i] starts the signature that git
// format-patch ends each mail with: a line "-- " and then git's version
// ("2.39.2", "2.43.0.windows.1", "2.39.3 (Apple Git-146)"). Lines may end
// in "\r". git apply never reads it, because a hunk ends where its
// header's counts say; a caller that reads hunks without counts asks this
// only where the counts are met, or the header has none: within a hunk's
// counts "-- " is a removed line "- ".
func MailSignature(lines []string, i int) bool {
	if i+1 >= len(lines) || strings.TrimSuffix(lines[i], "\r") != "-- " {
		return false
	}
	return gitVersion(strings.TrimSuffix(lines[i+1], "\r"))
}

// gitVersion reports whether s is git's version as format-patch writes it
// under the signature: digits, a dot, digits, then more of [0-9A-Za-z.-+]
// and an optional " (...)" note.
func gitVersion(s string) bool {
	if note := strings.Index(s, " ("); note > 0 && strings.HasSuffix(s, ")") {
		s = s[:note]
	}
	dot := strings.IndexByte(s, '.')
	if dot < 1 || dot+1 >= len(s) || !isDigit(s[dot+1]) {
		return false
	}
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch {
		case j < dot && !isDigit(c):
			return false
		case isDigit(c), c == '.', c == '-', c == '+', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		default:
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
