package envstore

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/nobody"
)

// TestChooseMethod is the rule of which method a restore uses, for every
// combination the probes can find.
func TestChooseMethod(t *testing.T) {
	root := probes{reflink: false, link: true, writesReadOnly: true}
	user := probes{reflink: false, link: true}
	reflinks := probes{reflink: true, link: true, writesReadOnly: true}
	otherFS := probes{}
	unprobed := probes{err: fs.ErrPermission}
	for _, tc := range []struct {
		name string
		opts RestoreOptions
		p    probes
		want RestoreMethod
		err  error // wrapped by the error; nil: no error
	}{
		{"auto with reflinks", RestoreOptions{}, reflinks, RestoreReflink, nil},
		{"auto as root without reflinks", RestoreOptions{}, root, RestoreCopy, nil},
		{"auto as a user without reflinks", RestoreOptions{}, user, RestoreLink, nil},
		{"auto across file systems", RestoreOptions{}, otherFS, RestoreCopy, nil},
		{"auto on a store that cannot be probed", RestoreOptions{}, unprobed, RestoreCopy, nil},
		{"auto as root, read-only use", RestoreOptions{ReadOnlyUse: true}, root, RestoreLink, nil},
		{"link as root", RestoreOptions{Method: RestoreLink}, root, 0, ErrUnsafeLinks},
		{"link as root, read-only use", RestoreOptions{Method: RestoreLink, ReadOnlyUse: true}, root, RestoreLink, nil},
		{"link as a user", RestoreOptions{Method: RestoreLink}, user, RestoreLink, nil},
		{"link with reflinks", RestoreOptions{Method: RestoreLink}, probes{reflink: true, link: true}, RestoreLink, nil},
		{"link across file systems", RestoreOptions{Method: RestoreLink}, otherFS, 0, ErrMethod},
		{"link on a store that cannot be probed", RestoreOptions{Method: RestoreLink}, unprobed, 0, ErrMethod},
		{"reflink without reflinks", RestoreOptions{Method: RestoreReflink}, root, 0, ErrMethod},
		{"reflink", RestoreOptions{Method: RestoreReflink}, reflinks, RestoreReflink, nil},
		{"copy", RestoreOptions{Method: RestoreCopy}, reflinks, RestoreCopy, nil},
	} {
		got, reason, err := chooseMethod(tc.opts, tc.p)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%s: %v %v, want an error wrapping %v", tc.name, got, err, tc.err)
		case tc.err != nil && !errors.Is(err, ErrMethod):
			t.Errorf("%s: %v does not wrap ErrMethod", tc.name, err)
		case tc.err == nil && (err != nil || got != tc.want || reason == ""):
			t.Errorf("%s: %v %q %v, want %v", tc.name, got, reason, err, tc.want)
		}
	}
}

