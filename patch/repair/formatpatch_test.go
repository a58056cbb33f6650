package repair_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// fpCommits are the commits of TestFormatPatchMails' repository, each a
// map of file to content ("" deletes it), made in order on one branch.
// Each is a shape whose mail ends in a way the signature could be misread:
var fpCommits = []struct {
	name  string
	files map[string]string
	mv    [2]string // a rename made with git mv before the files are written
}{
	{name: "base", files: map[string]string{
		"notes.md": "title\n\nitem one\n- \n",
		"deps.txt": "click\nflask\nrequests\nrich\n",
		"old.go":   "package old\n\nfunc Old() {}\n",
		"cfg.ini":  "[a]\nx = 1\n[b]\ny = 2\n",
		"gone.txt": "to be deleted\n",
	}},
	// The hunk ends with the removal of the line "- ": "-- " within
	// the counts, then the signature's "-- ".
	{name: "remove a dash line", files: map[string]string{"notes.md": "title\n\nitem one\n"}},
	// The hunk ends with removed lines at the end of the file.
	{name: "removal at the end", files: map[string]string{"deps.txt": "click\nflask\n"}},
	// A rename with no hunk: the mail's diff is a git header only.
	{name: "pure rename", mv: [2]string{"old.go", "new.go"}},
	// A creation and a deletion.
	{name: "create and delete", files: map[string]string{"added.txt": "one\n- \ntwo\n", "gone.txt": ""}},
	// Three commits on one file: a series applies them in turn.
	{name: "series 1", files: map[string]string{"cfg.ini": "[a]\nx = 2\n[b]\ny = 2\n"}},
	{name: "series 2", files: map[string]string{"cfg.ini": "[a]\nx = 2\n[b]\ny = 3\n- \n"}},
	{name: "series 3", files: map[string]string{"cfg.ini": "[a]\nx = 2\n[b]\ny = 3\n"}},
}

