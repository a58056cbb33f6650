package diffxyz

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/patchbench/patchbench/repo"
)

// Extensions maps the languages Build knows to their file extensions.
var Extensions = map[string][]string{
	"python":     {".py"},
	"javascript": {".js", ".jsx", ".mjs", ".cjs"},
	"typescript": {".ts", ".tsx"},
	"java":       {".java"},
	"kotlin":     {".kt", ".kts"},
	"rust":       {".rs"},
	"go":         {".go"},
	"c":          {".c", ".h"},
	"cpp":        {".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"},
	"csharp":     {".cs"},
	"ruby":       {".rb"},
	"php":        {".php"},
	"swift":      {".swift"},
	"scala":      {".scala"},
}

// LangOf returns the language of a file by its extension, "" if unknown.
func LangOf(p string) string {
	ext := strings.ToLower(path.Ext(p))
	for lang, exts := range Extensions {
		if slices.Contains(exts, ext) {
			return lang
		}
	}
	return ""
}

// The filter of the Diff-XYZ paper.
const (
	MinLines = 40   // lines of the file before and after, at least
	MaxLines = 1000 // and at most
)

// Shares of the size classes in a built dataset, in percent: 40/40/20.
var sizeShares = map[string]int{Small: 40, Medium: 40, Large: 20}

// BuildOptions configure Build.
type BuildOptions struct {
	// Repo is the git repository (a working tree or a bare repository).
	Repo string
	// Rev is the revision whose history is searched; "" means HEAD.
	Rev string
	// Lang keeps files of one language (a key of Extensions); "" keeps
	// every language Extensions knows.
	Lang string
	// N is the number of rows wanted.
	N int
	// Seed orders the candidates of each size class before they are taken.
	Seed int64
	// Name is recorded as the repo column and in ids; "" means the
	// repository directory's name.
	Name string
}

// BuildStats says what Build found.
type BuildStats struct {
	// Commits is the number of non-merge commits read; Candidates the
	// number that modify exactly one file of the language, per size class;
	// Selected the rows taken, per size class; Rejected counts candidates
	// examined and refused, per reason.
	Commits    int
	Candidates map[string]int
	Selected   map[string]int
	Rejected   map[string]int
}

type candidate struct {
	commit, parent, path, subject string
	added, removed                int
	order                         uint64
}

