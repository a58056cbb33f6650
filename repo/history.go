package repo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// What the benchmarks read from a repository's history and trees besides
// files at a revision: commit lists, messages, parents, diffs and their
// numbers, trees with sizes, blobs in bulk, archives. Every git command
// of the module outside tests runs here.

// RevListOptions select the commits of [Repo.RevList].
type RevListOptions struct {
	// Reverse lists the oldest first; NoMerges leaves merges out.
	Reverse, NoMerges bool
}

// RevList lists the commits of revs (arguments as [RevListArgs] makes
// them) with git rev-list.
func (r *Repo) RevList(ctx context.Context, revs []string, o RevListOptions) ([]string, error) {
	args := []string{"rev-list"}
	if o.NoMerges {
		args = append(args, "--no-merges")
	}
	if o.Reverse {
		args = append(args, "--reverse")
	}
	out, err := r.output(ctx, append(append(args, revs...), "--")...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Parents returns the parents of commit (none for a root commit).
func (r *Repo) Parents(ctx context.Context, commit string) ([]string, error) {
	if err := checkRev(commit); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, "rev-list", "--parents", "-n1", commit, "--")
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return nil, fmt.Errorf("git rev-list: no commit %s", commit)
	}
	return f[1:], nil
}

// Message returns commit's message as git log --format=%B prints it.
func (r *Repo) Message(ctx context.Context, commit string) (string, error) {
	if err := checkRev(commit); err != nil {
		return "", err
	}
	out, err := r.output(ctx, "log", "-1", "--format=%B", commit, "--")
	return string(out), err
}

// CommitTime returns commit's committer time, in seconds since 1970.
func (r *Repo) CommitTime(ctx context.Context, commit string) (int64, error) {
	if err := checkRev(commit); err != nil {
		return 0, err
	}
	out, err := r.output(ctx, "show", "-s", "--format=%ct", commit, "--")
	if err != nil {
		return 0, err
	}
	t, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("committer time of %s: %w", commit, err)
	}
	return t, nil
}

// DiffOptions shape [Repo.Diff] and [Repo.NumStat].
type DiffOptions struct {
	// Renames detects renames (-M); without it there is none.
	Renames bool
	// Unquoted prints paths with bytes above 0x7f as they are
	// (core.quotePath=false); git still quotes a path with a control
	// character or a double quote.
	Unquoted bool
	// Paths limits the diff to these paths.
	Paths []string
}

// args is git's arguments for a diff command (cmd and its flags) from
// one commit to another.
func (o DiffOptions) args(from, to string, cmd ...string) []string {
	var args []string
	if o.Unquoted {
		args = append(args, "-c", "core.quotePath=false")
	}
	args = append(args, cmd...)
	if o.Renames {
		args = append(args, "-M")
	} else {
		args = append(args, "--no-renames")
	}
	return append(append(args, from, to, "--"), o.Paths...)
}

// Diff returns git's diff from one commit to another: no colour, no
// external diff or text conversion, prefixes a/ and b/ whatever the
// configuration says.
func (r *Repo) Diff(ctx context.Context, from, to string, o DiffOptions) ([]byte, error) {
	if err := checkRevs(from, to); err != nil {
		return nil, err
	}
	return r.output(ctx, o.args(from, to, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/")...)
}

// FileStat is one file of git's --numstat: lines added and removed
// (Binary, and both 0, for a binary file) and the path as git prints it
// (quoted where git quotes it; "old => new" for a rename).
type FileStat struct {
	Added, Removed int
	Binary         bool
	Path           string
}

// NumStat returns git diff --numstat from one commit to another.
func (r *Repo) NumStat(ctx context.Context, from, to string, o DiffOptions) ([]FileStat, error) {
	if err := checkRevs(from, to); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, o.args(from, to, "diff", "--numstat")...)
	if err != nil {
		return nil, err
	}
	var stats []FileStat
	for _, l := range strings.Split(string(out), "\n") {
		if s, ok := parseNumStat(l); ok {
			stats = append(stats, s)
		}
	}
	return stats, nil
}

// parseNumStat reads "ADDED\tREMOVED\tPATH" ("-" for a binary file's
// counts).
func parseNumStat(l string) (FileStat, bool) {
	parts := strings.SplitN(l, "\t", 3)
	if len(parts) != 3 {
		return FileStat{}, false
	}
	s := FileStat{Path: parts[2]}
	a, err1 := strconv.Atoi(parts[0])
	d, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		s.Binary = true
	} else {
		s.Added, s.Removed = a, d
	}
	return s, true
}

// Commit is one commit of [Repo.Log].
type Commit struct {
	ID      string
	Parents []string
	Subject string
	// Files are the commit's files against its first parent (none for a
	// merge), renames not detected.
	Files []FileStat
}