// checkNoWriteReaches restores commit twice under dir with the default
// options and writes through one tree every way a program can: a file
// replaced (renamed over), files appended to in place outside and inside
// the sandbox. The other tree and the store keep their content, whatever
// the method; an in-place write is refused only where the method is hard
// links. It returns the first restore's result.
func checkNoWriteReaches(t *testing.T, s *Store, commit, dir string) RestoreResult {
	t.Helper()
	ctx := context.Background()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	res, err := s.Restore(ctx, commit, a, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, commit, b, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("method %s (%s): %d hard links, %d reflinks, %d copies", res.Method, res.MethodReason, res.Linked, res.Reflinked, res.Copied)
	if res.Linked+res.Reflinked+res.Copied != res.Files {
		t.Errorf("%+v: files made do not add up", res)
	}
	if os.Geteuid() == 0 && res.Linked > 0 {
		t.Errorf("root restored %d files by hard links (%s)", res.Linked, res.MethodReason)
	}
	before := readTree(t, b)
	objects := filepath.Join(s.Dir(), "objects")
	objBefore := readTree(t, objects)

	// Replaced, as git, editors and compilers do.
	target := filepath.Join(a, "pkg", "core.py")
	if err := os.WriteFile(target+".tmp", []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(target+".tmp", target); err != nil {
		t.Fatal(err)
	}
	// Appended to in place, outside a sandbox.
	f, err := os.OpenFile(filepath.Join(a, "README"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString("in place\n")
		f.Close()
	}
	switch {
	case err != nil && res.Method != "hardlink":
		t.Errorf("an in-place write to a %s file failed: %v", res.Method, err)
	case err != nil && !errors.Is(err, fs.ErrPermission):
		t.Errorf("an in-place write to a hard-linked file: %v, want a permission error", err)
	case err == nil && res.Method == "hardlink":
		t.Errorf("an in-place write to a hard-linked file succeeded")
	}
	// Appended to in place in the sandbox (which may be no sandbox).
	if _, err := runner().Run(ctx, sandboxCommand(a, "echo in-place >> pkg/__init__.py")); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, before, readTree(t, b), false)
	compareTrees(t, objBefore, readTree(t, objects), false)
	mustVerify(t, s)
	return res
}

// TestRestoreNoWriteReachesStore is the guarantee for the user the tests
// run as: root (as in containers and CI) gets copies or reflinks, an
// ordinary user hard links that refuse writes.
func TestRestoreNoWriteReachesStore(t *testing.T) {
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(t.TempDir(), "store"), 3)
	checkNoWriteReaches(t, s, commits[2], t.TempDir())

	// Hard links asked for: refused where the process could write
	// through them, unless it promises read-only use.
	dest := filepath.Join(t.TempDir(), "l")
	_, err := s.Restore(ctx, commits[2], dest, RestoreOptions{Method: RestoreLink})
	if os.Geteuid() == 0 {
		if !errors.Is(err, ErrUnsafeLinks) {
			t.Fatalf("root asked for hard links: %v, want ErrUnsafeLinks", err)
		}
		if _, err := os.Lstat(dest); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a refused restore left %s", dest)
		}
		res, err := s.Restore(ctx, commits[2], dest, RestoreOptions{Method: RestoreLink, ReadOnlyUse: true})
		if err != nil || res.Method != "hardlink" || res.Linked == 0 {
			t.Fatalf("hard links for read-only use: %+v %v", res, err)
		}
		// In the sandbox (no capabilities) an in-place write to them is
		// refused even for root.
		if runner().Name() == "bwrap" {
			out, err := runner().Run(ctx, sandboxCommand(dest, "echo in-place >> pkg/__init__.py"))
			if err != nil {
				t.Fatal(err)
			}
			if out.ExitCode == 0 {
				t.Errorf("an in-place write to a hard-linked file succeeded in the sandbox")
			}
			mustVerify(t, s)
		}
	} else if err != nil {
		t.Fatalf("hard links as an ordinary user: %v", err)
	}
}

// TestUnprivilegedRestore runs the guarantee as an ordinary user on a store
// that user owns: on a file system without reflinks, hard links, and an
// in-place write through them is refused. Run as root, it runs itself again
// as nobody (uid 65534).
func TestUnprivilegedRestore(t *testing.T) {
	nobody.Test{Prefix: "envstore-unprivileged-", AsNobody: func(base string) { unprivilegedRestore(t, base) }, Want: "method ", AsMe: true,
		Setup: func(base string) (env, paths []string) {
			t.Cleanup(func() { removeAll(base) })
			_, commits := builtStore(t, filepath.Join(base, "store"), 3)
			os.Mkdir(filepath.Join(base, "restores"), 0o755)
			return []string{"ENVSTORE_TEST_COMMIT=" + commits[2]}, nil
		}}.Run(t)
}

