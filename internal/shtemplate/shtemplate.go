// Package shtemplate fills in the command templates users give on the
// command line (ape's --check-cmd, swe's --test-cmd and --image, a dataset
// row's test_cmd): every template of the module goes through [Expand], so
// every value reaches the shell as the words it is, whatever it holds.
//
// Two rules make that so. The template is read once, left to right, and
// each placeholder is replaced where it stands: a value that itself holds
// "{dir}" is never read again as a template. And each value is one shell
// word, quoted with POSIX single quotes (a value of only letters, digits
// and _./:@%+,- is left bare, which the shell reads the same): a file named
// `x;echo $(id)` is one argument, never a command.
//
// Write placeholders bare in a template, not inside quotes of the
// template's own: `cat {file}`, not `cat "{file}"` (inside double quotes
// the single quotes would be kept as characters).
package shtemplate

import "strings"

// Quote returns s as one word of a POSIX shell: s itself when it is not
// empty and holds only letters, digits and _./:@%+,-, else s in single
// quotes, each single quote in it closing the quotes, escaped, and opening
// them again. ('=' is not left bare: a first word
// like A=B would be an assignment, not a command.)
func Quote(s string) string {
	if bare(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func bare(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("_./:@%+,-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Vars maps a placeholder's name (without braces) to its words: one word
// for most placeholders, any number for a list such as {tests}.
type Vars map[string][]string

// Expand returns tmpl with each {name} that vars holds replaced by its
// words, each [Quote]d, separated by single spaces (no words: nothing).
// The template is read once: text a value brings in is never substituted
// again. Braces naming nothing in vars are left as they are.
func Expand(tmpl string, vars Vars) string {
	return expand(tmpl, vars, func(words []string) string {
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = Quote(w)
		}
		return strings.Join(q, " ")
	})
}

// ExpandRaw is [Expand] without quoting, for a template whose result is
// not read by a shell but passed as one argument (a container image
// name): the words are joined by single spaces. The caller checks the
// result is what it should be.
func ExpandRaw(tmpl string, vars Vars) string {
	return expand(tmpl, vars, func(words []string) string { return strings.Join(words, " ") })
}

func expand(tmpl string, vars Vars, words func([]string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i+1:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		name := tmpl[i+1 : i+1+j]
		if v, ok := vars[name]; ok {
			b.WriteString(tmpl[:i])
			b.WriteString(words(v))
			tmpl = tmpl[i+j+2:]
			continue
		}
		// Not a placeholder: keep the '{' and look again after it, so
		// "{{file}" still finds "{file}".
		b.WriteString(tmpl[:i+1])
		tmpl = tmpl[i+1:]
	}
}
