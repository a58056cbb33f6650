package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFileAtTwoCommits(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	ctx := t.Context()
	for _, c := range []struct {
		rev   string
		files map[string]string
	}{
		{f.c1, f.at1},
		{f.c2, f.at2},
		{"v1", f.at1},
		{"main", f.at2},
		{"HEAD~1", f.at1},
		{f.c2[:8], f.at2},
	} {
		for name, want := range c.files {
			got, err := r.ReadFile(ctx, c.rev, name)
			if err != nil {
				t.Errorf("ReadFile(%s, %q): %v", c.rev, name, err)
				continue
			}
			if string(got) != want {
				t.Errorf("ReadFile(%s, %q) = %q, want %q", c.rev, name, got, want)
			}
		}
	}
}

func TestReadFileCleansPath(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	for _, p := range []string{"./a.txt", "dir/../a.txt", "dir//../a.txt"} {
		got, err := r.ReadFile(t.Context(), f.c1, p)
		if err != nil || string(got) != "one\n" {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", p, got, err, "one\n")
		}
	}
}

func TestReadFileErrors(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	for _, c := range []struct {
		rev, path string
		is        error // wrapped by the error, if not nil
		not       error // not wrapped by the error, if not nil
		msg       string
	}{
		{f.c1, "nope.txt", fs.ErrNotExist, ErrUnknownRevision, "repo: read " + f.c1 + ":nope.txt in " + r.Name() + ": file does not exist"},
		{f.c2, f.deletedIn2, fs.ErrNotExist, nil, "file does not exist"},
		{f.c1, "new.txt", fs.ErrNotExist, nil, "file does not exist"},
		{f.c1, "a.txt/x", fs.ErrNotExist, nil, "file does not exist"},
		{"0123456789abcdef0123456789abcdef01234567", "a.txt", ErrUnknownRevision, fs.ErrNotExist, "unknown revision"},
		{"no-such-branch", "a.txt", ErrUnknownRevision, fs.ErrNotExist, "unknown revision"},
		{"no-such-branch", f.withNL, ErrUnknownRevision, fs.ErrNotExist, "unknown revision"},
		{f.c1, "dir", nil, fs.ErrNotExist, "is a directory"},
		{f.c1, ".", nil, fs.ErrNotExist, "is a directory"},
		{f.c1, "../etc/passwd", fs.ErrInvalid, fs.ErrNotExist, "leaves the tree"},
		{f.c1, "/a.txt", fs.ErrInvalid, fs.ErrNotExist, "absolute path"},
		{f.c1, "", fs.ErrInvalid, fs.ErrNotExist, "empty path"},
		{"HEAD:a.txt", "a.txt", nil, fs.ErrNotExist, "invalid revision"},
		{"-n", "a.txt", nil, fs.ErrNotExist, "invalid revision"},
		{"", "a.txt", nil, fs.ErrNotExist, "empty revision"},
	} {
		_, err := r.ReadFile(t.Context(), c.rev, c.path)
		if err == nil {
			t.Errorf("ReadFile(%q, %q) succeeded, want an error", c.rev, c.path)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("ReadFile(%q, %q) = %v, want it to wrap %v", c.rev, c.path, err, c.is)
		}
		if c.not != nil && errors.Is(err, c.not) {
			t.Errorf("ReadFile(%q, %q) = %v, must not wrap %v", c.rev, c.path, err, c.not)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ReadFile(%q, %q) = %q, want it to contain %q", c.rev, c.path, err, c.msg)
		}
	}
}

func TestExists(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	for _, c := range []struct {
		rev, path string
		want      bool
	}{
		{f.c1, "a.txt", true},
		{f.c1, "dir", true},
		{f.c1, "dir/b.go", true},
		{f.c2, "dir/b.go", false},
		{f.c1, "new.txt", false},
		{f.c2, "new.txt", true},
		{f.c1, "unicodé/файл 名.txt", true},
		{f.c1, f.withNL, true},
		{f.c1, "odd\nmissing", false},
	} {
		got, err := r.Exists(t.Context(), c.rev, c.path)
		if err != nil || got != c.want {
			t.Errorf("Exists(%s, %q) = %v, %v; want %v", c.rev, c.path, got, err, c.want)
		}
	}
	if _, err := r.Exists(t.Context(), "no-such-branch", "a.txt"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("Exists at an unknown revision: %v, want ErrUnknownRevision", err)
	}
}

