package extract

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use, not at start-up: every command of
// the CLI links this package, and most never match these expressions.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
