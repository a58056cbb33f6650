// Package testtree writes and reads small file trees for tests: a map from
// slash path to content.
package testtree

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// Root writes files to a new temporary directory and opens it as a
// patch.Root, closed when the test ends.
func Root(t testing.TB, files map[string]string) (string, *patch.Root) {
	t.Helper()
	dir := t.TempDir()
	Write(t, dir, files)
	root, err := patch.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, root
}

// Write writes files under dir, making their directories; a name ending
// in "/" is a directory, made empty.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Read maps every file under dir, hidden ones included (a backup or
// journal left behind shows), to its content, and every empty directory
// D to "D/"; empty when dir does not exist. A .git directory is left out.
func Read(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			if es, _ := os.ReadDir(p); len(es) == 0 && p != dir {
				out[rel+"/"] = ""
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
