package patch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrUnsafePath is wrapped by the errors of paths a patch may not read or
// write: absolute, leaving the directory with "..", with a .git component,
// too long or too deep, through a symbolic link, a symbolic link
// themselves, or not a regular file (a named pipe, a device, a socket).
var ErrUnsafePath = errors.New("unsafe path")

// Bounds of a patch path. Creating a file n directories deep costs time in
// n squared (each directory is reached from the root), and no source tree
// needs more: git's own PATH_MAX is 4096.
const (
	MaxPathBytes = 4096
	MaxPathDepth = 256
)

// CheckPath refuses a patch path that is empty, absolute, leaves the
// directory with "..", is longer than [MaxPathBytes] or deeper than
// [MaxPathDepth] components, or has a component that git's verify_path
// refuses as .git (see [IsDotGit]). It looks at the name only; see
// [CheckLinks] for symbolic links and file types.
func CheckPath(name string) error {
	if len(name) > MaxPathBytes {
		return fmt.Errorf("%w %q: %d bytes, over the bound of %d (MaxPathBytes)", ErrUnsafePath, abbrev(name), len(name), MaxPathBytes)
	}
	clean := path.Clean(name)
	if name == "" || strings.HasPrefix(name, "/") || filepath.IsAbs(filepath.FromSlash(name)) ||
		strings.ContainsRune(name, 0) || !fs.ValidPath(clean) || clean == "." {
		return fmt.Errorf("%w %q: patch paths must be relative and stay inside the directory", ErrUnsafePath, name)
	}
	if d := strings.Count(clean, "/") + 1; d > MaxPathDepth {
		return fmt.Errorf("%w %q: %d components deep, over the bound of %d (MaxPathDepth)", ErrUnsafePath, abbrev(name), d, MaxPathDepth)
	}
	// A backslash separates components on Windows, where git checks the
	// parts it separates too.
	for c := range strings.FieldsFuncSeq(clean, func(r rune) bool { return r == '/' || r == '\\' }) {
		if IsDotGit(c) {
			return fmt.Errorf("%w %q: patches may not touch .git (component %q)", ErrUnsafePath, abbrev(name), c)
		}
	}
	return nil
}

// abbrev shortens a long name for an error message.
func abbrev(name string) string {
	if len(name) <= 200 {
		return name
	}
	return name[:100] + "..." + name[len(name)-60:]
}

// IsDotGit reports whether a path component names the repository directory
// .git on some file system, as git's verify_path decides: ".git" in any
// letter case; on NTFS also followed by dots or spaces (".git.", ".git ")
// or an alternate stream (".git::$INDEX_ALLOCATION"), and its short name
// "git~1"; on HFS+ also with the Unicode code points HFS+ ignores
// (zero-width joiners and the like) anywhere in it. git's other refusal,
// .gitmodules and the like as symbolic links, is covered by refusing
// every link.
func IsDotGit(c string) bool {
	if len(c) < 4 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] >= 0x80 {
			c = strings.Map(func(r rune) rune {
				if hfsIgnorable(r) {
					return -1
				}
				return r
			}, c)
			break
		}
	}
	var rest string
	switch {
	case len(c) >= 4 && strings.EqualFold(c[:4], ".git"):
		rest = c[4:]
	case len(c) >= 5 && strings.EqualFold(c[:5], "git~1"):
		rest = c[5:]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '.', ' ':
		case ':':
			return true
		default:
			return false
		}
	}
	return true
}

