package repo

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGrep(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	var many strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&many, "needle %d\n", i)
	}
	writeFiles(t, dir, map[string]string{
		"a/one.py":      "import os\ndef Needle():\n    pass\n",
		"a/b/two.py":    "x = 1\nneedle = 2\n",
		"c.txt":         "needle in text\n",
		"bin.dat":       "needle\x00binary\n",
		"many.go":       many.String(),
		"odd name:1.py": "needle: colon\n",
	})
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "one")
	first := git(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"c.txt": "nothing here\n"})
	git(t, dir, "commit", "-q", "-am", "two")

	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	got, more, err := r.Grep(ctx, first, GrepOptions{Pattern: "needle", Pathspecs: []string{":(glob)**/*.py"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []GrepMatch{{"a/b/two.py", 2, "needle = 2"}, {"odd name:1.py", 1, "needle: colon"}}
	if diff := cmp.Diff(want, got); diff != "" || more {
		t.Errorf("grep *.py at the first commit (more=%v): -want +got\n%s", more, diff)
	}

	got, _, err = r.Grep(ctx, first, GrepOptions{Pattern: "^(def )?needle", IgnoreCase: true, Pathspecs: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	want = []GrepMatch{{"a/b/two.py", 2, "needle = 2"}, {"a/one.py", 2, "def Needle():"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("grep -i under a/: -want +got\n%s", diff)
	}

	// The binary file is skipped; c.txt matches only at the first commit.
	got, _, err = r.Grep(ctx, "HEAD", GrepOptions{Pattern: "needle (in|binary)"})
	if err != nil || len(got) != 0 {
		t.Errorf("grep at HEAD: %v, %v; want no match", got, err)
	}
	got, _, err = r.Grep(ctx, first, GrepOptions{Pattern: "needle in"})
	if err != nil || len(got) != 1 || got[0].Path != "c.txt" {
		t.Errorf("grep at the first commit: %v, %v; want c.txt", got, err)
	}

	got, more, err = r.Grep(ctx, "HEAD", GrepOptions{Pattern: "needle [0-9]+", Max: 5})
	if err != nil || len(got) != 5 || !more || got[4] != (GrepMatch{"many.go", 5, "needle 5"}) {
		t.Errorf("grep with Max 5: %v, more=%v, %v; want the first 5 lines of many.go and more", got, more, err)
	}
	got, more, err = r.Grep(ctx, "HEAD", GrepOptions{Pattern: "needle [0-9]+", Max: 30})
	if err != nil || len(got) != 30 || more {
		t.Errorf("grep with Max 30 of 30: %d matches, more=%v, %v", len(got), more, err)
	}

	if _, _, err := r.Grep(ctx, "HEAD", GrepOptions{Pattern: "needle("}); err == nil || !strings.Contains(err.Error(), "needle(") {
		t.Errorf("bad pattern: err = %v, want git's complaint naming the pattern", err)
	}
	if _, _, err := r.Grep(ctx, "nosuchrev", GrepOptions{Pattern: "x"}); err == nil {
		t.Error("unknown revision: no error")
	}
}
