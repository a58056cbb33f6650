package patch

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
)

// tree is a directory's regular files, path to content; a file's mode is
// kept under the key "mode:PATH" when it is executable.
type tree map[string]string

func writeTree(t *testing.T, dir string, files tree) {
	t.Helper()
	for p, c := range files {
		if strings.HasPrefix(p, "mode:") {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		perm := os.FileMode(0o644)
		if _, ok := files["mode:"+p]; ok {
			perm = 0o755
		}
		if err := os.WriteFile(full, []byte(c), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, perm); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, dir string) tree {
	t.Helper()
	out := tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		if info, err := d.Info(); err == nil && info.Mode().Perm()&0o111 != 0 {
			out["mode:"+rel] = ""
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree reports the first difference between two trees, "" if none.
func sameTree(want, got tree) string {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, wok := want[k]
		g, gok := got[k]
		switch {
		case !wok:
			return k + ": unexpected"
		case !gok:
			return k + ": missing"
		case w != g:
			return k + ": content differs"
		}
	}
	return ""
}

// rnd returns n deterministic pseudo-random bytes.
func rnd(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// pngLike is a PNG signature and chunks with random payloads.
func pngLike(seed uint64, chunks int) string {
	var b strings.Builder
	b.WriteString("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00")
	for i := 0; i < chunks; i++ {
		b.WriteString("\x00\x00\x04\x00IDAT")
		b.WriteString(rnd(seed+uint64(i), 1024))
	}
	b.WriteString("\x00\x00\x00\x00IEND\xaeB`\x82")
	return b.String()
}

// edit replaces n bytes at off with random ones and inserts ins more.
func edit(s string, seed uint64, off, n, ins int) string {
	return s[:off] + rnd(seed, n+ins) + s[off+n:]
}

type binaryGitCase struct {
	name     string
	old, new tree
	// diffArgs are extra arguments of git diff (-M for renames).
	diffArgs []string
	// delta: the forward block of the first file must be a delta.
	delta bool
}

func binaryGitCases() []binaryGitCase {
	png := pngLike(1, 6)
	big := rnd(7, 300_000) // copies longer than 0x10000 are split
	small := rnd(3, 3000)
	return []binaryGitCase{
		{name: "png-pixels", old: tree{"img/logo.png": png}, new: tree{"img/logo.png": edit(png, 2, 3000, 40, 0)}, delta: true},
		{name: "png-replaced", old: tree{"logo.png": png}, new: tree{"logo.png": pngLike(99, 3)}},
		{name: "random-replaced", old: tree{"blob.bin": rnd(4, 4096)}, new: tree{"blob.bin": rnd(5, 5000)}},
		{name: "small-edits", old: tree{"data.bin": small}, new: tree{"data.bin": edit(edit(small, 8, 100, 3, 0), 9, 2000, 0, 17)}, delta: true},
		{name: "large-edits", old: tree{"large.bin": big}, new: tree{"large.bin": edit(edit(big, 10, 70_000, 10, 5), 11, 250_000, 100, 0)}, delta: true},
		{name: "truncated", old: tree{"t.bin": small}, new: tree{"t.bin": small[:1000]}, delta: true},
		{name: "create", old: tree{"keep.txt": "x\n"}, new: tree{"keep.txt": "x\n", "new/dir/font.ttf": rnd(12, 2500)}},
		{name: "delete", old: tree{"keep.txt": "x\n", "old/font.ttf": rnd(13, 2500)}, new: tree{"keep.txt": "x\n"}},
		{name: "to-empty", old: tree{"e.bin": "\x00\x01\x02"}, new: tree{"e.bin": ""}},
		{name: "from-empty", old: tree{"e.bin": ""}, new: tree{"e.bin": "\x00\x01\x02" + rnd(14, 100)}},
		{name: "with-text", old: tree{"a.txt": "one\ntwo\nthree\n", "b.bin": small}, new: tree{"a.txt": "one\n2\nthree\n", "b.bin": edit(small, 15, 10, 1, 0)}},
		{name: "rename", old: tree{"x/old.bin": small}, new: tree{"y/new.bin": edit(small, 16, 1500, 30, 0)}, diffArgs: []string{"-M"}},
		{name: "mode", old: tree{"run.bin": png}, new: tree{"run.bin": edit(png, 17, 500, 2, 0), "mode:run.bin": ""}},
	}
}

// gitBinaryPatch commits old in a new repository, writes new over it and
// returns git diff --binary.
func gitBinaryPatch(t *testing.T, c binaryGitCase) string {
	t.Helper()
	repo := t.TempDir()
	if _, err := gittest.Run(t, repo, "", "init", "-q"); err != nil {
		t.Fatal(err)
	}
	writeTree(t, repo, c.old)
	if _, err := gittest.Run(t, repo, "", "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := gittest.Run(t, repo, "", "commit", "-q", "-m", "old"); err != nil {
		t.Fatal(err)
	}
	for p := range c.old {
		if _, ok := c.new[p]; !ok && !strings.HasPrefix(p, "mode:") {
			os.Remove(filepath.Join(repo, p))
		}
	}
	writeTree(t, repo, c.new)
	if _, err := gittest.Run(t, repo, "", "add", "-A"); err != nil {
		t.Fatal(err)
	}
	out, err := gittest.Run(t, repo, "", append([]string{"diff", "--cached", "--binary", "--no-color"}, c.diffArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// applyOurs applies text to the files under dir strictly and writes the
// result, as patchbench apply --strict does.
func applyOurs(dir, text string, reverse bool) error {
	p, err := ParseUDiff(text, DefaultParseOptions)
	if err != nil {
		return err
	}
	res, err := Apply(p, DirFS(dir), ApplyOptions{Reverse: reverse})
	if err != nil {
		return err
	}
	return WriteResults(dir, res)
}

// TestBinaryAgainstGit makes binary changes in a git repository, takes git
// diff --binary, and checks that the patch parses and prints back byte for
// byte, and that applying and reverse-applying it our way leaves exactly the
// bytes git apply leaves.
func TestBinaryAgainstGit(t *testing.T) {
	gittest.Need(t)
	compared := 0
	for _, c := range binaryGitCases() {
		t.Run(c.name, func(t *testing.T) {
			text := gitBinaryPatch(t, c)
			if !strings.Contains(text, "GIT binary patch") {
				t.Fatalf("git wrote no binary patch:\n%s", text)
			}
			p, err := ParseUDiff(text, DefaultParseOptions)
			if err != nil {
				t.Fatal(err)
			}
			if c.delta {
				if fwd := binaryFiles(p)[0].BinaryForward; fwd.Method != BinaryDelta {
					t.Fatalf("git wrote a %s block, the case is meant to test a delta", fwd.Method)
				}
			}
			printed, err := Print(p, UDiff)
			if err != nil {
				t.Fatal(err)
			}
			// Binary sections print back byte for byte (text sections lose
			// their index line, which text printing does not write).
			gitSecs, ourSecs := gitSections(text), gitSections(printed)
			if len(gitSecs) != len(ourSecs) {
				t.Fatalf("printout has %d sections, git's patch %d:\n%s", len(ourSecs), len(gitSecs), printed)
			}
			for i, s := range gitSecs {
				if strings.Contains(s, "\nGIT binary patch\n") && ourSecs[i] != s {
					t.Fatalf("printout differs from git's patch:\n--- git\n%s\n--- ours\n%s", s, ourSecs[i])
				}
			}

			for _, dir := range []struct {
				name     string
				from, to tree
				reverse  bool
			}{{"forward", c.old, c.new, false}, {"reverse", c.new, c.old, true}} {
				ours, theirs := t.TempDir(), t.TempDir()
				writeTree(t, ours, dir.from)
				writeTree(t, theirs, dir.from)
				args := []string{"apply"}
				if dir.reverse {
					args = append(args, "-R")
				}
				if _, err := gittest.Run(t, theirs, text, append(args, "-")...); err != nil {
					t.Fatalf("%s: git apply: %v", dir.name, err)
				}
				if err := applyOurs(ours, text, dir.reverse); err != nil {
					t.Fatalf("%s: %v", dir.name, err)
				}
				got, want := readTree(t, ours), readTree(t, theirs)
				if d := sameTree(want, got); d != "" {
					t.Fatalf("%s: our result differs from git apply's: %s", dir.name, d)
				}
				if d := sameTree(dir.to, want); d != "" {
					t.Fatalf("%s: git apply did not give the expected files: %s", dir.name, d)
				}
				compared++
			}
		})
	}
	t.Logf("%d applies (forward and reverse) compared with git apply, all byte-identical", compared)
}

// gitSections splits a patch before each "diff --git" line.
func gitSections(text string) []string {
	var out []string
	for _, s := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(s, "diff --git ") || len(out) == 0 {
			out = append(out, "")
		}
		out[len(out)-1] += s
	}
	return out
}

func binaryFiles(p *Patch) []*FilePatch {
	var out []*FilePatch
	for _, fp := range p.Files {
		if fp.Binary {
			out = append(out, fp)
		}
	}
	return out
}

// TestBinaryWrongPreimage: a binary patch applied to a file that is not its
// preimage is refused, by git and by us, and nothing is written, text files
// of the same patch included.
func TestBinaryWrongPreimage(t *testing.T) {
	gittest.Need(t)
	for _, c := range binaryGitCases() {
		if c.name != "small-edits" && c.name != "png-replaced" && c.name != "with-text" && c.name != "delete" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			text := gitBinaryPatch(t, c)
			wrong := tree{}
			for p, v := range c.old {
				wrong[p] = v
				if IsBinary(v) {
					wrong[p] = edit(v, 77, 5, 1, 0) // same size, one byte off
				}
			}
			ours, theirs := t.TempDir(), t.TempDir()
			writeTree(t, ours, wrong)
			writeTree(t, theirs, wrong)
			if _, err := gittest.Run(t, theirs, text, "apply", "-"); err == nil {
				t.Fatal("git apply accepted the wrong preimage")
			}
			err := applyOurs(ours, text, false)
			if !errors.Is(err, ErrBinaryMismatch) {
				t.Fatalf("got %v, want ErrBinaryMismatch", err)
			}
			if d := sameTree(wrong, readTree(t, ours)); d != "" {
				t.Fatalf("files changed after a refusal: %s", d)
			}
		})
	}
}

// TestMakeBinaryGitApplies: the patch MakeBinary prints is one git apply
// accepts, forward and reverse, and makes the same bytes as our apply.
func TestMakeBinaryGitApplies(t *testing.T) {
	gittest.Need(t)
	deltas := 0
	for _, c := range binaryGitCases() {
		if c.diffArgs != nil {
			continue // MakeBinary compares two files, it detects no renames
		}
		t.Run(c.name, func(t *testing.T) {
			p := &Patch{}
			var paths []string
			for k := range c.old {
				paths = append(paths, k)
			}
			for k := range c.new {
				if _, ok := c.old[k]; !ok {
					paths = append(paths, k)
				}
			}
			sort.Strings(paths)
			for _, path := range paths {
				if strings.HasPrefix(path, "mode:") {
					continue
				}
				o, inOld := c.old[path]
				n, inNew := c.new[path]
				if o == n && inOld == inNew {
					continue
				}
				oldPath, newPath := path, path
				if !inOld {
					oldPath = ""
				}
				if !inNew {
					newPath = ""
				}
				fp := MakeBinary(oldPath, newPath, o, n, true)
				if _, x := c.new["mode:"+path]; x {
					fp.OldMode, fp.NewMode = 0o100644, 0o100755
				}
				if fp.BinaryForward.Method == BinaryDelta {
					deltas++
				}
				p.Files = append(p.Files, fp)
			}
			text, err := Print(p, UDiff)
			if err != nil {
				t.Fatal(err)
			}
			for _, reverse := range []bool{false, true} {
				from, to := c.old, c.new
				args := []string{"apply"}
				if reverse {
					from, to = c.new, c.old
					args = append(args, "-R")
				}
				ours, theirs := t.TempDir(), t.TempDir()
				writeTree(t, ours, from)
				writeTree(t, theirs, from)
				if _, err := gittest.Run(t, theirs, text, append(args, "-")...); err != nil {
					t.Fatalf("reverse=%v: git apply refused our patch: %v\n%s", reverse, err, text)
				}
				if err := applyOurs(ours, text, reverse); err != nil {
					t.Fatalf("reverse=%v: %v", reverse, err)
				}
				if d := sameTree(to, readTree(t, theirs)); d != "" {
					t.Fatalf("reverse=%v: git apply of our patch: %s", reverse, d)
				}
				if d := sameTree(to, readTree(t, ours)); d != "" {
					t.Fatalf("reverse=%v: our apply of our patch: %s", reverse, d)
				}
			}
		})
	}
	if deltas == 0 {
		t.Error("MakeBinary wrote no delta block: the delta encoder went untested against git")
	}
	t.Logf("%d delta blocks of our encoder applied by git", deltas)
}
