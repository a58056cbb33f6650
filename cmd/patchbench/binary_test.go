package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
)

func randomBytes(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// binaryFiles writes files under dir.
func binaryFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
	}
}

// sameFiles compares the named files of two directories byte for byte;
// "" stands for a missing file.
func sameFiles(t *testing.T, a, b string, names []string) bool {
	t.Helper()
	for _, n := range names {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if !bytes.Equal(x, y) {
			t.Logf("%s differs", n)
			return false
		}
	}
	return true
}

// TestApplyBinaryCLI: patchbench apply, strict and tolerant, forward and
// reverse, leaves exactly the bytes git apply leaves for a git diff
// --binary patch that changes, creates and deletes binary files next to a
// text file; a wrong preimage is refused with nothing written.
func TestApplyBinaryCLI(t *testing.T) {
	gittest.Need(t)
	img := "\x89PNG\r\n\x1a\n" + randomBytes(1, 6000)
	data := randomBytes(2, 3000)
	old := map[string]string{"img/logo.png": img, "data.bin": data, "gone.bin": randomBytes(3, 700), "notes.txt": "one\ntwo\n"}
	new := map[string]string{"img/logo.png": img[:3000] + "\x00\x00\x00\x00" + img[3004:], "data.bin": randomBytes(4, 2000),
		"font.ttf": "\x00\x01" + randomBytes(5, 900), "notes.txt": "one\n2\n"}
	names := []string{"img/logo.png", "data.bin", "gone.bin", "font.ttf", "notes.txt"}

	repo := t.TempDir()
	if _, err := gittest.Run(t, repo, "", "init", "-q"); err != nil {
		t.Fatal(err)
	}
	binaryFiles(t, repo, old)
	gittest.Run(t, repo, "", "add", "-A")
	if _, err := gittest.Run(t, repo, "", "commit", "-q", "-m", "old"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(repo, "gone.bin"))
	binaryFiles(t, repo, new)
	gittest.Run(t, repo, "", "add", "-A")
	text, err := gittest.Run(t, repo, "", "diff", "--cached", "--binary")
	if err != nil || strings.Count(text, "GIT binary patch") != 4 || !strings.Contains(text, "\ndelta ") {
		t.Fatalf("git diff --binary: %v\n%s", err, text)
	}
	patchFile := filepath.Join(t.TempDir(), "bin.diff")
	writeFile(t, patchFile, text)

	compared := 0
	for _, dir := range []struct {
		from, to map[string]string
		reverse  bool
	}{{old, new, false}, {new, old, true}} {
		theirs := t.TempDir()
		binaryFiles(t, theirs, dir.from)
		args := []string{"apply"}
		if dir.reverse {
			args = append(args, "-R")
		}
		if _, err := gittest.Run(t, theirs, text, append(args, "-")...); err != nil {
			t.Fatalf("git %v: %s", args, err)
		}
		want := t.TempDir()
		binaryFiles(t, want, dir.to)
		if !sameFiles(t, want, theirs, names) {
			t.Fatalf("reverse=%v: git apply did not make the expected files", dir.reverse)
		}
		for _, mode := range []string{"--strict", "--strict=false"} {
			ours := t.TempDir()
			binaryFiles(t, ours, dir.from)
			cli := []string{"apply", mode, "-C", ours, patchFile}
			if dir.reverse {
				cli = append(cli, "--reverse")
			}
			if code, _, stderr := runCLI(t, "", cli...); code != 0 {
				t.Fatalf("%v: exit %d: %s", cli, code, stderr)
			}
			if !sameFiles(t, theirs, ours, names) {
				t.Fatalf("%v: files differ from git apply's", cli)
			}
			compared++
		}
	}
	t.Logf("%d CLI applies byte-identical to git apply", compared)

	// One byte of the PNG changed: both modes refuse, exit 1, and write
	// nothing, not even the text file.
	for _, mode := range []string{"--strict", "--strict=false"} {
		ours := t.TempDir()
		binaryFiles(t, ours, old)
		writeFile(t, filepath.Join(ours, "img/logo.png"), img[:10]+"?"+img[11:])
		before := t.TempDir()
		binaryFiles(t, before, old)
		writeFile(t, filepath.Join(before, "img/logo.png"), img[:10]+"?"+img[11:])
		code, _, stderr := runCLI(t, "", "apply", mode, "-C", ours, patchFile)
		if code != 1 || !strings.Contains(stderr, "img/logo.png") || !strings.Contains(stderr, "binary content does not match") {
			t.Fatalf("%s: exit %d, %s; want 1 and the file named", mode, code, stderr)
		}
		if !sameFiles(t, before, ours, names) {
			t.Fatalf("%s: a refused patch changed files", mode)
		}
	}
}

// TestDiffBinaryCLI: patchbench diff of binary files says they differ, as
// git does, and with --binary writes a patch that git apply and patchbench
// apply turn into the new file.
func TestDiffBinaryCLI(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	t.Chdir(dir)
	oldC := "\x00" + randomBytes(6, 5000)
	newC := oldC[:2000] + "inserted" + oldC[2000:]
	writeFile(t, "old/f.bin", oldC)
	writeFile(t, "new/f.bin", newC)

	code, out, stderr := runCLI(t, "", "diff", "old/f.bin", "new/f.bin")
	if code != 0 || !strings.HasSuffix(out, "\nBinary files a/old/f.bin and b/new/f.bin differ\n") {
		t.Fatalf("diff: exit %d, %s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "", "diff", "--binary", "old/f.bin", "new/f.bin")
	if code != 0 || !strings.Contains(out, "\nGIT binary patch\ndelta ") {
		t.Fatalf("diff --binary: exit %d, %s%s", code, out, stderr)
	}
	writeFile(t, "p.diff", out)
	for _, tool := range []string{"git", "patchbench"} {
		work := filepath.Join(dir, tool)
		writeFile(t, filepath.Join(work, "f.bin"), oldC)
		if tool == "git" {
			if _, err := gittest.Run(t, work, out, "apply", "-p2", "-"); err != nil {
				t.Fatalf("git apply: %v", err)
			}
		} else if code, _, stderr := runCLI(t, "", "apply", "--strict", "-p", "2", "-C", work, "p.diff"); code != 0 {
			t.Fatalf("patchbench apply: exit %d: %s", code, stderr)
		}
		if readFile(t, filepath.Join(work, "f.bin")) != newC {
			t.Fatalf("%s: the patch does not make the new file", tool)
		}
	}
	// No search-replace or v4a form: exit 1.
	if code, _, stderr := runCLI(t, "", "diff", "--binary", "--format", "v4a", "old/f.bin", "new/f.bin"); code != 1 || !strings.Contains(stderr, "cannot be expressed") {
		t.Fatalf("v4a: exit %d: %s", code, stderr)
	}
}
