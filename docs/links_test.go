// Package docs holds the user documentation; its test checks that every
// relative link in README.md and docs/*.md resolves inside the repository.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// link matches [text](target) and ![alt](target); the target ends at
	// the first space or closing parenthesis.
	link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// fence matches a fenced code block, whose text is not Markdown.
	fence   = regexp.MustCompile("(?ms)^ {0,3}(```|~~~).*?^ {0,3}(```|~~~)[^\n]*$")
	heading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation other
// than '-' and '_' removed, spaces turned into '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of the Markdown file's headings (a repeated
// heading gets -1, -2, ... as on GitHub).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// stripCode removes fenced blocks and inline code spans, which may show
// link syntax without being links.
func stripCode(text string) string {
	text = fence.ReplaceAllString(text, "")
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(text, "")
}

func TestLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for _, m := range link.FindAllStringSubmatch(stripCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue // a web page, not a file
			}
			checked++
			if msg := checkLink(root, file, target); msg != "" {
				t.Errorf("%s: link %s: %s", rel, target, msg)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the pattern is broken")
	}
}

// checkLink says what is wrong with the relative link target of file, or
// "" when it resolves: to a file or directory inside root and, with
// #anchor, a heading of that Markdown file.
func checkLink(root, file, target string) string {
	path, anchor, _ := strings.Cut(target, "#")
	if strings.HasPrefix(path, "/") || filepath.VolumeName(path) != "" {
		return "an absolute path: a reader's clone has no such file"
	}
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
	}
	if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "outside the repository"
	}
	st, err := os.Stat(dest)
	if err != nil {
		return "no such file"
	}
	if anchor == "" {
		return ""
	}
	if st.IsDir() || !strings.HasSuffix(dest, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	b, err := os.ReadFile(dest)
	if err != nil {
		return err.Error()
	}
	if !anchors(string(b))[anchor] {
		return "no heading with that anchor"
	}
	return ""
}

// TestCheckLink: the checker refuses what it must (links outside the
// repository, absolute paths, missing files and anchors) and accepts a
// good link with its anchor.
func TestCheckLink(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs", "a.md"), []byte("# Title\n\n## Two names: renames and `diff`s\n\n```\n# not a heading\n```\n"), 0o644)
	readme := filepath.Join(root, "README.md")
	os.WriteFile(readme, nil, 0o644)
	for target, bad := range map[string]bool{
		"docs/a.md":                             false,
		"docs/a.md#title":                       false,
		"docs/a.md#two-names-renames-and-diffs": false,
		"docs/a.md#not-a-heading":               true,
		"docs/b.md":                             true,
		"../shared/DESIGN.md":                   true,
		"/etc/passwd":                           true,
		"docs/a.md#nowhere":                     true,
		"docs":                                  false,
	} {
		if msg := checkLink(root, readme, target); (msg != "") != bad {
			t.Errorf("checkLink(%q) = %q, want refused %v", target, msg, bad)
		}
	}
}