// hfsIgnorable reports the code points HFS+ leaves out of a name when it
// compares names (git's utf8.c, next_hfs_char).
func hfsIgnorable(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// CheckLinks refuses name when it, or a directory on the way to it, is a
// symbolic link, and when it exists but is neither a regular file nor a
// directory (a named pipe hangs a read, a device never ends one). lstat
// describes a path relative to the directory without following its last
// component (mode, and the link's target for links); a missing component
// ends the walk, as a file may be created there.
//
// Every link is refused, not only those leading out: git apply refuses paths
// "beyond a symbolic link" wherever the link points, and patchbench does not
// edit links themselves (a model's edit of a link's text would retarget it).
func CheckLinks(name string, lstat func(string) (fs.FileMode, string, error)) error {
	clean := path.Clean(name)
	for i := 0; i <= len(clean); i++ {
		if i < len(clean) && clean[i] != '/' {
			continue
		}
		prefix := clean[:i]
		mode, target, err := lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
			return nil
		}
		if err != nil {
			return err
		}
		if mode&fs.ModeSymlink == 0 {
			if i == len(clean) {
				return checkType(name, mode)
			}
			if !mode.IsDir() {
				return nil // a file in the way: reading or writing fails on its own
			}
			continue
		}
		if i < len(clean) {
			return fmt.Errorf("%w %q: beyond a symbolic link (%s -> %s)", ErrUnsafePath, name, prefix, target)
		}
		return fmt.Errorf("%w %q: a symbolic link (-> %s); symbolic links are not edited", ErrUnsafePath, name, target)
	}
	return nil
}

// checkType refuses what is neither a regular file nor a directory.
func checkType(name string, mode fs.FileMode) error {
	if mode.IsRegular() || mode.IsDir() {
		return nil
	}
	return fmt.Errorf("%w %q: a %s, not a regular file; only regular files are read or written", ErrUnsafePath, name, FileKind(mode))
}

// FileKind names the type of a file, for the errors that refuse what is
// not a regular file: "named pipe", "character device", "directory"...
func FileKind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "regular file"
	case mode.IsDir():
		return "directory"
	case mode&fs.ModeSymlink != 0:
		return "symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "named pipe"
	case mode&fs.ModeSocket != 0:
		return "socket"
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// errNotDir stands for ENOTDIR, which os.Root reports when a component of a
// path is a file.
var errNotDir = errors.New("not a directory")

// Root confines the reads and writes of a patch to one directory: every
// path is checked with [CheckPath] and [CheckLinks], and every access goes
// through an [os.Root], so that nothing outside the directory is read or
// written even if the tree changes between the check and the access. It is
// the [FileSystem] that apply, reverse, convert and repair read, and
// [Root.WriteResults] writes through it. Close it when done.
type Root struct {
	root      *os.Root
	dir       string
	writeHook func(point string) // see OnWrite
}

// OpenRoot opens the directory dir.
func OpenRoot(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{root: r, dir: dir}, nil
}

// Close releases the directory.
func (r *Root) Close() error { return r.root.Close() }

// Dir returns the directory the root was opened on.
func (r *Root) Dir() string { return r.dir }

// FS returns the directory as an fs.FS, for listing files.
func (r *Root) FS() fs.FS { return r.root.FS() }

// check applies the confinement rules to a patch path and returns the name
// to give os.Root.
func (r *Root) check(name string) (string, error) {
	if err := CheckPath(name); err != nil {
		return "", err
	}
	if err := CheckLinks(name, r.lstat); err != nil {
		return "", err
	}
	return filepath.FromSlash(path.Clean(name)), nil
}

// Executable reports whether name, a regular file, is one git records with
// mode 100755: its owner may execute it.
func (r *Root) Executable(name string) (bool, error) {
	n, err := r.check(name)
	if err != nil {
		return false, err
	}
	fi, err := r.root.Lstat(n)
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s: not a regular file", name)
	}
	return fi.Mode()&0o100 != 0, nil
}

func (r *Root) lstat(name string) (fs.FileMode, string, error) {
	if name == "" {
		return fs.ModeDir, "", nil
	}
	fi, err := r.root.Lstat(filepath.FromSlash(name))
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return 0, "", errNotDir
		}
		return 0, "", err
	}
	var target string
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ = r.root.Readlink(filepath.FromSlash(name))
	}
	return fi.Mode(), target, nil
}

// ReadFile reads name, a slash-separated path relative to the directory.
// The file is opened without blocking and read only if the open file is a
// regular one: a named pipe or device put in its place after the check is
// refused, not read.
func (r *Root) ReadFile(name string) ([]byte, error) {
	return r.ReadFileLimit(name, -1)
}

// ErrTooLarge refuses a file longer than the bound of [Root.ReadFileLimit].
var ErrTooLarge = errors.New("file too large")

