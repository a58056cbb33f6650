package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// manyFilesPatch returns a git diff that creates files files in dirs
// directories and the tree it makes, and one that modifies each of them.
func manyFilesPatch(t *testing.T, files, dirs int) (create, modify string, created, modified map[string]string) {
	t.Helper()
	repo := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "empty")
	created, modified = map[string]string{}, map[string]string{}
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("d%d/f%04d.txt", i%dirs, i)
		created[name] = fmt.Sprintf("one %d\ntwo\nthree\n", i)
		modified[name] = fmt.Sprintf("one %d\nTWO\nthree\n", i)
	}
	writeTree(t, repo, created)
	git("add", "-A")
	create = git("diff", "--cached")
	git("commit", "-q", "-m", "files")
	writeTree(t, repo, modified)
	modify = git("diff")
	return create, modify, created, modified
}

// TestApplyManyFilesFewDescriptors: a patch that creates 1,000 files in 10
// directories, and one that modifies them, apply under ulimit -n 128 as
// git apply does there: the writes hold descriptors per directory, not
// per file.
func TestApplyManyFilesFewDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin, err := exec.LookPath("patchbench") // the test binary, set up by TestMain
	if err != nil {
		t.Skip("patchbench is not in PATH")
	}
	create, modify, created, modified := manyFilesPatch(t, 1000, 10)
	limited := func(dir, patchText string, name string, args ...string) (string, error) {
		pf := filepath.Join(t.TempDir(), "p.diff")
		if err := os.WriteFile(pf, []byte(patchText), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -n 128 && cd "$1" && shift && exec "$@"`, "sh", dir, name}, append(args, pf)...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	for _, tool := range []struct {
		name string
		args []string
	}{{"git", []string{"apply"}}, {bin, []string{"apply"}}, {bin, []string{"apply", "--strict"}}} {
		dir := t.TempDir()
		if stderr, err := limited(dir, create, tool.name, tool.args...); err != nil {
			t.Fatalf("%s %v: create 1,000 files under ulimit -n 128: %v\n%s", filepath.Base(tool.name), tool.args, err, stderr)
		}
		if d := cmp.Diff(created, readTree(t, dir)); d != "" {
			t.Fatalf("%s %v: created tree (-want +got):\n%s", filepath.Base(tool.name), tool.args, d)
		}
		if stderr, err := limited(dir, modify, tool.name, tool.args...); err != nil {
			t.Fatalf("%s %v: modify 1,000 files under ulimit -n 128: %v\n%s", filepath.Base(tool.name), tool.args, err, stderr)
		}
		if d := cmp.Diff(modified, readTree(t, dir)); d != "" {
			t.Fatalf("%s %v: modified tree (-want +got):\n%s", filepath.Base(tool.name), tool.args, d)
		}
	}
}