func TestResolveCommit(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	for rev, want := range map[string]string{
		f.c1:           f.c1,
		f.c1[:8]:       f.c1,
		f.c2[:8]:       f.c2,
		f.c2[:12]:      f.c2,
		"main":         f.c2,
		"HEAD":         f.c2,
		"HEAD~1":       f.c1,
		"v1":           f.c1,
		"refs/tags/v1": f.c1,
	} {
		got, err := r.ResolveCommit(t.Context(), rev)
		if err != nil || got != want {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %q", rev, got, err, want)
		}
	}
	for _, rev := range []string{"deadbeef", "no-such-branch", "HEAD~5"} {
		if _, err := r.ResolveCommit(t.Context(), rev); !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("ResolveCommit(%q) = %v, want ErrUnknownRevision", rev, err)
		}
	}
	// A blob is not a commit.
	blob := git(t, f.dir, "rev-parse", f.c1+":a.txt")
	if _, err := r.ResolveCommit(t.Context(), blob); err == nil {
		t.Errorf("ResolveCommit(blob %s) succeeded", blob)
	}
}

func TestListFiles(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	for rev, files := range map[string]map[string]string{f.c1: f.at1, f.c2[:8]: f.at2} {
		var want []string
		for name := range files {
			want = append(want, name)
		}
		sort.Strings(want)
		got, err := r.ListFiles(t.Context(), rev)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ListFiles(%s) (-want +got):\n%s", rev, diff)
		}
	}
	if _, err := r.ListFiles(t.Context(), "no-such-branch"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("ListFiles(no-such-branch) = %v, want ErrUnknownRevision", err)
	}
}

