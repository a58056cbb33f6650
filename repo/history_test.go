package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHistory checks what the benchmarks read from a history against what
// git itself prints: commits, parents, messages, numstat, diffs, changes,
// trees with sizes, blobs (a missing one named), an export and an apply.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\n", "bin.dat": "x\x00y"})
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	c1 := git(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"a.txt": "one\n2\nthree\n", "bin.dat": "x\x00z", "héllo.go": "package h\n"})
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "second\n\nbody")
	c2 := git(t, dir, "rev-parse", "HEAD")

	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	revs, err := RevListArgs("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.RevList(ctx, revs, RevListOptions{Reverse: true})
	if err != nil || !cmp.Equal(got, []string{c1, c2}) {
		t.Errorf("RevList = %v, %v; want %v", got, err, []string{c1, c2})
	}
	if ps, err := r.Parents(ctx, c2); err != nil || !cmp.Equal(ps, []string{c1}) {
		t.Errorf("Parents(c2) = %v, %v", ps, err)
	}
	if ps, err := r.Parents(ctx, c1); err != nil || len(ps) != 0 {
		t.Errorf("Parents(root) = %v, %v", ps, err)
	}
	if m, err := r.Message(ctx, c2); err != nil || m != "second\n\nbody\n\n" {
		t.Errorf("Message = %q, %v", m, err)
	}
	if tm, err := r.CommitTime(ctx, c2); err != nil || tm != 1577934245 {
		t.Errorf("CommitTime = %d, %v", tm, err)
	}
	if _, err := r.Parents(ctx, "--output=x"); err == nil {
		t.Error("Parents took an option for a revision")
	}

	stats, err := r.NumStat(ctx, c1, c2, DiffOptions{Unquoted: true})
	want := []FileStat{{Added: 2, Removed: 1, Path: "a.txt"}, {Binary: true, Path: "bin.dat"}, {Added: 1, Path: "héllo.go"}}
	if err != nil || !cmp.Equal(stats, want) {
		t.Errorf("NumStat = %+v, %v; want %+v", stats, err, want)
	}
	diff, err := r.Diff(ctx, c1, c2, DiffOptions{Paths: []string{"a.txt"}})
	if wantDiff := git(t, dir, "diff", c1, c2, "--", "a.txt") + "\n"; err != nil || string(diff) != wantDiff {
		t.Errorf("Diff = %q, %v; want %q", diff, err, wantDiff)
	}
	log, err := r.Log(ctx, revs)
	if err != nil || len(log) != 2 || log[0].ID != c2 || log[0].Subject != "second" || !cmp.Equal(log[0].Parents, []string{c1}) ||
		!cmp.Equal(log[0].Files, want) || len(log[1].Parents) != 0 {
		t.Errorf("Log = %+v, %v", log, err)
	}
	ch, err := r.Changes(ctx, c1, c2)
	if wantCh := []Change{{"M", "a.txt"}, {"M", "bin.dat"}, {"A", "héllo.go"}}; err != nil || !cmp.Equal(ch, wantCh) {
		t.Errorf("Changes = %v, %v; want %v", ch, err, wantCh)
	}

	tree, err := r.Tree(ctx, c2)
	if err != nil || len(tree) != 3 || tree[0].Path != "a.txt" || tree[0].Size != 12 || !tree[0].Regular() ||
		tree[0].ID != git(t, dir, "rev-parse", c2+":a.txt") {
		t.Fatalf("Tree = %+v, %v", tree, err)
	}
	var blobs []string
	ids := []string{tree[0].ID, strings.Repeat("0", len(tree[0].ID)), tree[2].ID}
	err = r.Blobs(ctx, ids, func(i int, content string, ok bool) error {
		if !ok {
			content = "(missing)"
		}
		blobs = append(blobs, content)
		return nil
	})
	if wantBlobs := []string{"one\n2\nthree\n", "(missing)", "package h\n"}; err != nil || !cmp.Equal(blobs, wantBlobs) {
		t.Errorf("Blobs = %q, %v; want %q", blobs, err, wantBlobs)
	}

	dest := t.TempDir()
	if err := r.Export(ctx, c1, dest); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "a.txt")); err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("exported a.txt = %q, %v", b, err)
	}
	if err := ApplyInDir(ctx, dest, string(diff)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "a.txt")); string(b) != "one\n2\nthree\n" {
		t.Errorf("applied a.txt = %q", b)
	}
	if err := ApplyInDir(ctx, dest, string(diff)); err == nil || !strings.Contains(err.Error(), "git apply") {
		t.Errorf("second apply: %v, want git apply's refusal", err)
	}
}