// TestFormatPatchMails applies git format-patch's mails (one commit, and
// the series of several concatenated, as --stdout A..B writes them), in
// the default mode and with --strict, through Apply and ApplyReader, to
// the commit before them, and compares the tree with the one git am
// makes (the commit's own tree). Each ends with format-patch's signature
// ("-- " and git's version), which is no removed line "- "; within a
// hunk's counts "-- " is one. A second apply of each mail writes nothing.
func TestFormatPatchMails(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	mustGit := func(args ...string) string { t.Helper(); return mustGit(t, repo, args...) }
	mustGit("init", "-q")
	var commits []string
	for _, c := range fpCommits {
		if c.mv[0] != "" {
			mustGit("mv", c.mv[0], c.mv[1])
		}
		for name, content := range c.files {
			p := filepath.Join(repo, name)
			if content == "" {
				mustGit("rm", "-q", name)
				continue
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit("add", name)
		}
		mustGit("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", c.name)
		commits = append(commits, strings.TrimSpace(mustGit("rev-parse", "HEAD")))
	}
	type mail struct {
		name     string
		from, to string
		text     string
	}
	var mails []mail
	for i := 1; i < len(commits); i++ {
		text := mustGit("format-patch", "-M", "-1", "--stdout", commits[i])
		mails = append(mails, mail{name: fpCommits[i].name, from: commits[i-1], to: commits[i], text: text})
	}
	// The series of the last three commits, and of every commit.
	n := len(commits)
	mails = append(mails,
		mail{name: "series of 3", from: commits[n-4], to: commits[n-1], text: mustGit("format-patch", "-M", "--stdout", commits[n-4]+".."+commits[n-1])},
		mail{name: "series of all", from: commits[0], to: commits[n-1], text: mustGit("format-patch", "-M", "--stdout", commits[0]+".."+commits[n-1])})
	for _, m := range mails {
		if !strings.Contains(m.text, "\n-- \n") {
			t.Fatalf("%s: format-patch wrote no signature:\n%s", m.name, m.text)
		}
	}
	if !strings.Contains(mails[0].text, "\n-- \n-- \n") {
		t.Fatalf("%s: want a removed line \"- \" before the signature:\n%s", mails[0].name, mails[0].text)
	}
	tree := func(rev string) map[string]string {
		files := map[string]string{}
		for _, name := range strings.Fields(mustGit("ls-tree", "-r", "--name-only", rev)) {
			files[name] = mustGit("show", rev+":"+name)
		}
		return files
	}
	for _, m := range mails {
		before, want := tree(m.from), tree(m.to)
		for _, mode := range []struct {
			name   string
			opts   repair.ApplyOptions
			reader bool
		}{
			{"default", repair.ApplyOptions{}, false},
			{"default reader", repair.ApplyOptions{}, true},
			{"strict", repair.ApplyOptions{Strict: true, Strip: 1}, false},
		} {
			dir := writeTree(t, before)
			root, err := patch.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			apply := func() (*repair.Report, error) {
				if mode.reader {
					return repair.ApplyReader(root, strings.NewReader(m.text), int64(len(m.text)), mode.opts)
				}
				return repair.Apply(root, m.text, mode.opts)
			}
			if _, err := apply(); err != nil {
				t.Errorf("%s, %s: %v", m.name, mode.name, err)
				continue
			}
			if d := cmp.Diff(want, readTree(t, dir)); d != "" {
				t.Errorf("%s, %s: the tree differs from git am's (-git am +got):\n%s", m.name, mode.name, d)
				continue
			}
			// Again: nothing written.
			rep, err := apply()
			if err == nil && rep.Status != repair.StatusAlreadyApplied {
				t.Errorf("%s, %s: second apply: status %s, want already applied or refused", m.name, mode.name, rep.Status)
			}
			if d := cmp.Diff(want, readTree(t, dir)); d != "" {
				t.Errorf("%s, %s: the second apply changed the tree (-want +got):\n%s", m.name, mode.name, d)
			}
		}
	}
}

// TestMailSignatureOrRemoval: after a hunk's counts are met, "-- " and
// git's version are format-patch's signature; within the counts "-- " is
// a removed line "- ", whatever follows it. Without counts the version
// line decides: a "-- " with no version under it in a hunk without counts
// is a removal (here refused as stale).
func TestMailSignatureOrRemoval(t *testing.T) {
	const hdr = "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
	for _, c := range []struct {
		name, file, patch string
		want              string // "" = refused
	}{
		{"removal at the end, then the signature", "click\nflask\nrequests\nrich\n",
			"@@ -1,4 +1,2 @@\n click\n flask\n-requests\n-rich\n-- \n2.39.2\n", "click\nflask\n"},
		{"signature after a blank line and a mail", "click\nflask\nrequests\nrich\n",
			"@@ -1,4 +1,2 @@\n click\n flask\n-requests\n-rich\n-- \n2.39.2\n\nFrom 0123456789012345678901234567890123456789 Mon Sep 17 00:00:00 2001\n", "click\nflask\n"},
		{"windows version", "a\nb\n", "@@ -1,2 +1,1 @@\n a\n-b\n-- \n2.43.0.windows.1\n", "a\n"},
		{"apple version", "a\nb\n", "@@ -1,2 +1,1 @@\n a\n-b\n-- \n2.39.3 (Apple Git-146)\n", "a\n"},
		{"removed dash line, then the signature", "a\n- \nz\n", "@@ -1,2 +1,1 @@\n a\n-- \n-- \n2.39.2\n", "a\nz\n"},
		{"within the counts: a removal, context written", "a\n- \n2.39.2\n", "@@ -1,3 +1,2 @@\n a\n-- \n 2.39.2\n", "a\n2.39.2\n"},
		{"within the counts: a removal, context lost its space", "a\n- \n2.39.2\n", "@@ -1,3 +1,2 @@\n a\n-- \n2.39.2\n", "a\n2.39.2\n"},
		{"no counts: the version decides", "a\nb\nc\n", "@@ @@\n a\n-b\n c\n-- \n2.39.2\n", "a\nc\n"},
		{"counts met, no version: git ignores the rest", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n-- \nsent from my phone\n", "a\nB\n"},
		{"no counts, no version: a removal, stale", "a\nb\n", "@@ @@\n a\n-b\n+B\n-- \nsent from my phone\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := repair.Repair(hdr+c.patch, repair.Options{FS: patch.MapFS{"f": c.file}})
			if c.want == "" {
				if err == nil {
					t.Fatalf("applied (%q), want refused", res.Results[0].Content)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) != 1 || string(res.Results[0].Content) != c.want {
				t.Fatalf("got %+v, want %q", res.Results, c.want)
			}
		})
	}
}

// mustGit runs git in dir and returns its output, failing the test on an
// error.
func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
