package envstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/sandbox"
)

// BuildOptions says how to build environments.
type BuildOptions struct {
	// Setup is the setup command, run with /bin/sh -c at the root of a
	// clean checkout of the commit.
	Setup string
	// Runner runs the setup (bubblewrap: see package sandbox). The tree is
	// the command's writable work directory.
	Runner sandbox.Runner
	// Network lets the setup use the network.
	Network bool
	// Env holds extra KEY=value variables for the setup.
	Env []string
	// Timeout bounds each setup; zero means none.
	Timeout time.Duration
	// Limits are the setup's resource limits.
	Limits sandbox.Limits
	// Workers is how many commits are built at once; zero means one.
	Workers int
	// RetryFailed builds commits whose setup failed before; otherwise
	// they are skipped.
	RetryFailed bool
	// NoReuse hashes every file, even tracked files the setup did not
	// touch whose hash the store knows; it exists to measure what the
	// reuse saves.
	NoReuse bool
	// Progress, if set, is called after each commit (from any goroutine,
	// one call at a time).
	Progress func(BuildResult)

	// testHook, if set, is called at named points of a build (tests kill
	// the process there).
	testHook func(stage, tree string)
}

// Build statuses.
const (
	StatusBuilt         = "built"
	StatusSkipped       = "skipped"        // already stored
	StatusSkippedFailed = "skipped-failed" // setup failed before; see BuildOptions.RetryFailed
	StatusFailed        = "failed"         // the setup failed; recorded in DIR/failed
	StatusError         = "error"          // the build itself could not be done
)

