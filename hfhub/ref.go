// Package hfhub resolves a Hugging Face dataset id (OWNER/NAME[@REVISION]
// [:SPLIT]) to Parquet files on disk: it lists the dataset's files at a
// revision through the Hub's HTTP API, downloads the split's Parquet files
// into a cache (resuming partial downloads, checking sizes and ETags), and
// answers from that cache alone when offline. Every benchmark command that
// reads a dataset resolves it here.
package hfhub

import (
	"fmt"
	"regexp"
	"strings"
)

// Ref names a dataset split on the Hub.
type Ref struct {
	// Repo is "owner/name".
	Repo string
	// Revision is a branch, tag or commit; empty means the default branch
	// (main).
	Revision string
	// Split is "split" or "config/split"; empty picks the only split, else
	// test.
	Split string
}

func (r Ref) String() string {
	s := r.Repo
	if r.Revision != "" {
		s += "@" + r.Revision
	}
	if r.Split != "" {
		s += ":" + r.Split
	}
	return s
}

func (r Ref) rev() string {
	if r.Revision == "" {
		return "main"
	}
	return r.Revision
}

var (
	// The Hub's repository names: letters, digits, '-', '_' and '.', not
	// starting or ending with '.' or '-'.
	namePart  = `[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?`
	refRE     = regexp.MustCompile(`^(` + namePart + `/` + namePart + `)(?:@([^:@\s]+))?(?::([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?))?$`)
	fileLikes = []string{".jsonl", ".json", ".parquet", ".gz", ".txt", ".csv"}
)

// ParseRef parses OWNER/NAME[@REVISION][:SPLIT].
func ParseRef(s string) (Ref, error) {
	m := refRE.FindStringSubmatch(s)
	if m == nil {
		return Ref{}, fmt.Errorf("hfhub: %q is not a dataset id (OWNER/NAME[@REVISION][:SPLIT])", s)
	}
	if strings.Contains(m[2], "..") {
		return Ref{}, fmt.Errorf("hfhub: %q: bad revision %q", s, m[2])
	}
	for _, part := range strings.Split(m[3], "/") {
		if strings.HasPrefix(part, ".") {
			return Ref{}, fmt.Errorf("hfhub: %q: bad split %q", s, m[3])
		}
	}
	return Ref{Repo: m[1], Revision: m[2], Split: m[3]}, nil
}

// LooksLikeRef says whether s reads as a dataset id rather than a file
// name: it parses, and does not end in a data file's extension. Callers
// ask it only for a --dataset that names no file on disk.
func LooksLikeRef(s string) bool {
	if _, err := ParseRef(s); err != nil {
		return false
	}
	lower := strings.ToLower(s)
	for _, ext := range fileLikes {
		if strings.HasSuffix(lower, ext) {
			return false
		}
	}
	return true
}
