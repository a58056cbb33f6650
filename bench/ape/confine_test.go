package ape

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/confinetest"
)

// TestCandidateConfined: a candidate's file is written into the restored
// tree through the same confinement as a patch: every path of the shared
// table is refused with its reason and nothing is written; a plain path is
// written, replacing the file rather than writing into it (a hard link into
// the store stays as it was).
func TestCandidateConfined(t *testing.T) {
	for _, c := range confinetest.Cases {
		if c.ByMode {
			continue // a candidate is a path and a content: no mode to refuse
		}
		t.Run(c.Name, func(t *testing.T) {
			tr := confinetest.New(t)
			name := tr.RefusedPath(c)
			err := writeCandidate(tr.Dir, name, "pwned\n")
			if want := tr.Want(c, false); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("writeCandidate(%.80q): %v, want an error containing %q", name, err, want)
			}
			tr.Unchanged(t)
		})
	}
	tr := confinetest.New(t)
	store := filepath.Join(tr.Outside, "store-object")
	if err := os.Link(filepath.Join(tr.Dir, "sub", "f.txt"), store); err != nil {
		t.Skipf("no hard links: %v", err)
	}
	if err := writeCandidate(tr.Dir, "sub/f.txt", "candidate\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.Dir, "sub", "f.txt")); string(b) != "candidate\n" {
		t.Errorf("sub/f.txt holds %q, want the candidate", b)
	}
	if b, _ := os.ReadFile(store); string(b) != "inner\n" {
		t.Errorf("the hard-linked store object holds %q, want it untouched", b)
	}
}

// TestTaskPathConfined: a task whose file path the confinement refuses is
// a bad line of the tasks file, named with its reason; the others are read.
func TestTaskPathConfined(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tasks.jsonl")
	lines := `{"id":"ok","file_path_after":"src/a.go"}
{"id":"git","file_path_after":"sub/.GIT/hooks/pre-commit"}
{"id":"up","file_path_after":"../outside.go"}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks, bad, err := ReadTasksLenient(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].ID != "ok" {
		t.Errorf("tasks %+v, want only ok", tasks)
	}
	want := []string{`(id "git"): unsafe path "sub/.GIT/hooks/pre-commit": patches may not touch .git`, `(id "up"): unsafe path "../outside.go"`}
	if len(bad) != len(want) {
		t.Fatalf("bad lines %v, want %d", bad, len(want))
	}
	for i, w := range want {
		if !strings.Contains(bad[i].Error(), w) {
			t.Errorf("bad line %d: %v, want %q", i, bad[i], w)
		}
	}
}
