package repair_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// The rule for two names (docs/formats.md, "Two names: renames"): a git
// diff ("diff --git") whose names differ renames the file, with rename
// lines or without them, as git apply does; a traditional diff (---/+++
// only) patches one file in place: the one that exists, else the shorter
// name, else the old one (patch.TraditionalTarget).
var renameCases = []struct {
	name  string
	files map[string]string // before
	patch string
	want  map[string]string // after; nil: refused
	// oracle is the peer that gives want too: "git" (git apply), "gnu"
	// (GNU patch -p1), "both"; "" when neither does (the difference is
	// documented).
	oracle string
}{
	{"git diff --no-index of two files", map[string]string{"old.py": "a\nb\nc\n"},
		"diff --git a/old.py b/new.py\nindex de98044..7be73ce 100644\n--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"new.py": "a\nB\nc\n"}, "git"},
	{"git rename with hunk", map[string]string{"old.py": "a\nb\nc\n"},
		"diff --git a/old.py b/new.py\nsimilarity index 66%\nrename from old.py\nrename to new.py\n--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"new.py": "a\nB\nc\n"}, "git"},
	{"git rename onto a file", map[string]string{"old.py": "a\nb\nc\n", "new.py": "x\n"},
		"diff --git a/old.py b/new.py\nsimilarity index 66%\nrename from old.py\nrename to new.py\n--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		nil, "git"},
	{"git two names onto a file", map[string]string{"old.py": "a\nb\nc\n", "new.py": "x\n"},
		"diff --git a/old.py b/new.py\n--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		nil, ""}, // git apply replaces new.py; a rename here never does
	{"traditional, old exists", map[string]string{"old.py": "a\nb\nc\n"},
		"--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"old.py": "a\nB\nc\n"}, "gnu"},
	{"traditional, new exists", map[string]string{"new.py": "a\nb\nc\n"},
		"--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"new.py": "a\nB\nc\n"}, "both"},
	{"traditional, both exist, as long", map[string]string{"old.py": "a\nb\nc\n", "new.py": "a\nb\nc\n"},
		"--- a/old.py\n+++ b/new.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"old.py": "a\nB\nc\n", "new.py": "a\nb\nc\n"}, "gnu"},
	{"traditional, x.c.orig and x.c", map[string]string{"x.c.orig": "a\nb\nc\n", "x.c": "a\nb\nc\n"},
		"--- a/x.c.orig\n+++ b/x.c\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"x.c.orig": "a\nb\nc\n", "x.c": "a\nB\nc\n"}, "both"},
	{"traditional, x.c and x.c.new", map[string]string{"x.c": "a\nb\nc\n", "x.c.new": "a\nb\nc\n"},
		"--- a/x.c\n+++ b/x.c.new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		map[string]string{"x.c": "a\nB\nc\n", "x.c.new": "a\nb\nc\n"}, "both"},
}

// TestRenameRule: strict apply, tolerant apply and convert to every format
// (applied again) give the same files for every case, and the peer named
// by the case agrees.
func TestRenameRule(t *testing.T) {
	for _, c := range renameCases {
		t.Run(c.name, func(t *testing.T) {
			// Strict.
			dir := writeTree(t, c.files)
			p, err := patch.ParseUDiff(c.patch, patch.DefaultParseOptions)
			if err != nil {
				t.Fatal(err)
			}
			res, err := patch.Apply(p, patch.DirFS(dir), patch.ApplyOptions{})
			checkOutcome(t, "strict", dir, c.files, c.want, res, err)

			// Tolerant.
			dir = writeTree(t, c.files)
			rres, err := repair.Repair(c.patch, repair.Options{FS: patch.DirFS(dir)})
			var results []patch.FileResult
			if err == nil {
				results = rres.Results
			}
			checkOutcome(t, "tolerant", dir, c.files, c.want, results, err)
			if err == nil {
				// The canonical patch of the repair says the same.
				canon, perr := patch.Print(rres.Canonical(), patch.UDiff)
				if perr != nil {
					t.Fatal(perr)
				}
				dir = writeTree(t, c.files)
				cp, _ := patch.ParseUDiff(canon, patch.DefaultParseOptions)
				res, err := patch.Apply(cp, patch.DirFS(dir), patch.ApplyOptions{})
				checkOutcome(t, "canonical", dir, c.files, c.want, res, err)
			}

			// Converted to every format and applied.
			if c.want != nil {
				for _, f := range patch.Formats {
					dir = writeTree(t, c.files)
					fp := patch.DirFS(dir)
					text, err := convert(p, fp, f)
					if errors.Is(err, patch.ErrNotExpressible) {
						continue // search-replace has no renames
					}
					if err != nil {
						t.Errorf("convert to %s: %v", f, err)
						continue
					}
					cp, err := patch.Parse(text, f, patch.DefaultParseOptions)
					if err != nil {
						t.Fatalf("%s: %v\n%s", f, err, text)
					}
					res, err := patch.Apply(cp, fp, patch.ApplyOptions{})
					checkOutcome(t, "converted to "+string(f), dir, c.files, c.want, res, err)
				}
			}

			if c.oracle == "git" || c.oracle == "both" {
				gittest.Need(t)
				dir = writeTree(t, c.files)
				_, err := gittest.Run(t, dir, c.patch, "apply", "-")
				checkPeer(t, "git apply", dir, c.files, c.want, err)
			}
			if c.oracle == "gnu" || c.oracle == "both" {
				if _, err := exec.LookPath("patch"); err != nil {
					t.Skip("no GNU patch")
				}
				dir = writeTree(t, c.files)
				cmd := exec.Command("patch", "-p1", "-s", "-f", "--no-backup-if-mismatch")
				cmd.Dir, cmd.Stdin = dir, strings.NewReader(c.patch)
				out, err := cmd.CombinedOutput()
				if err != nil {
					err = errors.New(string(out))
				}
				checkPeer(t, "GNU patch", dir, c.files, c.want, err)
			}
		})
	}
}

// convert prints p in format f as patchbench convert does: formats without
// line numbers are made anew from the applied result.
func convert(p *patch.Patch, fsys patch.FileSystem, f patch.Format) (string, error) {
	if f.HasPositions() {
		return patch.Print(p, f)
	}
	res, err := patch.Apply(p, fsys, patch.ApplyOptions{})
	if err != nil {
		return "", err
	}
	out := &patch.Patch{}
	for _, r := range res {
		var old []byte
		if r.OldPath != "" {
			if old, err = fsys.ReadFile(r.OldPath); err != nil {
				return "", err
			}
		}
		opts := patch.DefaultMakeOptions()
		opts.Unique = true
		fp := patch.Make(r.OldPath, r.Path, string(old), string(r.Content), opts)
		fp.Op = r.Op
		out.Files = append(out.Files, fp)
	}
	return patch.Print(out, f)
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	return got
}

// checkOutcome writes results (when err is nil) and compares the tree with
// want, or, with want nil, checks the refusal left the tree as it was.
func checkOutcome(t *testing.T, who, dir string, before, want map[string]string, res []patch.FileResult, err error) {
	t.Helper()
	if err == nil {
		err = patch.WriteResults(dir, res)
	}
	checkPeer(t, who, dir, before, want, err)
}

func checkPeer(t *testing.T, who, dir string, before, want map[string]string, err error) {
	t.Helper()
	if want == nil {
		if err == nil {
			t.Errorf("%s accepted the patch, want it refused", who)
		}
		if d := cmp.Diff(before, readTree(t, dir)); d != "" {
			t.Errorf("%s: a refusal changed files (-before +after):\n%s", who, d)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", who, err)
		return
	}
	if d := cmp.Diff(want, readTree(t, dir)); d != "" {
		t.Errorf("%s: files (-want +got):\n%s", who, d)
	}
}