// Log walks the history of revs (arguments as [RevListArgs] makes them),
// newest first, merges left out, with each commit's numstat; paths as in
// DiffOptions.Unquoted.
func (r *Repo) Log(ctx context.Context, revs []string) ([]Commit, error) {
	args := []string{"-c", "core.quotePath=false", "log", "--no-merges", "--no-renames", "--no-color",
		"--format=%x01%H%x1f%P%x1f%s", "--numstat"}
	out, err := r.output(ctx, append(append(args, revs...), "--")...)
	if err != nil {
		return nil, err
	}
	var commits []Commit
	for _, chunk := range strings.Split(string(out), "\x01")[1:] {
		header, body, _ := strings.Cut(chunk, "\n")
		f := strings.SplitN(header, "\x1f", 3)
		if len(f) != 3 {
			continue
		}
		c := Commit{ID: f[0], Parents: strings.Fields(f[1]), Subject: f[2]}
		for _, l := range strings.Split(body, "\n") {
			if l == "" {
				continue
			}
			s, ok := parseNumStat(l)
			if !ok {
				// Kept as a file git printed but that cannot be read, so
				// that a caller counting files counts it.
				s = FileStat{Binary: true, Path: l}
			}
			c.Files = append(c.Files, s)
		}
		commits = append(commits, c)
	}
	return commits, nil
}

// Change is a file a commit changes: its status letter (A, M, D, T) and
// path.
type Change struct {
	Status, Path string
}

// Changes lists the files that differ from one commit to another, renames
// not detected (git diff-tree --name-status).
func (r *Repo) Changes(ctx context.Context, from, to string) ([]Change, error) {
	if err := checkRevs(from, to); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, "diff-tree", "-r", "--no-renames", "--name-status", "-z", from, to, "--")
	if err != nil {
		return nil, err
	}
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var changes []Change
	for i := 0; i+1 < len(fields); i += 2 {
		changes = append(changes, Change{Status: fields[i], Path: fields[i+1]})
	}
	return changes, nil
}

// TreeEntry is one entry of a tree listing: mode ("100644", "100755",
// "120000", "160000", ...), type (blob, commit), object id, size (-1 when
// git gives none) and path.
type TreeEntry struct {
	Mode, Type, ID string
	Size           int64
	Path           string
}

// Regular reports whether e is a regular file (executable or not).
func (e TreeEntry) Regular() bool {
	return e.Type == "blob" && (e.Mode == "100644" || e.Mode == "100755")
}

// Tree lists every entry of rev's tree, recursively, with sizes (git
// ls-tree -r -l --full-tree), in tree order.
func (r *Repo) Tree(ctx context.Context, rev string) ([]TreeEntry, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	out, err := r.output(ctx, "ls-tree", "-r", "-l", "-z", "--full-tree", rev, "--")
	if err != nil {
		return nil, err
	}
	var entries []TreeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		// <mode> SP <type> SP <id> SP+ <size> TAB <path>
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			size = -1 // "-" for a submodule
		}
		entries = append(entries, TreeEntry{Mode: f[0], Type: f[1], ID: f[2], Size: size, Path: string(p)})
	}
	return entries, nil
}

// Blobs reads the blobs ids in one pipelined exchange with a long-lived
// "git cat-file --batch" and calls fn with each in order: its index in
// ids and content, or ok false for a blob the repository lacks. A partial
// clone's missing blob is not fetched from its remote (one round trip a
// file): it is passed as missing. An error fn returns stops the read.
func (r *Repo) Blobs(ctx context.Context, ids []string, fn func(i int, content string, ok bool) error) error {
	if len(ids) == 0 {
		return nil
	}
	var fnErr error
	err := r.blobs.stream(ctx, ids, func(i int, h header, content string) error {
		if !h.missing && h.typ != "blob" {
			return fmt.Errorf("git cat-file: %s: a %s, not a blob", ids[i], h.typ)
		}
		fnErr = fn(i, content, !h.missing)
		return fnErr
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("repo: read blobs in %s: %w", r.name, err)
	}
	return err
}

// Export writes rev's tree into dest, an existing directory (git archive,
// unpacked by tar).
func (r *Repo) Export(ctx context.Context, rev, dest string) error {
	if err := checkRev(rev); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", `"$0" --git-dir="$1" archive "$2" | tar -x -C "$3"`, r.git, r.gitDir, rev, dest)
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("checkout of %s: %w: %s", rev, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ApplyInDir applies a patch text to the files of dir, which need not be
// a repository (git apply; a repository above dir is not used).
//
// enter, when given, is an argv prefix that runs git where dir is (a tree
// mounted in another namespace, entered by nsenter: see
// sandbox.EnterArgs); git takes its working directory's path, which from
// outside names the mount point under the tree, not the tree.
func ApplyInDir(ctx context.Context, dir, text string, enter ...string) error {
	// A restored environment has no .git: Command stops git from taking a
	// repository above it for the tree's.
	cmd := Command(ctx, dir, os.Environ(), "apply", "--whitespace=nowarn", "-")
	if len(enter) > 0 {
		cmd.Args = append(append(slices.Clip(enter), cmd.Path), cmd.Args[1:]...)
		cmd.Path = enter[0]
		cmd.Err = nil
	}
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git apply: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func checkRevs(revs ...string) error {
	for _, rev := range revs {
		if err := checkRev(rev); err != nil {
			return err
		}
	}
	return nil
}

// Command is git ARGS to run in dir, a plain directory (a case's tree, a
// restored environment) that git must not take for part of a repository
// above it: with env (the caller's choice: a fixed one to read git's
// messages from, or this process's) and GIT_CEILING_DIRECTORIES set to
// dir's parent. Every git run outside a Repo goes through it, so that
// this package is the one place git is run from (the apply peers that
// applybench and swe's official chain measure included).
func Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clip(env), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	return cmd
}
