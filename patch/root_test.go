package patch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/confinetest"
	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/patch"
)

// TestConfineApply: strict apply and reverse refuse every confinement case
// through a Root, naming the path, and nothing is written.
func TestConfineApply(t *testing.T) {
	for _, c := range confinetest.Cases {
		for _, reverse := range []bool{false, true} {
			name := c.Name
			if reverse {
				name += "/reverse"
			}
			t.Run(name, func(t *testing.T) {
				tr := confinetest.New(t)
				f, err := patch.ParseFormat(c.Format)
				if err != nil {
					t.Fatal(err)
				}
				p, err := patch.Parse(tr.Patch(c), f, patch.ParseOptions{Strip: 1})
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				root, err := patch.OpenRoot(tr.Dir)
				if err != nil {
					t.Fatal(err)
				}
				defer root.Close()
				res, err := patch.Apply(p, root, patch.ApplyOptions{Reverse: reverse})
				if err == nil {
					err = root.WriteResults(res)
					t.Errorf("Apply accepted the patch: %+v (write: %v)", res, err)
				} else if want := tr.Want(c, reverse); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
				tr.Unchanged(t)
			})
		}
	}
}

// TestConfineWriteResults: WriteResults checks every path itself, so that
// results computed from another file system (the SWE patch stage reads git
// objects) are refused too, all or nothing.
func TestConfineWriteResults(t *testing.T) {
	tests := []struct {
		name    string
		results []patch.FileResult
		want    string
	}{
		{"create through link", []patch.FileResult{{Path: "link/new.txt", Op: patch.Create, Content: []byte("x\n")}},
			`unsafe path "link/new.txt": beyond a symbolic link (link -> ../outside)`},
		{"modify a link", []patch.FileResult{{OldPath: "file.txt", Path: "file.txt", Op: patch.Modify, Content: []byte("x\n")}},
			`unsafe path "file.txt": a symbolic link (-> ../outside/secret.txt)`},
		{"dotdot", []patch.FileResult{{Path: "../outside/victim.txt", Op: patch.Modify, Content: []byte("x\n")}},
			`unsafe path "../outside/victim.txt"`},
		{"absolute", []patch.FileResult{{Path: "/etc/passwd", Op: patch.Modify, Content: []byte("x\n")}},
			`unsafe path "/etc/passwd"`},
		{"link inside", []patch.FileResult{{OldPath: "inlink/f.txt", Path: "inlink/f.txt", Op: patch.Modify, Content: []byte("x\n")}},
			`unsafe path "inlink/f.txt": beyond a symbolic link (inlink -> sub)`},
		{"rename through link", []patch.FileResult{{OldPath: "a.txt", Path: "link/a.txt", Op: patch.Rename, Content: []byte("one\n")}},
			`unsafe path "link/a.txt"`},
		{"delete through link", []patch.FileResult{{OldPath: "link/victim.txt", Op: patch.Delete}},
			`unsafe path "link/victim.txt"`},
		{"delete a link", []patch.FileResult{{OldPath: "file.txt", Op: patch.Delete}},
			`unsafe path "file.txt": a symbolic link`},
		{"second of two", []patch.FileResult{
			{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("ONE\n")},
			{Path: "link/new.txt", Op: patch.Create, Content: []byte("x\n")}},
			`unsafe path "link/new.txt"`},
		{"make a link", []patch.FileResult{{Path: "newlink", Op: patch.Create, Mode: 0o120000, Content: []byte("../outside")}},
			`unsafe path "newlink": the patch makes it a symbolic link`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := confinetest.New(t)
			err := patch.WriteResults(tr.Dir, tt.results)
			if !errors.Is(err, patch.ErrUnsafePath) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteResults: %v, want an unsafe-path error containing %q", err, tt.want)
			}
			tr.Unchanged(t)
		})
	}
}

