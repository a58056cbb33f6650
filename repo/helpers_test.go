package repo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain keeps the tests independent of the user's and the system's git
// configuration: every git command, ours and the package's, sees none.
func TestMain(m *testing.M) {
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_AUTHOR_NAME", "Test Author")
	os.Setenv("GIT_AUTHOR_EMAIL", "author@example.com")
	os.Setenv("GIT_AUTHOR_DATE", "2020-01-02T03:04:05Z")
	os.Setenv("GIT_COMMITTER_NAME", "Test Committer")
	os.Setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
	os.Setenv("GIT_COMMITTER_DATE", "2020-01-02T03:04:05Z")
	if dir := os.Getenv("REPO_TEST_WORKTREE_CHURN"); dir != "" {
		os.Exit(worktreeChurn(dir))
	}
	os.Exit(m.Run())
}

// git runs git in dir and returns its trimmed stdout.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	all := append([]string{
		"-c", "init.defaultBranch=main", "-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", "-c", "core.quotepath=false",
	}, args...)
	cmd := exec.Command("git", all...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// writeFiles writes files (path → content) under dir; an empty content with
// a "-" key prefix deletes the file instead.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if del, ok := strings.CutPrefix(name, "-"); ok {
			if err := os.Remove(filepath.Join(dir, del)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// binary is content with every byte value, NULs and CRs included.
var binary = func() string {
	var b []byte
	for i := 0; i < 3*256; i++ {
		b = append(b, byte(i))
	}
	return string(b)
}()

// fixture is a test repository with two commits.
type fixture struct {
	dir        string // non-bare repository
	c1, c2     string // full commit ids
	at1, at2   map[string]string
	withNL     string // a path with a newline in it, in both commits
	deletedIn2 string
}

// newFixture makes a non-bare repository with two commits in dir.
func newFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	f := &fixture{dir: dir, withNL: "odd\nname.txt", deletedIn2: "dir/b.go"}
	f.at1 = map[string]string{
		"a.txt":              "one\n",
		"dir/b.go":           "package b\n",
		"dir/sub/c.py":       "print('c')\n",
		"with space.txt":     "spaces\n",
		"unicodé/файл 名.txt": "unicode\n",
		"bin.dat":            binary,
		"empty":              "",
		"crlf.txt":           "a\r\nb\r\n",
		"no-newline":         "no newline at end",
		f.withNL:             "newline in the name\n",
	}
	git(t, "", "init", "-q", dir)
	writeFiles(t, dir, f.at1)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "first")
	f.c1 = git(t, dir, "rev-parse", "HEAD")

	f.at2 = map[string]string{}
	for k, v := range f.at1 {
		f.at2[k] = v
	}
	change := map[string]string{"a.txt": "two\n", "new.txt": "new\n", "-" + f.deletedIn2: ""}
	writeFiles(t, dir, change)
	f.at2["a.txt"], f.at2["new.txt"] = "two\n", "new\n"
	delete(f.at2, f.deletedIn2)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "second")
	f.c2 = git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "tag", "v1", f.c1)
	return f
}

// openT opens dir and closes it at the end of the test.
func openT(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return r
}

// fakeGit puts a git wrapper first in PATH that logs its arguments, one
// invocation a line, to the returned file, then runs the real git.
func fakeGit(t *testing.T) (logFile string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	logFile = filepath.Join(t.TempDir(), "git.log")
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> '%s'\nexec '%s' \"$@\"\n", logFile, real)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return logFile
}