// unprivilegedRestore is TestUnprivilegedRestore as an ordinary user.
func unprivilegedRestore(t *testing.T, base string) {
	s, err := OpenExisting(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	res := checkNoWriteReaches(t, s, os.Getenv("ENVSTORE_TEST_COMMIT"), filepath.Join(base, "restores"))
	if res.Method != "hardlink" && res.Method != "reflink" {
		t.Errorf("an ordinary user restored by %s (%s), want hard links or reflinks", res.Method, res.MethodReason)
	}
	// An overlay asked for by default: fuse-overlayfs where it mounts,
	// else files, and the reason says what each way of mounting one
	// found (the kernel's, a user namespace, fuse-overlayfs).
	dest := filepath.Join(base, "restores", "overlay")
	res, err = s.Restore(context.Background(), os.Getenv("ENVSTORE_TEST_COMMIT"), dest, RestoreOptions{Overlay: true, Temporary: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("method %s: %s", res.Method, res.MethodReason)
	if res.Method == "overlay" {
		if typ, _ := overlayMountType(dest); typ != fuseOverlayType {
			t.Errorf("an ordinary user's overlay is mounted as %q, want %s", typ, fuseOverlayType)
		}
		if err := Release(dest); err != nil {
			t.Error(err)
		}
		return
	}
	for _, want := range []string{"mounting an overlay failed (mount: operation not permitted)", "user namespace", "fuse-overlayfs"} {
		if !strings.Contains(res.MethodReason, want) {
			t.Errorf("method %s, reason %q does not say %q", res.Method, res.MethodReason, want)
		}
	}
}

func copyFile(t *testing.T, src, dst string, mode fs.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReflinkRestore runs the guarantee on a file system with reflinks:
// the test's temporary directory if it has them, or
// $PATCHBENCH_REFLINK_DIR (a directory on XFS or Btrfs, such as a
// loop-mounted image). Each restored file is its own inode sharing the
// object's blocks, so root's in-place write changes only the tree.
func TestReflinkRestore(t *testing.T) {
	base := t.TempDir()
	if d := os.Getenv("PATCHBENCH_REFLINK_DIR"); d != "" {
		var err error
		if base, err = os.MkdirTemp(d, "envstore-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeAll(base) })
	}
	if !openStore(t, filepath.Join(base, "store")).probe(base).reflink {
		t.Skipf("no reflinks on the file system of %s: set PATCHBENCH_REFLINK_DIR to a directory on XFS or Btrfs", base)
	}
	ctx := context.Background()
	s, commits := builtStore(t, filepath.Join(base, "store"), 3)
	res := checkNoWriteReaches(t, s, commits[2], base)
	if res.Method != "reflink" || res.Reflinked != res.Files {
		t.Errorf("restore on a file system with reflinks: %+v", res)
	}
	res, err := s.Restore(ctx, commits[2], filepath.Join(base, "r"), RestoreOptions{Method: RestoreReflink})
	if err != nil || res.Reflinked != res.Files {
		t.Errorf("reflinks asked for: %+v %v", res, err)
	}
}

// TestRestoreDestination: a destination that is a file or a directory with
// anything in it is refused, and left as it was.
func TestRestoreDestination(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 1)
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	if _, err := s.Build(ctx, r, commits, BuildOptions{Setup: "true", Runner: runner()}); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(t.TempDir(), "full")
	writeFile(t, full, "keep", "mine\n", 0o644)
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, filepath.Dir(file), "file", "mine\n", 0o644)
	for _, dest := range []string{full, file} {
		if _, err := s.Restore(ctx, commits[0], dest, RestoreOptions{}); !errors.Is(err, ErrDestination) {
			t.Errorf("restore into %s: %v, want ErrDestination", dest, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "keep")); string(b) != "mine\n" {
		t.Errorf("the full destination changed")
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("the full destination has %d entries", len(ents))
	}
	if b, _ := os.ReadFile(file); string(b) != "mine\n" {
		t.Errorf("the file destination changed")
	}
	empty := t.TempDir()
	if res, err := s.Restore(ctx, commits[0], empty, RestoreOptions{}); err != nil || res.Files == 0 {
		t.Errorf("restore into an empty directory: %+v %v", res, err)
	}
}

// TestRestoreIntoTheStore: a destination inside the store (a new
// directory under objects/, tmp/ or the store's root, directly or through
// a symbolic link) is refused with ErrInStore and ErrDestination, and the
// store stays as verify wants it. Such a restore used to succeed, and
// verify then reported every restored file as a bad object for good.
func TestRestoreIntoTheStore(t *testing.T) {
	ctx := context.Background()
	dir, commits := makeHistory(t, "python", 1)
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	if _, err := s.Build(ctx, r, commits, BuildOptions{Setup: "true", Runner: runner()}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(s.Dir(), "objects"), link); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{
		filepath.Join(s.Dir(), "objects", "new"),
		filepath.Join(s.Dir(), "tmp", "tree"),
		filepath.Join(s.Dir(), "tree"),
		filepath.Join(s.Dir(), "a", "b", "c"),
		filepath.Join(link, "new"),
	} {
		_, err := s.Restore(ctx, commits[0], dest, RestoreOptions{})
		if !errors.Is(err, ErrInStore) || !errors.Is(err, ErrDestination) {
			t.Errorf("restore into %s: %v, want ErrInStore", dest, err)
		}
		if _, err := os.Lstat(dest); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("restore into %s made it", dest)
		}
	}
	if rep, err := s.Verify(ctx, 1); err != nil || !rep.OK() {
		t.Errorf("verify after refused restores: %v %v", rep.Problems, err)
	}
	// Beside the store, in a directory whose name starts with the store's.
	if _, err := s.Restore(ctx, commits[0], s.Dir()+"-tree", RestoreOptions{}); err != nil {
		t.Errorf("restore beside the store: %v", err)
	}
}

// TestOpenExisting makes nothing where there is no store.
func TestOpenExisting(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := OpenExisting(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open of a missing store: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenExisting made %s", missing)
	}
	empty := t.TempDir()
	if _, err := OpenExisting(empty); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open of an empty directory: %v, want fs.ErrNotExist", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("OpenExisting wrote %d entries into an empty directory", len(ents))
	}
	made := openStore(t, filepath.Join(t.TempDir(), "s"))
	if s, err := OpenExisting(made.Dir()); err != nil || s.Dir() != made.Dir() {
		t.Errorf("open of a store: %v", err)
	}
}

// TestDeterministicSetup builds two commits of a Python package, made a year
// apart, with a plain "compileall" (no invalidation mode given): the setup
// sees SOURCE_DATE_EPOCH and file times equal to each commit's committer
// time, so the byte-code is hash-checked and the byte-code of the module the
// second commit did not change is one object. A SOURCE_DATE_EPOCH the user
// sets wins.
func TestDeterministicSetup(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "py")
	os.Mkdir(dir, 0o755)
	commitAt := func(date string) string {
		t.Helper()
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", date}, {"rev-parse", "HEAD"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
				"GIT_COMMITTER_EMAIL=t@t", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
			if args[0] == "rev-parse" {
				return strings.TrimSpace(string(out))
			}
		}
		return ""
	}
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "a.py", "A = 1\n", 0o644)
	writeFile(t, dir, "b.py", "def b():\n    return 2\n", 0o644)
	c1 := commitAt("2021-01-01T00:00:00Z")
	writeFile(t, dir, "a.py", "A = 2\n", 0o644)
	c2 := commitAt("2022-01-01T00:00:00Z")
	times := map[string]int64{c1: 1609459200, c2: 1640995200}

	python := strings.TrimSuffix(pySetup(), pySetupArgs)
	setup := python + ` -m compileall -q . && echo "$SOURCE_DATE_EPOCH" > epoch && stat -c %Y b.py > mtime`
	r := openRepo(t, dir)
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	res, err := s.Build(ctx, r, []string{c1, c2}, BuildOptions{Setup: setup, Runner: runner()})
	if err != nil {
		t.Fatal(err)
	}
	pycs := map[string]bool{}
	for _, br := range res {
		if br.Status != StatusBuilt {
			t.Fatalf("%s: %s %s", br.Commit, br.Status, br.Reason)
		}
		want := strconv.FormatInt(times[br.Commit], 10)
		m, err := s.Manifest(br.Commit)
		if err != nil {
			t.Fatal(err)
		}
		if m.SourceDateEpoch != times[br.Commit] {
			t.Errorf("%s: manifest's epoch %d, want %s", br.Commit, m.SourceDateEpoch, want)
		}
		tree := filepath.Join(t.TempDir(), "r")
		if _, err := s.Restore(ctx, br.Commit, tree, RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"epoch", "mtime"} {
			if b, _ := os.ReadFile(filepath.Join(tree, f)); strings.TrimSpace(string(b)) != want {
				t.Errorf("%s: the setup's %s was %q, want the committer time %s", br.Commit, f, b, want)
			}
		}
		for _, e := range m.Entries {
			if ok, _ := path.Match("__pycache__/b.*.pyc", e.Path); ok {
				pycs[e.Hash] = true
				b, err := os.ReadFile(filepath.Join(tree, filepath.FromSlash(e.Path)))
				if err != nil || len(b) < 8 {
					t.Fatalf("%s: %v", e.Path, err)
				}
				// PEP 552: flags 0b11 are "hash-based, checked".
				if flags := binary.LittleEndian.Uint32(b[4:8]); flags != 3 {
					t.Errorf("%s: %s has flags %d, want 3 (hash-based, checked)", br.Commit, e.Path, flags)
				}
			}
		}
	}
	if len(pycs) != 1 {
		t.Errorf("the byte-code of the unchanged b.py is %d objects, want 1", len(pycs))
	}
	if res[1].ReusedFiles == 0 {
		t.Errorf("no unchanged tracked file's hash came from git after the times were set: %+v", res[1])
	}

	// The user's SOURCE_DATE_EPOCH is the setup's and the files' time.
	s2 := openStore(t, filepath.Join(t.TempDir(), "store2"))
	res, err = s2.Build(ctx, r, []string{c2}, BuildOptions{Setup: setup, Runner: runner(), Env: []string{"SOURCE_DATE_EPOCH=1000000000"}})
	if err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build: %v %+v", err, res)
	}
	tree := filepath.Join(t.TempDir(), "u")
	if _, err := s2.Restore(ctx, c2, tree, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"epoch", "mtime"} {
		if b, _ := os.ReadFile(filepath.Join(tree, f)); strings.TrimSpace(string(b)) != "1000000000" {
			t.Errorf("with SOURCE_DATE_EPOCH=1000000000 the setup's %s was %q", f, b)
		}
	}
}
