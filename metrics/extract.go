package metrics

import "strings"

// ExtractAnswer returns the part of a model response that is scored as the
// answer for tasks whose answer is code (Diff-XYZ apply and anti-apply): the
// content of the first fenced code block, or else the whole response.
//
// The rules:
//
//   - "\r\n" is read as "\n" everywhere; the result has "\n" line endings.
//   - A fence opens on a line whose first non-blank characters are three or
//     more backticks or three or more tildes; anything after them on the line
//     (a language tag such as "python") is ignored. Indentation before the
//     fence is allowed, and up to that many leading spaces are removed from
//     each line of the block, as in CommonMark.
//   - The block closes at the first later line that holds, apart from white
//     space, only a run of the same fence character at least as long as the
//     opening run. An unterminated block runs to the end of the response.
//   - The result is the text of the lines between the fences, each with its
//     line ending, so a block "```\nx\n```" yields "x\n" and an empty block
//     yields "".
//   - Without any fence the whole response is returned (with "\r\n" read as
//     "\n"), untrimmed.
func ExtractAnswer(response string) string {
	text := strings.ReplaceAll(response, "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		fenceChar, fenceLen, indent, ok := openingFence(line)
		if !ok {
			continue
		}
		var b strings.Builder
		for _, body := range lines[i+1:] {
			if closesFence(body, fenceChar, fenceLen) {
				return b.String()
			}
			b.WriteString(trimIndent(body, indent))
		}
		return b.String()
	}
	return text
}

// openingFence reports whether line opens a fenced block, and returns the
// fence character, the length of the fence run and the indentation width.
func openingFence(line string) (char byte, n, indent int, ok bool) {
	body := strings.TrimRight(line, "\n")
	trimmed := strings.TrimLeft(body, " \t")
	indent = len(body) - len(trimmed)
	if trimmed == "" || (trimmed[0] != '`' && trimmed[0] != '~') {
		return 0, 0, 0, false
	}
	char = trimmed[0]
	n = fenceRun(trimmed, char)
	if n < 3 {
		return 0, 0, 0, false
	}
	// CommonMark: the info string of a backtick fence holds no backtick,
	// which keeps inline code such as ```x``` on one line from opening a
	// block.
	if char == '`' && strings.Contains(trimmed[n:], "`") {
		return 0, 0, 0, false
	}
	return char, n, indent, true
}

// closesFence reports whether line closes a block opened by n of char.
func closesFence(line string, char byte, n int) bool {
	trimmed := strings.TrimSpace(line)
	run := fenceRun(trimmed, char)
	return run >= n && run == len(trimmed)
}

// fenceRun returns the number of leading char bytes in s.
func fenceRun(s string, char byte) int {
	n := 0
	for n < len(s) && s[n] == char {
		n++
	}
	return n
}

// trimIndent removes up to indent leading spaces from line.
func trimIndent(line string, indent int) string {
	for i := 0; i < indent && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}
