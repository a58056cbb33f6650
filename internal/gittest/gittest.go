// Package gittest runs the git binary for tests, as an oracle: isolated from
// the user's and the system's configuration, with a fixed identity for
// commits.
package gittest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Need skips the test when git is not installed.
func Need(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

// Run runs git with args in dir, stdin as its input, and returns its
// standard output; a failure's error is git's standard error.
func Run(t testing.TB, dir, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New(strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Commit makes dir a repository holding what is in it, in one commit.
func Commit(t testing.TB, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "one"}} {
		if _, err := Run(t, dir, "", args...); err != nil {
			t.Fatalf("git %s: %v", args[0], err)
		}
	}
}

// CommitFiles writes files (see [WriteFiles]) and makes dir a repository
// holding them, in one commit.
func CommitFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	WriteFiles(t, dir, files)
	Commit(t, dir)
}

// WriteFiles writes files: a path under dir → its content.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
