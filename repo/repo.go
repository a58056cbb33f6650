// Package repo gives fast, read-mostly access to git repositories through the
// git binary.
//
// A [Repo] is one repository, bare or not. Base files are read through one
// long-lived "git cat-file --batch" process per repository (plus a
// "--batch-check" process for existence and revision queries, and one that
// streams the trees and blobs of [Repo.Files] and [Repo.Blobs]), so a read
// costs one pipe round trip rather than a process start. Both processes are started
// on first use, are safe for concurrent use (requests are serialized by a
// mutex) and are restarted transparently if they die.
//
// Nothing in the patch stage checks anything out. Worktrees
// ([Repo.AddWorktree]) exist only for the test stage and are removed
// afterwards with [Worktree.Remove].
//
// A [Store] maps a --repos directory to repositories: DIR/OWNER/NAME (also
// DIR/OWNER/NAME.git and DIR/OWNER__NAME) is a git repository; a missing one
// is cloned once, as a mirror, from https://github.com/OWNER/NAME.
//
// Errors say what failed and where ("repo: read HEAD:foo.go in django/django:
// file does not exist"). A path absent at a revision wraps [fs.ErrNotExist];
// a revision that does not resolve wraps [ErrUnknownRevision].
package repo

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrUnknownRevision is wrapped by errors about a revision (commit, tag,
// branch, abbreviated hash) that does not name an object in the repository.
var ErrUnknownRevision = errors.New("unknown revision")

// ErrClosed is wrapped by errors from a [Repo] or [Store] used after Close.
var ErrClosed = errors.New("closed")

// Repo is one git repository, bare or not. Its methods are safe for
// concurrent use. Close it to stop its git processes.
type Repo struct {
	name   string // for messages: "owner/name" or the directory
	gitDir string // absolute path of the git directory
	git    string // path of the git binary
	batch  *catFile
	check  *catFile
	// blobs reads blobs and trees for Blobs and Files without fetching
	// a partial clone's missing objects from its remote.
	blobs *catFile
	trees treeCache
	// wtMu serializes changes to the worktree list in this process; see
	// lockWorktrees.
	wtMu sync.Mutex
}

// Open opens the git repository at dir: a bare repository, or the top level
// of a working tree. It does not search parent directories, so a directory
// that is not itself a repository is an error even when it lies inside one.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("repo: open %s: %w", dir, err)
	}
	return open(ctx, abs, abs)
}

