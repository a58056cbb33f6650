package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/patchbench/patchbench/internal/flock"
)

// ErrRunDir is wrapped by the errors about a run directory that are the
// user's to fix: an --out that holds something else, a run directory in
// use by another process, a resume that differs from the run recorded, a
// symbolic link where a run file belongs. Commands exit 2 on it.
var ErrRunDir = errors.New("run directory cannot be used")

// runDirError is an error about a run directory: its text is the message
// alone, and it wraps ErrRunDir (and the cause, if any).
type runDirError struct{ err error }

func (e *runDirError) Error() string   { return e.err.Error() }
func (e *runDirError) Unwrap() []error { return []error{ErrRunDir, e.err} }
func dirErrorf(format string, args ...any) error {
	return &runDirError{fmt.Errorf(format, args...)}
}

// LockFile is the file of a run directory its holder locks; it names the
// holder (pid, command, start time).
const LockFile = ".lock"

// DirOptions say how [OpenDir] may take a run directory.
type DirOptions struct {
	// Command names the holder in the lock file, for example the program
	// and subcommand (never its arguments, which may hold secrets); ""
	// means the program's name.
	Command string
	// ResultsFile is the name of the run's results file; a directory
	// holding it or run.json is a run directory.
	ResultsFile string
	// New asks for a directory that holds no run: missing or empty (as
	// merge and the --out of a rescore need).
	New bool
	// Resume continues the run in the directory; Force starts it over.
	// Without either, a run directory whose results file has rows is
	// refused.
	Resume, Force bool
}

// Dir is a run directory held by this process: an exclusive flock(2) on
// its lock file, which the kernel drops when the process ends, so a crash
// leaves no stale lock.
type Dir struct {
	// Path is the directory; Created is set when OpenDir made it.
	Path    string
	Created bool
	lock    *flock.Lock
	// lockMade is set when OpenDir made the lock file.
	lockMade bool
}

// Release drops the lock. A run refused after OpenDir (an input found
// bad, a model that cannot be opened) writes nothing, and then Release
// takes back what OpenDir made, the lock file and the directory, while it
// still holds the lock: a refusal changes nothing. Later calls do nothing.
func (d *Dir) Release() {
	if d == nil || d.lock == nil {
		return
	}
	if d.lockMade && holdsOnlyLock(d.Path) {
		if os.Remove(filepath.Join(d.Path, LockFile)) == nil && d.Created {
			os.Remove(d.Path)
		}
	}
	d.lock.Release()
	d.lock = nil
}

// holdsOnlyLock reports whether dir holds nothing but its lock file.
func holdsOnlyLock(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) == 1 && ents[0].Name() == LockFile
}

// OpenDir makes dir ready to hold a run for this process, creating it
// when missing, and locks it. It refuses, changing nothing, with an error
// wrapping [ErrRunDir]:
//   - dir or a run file in it that is a symbolic link, or dir a file;
//   - a directory holding anything but a run (a run has run.json, the
//     results file or the response cache), and with New any run at all;
//   - a run whose results file has rows, without Resume or Force;
//   - a directory another process holds (the error names it).
func OpenDir(dir string, o DirOptions) (*Dir, error) {
	if dir == "" {
		return nil, dirErrorf("no directory given")
	}
	created, lockMade := false, true
	var l *flock.Lock
	if _, err := os.Lstat(filepath.Join(dir, LockFile)); err == nil {
		lockMade = false
		// Another holder is the first thing to tell, whatever the
		// directory holds while it writes.
		if l, err = lockDir(dir); err != nil {
			return nil, err
		}
	}
	err := checkDir(dir, o)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
		created = true
		err = nil
	}
	if err == nil && l == nil {
		if l, err = lockDir(dir); err == nil {
			// A second look once the lock is held: the holder before
			// may have written a run into the directory meanwhile.
			err = checkDir(dir, o)
		}
	}
	if err == nil {
		err = writeHolder(l, o.Command)
	}
	if err != nil {
		if l != nil {
			l.Release()
		}
		return nil, err
	}
	return &Dir{Path: dir, Created: created, lock: l, lockMade: lockMade}, nil
}