// TestConfineGitOracle: git apply refuses the same cases (where it reads
// the patch) and writes nothing.
func TestConfineGitOracle(t *testing.T) {
	gittest.Need(t)
	for _, c := range confinetest.Cases {
		if !c.Git {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			tr := confinetest.New(t)
			tr.Commit(t)
			_, err := gittest.Run(t, tr.Dir, tr.Patch(c), "apply", "-")
			if err == nil || !strings.Contains(err.Error(), c.GitWant) {
				t.Errorf("git apply: %v, want an error containing %q", err, c.GitWant)
			}
			tr.Unchanged(t)
		})
	}
}

// TestConfineSymlinkMode: a patch that declares a symbolic link (mode
// 120000, as git diff writes links) is refused: links are not edited.
func TestConfineSymlinkMode(t *testing.T) {
	tr := confinetest.New(t)
	text := "diff --git a/newlink b/newlink\nnew file mode 120000\n--- /dev/null\n+++ b/newlink\n@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n"
	p, err := patch.ParseUDiff(text, patch.DefaultParseOptions)
	if err != nil {
		t.Fatal(err)
	}
	_, err = patch.Apply(p, patch.DirFS(tr.Dir), patch.ApplyOptions{})
	want := `unsafe path "newlink": the patch edits a symbolic link (mode 120000)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Apply: %v, want an error containing %q", err, want)
	}
	tr.Unchanged(t)
}

// TestRootWritesInside: a patch that stays inside the tree is written
// through the Root: new directories made, a file deleted and its emptied
// directory removed, permissions kept.
func TestRootWritesInside(t *testing.T) {
	tr := confinetest.New(t)
	if err := os.Chmod(filepath.Join(tr.Dir, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tr.Dir, "gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.Dir, "gone", "f.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := patch.WriteResults(tr.Dir, []patch.FileResult{
		{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("ONE\n")},
		{Path: "new/dir/n.txt", Op: patch.Create, Content: []byte("n\n")},
		{OldPath: "gone/f.txt", Op: patch.Delete},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "ONE\n", "new/dir/n.txt": "n\n"} {
		b, err := os.ReadFile(filepath.Join(tr.Dir, filepath.FromSlash(name)))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(tr.Dir, "a.txt")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("a.txt mode %v, %v; want 0755 kept", st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(tr.Dir, "gone")); !os.IsNotExist(err) {
		t.Errorf("gone: %v; want the emptied directory removed", err)
	}
	entries, _ := os.ReadDir(filepath.Join(tr.Dir, "new", "dir"))
	if len(entries) != 1 {
		t.Errorf("new/dir holds %d entries, want only n.txt (no temporary files left)", len(entries))
	}
}

// TestWriteResultsBackupName: a file named like a backup of another
// (X.patchbench-orig, the name the writer used to move X aside) is the
// user's: writing X leaves it whole, and writing both writes both.
func TestWriteResultsBackupName(t *testing.T) {
	for _, both := range []bool{false, true} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "a.txt.patchbench-orig"), []byte("precious\n"), 0o644)
		results := []patch.FileResult{{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("A\n")}}
		want := map[string]string{"a.txt": "A\n", "a.txt.patchbench-orig": "precious\n"}
		if both {
			results = append(results, patch.FileResult{OldPath: "a.txt.patchbench-orig", Path: "a.txt.patchbench-orig", Op: patch.Modify, Content: []byte("P\n")})
			want["a.txt.patchbench-orig"] = "P\n"
		}
		if err := patch.WriteResults(dir, results); err != nil {
			t.Fatal(err)
		}
		for name, w := range want {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != w {
				t.Errorf("both=%v: %s is %q (%v), want %q", both, name, b, err, w)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("both=%v: %d files left, want 2", both, len(entries))
		}
	}
}

// TestReadFileLimit: a file over the bound is refused before it is read.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("0123456789"), 0o644)
	r, err := patch.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := r.ReadFileLimit("a.txt", 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the bound: %q, %v", b, err)
	}
	if _, err := r.ReadFileLimit("a.txt", 9); !errors.Is(err, patch.ErrTooLarge) {
		t.Errorf("over the bound: %v, want ErrTooLarge", err)
	}
}
