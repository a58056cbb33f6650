package extract

import "strings"

// Answer returns the code in a model's answer to a task whose answer is a
// whole file (Diff-XYZ apply and anti-apply), read as a person reads it.
// It shares its reading of fence lines with [Extract]: a line of three or
// more '`' or '~', with or without an info string such as python, opens a
// fence; a line of the same character, at least as long, with nothing
// after it and indented no deeper, closes it.
//
// The rules:
//
//   - A byte order mark opening the text is dropped; "\r\n" is read as
//     "\n"; end-of-text tokens at the very end
//     ("</s>", "<|im_end|>", ...) are removed, and reasoning up to a
//     closing "</think>" line is skipped.
//   - Fenced: when the first non-blank line opens a fence, the answer is
//     everything between it and the last line that closes it (prose may
//     follow). Code that holds fence-like lines of its own (a ``` in a
//     docstring, Rust doc examples) is kept whole, since only the last
//     closing line ends the answer. Without a closing line the answer
//     runs to the end.
//   - Fenced inside prose: otherwise, take the first line that opens a
//     fence and that a later line closes. When the non-blank lines around
//     it and its last closing line are at most three, or fewer than the
//     lines between, the answer is the lines between. Prose around an
//     answer is a sentence or two, or shorter than the answer; a fenced
//     example inside bare code (a Rust crate's doc comment) is a small
//     part of the file, so the file is not cut down to it.
//   - Repeated: an answer made only of fenced blocks with the same content
//     (the file written twice, with at most a line of prose before each
//     block) is that content. Blocks whose contents differ (the old file,
//     then the new one; the file, then a diff) are not picked from: the
//     rules above read them as one answer, which matches no file.
//   - Bare: otherwise the answer is the whole text. A lone underline such
//     as reStructuredText's "~~~~~~" under a title is not a fence.
//   - A fence's indentation is removed from its lines when every non-blank
//     line carries it (a fence in a list item). Lines are otherwise kept
//     as they are, each with its "\n".
func Answer(text string) string {
	text = stripEndTokens(strings.ReplaceAll(strings.TrimPrefix(text, bom), "\r\n", "\n"))
	if i := strings.LastIndex(text, "</think>"); i >= 0 {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(text[i+len("</think>"):], " \t"), "\n"); ok {
			text = rest
		}
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = i
			break
		}
	}
	if first < 0 {
		return text
	}
	if content, ok := repeated(lines, first); ok {
		return content
	}
	if f, ok := parseFence(strings.TrimSuffix(lines[first], "\n")); ok {
		end := lastCloser(lines, first, f)
		if end < 0 {
			end = len(lines)
		}
		return fenceContent(lines[first+1:end], f)
	}
	for i := first + 1; i < len(lines); i++ {
		f, ok := parseFence(strings.TrimSuffix(lines[i], "\n"))
		if !ok {
			continue
		}
		end := lastCloser(lines, i, f)
		if end < 0 {
			continue // a lone underline, or an opening that nothing closes
		}
		outside := 0
		for _, l := range append(lines[:i:i], lines[end+1:]...) {
			if strings.TrimSpace(l) != "" {
				outside++
			}
		}
		if outside <= maxProse || end-i-1 > outside {
			return fenceContent(lines[i+1:end], f)
		}
		break // the first fence decides: bare code with examples in it
	}
	return text
}

// bom is the byte order mark, which some clients put before a text.
const bom = "\ufeff"

// repeated reads lines from first as a run of two or more fenced blocks
// with the same non-blank content, with at most one non-blank line (a
// sentence such as "Again:") before each, and returns that content. Each
// way of closing the first block is tried, so content that holds fence
// lines of its own is read whole.
func repeated(lines []string, first int) (string, bool) {
	skip := func(i int) int { // past blank lines and one line of prose
		prose := 0
		for ; i < len(lines); i++ {
			if _, ok := parseFence(strings.TrimSuffix(lines[i], "\n")); ok {
				break
			}
			if strings.TrimSpace(lines[i]) != "" {
				if prose++; prose > 1 {
					return -1
				}
			}
		}
		return i
	}
	open := skip(first)
	if open < 0 || open >= len(lines) {
		return "", false
	}
	f, _ := parseFence(strings.TrimSuffix(lines[open], "\n"))
	for end := open + 1; end < len(lines); end++ {
		g, ok := parseFence(strings.TrimSuffix(lines[end], "\n"))
		if !ok || !f.closedBy(g) {
			continue
		}
		content := fenceContent(lines[open+1:end], f)
		if strings.TrimSpace(content) == "" {
			continue
		}
		n := end - open - 1 // lines in a block
		blocks := 1
		i := end + 1
		for {
			if i = skip(i); i < 0 {
				break
			}
			if i == len(lines) {
				if blocks >= 2 {
					return content, true
				}
				break
			}
			h, _ := parseFence(strings.TrimSuffix(lines[i], "\n"))
			c := i + 1 + n
			if c >= len(lines) {
				break
			}
			k, ok := parseFence(strings.TrimSuffix(lines[c], "\n"))
			if !ok || !h.closedBy(k) || fenceContent(lines[i+1:c], h) != content {
				break
			}
			blocks, i = blocks+1, c+1
		}
	}
	return "", false
}

// maxProse is the number of non-blank lines around a fence that are read
// as prose whatever the fence's length.
const maxProse = 3

// lastCloser returns the index of the last line after open that closes the
// fence f, or -1.
func lastCloser(lines []string, open int, f fenceLine) int {
	for j := len(lines) - 1; j > open; j-- {
		if g, ok := parseFence(strings.TrimSuffix(lines[j], "\n")); ok && f.closedBy(g) {
			return j
		}
	}
	return -1
}

// fenceContent joins the lines of a fence's content, without the fence's
// indentation when every non-blank line carries it.
func fenceContent(lines []string, f fenceLine) string {
	strip := f.indent != "" && allIndented(lines, f.indent)
	var b strings.Builder
	for _, l := range lines {
		if strip && strings.TrimSpace(l) != "" {
			l = strings.TrimPrefix(l, f.indent)
		}
		b.WriteString(l)
	}
	return b.String()
}