// Build makes a Diff-XYZ dataset from the history of a git repository with
// the paper's filter: commits that modify exactly one file (no merges, no
// renames, no binary files), of 40 to 1000 lines before and after, whose
// change is not whitespace only; taken 40/40/20 from the small (≤ 7
// changed lines), medium (8–24) and large (> 24) size classes, as git's
// numstat counts them. Within a class, candidates are taken in an order
// that depends only on Seed and the commit, so a build is reproducible.
// When a class has too few candidates, the dataset is smaller than N.
// The udiff column is git's own diff; other formats are generated when
// the dataset is run.
func Build(ctx context.Context, o BuildOptions) ([]*Row, BuildStats, error) {
	st := BuildStats{Candidates: map[string]int{}, Selected: map[string]int{}, Rejected: map[string]int{}}
	if o.N <= 0 {
		return nil, st, errors.New("build: the number of rows must be positive")
	}
	if o.Lang != "" {
		if _, ok := Extensions[o.Lang]; !ok {
			langs := slices.Sorted(func(yield func(string) bool) {
				for l := range Extensions {
					if !yield(l) {
						return
					}
				}
			})
			return nil, st, fmt.Errorf("build: unknown language %q (want one of %s)", o.Lang, strings.Join(langs, ", "))
		}
	}
	rev := o.Rev
	if rev == "" {
		rev = "HEAD"
	}
	name := o.Name
	if name == "" {
		abs, err := filepath.Abs(o.Repo)
		if err != nil {
			return nil, st, fmt.Errorf("build: %w", err)
		}
		name = strings.TrimSuffix(filepath.Base(abs), ".git")
	}
	revArgs, err := repo.RevListArgs(rev)
	if err != nil {
		return nil, st, fmt.Errorf("build: --rev: %w", err)
	}
	args := []string{"-c", "core.quotePath=false", "log", "--no-merges", "--no-renames", "--no-color",
		"--format=%x01%H%x1f%P%x1f%s", "--numstat"}
	out, err := git(ctx, o.Repo, append(append(args, revArgs...), "--")...)
	if err != nil {
		return nil, st, fmt.Errorf("build: %w", err)
	}
	byClass := map[string][]candidate{}
	for _, chunk := range strings.Split(string(out), "\x01")[1:] {
		st.Commits++
		header, body, _ := strings.Cut(chunk, "\n")
		f := strings.SplitN(header, "\x1f", 3)
		if len(f) != 3 || f[1] == "" || strings.Contains(f[1], " ") {
			continue // a root commit, or (with --no-merges, never) several parents
		}
		var stats []string
		for _, l := range strings.Split(body, "\n") {
			if l != "" {
				stats = append(stats, l)
			}
		}
		if len(stats) != 1 {
			continue
		}
		parts := strings.SplitN(stats[0], "\t", 3)
		if len(parts) != 3 {
			continue
		}
		added, err1 := strconv.Atoi(parts[0])
		removed, err2 := strconv.Atoi(parts[1])
		p := parts[2]
		if err1 != nil || err2 != nil || strings.HasPrefix(p, `"`) || added+removed == 0 {
			continue // binary, or a path git had to quote
		}
		lang := LangOf(p)
		if lang == "" || (o.Lang != "" && lang != o.Lang) {
			continue
		}
		c := candidate{commit: f[0], parent: f[1], path: p, subject: f[2], added: added, removed: removed}
		h := sha256.Sum256([]byte(strconv.FormatInt(o.Seed, 10) + "\x00" + c.commit))
		c.order = binary.BigEndian.Uint64(h[:8])
		class := SizeClassOf(added + removed)
		byClass[class] = append(byClass[class], c)
		st.Candidates[class]++
	}

	r, err := repo.Open(ctx, o.Repo)
	if err != nil {
		return nil, st, fmt.Errorf("build: %w", err)
	}
	defer r.Close()
	want := map[string]int{Small: o.N * sizeShares[Small] / 100, Medium: o.N * sizeShares[Medium] / 100}
	want[Large] = o.N - want[Small] - want[Medium]
	var rows []*Row
	for _, class := range SizeClasses {
		cands := byClass[class]
		slices.SortFunc(cands, func(a, b candidate) int {
			if a.order != b.order {
				if a.order < b.order {
					return -1
				}
				return 1
			}
			return strings.Compare(a.commit, b.commit)
		})
		for _, c := range cands {
			if st.Selected[class] == want[class] {
				break
			}
			row, reason, err := buildRow(ctx, r, o.Repo, name, c)
			if err != nil {
				return nil, st, err
			}
			if reason != "" {
				st.Rejected[reason]++
				continue
			}
			row.SizeClass = class
			rows = append(rows, row)
			st.Selected[class]++
		}
	}
	return rows, st, nil
}

// buildRow reads a candidate's file before and after and applies the
// content filters; a non-empty reason says why the candidate is refused.
func buildRow(ctx context.Context, r *repo.Repo, dir, name string, c candidate) (*Row, string, error) {
	old, err := r.ReadFile(ctx, c.parent, c.path)
	if err != nil {
		return nil, "not in the parent commit", nil // an added file
	}
	nw, err := r.ReadFile(ctx, c.commit, c.path)
	if err != nil {
		return nil, "not in the commit", nil // a deleted file
	}
	if !utf8.Valid(old) || !utf8.Valid(nw) || bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(nw, 0) >= 0 {
		return nil, "not UTF-8 text", nil
	}
	for _, b := range [][]byte{old, nw} {
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		if n < MinLines || n > MaxLines {
			return nil, "fewer than 40 or more than 1000 lines", nil
		}
	}
	if strings.Join(strings.Fields(string(old)), "") == strings.Join(strings.Fields(string(nw)), "") {
		return nil, "whitespace-only change", nil
	}
	diff, err := git(ctx, dir, "-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "--no-renames",
		"--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", c.parent, c.commit, "--", c.path)
	if err != nil {
		return nil, "", fmt.Errorf("build: %w", err)
	}
	hunks := 0
	for l := range strings.Lines(string(diff)) {
		if strings.HasPrefix(l, "@@ ") {
			hunks++
		}
	}
	short := c.commit
	if len(short) > 12 {
		short = short[:12]
	}
	return &Row{
		ID: name + "@" + short + ":" + c.path, Repo: name, Commit: c.commit, Path: c.path, Lang: LangOf(c.path),
		Message: c.subject, OldCode: string(old), NewCode: string(nw), UDiff: string(diff),
		NAdded: c.added, NRemoved: c.removed, NHunks: hunks,
	}, "", nil
}

// git runs git in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s in %s: %s", subcommand(args), dir, msg)
	}
	return out, nil
}

// subcommand returns the git subcommand among args, skipping "-c NAME=VALUE".
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			return args[i]
		}
	}
	return ""
}