// ReadFileLimit is [Root.ReadFile] for a file of at most limit bytes (no
// bound when limit is negative): a longer one is refused, with an error
// wrapping [ErrTooLarge], before any of it is read, so that a huge (or
// sparse) file costs no memory. A file that grows past the bound while it
// is read is refused too.
func (r *Root) ReadFileLimit(name string, limit int64) ([]byte, error) {
	f, fi, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit >= 0 && fi.Size() > limit {
		return nil, fmt.Errorf("read %s: %w: %d bytes, over the bound of %d", name, ErrTooLarge, fi.Size(), limit)
	}
	b := make([]byte, 0, fi.Size()+1) // +1: a read at the end sees io.EOF without growing
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if limit >= 0 && int64(len(b)) > limit {
			return nil, fmt.Errorf("read %s: %w: over the bound of %d bytes", name, ErrTooLarge, limit)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew
		}
	}
}

// Open opens name for reading, with the checks of [Root.ReadFile]: for
// a file read as a stream rather than whole. The caller closes it.
func (r *Root) Open(name string) (*os.File, error) {
	f, _, err := r.open(name)
	return f, err
}

// open opens name, a regular file, for reading.
func (r *Root) open(name string) (*os.File, fs.FileInfo, error) {
	p, err := r.check(name)
	if err != nil {
		return nil, nil, err
	}
	// Through its directory, opened without links (see openDir), and
	// the file itself checked to be the one looked at: a link swapped in
	// after the checks is not followed, even to a place inside the root
	// (.git).
	dir, err := r.openDir(filepath.Dir(p))
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	f, fi, err := openSame(dir, filepath.Base(p), name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkType(name, fi.Mode()); err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR} // "read x: is a directory"
	}
	return f, fi, nil
}

// openSame opens base in dir for reading if it is not a symbolic link,
// and checks that the file opened is the one looked at. A file replaced
// in between (an apply's rename) is looked at again, a few times.
func openSame(dir *os.Root, base, name string) (*os.File, fs.FileInfo, error) {
	for try := 0; ; try++ {
		before, err := dir.Lstat(base)
		if err != nil {
			return nil, nil, err
		}
		if before.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, fmt.Errorf("%w %q: a symbolic link now; symbolic links are not followed", ErrUnsafePath, name)
		}
		f, err := dir.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, nil, err
		}
		fi, err := f.Stat()
		if err == nil && os.SameFile(before, fi) {
			return f, fi, nil
		}
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		if try == 10 {
			return nil, nil, fmt.Errorf("%w %q: changed while it was opened, %d times", ErrUnsafePath, name, try+1)
		}
	}
}

// DirFS reads files under a directory for [Apply] through a [Root] opened
// for each read. Paths must be relative and stay inside the directory.
// Programs that also write should open one Root and use it for both.
type DirFS string

// ReadFile reads name relative to the directory.
func (d DirFS) ReadFile(name string) ([]byte, error) {
	r, err := OpenRoot(string(d))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(name)
}

// openDir opens the directory dir (a cleaned relative path; "." for the
// root) one component at a time, checking that each is a directory and
// not a link when looked at and that what was opened is what was looked
// at, so that the directory returned is the one the path names, without
// any link on the way, whatever changes meanwhile.
func (r *Root) openDir(dir string) (*os.Root, error) {
	cur, err := r.root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	if dir == "." || dir == "" {
		return cur, nil
	}
	for _, c := range strings.Split(filepath.ToSlash(dir), "/") {
		fi, err := cur.Lstat(c)
		if err == nil && !fi.IsDir() {
			err = fmt.Errorf("%w %q: %s is not a directory (a symbolic link or a file, now)", ErrUnsafePath, dir, c)
		}
		var next *os.Root
		if err == nil {
			next, err = cur.OpenRoot(c)
		}
		if err == nil {
			var st fs.FileInfo
			if st, err = next.Stat("."); err == nil && !os.SameFile(fi, st) {
				err = fmt.Errorf("%w %q: %s changed while it was opened", ErrUnsafePath, dir, c)
			}
			if err != nil {
				next.Close()
			}
		}
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}