// CheckDir is the check of OpenDir without creating or locking anything:
// for a command that validates its inputs before it takes the directory.
// A missing dir passes.
func CheckDir(dir string, o DirOptions) error {
	if err := CheckIdle(dir, outHint); err != nil {
		return err
	}
	if err := checkDir(dir, o); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// CheckIdle fails, naming the holder and ending with hint, when another
// process holds the run directory dir: a run still being written is not
// whole yet, so a command that reads it as a finished run refuses it. It
// writes nothing into dir.
func CheckIdle(dir, hint string) error {
	if _, err := os.Lstat(filepath.Join(dir, LockFile)); err != nil {
		return nil // never held: no lock file to probe, and none made
	}
	return probeLock(dir, hint)
}

// outHint ends the refusal of a held --out.
const outHint = "wait for it to end or give another --out"

// probeLock fails, naming the holder and ending with hint, when another
// process holds dir.
func probeLock(dir, hint string) error {
	l, err := flock.TryAcquire(filepath.Join(dir, LockFile))
	if errors.Is(err, flock.ErrBusy) {
		return busyError(dir, hint)
	}
	if err == nil {
		l.Release()
	}
	return nil
}

func busyError(dir, hint string) error {
	holder, _ := os.ReadFile(filepath.Join(dir, LockFile))
	h := strings.TrimSpace(string(holder))
	if h == "" {
		h = "another process"
	}
	return dirErrorf("%s is in use by %s; %s", dir, h, hint)
}

// checkDir checks what dir holds against o; fs.ErrNotExist when missing.
func checkDir(dir string, o DirOptions) error {
	info, err := os.Lstat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("runner: %w", err)
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return dirErrorf("%s is a symbolic link; give the directory it points to", dir)
	case !info.IsDir():
		return dirErrorf("--out %s is a file, not a run directory; give another --out", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	var names []string
	isRun := false
	for _, e := range ents {
		switch e.Name() {
		case LockFile:
			continue
		case RunFile, o.ResultsFile, CacheFile:
			// The response cache counts: a run makes it before run.json.
			isRun = true
			if e.Type()&fs.ModeSymlink != 0 {
				return dirErrorf("%s is a symbolic link; a run file is never followed", filepath.Join(dir, e.Name()))
			}
		}
		names = append(names, e.Name())
	}
	switch {
	case len(names) == 0:
		return nil
	case !isRun:
		return dirErrorf("--out %s holds something else (%s), not a run; give a missing or empty directory", dir, listNames(names))
	case o.New:
		return dirErrorf("--out %s already holds a run; give a missing or empty directory", dir)
	case o.Resume || o.Force || o.ResultsFile == "":
		return nil
	}
	if info, err := os.Lstat(filepath.Join(dir, o.ResultsFile)); err == nil && info.Size() > 0 {
		return dirErrorf("%s already holds a run: --resume to continue it, --force to start over, or another --out", filepath.Join(dir, o.ResultsFile))
	}
	return nil
}

func listNames(names []string) string {
	slices.Sort(names)
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// lockDir takes the exclusive lock of dir without waiting; a held lock is
// refused naming its holder.
func lockDir(dir string) (*flock.Lock, error) {
	p := filepath.Join(dir, LockFile)
	l, err := flock.TryAcquire(p)
	if errors.Is(err, flock.ErrBusy) {
		return nil, busyError(dir, outHint)
	}
	if err != nil {
		return nil, dirErrorf("%w", err)
	}
	// A refused run removes the lock file it made while holding it (see
	// Dir.Release): a lock taken on the file it removed is no lock.
	if !l.Is(p) {
		l.Release()
		return nil, busyError(dir, outHint)
	}
	return l, nil
}

// writeHolder writes who holds l into its file, for the processes it
// refuses.
func writeHolder(l *flock.Lock, command string) error {
	if command == "" {
		// The program's name only: its arguments may hold what should not
		// be written down.
		command = filepath.Base(os.Args[0])
	}
	holder := fmt.Sprintf("pid %d (%s), started %s\n", os.Getpid(), command, time.Now().UTC().Format(time.RFC3339))
	if err := l.Rewrite([]byte(holder)); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

// RecordRun writes info (a value that marshals to a JSON object) as
// dir/run.json, the run's identity. With resume, a run.json already there
// must agree with info in every field but "started", "limit" and those of
// ignore (paths that may move, worker counts): a resume that differs is refused,
// writing nothing, with an error wrapping [ErrRunDir] naming the fields.
// An input identified by its hash (a field NAME_sha256 beside its path
// NAME, the path in ignore) is compared by its path when the recorded
// run.json predates the hash.
func RecordRun(dir string, info any, resume bool, ignore ...string) error {
	if resume {
		b, err := readNoFollow(filepath.Join(dir, RunFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return dirErrorf("%w", err)
		default:
			var prev, next map[string]any
			if err := json.Unmarshal(b, &prev); err != nil {
				return dirErrorf("%s: %w", filepath.Join(dir, RunFile), err)
			}
			nb, err := json.Marshal(info)
			if err != nil {
				return fmt.Errorf("%s: %w", RunFile, err)
			}
			if err := json.Unmarshal(nb, &next); err != nil {
				return fmt.Errorf("%s: %w", RunFile, err)
			}
			// A larger limit extends the run with the next cases in the
			// same order; what is recorded stays a part of it.
			ign := append([]string{"started", "limit"}, ignore...)
			// A run recorded before its inputs' hashes (NAME_sha256) is
			// compared by the inputs' paths (NAME) instead.
			for k, v := range next {
				if name, ok := strings.CutSuffix(k, "_sha256"); ok {
					if _, had := prev[k]; !had {
						prev[k] = v
						ign = slices.DeleteFunc(ign, func(s string) bool { return s == name })
					}
				}
			}
			if diff := differing(prev, next, ign); len(diff) > 0 {
				var parts []string
				for _, k := range diff {
					parts = append(parts, fmt.Sprintf("%s (recorded %s, now %s)", k, shortJSON(prev[k]), shortJSON(next[k])))
				}
				return dirErrorf("cannot resume the run in %s with other inputs: %s differs in %s",
					dir, RunFile, strings.Join(parts, "; "))
			}
		}
	}
	return WriteRunInfo(dir, info)
}

func shortJSON(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// HashFiles returns the SHA-256, in hex, of the content of the files at
// paths, so a run is identified by its dataset's bytes wherever they lie.
// A directory counts as its regular files, in name order, each hashed
// with its path inside the directory. An empty path adds nothing.
func HashFiles(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		if p == "" {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("runner: %w", err)
		}
		if !info.IsDir() {
			if err := hashFile(h, p); err != nil {
				return "", err
			}
			continue
		}
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(p, q)
			fmt.Fprintf(h, "%d:%s\n", len(rel), filepath.ToSlash(rel))
			return hashFile(h, q)
		})
		if err != nil {
			return "", fmt.Errorf("runner: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("runner: hashing %s: %w", path, err)
	}
	return nil
}

// OpenNoFollow opens the run file at path with flag and perm without
// following a symbolic link: a link there is an error wrapping
// [ErrRunDir], so a run never reads or appends through one.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if err != nil && errors.Is(err, syscall.ELOOP) {
		return nil, dirErrorf("%s is a symbolic link; a run file is never followed", path)
	}
	return f, err
}

func readNoFollow(path string) ([]byte, error) {
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
