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
	// The environment lacks what the build needs (Go modules not in the
	// stored tree): no candidate can do better, so it is not counted as
	// the candidate's failure.
	{KindEnvironment, regexp.MustCompile(`module lookup disabled by GOPROXY=off|inconsistent vendoring`)},
	{"syntax", regexp.MustCompile(`(?i)syntax ?error|expected .* found|unexpected (token|newline|eof|end)|IndentationError|unexpected indent|parse error|unterminated`)},
	{"undefined name", regexp.MustCompile(`(?i)undefined:|undefined name|is not defined|NameError|cannot find (symbol|value|function)|unknown (identifier|constant)|not found in this scope|unresolved reference`)},
	{"unused", regexp.MustCompile(`(?i)declared and not used|imported and not used|unused (variable|import)`)},
	{"type", regexp.MustCompile(`(?i)cannot use|mismatched types|type mismatch|incompatible types|invalid operation|has no field or method|too (many|few) arguments|not enough arguments|cannot convert|TypeError`)},
	{"missing return", regexp.MustCompile(`(?i)missing return`)},
	{"import", regexp.MustCompile(`(?i)could not import|cannot find package|cannot find module providing package|no required module|ModuleNotFoundError|ImportError|unresolved import`)},
}

// KindEnvironment is the error kind of a check that failed for want of
// what the environment should hold.
const KindEnvironment = "environment"

// ErrorKind is the kind of a compile failure from its first error:
// environment, syntax, undefined name, unused, type, missing return,
// import, timeout, or other.
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

// Kind is the kind of c's failure (see ErrorKind); "" when it passed.
func (c Check) Kind() string {
	if c.Pass {
		return ""
	}
	first := ""
	if len(c.Errors) > 0 {
		first = c.Errors[0]
	}
	return ErrorKind(first, c.TimedOut)
}
