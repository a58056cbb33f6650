package codesearch

import (
	"strings"

	"github.com/patchbench/patchbench/symbols"
)

// pythonDefs finds the functions and classes of Python source by its
// indentation, for the index only: tree-sitter takes seconds on the large
// generated files of repositories like sympy (3 s for one 730 KB file on
// this machine), a line scan milliseconds. Names and ranges follow package
// symbols (qualified names, the def line to the last line that is not
// blank or a comment); TestPythonDefsMatchSymbols holds them to it on real
// code. Triple-quoted strings and open brackets are followed so that their
// lines do not end a definition.
func pythonDefs(src string) []symbols.Symbol {
	type open struct {
		indent int
		sym    int // index in out
	}
	var out []symbols.Symbol
	var stack []open
	lastCode := 0 // last line holding code
	inString := ""
	depth := 0
	closeTo := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			out[stack[len(stack)-1].sym].End = max(lastCode, out[stack[len(stack)-1].sym].Start)
			stack = stack[:len(stack)-1]
		}
	}
	lineNo := 0
	for len(src) > 0 {
		lineNo++
		line := src
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = ""
		}
		startsInside := inString != "" || depth > 0
		inString, depth = scanPyLine(line, inString, depth)
		if startsInside {
			lastCode = lineNo
			continue
		}
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || trimmed[0] == '#' || trimmed == "\r" {
			continue
		}
		indent := len(line) - len(trimmed)
		closeTo(indent)
		lastCode = lineNo
		kind, name := pyDef(trimmed)
		if kind == "" {
			continue
		}
		k := symbols.Function
		qual := name
		if len(stack) > 0 {
			parent := out[stack[len(stack)-1].sym]
			qual = parent.Name + "." + name
			if kind == "def" && parent.Kind == symbols.Class {
				k = symbols.Method
			}
		}
		if kind == "class" {
			k = symbols.Class
		}
		out = append(out, symbols.Symbol{Name: qual, Kind: k, Start: lineNo, End: lineNo})
		stack = append(stack, open{indent, len(out) - 1})
	}
	closeTo(0)
	return out
}

// pyDef recognises "def NAME", "async def NAME" and "class NAME".
func pyDef(s string) (kind, name string) {
	switch {
	case strings.HasPrefix(s, "def "):
		kind, s = "def", s[4:]
	case strings.HasPrefix(s, "async def "):
		kind, s = "def", s[10:]
	case strings.HasPrefix(s, "class "):
		kind, s = "class", s[6:]
	default:
		return "", ""
	}
	s = strings.TrimLeft(s, " \t")
	end := 0
	for end < len(s) && (isAlnum(s[end]) || s[end] == '_' || s[end] >= 0x80) {
		end++
	}
	if end == 0 {
		return "", ""
	}
	// A copy: the name outlives the file's text, which it would keep.
	return kind, strings.Clone(s[:end])
}

// pyCodeStops marks the bytes scanPyLine acts on outside strings, and
// pyStringStops[q&1] those inside a string opened by the quote q (' is odd,
// " even): a backslash and that quote.
var pyCodeStops, pyStringStops = func() (code [256]bool, str [2][256]bool) {
	for _, b := range []byte("#()[]{}'\"") {
		code[b] = true
	}
	str['\''&1]['\\'], str['\''&1]['\''] = true, true
	str['"'&1]['\\'], str['"'&1]['"'] = true, true
	return code, str
}()

// scanPyLine follows strings, comments and brackets through one line and
// returns the state at its end: the open triple quote, if any, and the
// bracket depth.
func scanPyLine(line, inString string, depth int) (string, int) {
	for i := 0; i < len(line); i++ {
		if inString != "" {
			// Jump to the next backslash or quote: docstrings are long.
			stop := &pyStringStops[inString[0]&1]
			for i < len(line) && !stop[line[i]] {
				i++
			}
			if i == len(line) {
				return inString, depth
			}
			if line[i] == '\\' {
				i++
				continue
			}
			if strings.HasPrefix(line[i:], inString) {
				i += len(inString) - 1
				inString = ""
			}
			continue
		}
		for i < len(line) && !pyCodeStops[line[i]] {
			i++
		}
		if i == len(line) {
			return "", depth
		}
		switch c := line[i]; c {
		case '#':
			return "", depth
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '\'', '"':
			q := string(c)
			if strings.HasPrefix(line[i:], q+q+q) {
				q = q + q + q
			}
			// Find the end on this line.
			j := i + len(q)
			closed := false
			for j < len(line) {
				if line[j] == '\\' {
					j += 2
					continue
				}
				if strings.HasPrefix(line[j:], q) {
					closed = true
					break
				}
				j++
			}
			if !closed {
				if len(q) == 3 {
					return q, depth
				}
				return "", depth // a one-quote string cannot span lines
			}
			i = j + len(q) - 1
		}
	}
	return inString, depth
}