// BuildResult is what happened to one commit.
type BuildResult struct {
	Commit string `json:"commit"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Files and Bytes count the regular files of the stored tree and
	// their total size; Dirs and Symlinks the rest; Skipped the entries
	// of other types (sockets, fifos, devices), left out, and
	// SkippedPaths names them with their type ("run/s (socket)"), the
	// first maxSkippedPaths of them.
	Files        int      `json:"files,omitempty"`
	Bytes        int64    `json:"bytes,omitempty"`
	Dirs         int      `json:"dirs,omitempty"`
	Symlinks     int      `json:"symlinks,omitempty"`
	Skipped      int      `json:"skipped,omitempty"`
	SkippedPaths []string `json:"skipped_paths,omitempty"`
	// NewObjects and NewBytes count the contents the store did not have.
	NewObjects int   `json:"new_objects,omitempty"`
	NewBytes   int64 `json:"new_bytes,omitempty"`
	// ReusedFiles and ReusedBytes count the tracked files whose hash came
	// from git's blob id (not read); HashedFiles and HashedBytes the files
	// read and hashed.
	ReusedFiles int   `json:"reused_files,omitempty"`
	ReusedBytes int64 `json:"reused_bytes,omitempty"`
	HashedFiles int   `json:"hashed_files,omitempty"`
	HashedBytes int64 `json:"hashed_bytes,omitempty"`
	// ExitCode is the setup's exit code.
	ExitCode int `json:"exit_code"`
	// Durations of the checkout, the setup and the snapshot (hashing,
	// storing, writing the manifest), in milliseconds.
	CheckoutMS int64 `json:"checkout_ms,omitempty"`
	SetupMS    int64 `json:"setup_ms,omitempty"`
	SnapshotMS int64 `json:"snapshot_ms,omitempty"`
}

// Build builds the environments of commits (revisions of r) in the store,
// opts.Workers at a time, and returns one result per commit in order. A
// commit whose setup fails, or whose build fails, does not stop the others;
// the error is for a ctx that ended (the results so far are returned).
func (s *Store) Build(ctx context.Context, r *repo.Repo, commits []string, opts BuildOptions) ([]BuildResult, error) {
	if opts.Setup == "" {
		return nil, errors.New("envstore: build: no setup command")
	}
	if opts.Runner == nil {
		return nil, errors.New("envstore: build: no sandbox runner")
	}
	workers := max(opts.Workers, 1)
	results := make([]BuildResult, len(commits))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var progress sync.Mutex
	for range min(workers, len(commits)) {
		wg.Go(func() {
			for i := range jobs {
				results[i] = s.buildOne(ctx, r, commits[i], &opts)
				if opts.Progress != nil {
					progress.Lock()
					opts.Progress(results[i])
					progress.Unlock()
				}
			}
		})
	}
	for i := range commits {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return results, fmt.Errorf("envstore: build: %w", err)
	}
	return results, nil
}

// Has reports whether the store holds the environment of commit (a full id).
func (s *Store) Has(commit string) bool {
	_, err := os.Stat(s.manifestPath(commit))
	return err == nil
}

func (s *Store) buildOne(ctx context.Context, r *repo.Repo, rev string, opts *BuildOptions) BuildResult {
	res := BuildResult{Commit: rev, ExitCode: -1}
	fail := func(err error) BuildResult {
		res.Status, res.Reason = StatusError, err.Error()
		return res
	}
	commit, err := r.ResolveCommit(ctx, rev)
	if err != nil {
		return fail(err)
	}
	res.Commit = commit
	skipped := func() (BuildResult, bool) {
		if s.Has(commit) {
			res.Status = StatusSkipped
			return res, true
		}
		if _, err := os.Stat(s.failurePath(commit)); err == nil && !opts.RetryFailed {
			res.Status, res.Reason = StatusSkippedFailed, "the setup failed before (see env ls); retry with --retry-failed"
			return res, true
		}
		return res, false
	}
	if r, ok := skipped(); ok {
		return r
	}
	// One build per commit at a time, across processes; the loser finds
	// the manifest.
	cl, err := s.acquire(ctx, "commit-"+commit, false)
	if err != nil {
		return fail(err)
	}
	defer cl.release()
	if r, ok := skipped(); ok {
		return r
	}
	gl, err := s.acquire(ctx, "gc.lock", true)
	if err != nil {
		return fail(err)
	}
	defer gl.release()

	work := s.tempName("build-" + commit[:min(12, len(commit))] + "-")
	if err := os.Mkdir(work, 0o755); err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	defer removeAll(work)
	start := time.Now()
	wt, err := r.AddWorktree(ctx, commit, filepath.Join(work, "tree"))
	if err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	defer wt.Remove(context.WithoutCancel(ctx))
	tree := wt.Dir
	// The tree is built and stored without .git: a restored tree has no
	// repository behind it, and the setup must not depend on one either.
	if err := os.Remove(filepath.Join(tree, ".git")); err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	epoch, env, err := setupEpoch(ctx, r, commit, opts.Env)
	if err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	env, hashSeed := setupHashSeed(env)
	if err := setTimes(tree, epoch); err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	tracked, err := trackedFiles(ctx, r, commit, tree)
	if err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	if err := waitClockPast(work, tracked); err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	res.CheckoutMS = time.Since(start).Milliseconds()

	start = time.Now()
	sres, err := opts.Runner.Run(ctx, sandbox.Command{
		Dir:     tree,
		Args:    []string{"/bin/sh", "-c", opts.Setup},
		Env:     env,
		Timeout: opts.Timeout,
		Network: opts.Network,
		Limits:  opts.Limits,
	})
	res.SetupMS = time.Since(start).Milliseconds()
	res.ExitCode = sres.ExitCode
	log := string(sres.Stdout) + string(sres.Stderr)
	if ctx.Err() != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, ctx.Err()))
	}
	if err != nil || sres.ExitCode != 0 || sres.TimedOut {
		f := &Failure{Commit: commit, Setup: opts.Setup, Runner: opts.Runner.Name(), Time: time.Now().UTC(),
			ExitCode: sres.ExitCode, TimedOut: sres.TimedOut, Log: log}
		switch {
		case err != nil:
			f.Error = err.Error()
			res.Reason = "the setup could not run: " + err.Error()
		case sres.TimedOut:
			res.Reason = fmt.Sprintf("the setup ran past %s", opts.Timeout)
		default:
			res.Reason = fmt.Sprintf("the setup exited with status %d", sres.ExitCode)
		}
		if werr := s.writeFailure(f); werr != nil {
			return fail(fmt.Errorf("envstore: build %s: record the failed setup: %w", commit, werr))
		}
		res.Status = StatusFailed
		return res
	}
	if opts.testHook != nil {
		opts.testHook("setup-done", tree)
	}

	start = time.Now()
	m := &Manifest{Commit: commit, Setup: opts.Setup, Runner: opts.Runner.Name(), Created: time.Now().UTC(),
		SetupMS: res.SetupMS, Log: log, SourceDateEpoch: epoch, PythonHashSeed: hashSeed}
	if err := s.snapshot(ctx, tree, tracked, opts, m, &res); err != nil {
		return fail(fmt.Errorf("envstore: build %s: %w", commit, err))
	}
	if opts.testHook != nil {
		opts.testHook("objects-stored", tree)
	}
	if err := s.writeManifest(m); err != nil {
		return fail(err)
	}
	res.SnapshotMS = time.Since(start).Milliseconds()
	os.Remove(s.failurePath(commit))
	res.Status = StatusBuilt
	return res
}

// setupEpoch returns the time a setup at commit runs at, in seconds since
// 1970, and the setup's environment: SOURCE_DATE_EPOCH as env sets it (the
// last setting wins) or else the commit's committer time, added to env.
// Tools that honour it (Python's byte-compiler writes hash-checked .pyc
// files, archivers and compilers stamp it instead of the clock) then write
// the same bytes for the same sources at every commit, and the store keeps
// them once. A value that is not a number is passed on as the user set it,
// and the commit's time dates the files.
func setupEpoch(ctx context.Context, r *repo.Repo, commit string, env []string) (int64, []string, error) {
	set, user := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SOURCE_DATE_EPOCH="); ok {
			set, user = v, true
		}
	}
	if t, err := strconv.ParseInt(set, 10, 64); user && err == nil && t >= 0 {
		return t, env, nil
	}
	t, err := r.CommitTime(ctx, commit)
	if err != nil {
		return 0, nil, err
	}
	if user {
		return t, env, nil
	}
	return t, append(slices.Clip(env), "SOURCE_DATE_EPOCH="+strconv.FormatInt(t, 10)), nil
}

// defaultHashSeed is the PYTHONHASHSEED a setup runs with unless env sets
// it. Python before 3.11 marshals a frozenset constant (`x in {"a", "b"}`
// compiles to one) in the iteration order of its strings, and string
// hashes are seeded at random in each process: the same module compiled
// twice gives different byte-code (in the last 61 click commits that
// Python 3.9 compiles, 8 of 63 modules had up to 61 .pyc versions for 3
// of their source). 0 turns the randomization off, as Debian's and Nix's
// package builds do.
const defaultHashSeed = "0"

// setupHashSeed returns env with PYTHONHASHSEED=defaultHashSeed added
// unless env sets it (the last setting wins; set empty, or to "random",
// Python seeds at random), and the value the setup runs with.
func setupHashSeed(env []string) ([]string, string) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PYTHONHASHSEED="); ok {
			return env, v
		}
	}
	return append(slices.Clip(env), "PYTHONHASHSEED="+defaultHashSeed), defaultHashSeed
}

// setTimes sets the access and modification times of everything in tree,
// not following symbolic links, to epoch: the checkout's times are then the
// commit's, not the clock's, and outputs that record a source's time
// (timestamp-checked .pyc files, archives) repeat from commit to commit.
func setTimes(tree string, epoch int64) error {
	ts := []unix.Timespec{unix.NsecToTimespec(epoch * 1e9), unix.NsecToTimespec(epoch * 1e9)}
	return filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("set the time of %s: %w", p, err)
		}
		return nil
	})
}

// statKey is what says a file has not changed: git's test, with the change
// time, which no system call can set back.
type statKey struct {
	ino, size    int64
	mtime, ctime int64
	mode         uint32
}

func keyOf(st *syscall.Stat_t) statKey {
	return statKey{
		ino: int64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		mode: st.Mode,
	}
}

// trackedFile is a regular file git checked out.
type trackedFile struct {
	blob string
	size int64 // the blob's size
	key  statKey
}

// trackedFiles lists commit's regular files with their blob ids and sizes
// (git ls-tree) and the state of each in tree after checkout.
func trackedFiles(ctx context.Context, r *repo.Repo, commit, tree string) (map[string]trackedFile, error) {
	entries, err := r.Tree(ctx, commit)
	if err != nil {
		return nil, err
	}
	files := map[string]trackedFile{}
	for _, e := range entries {
		if !e.Regular() || e.Size < 0 {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(tree, filepath.FromSlash(e.Path)), &st); err != nil {
			continue // not checked out (sparse, or a path git could not write)
		}
		files[e.Path] = trackedFile{blob: e.ID, size: e.Size, key: keyOf(&st)}
	}
	return files, nil
}

// waitClockPast returns once a file made in dir gets a change time later than
// every tracked file's, so that a setup's write to one of them cannot leave
// its times as they were.
func waitClockPast(dir string, files map[string]trackedFile) error {
	var latest int64
	for _, f := range files {
		latest = max(latest, f.key.ctime, f.key.mtime)
	}
	probe := filepath.Join(dir, "clock")
	for i := 0; ; i++ {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(probe, &st); err != nil {
			return err
		}
		os.Remove(probe)
		if st.Ctim.Nano() > latest {
			return nil
		}
		if i > 5000 {
			return errors.New("the file system clock does not advance")
		}
		time.Sleep(time.Millisecond)
	}
}

// fileJob is one regular file of the tree to hash and store.
type fileJob struct {
	entry int // index in the manifest's entries
	abs   string
	key   statKey
}

// snapshot records tree in m's entries and stores every file's content.
func (s *Store) snapshot(ctx context.Context, tree string, tracked map[string]trackedFile, opts *BuildOptions, m *Manifest, res *BuildResult) error {
	var jobs []fileJob
	// Walk first, hash after: storing a file makes its inode read-only,
	// and a second name of the same inode must still show the setup's
	// mode.
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(tree, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Path: rel, Mode: manifestMode(info.Mode())}
		switch {
		case info.IsDir():
			e.Type = TypeDir
			res.Dirs++
		case info.Mode()&fs.ModeSymlink != 0:
			e.Type, e.Mode = TypeSymlink, 0
			if e.Target, err = os.Readlink(p); err != nil {
				return err
			}
			res.Symlinks++
		case info.Mode().IsRegular():
			e.Type, e.Size = TypeFile, info.Size()
			jobs = append(jobs, fileJob{entry: len(m.Entries), abs: p, key: keyOf(info.Sys().(*syscall.Stat_t))})
			res.Files++
			res.Bytes += e.Size
		default:
			res.Skipped++
			if len(res.SkippedPaths) < maxSkippedPaths {
				res.SkippedPaths = append(res.SkippedPaths, rel+" ("+typeName(info.Mode())+")")
			}
			return nil
		}
		m.Entries = append(m.Entries, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk the tree: %w", err)
	}

	known := s.knownBlobs()
	var mu sync.Mutex
	var learned []string // "blob sha256" lines for the gitmap
	err = forEach(ctx, runtime.GOMAXPROCS(0), jobs, func(j fileJob, buf []byte) error {
		e := &m.Entries[j.entry]
		tf, isTracked := tracked[e.Path]
		unchanged := isTracked && tf.key == j.key && tf.size == e.Size
		hash, reused := "", false
		if unchanged && !opts.NoReuse {
			hash, reused = known[tf.blob]
		}
		if !reused {
			h, err := hashFile(j.abs, e.Size, buf)
			if err != nil {
				return fmt.Errorf("hash %s: %w", e.Path, err)
			}
			hash = h
		}
		e.Hash = hash
		added, err := s.ingest(j.abs, hash, e.exec(), buf)
		if err != nil {
			return fmt.Errorf("store %s: %w", e.Path, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if reused {
			res.ReusedFiles++
			res.ReusedBytes += e.Size
		} else {
			res.HashedFiles++
			res.HashedBytes += e.Size
			if unchanged && known[tf.blob] == "" {
				learned = append(learned, tf.blob+" "+hash+"\n")
			}
		}
		if added {
			res.NewObjects++
			res.NewBytes += e.Size
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.learnBlobs(learned)
}

// maxSkippedPaths bounds BuildResult.SkippedPaths: a setup that leaves a
// million sockets gets a count, not a million names.
const maxSkippedPaths = 100

// typeName names the type of a file that is not a regular file, directory
// or symbolic link.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "irregular file"
}

// hashFile returns the hex SHA-256 of the file at p, which must hold size
// bytes.
func hashFile(p string, size int64, buf []byte) (string, error) {
	h, n, err := hashObject(p, buf)
	if err != nil {
		return "", err
	}
	if n != size {
		return "", fmt.Errorf("size changed from %d to %d bytes while being stored", size, n)
	}
	return h, nil
}

// ingest makes the file at src the store's object for hash, unless the store
// has it. In a store of format 3 the object is stored compressed where that
// is worth it (see compress.go); else the file itself becomes the object (a
// hard link: the build tree is in DIR/tmp, on the store's file system),
// made read-only first. Either is then linked to its final name, which
// fails if another build got there first.
func (s *Store) ingest(src, hash string, exec bool, buf []byte) (bool, error) {
	if s.hasObject(hash, exec) {
		return false, nil
	}
	obj := s.objectPath(hash, exec)
	if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
		return false, err
	}
	tmp := ""
	if s.compress.Load() {
		z, h, _, err := s.compressTemp(src, buf)
		if err != nil {
			return false, err
		}
		if z != "" && h != hash {
			os.Remove(z)
			return false, fmt.Errorf("changed while being stored (hashes to %s, was %s)", h, hash)
		}
		if z != "" {
			tmp, obj = z, s.compressedPath(hash, exec)
		}
	}
	if tmp == "" {
		tmp = s.tempName("obj-")
		if err := os.Link(src, tmp); err != nil {
			return false, err
		}
		if err := os.Chmod(tmp, objectMode(exec)); err != nil {
			os.Remove(tmp)
			return false, err
		}
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, obj); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// knownBlobs returns the blob id -> SHA-256 map, reading DIR/gitmap the
// first time. Lines that do not parse (none should) are ignored.
func (s *Store) knownBlobs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gitmap == nil {
		s.gitmap = map[string]string{}
		if f, err := os.Open(filepath.Join(s.dir, "gitmap")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				blob, hash, ok := strings.Cut(sc.Text(), " ")
				if ok && len(blob) >= 40 && isHash(hash) {
					s.gitmap[blob] = hash
				}
			}
			f.Close()
		}
	}
	m := make(map[string]string, len(s.gitmap))
	for k, v := range s.gitmap {
		m[k] = v
	}
	return m
}

// learnBlobs appends blob -> SHA-256 lines to DIR/gitmap, but for blobs
// the map has (builds running at once learn the same unchanged files: 148
// of 704 lines were repeats in a 100-commit click store built two at a
// time). One write with O_APPEND: concurrent builds do not interleave
// lines.
func (s *Store) learnBlobs(lines []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	lines = slices.DeleteFunc(lines, func(l string) bool {
		blob, _, _ := strings.Cut(l, " ")
		dup := seen[blob] || s.gitmap[blob] != ""
		seen[blob] = true
		return dup
	})
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "gitmap"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		f.Close()
		return err
	}
	for _, l := range lines {
		blob, hash, _ := strings.Cut(strings.TrimSpace(l), " ")
		s.gitmap[blob] = hash
	}
	return f.Close()
}

// Revisions turns a --commits argument into revisions of r: the lines of a
// file if spec names one (blank lines and # comments skipped), the commits
// of a git rev-list range, oldest first, if spec has ".." or "^", or else
// comma-separated revisions.
//
// A revision that begins with '-' is refused in every form, so that none
// reaches git as an option (see repo.RevListArgs). Each named revision is
// resolved to its commit here, so that one naming none (the error wraps
// repo.ErrUnknownRevision and names it) is found before anything is built
// or made.
func Revisions(ctx context.Context, r *repo.Repo, spec string) ([]string, error) {
	if b, err := os.ReadFile(spec); err == nil {
		var out []string
		for i, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				c, err := resolveRevision(ctx, r, line)
				if err != nil {
					return nil, fmt.Errorf("envstore: --commits %s line %d: %w", spec, i+1, err)
				}
				out = append(out, c)
			}
		}
		return out, nil
	}
	if strings.Contains(spec, "..") || strings.Contains(spec, "^") {
		args, err := repo.RevListArgs(spec)
		if err != nil {
			return nil, fmt.Errorf("envstore: --commits: %w", err)
		}
		revs, err := r.RevList(ctx, args, repo.RevListOptions{Reverse: true})
		if err != nil {
			return nil, fmt.Errorf("envstore: %s: %w", spec, err)
		}
		return revs, nil
	}
	var out []string
	for _, rev := range strings.Split(spec, ",") {
		if rev = strings.TrimSpace(rev); rev != "" {
			c, err := resolveRevision(ctx, r, rev)
			if err != nil {
				return nil, fmt.Errorf("envstore: --commits: %w", err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// resolveRevision checks rev and returns the commit it names.
func resolveRevision(ctx context.Context, r *repo.Repo, rev string) (string, error) {
	if err := repo.CheckRevision(rev); err != nil {
		return "", err
	}
	c, err := r.ResolveCommit(ctx, rev)
	if errors.Is(err, repo.ErrUnknownRevision) {
		return "", fmt.Errorf("revision %q: %w", rev, repo.ErrUnknownRevision)
	} else if err != nil {
		return "", err
	}
	return c, nil
}