func open(ctx context.Context, dir, name string) (*Repo, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("repo: open %s: %w", name, err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("repo: open %s: %w", name, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("repo: open %s: %s is not a directory", name, dir)
	}
	cmd := exec.CommandContext(ctx, git, "rev-parse", "--is-bare-repository", "--absolute-git-dir")
	cmd.Dir = dir
	// Never discover a repository above dir.
	cmd.Env = append(gitEnv(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("repo: open %s: not a git repository: %w", name, gitError(err, stderr.Bytes()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("repo: open %s: unexpected rev-parse output %q", name, out)
	}
	bare, gitDir := lines[0] == "true", lines[1]
	// In a non-bare repository, dir must be the top of the working tree
	// (rev-parse also succeeds in a subdirectory or inside .git).
	if !bare {
		top, err := gitOutput(ctx, git, dir, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, fmt.Errorf("repo: open %s: %w", name, err)
		}
		if !sameDir(strings.TrimSpace(string(top)), dir) {
			return nil, fmt.Errorf("repo: open %s: %s is not the top of a working tree", name, dir)
		}
	}
	r := &Repo{name: name, gitDir: gitDir, git: git}
	r.batch = &catFile{git: git, gitDir: gitDir, mode: "--batch"}
	r.check = &catFile{git: git, gitDir: gitDir, mode: "--batch-check"}
	r.blobs = &catFile{git: git, gitDir: gitDir, mode: "--batch", env: []string{"GIT_NO_LAZY_FETCH=1"}}
	return r, nil
}

// Name returns the name used in error messages: "owner/name" for a
// repository from a [Store], the directory otherwise.
func (r *Repo) Name() string { return r.name }

// GitDir returns the absolute path of the repository's git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// Close stops the repository's git processes. Reads after Close fail with an
// error wrapping [ErrClosed]; worktrees stay usable and removable.
func (r *Repo) Close() error {
	return errors.Join(r.batch.close(), r.check.close(), r.blobs.close())
}

// ReadFile returns the content of the file at path in revision rev (a commit,
// tag, branch or abbreviated hash). path is relative to the repository root
// and uses forward slashes. If rev has no such path the error wraps
// [fs.ErrNotExist]; if rev itself is unknown it wraps [ErrUnknownRevision].
// Symbolic links read as their target, as git stores them.
func (r *Repo) ReadFile(ctx context.Context, rev, p string) ([]byte, error) {
	obj, err := r.object(rev, p)
	if err != nil {
		return nil, fmt.Errorf("repo: read %s:%s in %s: %w", rev, p, r.name, err)
	}
	var h header
	var data []byte
	if strings.Contains(obj, "\n") {
		// cat-file --batch reads names one a line: look the entry up with
		// ls-tree and read it by object id.
		var id string
		id, err = r.lsTreeEntry(ctx, rev, cleanPath(p))
		if err == nil {
			h, data, err = r.batch.request(ctx, id, true)
		}
	} else {
		h, data, err = r.batch.request(ctx, obj, true)
	}
	if err == nil && h.missing {
		err = r.missing(ctx, rev)
	}
	if err == nil && h.typ != "blob" {
		if h.typ == "tree" {
			err = errors.New("is a directory")
		} else {
			err = fmt.Errorf("is a %s, not a file", h.typ)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("repo: read %s:%s in %s: %w", rev, p, r.name, err)
	}
	return data, nil
}

// Exists reports whether path names an entry (file, symbolic link or
// directory) in revision rev. It is an error, wrapping [ErrUnknownRevision],
// if rev is unknown. Submodule entries whose commit is not in this
// repository report false.
func (r *Repo) Exists(ctx context.Context, rev, p string) (bool, error) {
	obj, err := r.object(rev, p)
	if err != nil {
		return false, fmt.Errorf("repo: stat %s:%s in %s: %w", rev, p, r.name, err)
	}
	var h header
	if strings.Contains(obj, "\n") {
		_, err = r.lsTreeEntry(ctx, rev, cleanPath(p))
		if errors.Is(err, fs.ErrNotExist) {
			h.missing, err = true, nil
		}
	} else {
		h, _, err = r.check.request(ctx, obj, false)
	}
	if err == nil && h.missing {
		if err = r.missing(ctx, rev); errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("repo: stat %s:%s in %s: %w", rev, p, r.name, err)
	}
	return true, nil
}

// ResolveCommit returns the full hexadecimal object name of the commit that
// rev names. rev may be an abbreviated hash (as short as git allows and
// unambiguous), a branch, a tag or any other revision without a colon.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	id, err := r.resolve(ctx, rev, "commit")
	if err != nil {
		return "", fmt.Errorf("repo: resolve %s in %s: %w", rev, r.name, err)
	}
	return id, nil
}

// resolve peels rev to an object of type typ (commit or tree) and returns its
// id.
func (r *Repo) resolve(ctx context.Context, rev, typ string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	h, _, err := r.check.request(ctx, rev+"^{"+typ+"}", false)
	if err != nil {
		return "", err
	}
	if h.missing {
		return "", ErrUnknownRevision
	}
	return h.id, nil
}

// ListFiles returns the path of every entry in the tree of revision rev,
// recursively, in git's order: files, symbolic links and submodules, not
// directories.
func (r *Repo) ListFiles(ctx context.Context, rev string) ([]string, error) {
	tree, err := r.resolve(ctx, rev, "tree")
	if err != nil {
		return nil, fmt.Errorf("repo: list %s in %s: %w", rev, r.name, err)
	}
	out, err := r.output(ctx, "ls-tree", "-r", "-z", "--full-tree", "--name-only", tree)
	if err != nil {
		return nil, fmt.Errorf("repo: list %s in %s: %w", rev, r.name, err)
	}
	files := strings.Split(string(out), "\x00")
	if files[len(files)-1] == "" {
		files = files[:len(files)-1]
	}
	return files, nil
}

// object returns the cat-file object name for path p at rev.
func (r *Repo) object(rev, p string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	if err := checkPath(p); err != nil {
		return "", err
	}
	return rev + ":" + cleanPath(p), nil
}

// missing explains why rev:path is missing: rev is unknown, or the path is
// not in it.
func (r *Repo) missing(ctx context.Context, rev string) error {
	h, _, err := r.check.request(ctx, rev+"^{tree}", false)
	switch {
	case err != nil:
		return err
	case h.missing:
		return ErrUnknownRevision
	}
	return fs.ErrNotExist
}

// lsTreeEntry returns the object id of the entry at p in rev, for paths that
// cat-file cannot be given.
func (r *Repo) lsTreeEntry(ctx context.Context, rev, p string) (string, error) {
	tree, err := r.resolve(ctx, rev, "tree")
	if err != nil {
		return "", err
	}
	out, err := r.output(ctx, "--literal-pathspecs", "ls-tree", "-z", "--full-tree", tree, "--", p)
	if err != nil {
		return "", err
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		// <mode> SP <type> SP <object> TAB <file>
		meta, name, ok := strings.Cut(rec, "\t")
		if !ok || name != p {
			continue
		}
		if f := strings.Fields(meta); len(f) == 3 {
			return f[2], nil
		}
	}
	return "", fs.ErrNotExist
}

// output runs git with args against the repository and returns its stdout.
func (r *Repo) output(ctx context.Context, args ...string) ([]byte, error) {
	return gitOutput(ctx, r.git, "", append([]string{"--git-dir=" + r.gitDir}, args...)...)
}

// gitOutput runs git with args in dir and returns its stdout; the error holds
// the tail of stderr.
func gitOutput(ctx context.Context, git, dir string, args ...string) ([]byte, error) {
	return gitOutputEnv(ctx, git, dir, nil, args...)
}

// gitOutputEnv is gitOutput with extra environment variables.
func gitOutputEnv(ctx context.Context, git, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, git, args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", firstArg(args), ctx.Err())
		}
		return nil, fmt.Errorf("git %s: %w", firstArg(args), gitError(err, stderr.Bytes()))
	}
	return out, nil
}

// firstArg returns the git subcommand in args, skipping global options.
func firstArg(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++ // skip the option's value
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}

// gitError combines a process error with the last lines of git's stderr.
func gitError(err error, stderr []byte) error {
	msg := strings.TrimSpace(string(stderr))
	if len(msg) > 2000 {
		msg = "..." + msg[len(msg)-2000:]
	}
	if msg == "" {
		return err
	}
	return fmt.Errorf("%w: %s", err, msg)
}

// gitEnv returns the environment for git commands: the process environment
// without the variables that would point git at another repository, and
// without prompts.
func gitEnv() []string {
	drop := map[string]bool{
		"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
		"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
		"GIT_COMMON_DIR": true, "GIT_NAMESPACE": true, "GIT_PREFIX": true,
		"GIT_CEILING_DIRECTORIES": true, "GIT_QUARANTINE_PATH": true,
		"GIT_GRAFT_FILE": true, "GIT_REPLACE_REF_BASE": true,
		"GIT_NO_REPLACE_OBJECTS": true, "GIT_IMPLICIT_WORK_TREE": true,
		"GIT_SHALLOW_FILE": true, "GIT_CONFIG": true, "GIT_CONFIG_PARAMETERS": true,
		"GIT_CONFIG_COUNT": true, "GIT_TERMINAL_PROMPT": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

// checkRev rejects revisions that cannot be combined with a path in a
// cat-file request or given as a command argument.
// CheckRevision refuses what cannot be a single revision given to git: an
// empty one, one that begins with '-' (git would read an option), one with
// a colon, a space or a control character.
func CheckRevision(rev string) error { return checkRev(rev) }

func checkRev(rev string) error {
	switch {
	case rev == "":
		return errors.New("empty revision")
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("invalid revision %q: starts with '-'", rev)
	case strings.ContainsAny(rev, ":\n\r\t\x00 "):
		return fmt.Errorf("invalid revision %q: contains a colon, space or control character", rev)
	}
	return nil
}

// checkPath rejects paths that do not name something inside the tree.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path: %w", fs.ErrInvalid)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("absolute path: %w", fs.ErrInvalid)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path contains NUL: %w", fs.ErrInvalid)
	}
	if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Errorf("path leaves the tree: %w", fs.ErrInvalid)
	}
	return nil
}

// cleanPath returns p cleaned; "./" and "../" prefixes would otherwise be
// taken relative to git's working directory in a rev:path name.
func cleanPath(p string) string {
	c := path.Clean(p)
	if c == "." {
		return ""
	}
	return c
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Lstat returns the git mode of the entry at path p in revision rev
// (0o100644 or 0o100755 for a file, 0o120000 for a symbolic link, 0o040000
// for a directory, 0o160000 for a submodule) and, for a symbolic link, its
// target. Links are not followed: a path beyond one wraps fs.ErrNotExist,
// as does a missing path. It reads the tree of p's directory through the
// cat-file process, so it costs a pipe round trip, not a process start.
func (r *Repo) Lstat(ctx context.Context, rev, p string) (uint32, string, error) {
	mode, id, err := r.lstat(ctx, rev, p)
	if err == nil && mode == 0o120000 {
		var h header
		var data []byte
		if h, data, err = r.batch.request(ctx, id, true); err == nil && h.missing {
			err = fmt.Errorf("object %s is missing", id)
		}
		if err == nil {
			return mode, string(data), nil
		}
	}
	if err != nil {
		return 0, "", fmt.Errorf("repo: lstat %s:%s in %s: %w", rev, p, r.name, err)
	}
	return mode, "", nil
}

func (r *Repo) lstat(ctx context.Context, rev, p string) (uint32, string, error) {
	if err := checkRev(rev); err != nil {
		return 0, "", err
	}
	if err := checkPath(p); err != nil {
		return 0, "", err
	}
	p = cleanPath(p)
	if strings.Contains(p, "\n") {
		// cat-file reads names one a line: ask ls-tree.
		tree, err := r.resolve(ctx, rev, "tree")
		if err != nil {
			return 0, "", err
		}
		out, err := r.output(ctx, "--literal-pathspecs", "ls-tree", "-z", "--full-tree", tree, "--", p)
		if err != nil {
			return 0, "", err
		}
		for _, rec := range strings.Split(string(out), "\x00") {
			meta, name, ok := strings.Cut(rec, "\t")
			if f := strings.Fields(meta); ok && name == p && len(f) == 3 {
				mode, err := strconv.ParseUint(f[0], 8, 32)
				return uint32(mode), f[2], err
			}
		}
		return 0, "", fs.ErrNotExist
	}
	dir, base := path.Split(p)
	h, data, err := r.batch.request(ctx, rev+":"+strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return 0, "", err
	}
	if h.missing {
		return 0, "", r.missing(ctx, rev)
	}
	if h.typ != "tree" {
		return 0, "", fs.ErrNotExist // beyond a file or a link
	}
	return treeEntry(data, base, len(h.id)/2)
}

// treeEntry finds name in a raw tree object (see [eachTreeEntry]).
func treeEntry(data []byte, name string, idLen int) (uint32, string, error) {
	var mode uint32
	var id string
	err := eachTreeEntry(string(data), idLen, func(m uint32, n, raw string) bool {
		if n == name {
			mode, id = m, hex.EncodeToString([]byte(raw))
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return 0, "", err
	case id == "":
		return 0, "", fs.ErrNotExist
	}
	return mode, id, nil
}

// LstatMode is [Repo.Lstat] with the mode as an fs.FileMode, in the shape
// patch.CheckLinks reads: fs.ModeSymlink with the target for a link,
// fs.ModeDir for a directory, 0 for a file. A submodule wraps
// fs.ErrNotExist: its files are not in this repository, so nothing under
// it can be read (or should be written).
func (r *Repo) LstatMode(ctx context.Context, rev, p string) (fs.FileMode, string, error) {
	mode, target, err := r.Lstat(ctx, rev, p)
	if err != nil {
		return 0, "", err
	}
	switch mode & 0o170000 {
	case 0o120000:
		return fs.ModeSymlink, target, nil
	case 0o040000:
		return fs.ModeDir, "", nil
	case 0o160000:
		return 0, "", fmt.Errorf("repo: lstat %s:%s in %s: a submodule: %w", rev, p, r.name, fs.ErrNotExist)
	}
	return 0, "", nil
}

// RevListArgs turns a user's commit range (git rev-list syntax: words
// separated by white space, each a revision or a range such as A..B, A...B
// or ^A) into arguments for git rev-list or git log: an optional count
// (-n N, -nN or --max-count=N) and then, after --end-of-options, the
// revisions. Any other word that begins with '-' is refused, and git
// reads nothing after --end-of-options as an option, so that no value a
// user gives reaches git as an option (--output=FILE would write a file).
func RevListArgs(spec string) ([]string, error) {
	words := strings.Fields(spec)
	var count, revs []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-n" && i+1 < len(words) && isCount(words[i+1]):
			count = append(count, "--max-count="+words[i+1])
			i++
		case strings.HasPrefix(w, "-n") && isCount(w[2:]):
			count = append(count, "--max-count="+w[2:])
		case strings.HasPrefix(w, "--max-count=") && isCount(w[len("--max-count="):]):
			count = append(count, w)
		case strings.HasPrefix(w, "-"):
			return nil, fmt.Errorf("commit range %q: %q is not a revision (only -n N may come before the revisions)", spec, w)
		default:
			revs = append(revs, w)
		}
	}
	if len(revs) == 0 {
		return nil, fmt.Errorf("commit range %q names no revision", spec)
	}
	return append(append(count, "--end-of-options"), revs...), nil
}

func isCount(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
