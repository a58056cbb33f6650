package ape

import (
	"path"
	"regexp"
	"strings"
)

// LanguageOf names the language of a task's file by its extension, for
// the report's per-language figures; "other" when it is none of these.
func LanguageOf(file string) string {
	switch strings.ToLower(path.Ext(file)) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".lean":
		return "lean"
	case ".java":
		return "java"
	case ".rs":
		return "rust"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".ts", ".tsx":
		return "typescript"
	case ".kt", ".kts":
		return "kotlin"
	}
	return "other"
}

// errorKinds classify a compiler's first diagnostic, most specific first.
var errorKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"syntax", regexp.MustCompile(`(?i)syntax ?error|expected .* found|unexpected (token|newline|eof|end)|IndentationError|unexpected indent|parse error|unterminated`)},
	{"undefined name", regexp.MustCompile(`(?i)undefined:|undefined name|is not defined|NameError|cannot find (symbol|value|function)|unknown (identifier|constant)|not found in this scope|unresolved reference`)},
	{"unused", regexp.MustCompile(`(?i)declared and not used|imported and not used|unused (variable|import)`)},
	{"type", regexp.MustCompile(`(?i)cannot use|mismatched types|type mismatch|incompatible types|invalid operation|has no field or method|too (many|few) arguments|not enough arguments|cannot convert|TypeError`)},
	{"missing return", regexp.MustCompile(`(?i)missing return`)},
	{"import", regexp.MustCompile(`(?i)could not import|cannot find package|no required module|ModuleNotFoundError|ImportError|unresolved import`)},
}

// ErrorKind is the kind of a compile failure from its first error:
// syntax, undefined name, unused, type, missing return, import, timeout,
// or other.
func ErrorKind(firstError string, timedOut bool) string {
	if timedOut {
		return "timeout"
	}
	for _, k := range errorKinds {
		if k.re.MatchString(firstError) {
			return k.kind
		}
	}
	return "other"
}
