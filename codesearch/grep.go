package codesearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
)

// grepQuery is one grep_search: pattern, optional path glob, bound.
type grepQuery struct {
	pattern    string
	glob       string
	ignoreCase bool
	max        int
	// tooLarge, when set, collects the files passed by for being over
	// MaxFileBytes.
	tooLarge *[]string
}

// errSkip passes a file by without a word.
var errSkip = errors.New("skipped")

// compilePattern compiles a grep_search pattern within MaxPatternBytes and
// MaxPatternInsts.
func compilePattern(expr string) (*regexp.Regexp, error) {
	if len(expr) > MaxPatternBytes {
		return nil, fmt.Errorf("%w: pattern: %d bytes, over the bound of %d", ErrBadArguments, len(expr), MaxPatternBytes)
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: pattern: %w", ErrBadArguments, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%w: pattern: %w", ErrBadArguments, err)
	}
	if len(prog.Inst) > MaxPatternInsts {
		return nil, fmt.Errorf("%w: pattern: its program has %d instructions, over the bound of %d (a repetition such as x{1000} counts 1000 times): write a shorter pattern", ErrBadArguments, len(prog.Inst), MaxPatternInsts)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: pattern: %w", ErrBadArguments, err)
	}
	return re, nil
}

// Path globs, the same for git and for directories:
//   - without a wildcard (*, ?, [) a glob names a file or a directory from
//     the root, and matches the files below it ("sympy/core", "setup.py");
//   - with a wildcard and no slash it matches a file's name in any
//     directory ("*.py", "test_*.go");
//   - with a wildcard and a slash it matches the whole path, where *
//     stays inside one directory and ** crosses any number of them
//     ("sympy/**/tests/*.py").

func hasWildcard(glob string) bool { return strings.ContainsAny(glob, "*?[") }

// checkGlob refuses a glob that could name something outside the tree.
func checkGlob(glob string) error {
	if err := patch.CheckPath(glob); err != nil {
		return fmt.Errorf("%w: path_glob: %w", ErrOutside, err)
	}
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("%w: path_glob %q: %w", ErrBadArguments, glob, err)
	}
	return nil
}

// gitGlob turns a glob into the git pathspec with the same meaning.
func gitGlob(glob string) string {
	switch {
	case !hasWildcard(glob):
		return ":(literal)" + path.Clean(glob)
	case !strings.Contains(glob, "/"):
		return ":(glob)**/" + glob
	}
	return ":(glob)" + glob
}

// matchGlob reports whether the file name matches glob.
func matchGlob(glob, name string) bool {
	if !hasWildcard(glob) {
		g := path.Clean(glob)
		return name == g || strings.HasPrefix(name, g+"/")
	}
	if !strings.Contains(glob, "/") {
		ok, _ := path.Match(glob, path.Base(name))
		return ok
	}
	return matchSegments(strings.Split(glob, "/"), strings.Split(name, "/"))
}

func matchSegments(g, n []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(n); i++ {
				if matchSegments(g[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], n[0]); !ok {
			return false
		}
		g, n = g[1:], n[1:]
	}
	return len(n) == 0
}

// grepFiles is grep in Go for a directory: files in order, lines in order,
// binary files (a NUL in the first 8,000 bytes, git's rule) skipped, the
// pattern in Go's syntax (RE2, which accepts the extended regular
// expressions models write).
func grepFiles(ctx context.Context, q grepQuery, files []string, read func(string) ([]byte, error)) ([]repo.GrepMatch, bool, error) {
	expr := q.pattern
	if q.ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := compilePattern(expr)
	if err != nil {
		return nil, false, err
	}
	var out []repo.GrepMatch
	for _, name := range files {
		if q.glob != "" && !matchGlob(q.glob, name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		data, err := read(name)
		if errors.Is(err, patch.ErrTooLarge) && q.tooLarge != nil {
			*q.tooLarge = append(*q.tooLarge, name)
		}
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !re.Match(data) {
			continue
		}
		for n := 1; len(data) > 0; n++ {
			if n%4096 == 0 && ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !re.Match(line) {
				continue
			}
			if q.max > 0 && len(out) == q.max {
				return out, true, nil
			}
			out = append(out, repo.GrepMatch{Path: name, Line: n, Text: string(line)})
		}
	}
	return out, false, nil
}