func TestConcurrentReaders(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rev, files := f.c1, f.at1
			if i%2 == 1 {
				rev, files = f.c2, f.at2
			}
			for range 5 {
				for name, want := range files {
					got, err := r.ReadFile(t.Context(), rev, name)
					if err != nil {
						errs <- err
						return
					}
					if string(got) != want {
						errs <- fmt.Errorf("goroutine %d: ReadFile(%s, %q) = %q, want %q", i, rev, name, got, want)
						return
					}
				}
				if ok, err := r.Exists(t.Context(), rev, "nope"); ok || err != nil {
					errs <- fmt.Errorf("goroutine %d: Exists(nope) = %v, %v", i, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRestartAfterProcessDies(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	read := func() {
		t.Helper()
		got, err := r.ReadFile(t.Context(), f.c1, "a.txt")
		if err != nil || string(got) != "one\n" {
			t.Fatalf("ReadFile = %q, %v", got, err)
		}
	}
	read()
	r.batch.mu.Lock()
	r.batch.proc.cmd.Process.Kill()
	r.batch.proc.cmd.Process.Wait()
	r.batch.mu.Unlock()
	read()
	read()
}

func TestCanceledRead(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r := openT(t, f.dir)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.ReadFile(ctx, f.c1, "a.txt"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile with a canceled context = %v, want context.Canceled", err)
	}
	if got, err := r.ReadFile(t.Context(), f.c1, "a.txt"); err != nil || string(got) != "one\n" {
		t.Errorf("ReadFile after a canceled one = %q, %v", got, err)
	}
}

func TestClosed(t *testing.T) {
	f := newFixture(t, t.TempDir())
	r, err := Open(t.Context(), f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile(t.Context(), f.c1, "a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile(t.Context(), f.c1, "a.txt"); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadFile after Close = %v, want ErrClosed", err)
	}
}

func TestOpen(t *testing.T) {
	f := newFixture(t, t.TempDir())
	bare := filepath.Join(t.TempDir(), "bare.git")
	git(t, "", "clone", "-q", "--bare", f.dir, bare)
	mirror := filepath.Join(t.TempDir(), "mirror")
	git(t, "", "clone", "-q", "--mirror", f.dir, mirror)
	for _, dir := range []string{f.dir, bare, mirror} {
		r := openT(t, dir)
		got, err := r.ReadFile(t.Context(), f.c2[:8], "a.txt")
		if err != nil || string(got) != "two\n" {
			t.Errorf("%s: ReadFile = %q, %v", dir, got, err)
		}
	}
	r := openT(t, f.dir)
	if want := filepath.Join(f.dir, ".git"); !sameDir(r.GitDir(), want) {
		t.Errorf("GitDir() = %q, want %q", r.GitDir(), want)
	}

	notRepo := t.TempDir()
	for _, dir := range []string{
		filepath.Join(f.dir, "dir"),  // inside a working tree
		filepath.Join(f.dir, ".git"), // the git directory of a working tree
		notRepo,
		filepath.Join(notRepo, "missing"),
		filepath.Join(f.dir, "a.txt"),
	} {
		if r, err := Open(t.Context(), dir); err == nil {
			r.Close()
			t.Errorf("Open(%s) succeeded, want an error", dir)
		} else if !strings.HasPrefix(err.Error(), "repo: open ") {
			t.Errorf("Open(%s) = %q, want a message starting %q", dir, err, "repo: open ")
		}
	}
}

func TestRepoInsideAnotherIsNotDiscovered(t *testing.T) {
	f := newFixture(t, t.TempDir())
	// An empty directory inside a working tree must not open the
	// enclosing repository.
	inner := filepath.Join(f.dir, "inner")
	if err := os.Mkdir(inner, 0o777); err != nil {
		t.Fatal(err)
	}
	if r, err := Open(t.Context(), inner); err == nil {
		r.Close()
		t.Fatal("Open(empty dir inside a working tree) succeeded")
	}
}

func TestRevListArgs(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
		err  string
	}{
		{"main", []string{"--end-of-options", "main"}, ""},
		{"v1.0..main", []string{"--end-of-options", "v1.0..main"}, ""},
		{"-n50 main ^v1", []string{"--max-count=50", "--end-of-options", "main", "^v1"}, ""},
		{"-n 5 HEAD", []string{"--max-count=5", "--end-of-options", "HEAD"}, ""},
		{"--max-count=2 HEAD", []string{"--max-count=2", "--end-of-options", "HEAD"}, ""},
		{"--output=FILE", nil, `"--output=FILE" is not a revision`},
		{"-n1 --output=FILE main", nil, `"--output=FILE" is not a revision`},
		{"--output=x..HEAD", nil, "is not a revision"},
		{"-nx main", nil, `"-nx" is not a revision`},
		{"-n", nil, `"-n" is not a revision`},
		{"main --all", nil, `"--all" is not a revision`},
		{"-n5", nil, "names no revision"},
		{"", nil, "names no revision"},
	} {
		got, err := RevListArgs(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("RevListArgs(%q) = %q, %v; want an error with %q", tc.spec, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("RevListArgs(%q) = %q, %v; want %q", tc.spec, got, err, tc.want)
		}
	}
}

// TestRevListArgsReachGitAsRevisions runs git rev-list with the arguments
// of a spec that git would read as an option without them: no file is
// written, and a count still counts.
func TestRevListArgsReachGitAsRevisions(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "1"}, {"commit", "-q", "--allow-empty", "-m", "2"}} {
		if out, err := run(args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	args, err := RevListArgs("-n1 main")
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(append([]string{"rev-list"}, append(args, "--")...)...)
	if err != nil || len(strings.Fields(out)) != 1 {
		t.Errorf("rev-list %v: %q, %v; want one commit", args, out, err)
	}
	// Were a word that begins with '-' let through, --end-of-options keeps
	// git from reading it as an option.
	if _, err := run("rev-list", "--end-of-options", "--output=FILE", "--"); err == nil {
		t.Error("git took --output=FILE after --end-of-options as a revision")
	}
	if _, err := os.Stat(filepath.Join(dir, "FILE")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("git wrote FILE: %v", err)
	}
}
