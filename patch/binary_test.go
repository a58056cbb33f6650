package patch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
)

func TestBase85(t *testing.T) {
	// git's own: 0xffffffff is "|NsC0" (base85.c's self-test), and an
	// empty literal is "HcmV?d00001" (every git diff --binary of an empty
	// side).
	if got := string(appendBase85(nil, []byte{0xff, 0xff, 0xff, 0xff})); got != "|NsC0" {
		t.Errorf("0xffffffff = %q, want |NsC0", got)
	}
	z, err := appendBinaryLine(nil, "HcmV?d00001")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := inflate(z, 0); err != nil || len(data) != 0 {
		t.Errorf("HcmV?d00001 = %q, %v; want the zlib stream of nothing", data, err)
	}
	for _, n := range []int{1, 3, 4, 5, 26, 27, 51, 52, 53, 104, 1000} {
		data := []byte(rnd(uint64(n), n))
		var b strings.Builder
		appendBinaryLines(&b, data)
		var back []byte
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for _, l := range lines {
			if len(l) > 66 {
				t.Fatalf("%d bytes: line of %d characters, git's limit is 66", n, len(l))
			}
			if back, err = appendBinaryLine(back, l); err != nil {
				t.Fatalf("%d bytes: %q: %v", n, l, err)
			}
		}
		if !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: round trip differs", n)
		}
		if want := (n + 51) / 52; len(lines) != want {
			t.Errorf("%d bytes: %d lines, want %d", n, len(lines), want)
		}
	}
	for _, tc := range []struct{ line, err string }{
		{"A|NsC1", "more than 32 bits"},
		{"A00 00", `' ' is not a base85 digit`},
		{"A0000", "data line of 5 characters"},
		{"A000000", "data line of 7 characters"},
		{"E00000", "says 5 bytes but the line holds 1 digit groups"},
		{"A0000000000", "says 1 bytes but the line holds 2 digit groups"},
		{"!00000", `starts with '!'`},
	} {
		if _, err := appendBinaryLine(nil, tc.line); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.line, err, tc.err)
		}
	}
}

func TestDelta(t *testing.T) {
	src := []byte("0123456789abcdefghij")
	big := bytes.Repeat([]byte("x"), 0x10000+5)
	for _, tc := range []struct {
		name       string
		src, delta []byte
		want       string // result, or the error's text
		err        bool
	}{
		{"copy-insert", src, []byte{20, 7, 0x91, 2, 3, 4, 'X', 'Y', 'Z', 'W'}, "234XYZW", false},
		{"offset-byte-2", src, []byte{20, 4, 0x92, 0x00, 4}, "0123", false},
		{"copy-all-offsets", src, []byte{20, 2, 0x9f, 18, 0, 0, 0, 2}, "ij", false},
		{"size-0x10000", big, []byte{0x85, 0x80, 0x04, 0x80, 0x80, 0x04, 0x80}, string(big[:0x10000]), false},
		{"empty-result", src, []byte{20, 0}, "", false},
		{"source-size", src, []byte{21, 1, 1, 'a'}, "the delta is for a 21-byte file, this one has 20 bytes", true},
		{"opcode-0", src, []byte{20, 1, 0}, "reserved instruction 0", true},
		{"copy-past-source", src, []byte{20, 5, 0x91, 18, 5}, "copy of 5 bytes at offset 18 runs past the 20-byte source", true},
		{"copy-past-result", src, []byte{20, 2, 0x90, 5}, "copy of 5 bytes runs past the announced 2-byte result", true},
		{"copy-cut-short", src, []byte{20, 2, 0x91, 1}, "copy instruction cut short", true},
		{"insert-past-delta", src, []byte{20, 3, 3, 'a'}, "insert of 3 bytes runs past the end of the delta", true},
		{"insert-past-result", src, []byte{20, 1, 2, 'a', 'b'}, "insert of 2 bytes runs past the announced 1-byte result", true},
		{"result-short", src, []byte{20, 9, 2, 'a', 'b'}, "the instructions make 2 bytes, the delta announces 9", true},
		{"no-header", src, []byte{0x80}, "source size: the delta ends inside it", true},
		{"varint-overflow", src, append(bytes.Repeat([]byte{0xff}, 10), 1), "more than 64 bits", true},
	} {
		got, err := applyDelta(tc.src, tc.delta)
		switch {
		case tc.err && err == nil:
			t.Errorf("%s: applied, want an error", tc.name)
		case tc.err:
			if !errors.Is(err, errDelta) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case string(got) != tc.want:
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMakeDelta(t *testing.T) {
	base := []byte(rnd(1, 200_000))
	for _, tc := range []struct {
		name     string
		src, dst []byte
		maxLen   int // the delta must be this small: it copied
	}{
		{"same", base, base, 64},
		{"edit", base, []byte(edit(string(base), 2, 1000, 10, 3)), 200},
		{"moved", base, append(append([]byte{}, base[100_000:]...), base[:100_000]...), 100},
		{"unrelated", []byte(rnd(3, 500)), []byte(rnd(4, 700)), 1000},
		{"empty-src", nil, []byte("abc"), 10},
		{"empty-dst", base, nil, 10},
		{"short", []byte("0123456789abcdef0"), []byte("0123456789abcdef01"), 20},
	} {
		d := makeDelta(tc.src, tc.dst)
		got, err := applyDelta(tc.src, d)
		if err != nil || !bytes.Equal(got, tc.dst) {
			t.Errorf("%s: the delta does not rebuild the target: %v", tc.name, err)
		}
		if len(d) > tc.maxLen {
			t.Errorf("%s: delta of %d bytes, want at most %d", tc.name, len(d), tc.maxLen)
		}
	}
}

const binaryTestPatch = `diff --git a/img.dat b/img.dat
index 9fc36a0bc577b5eacc60567d1383eed0f80b596f..26a8a86861178a772dbe7951f55ace44eb5be73f 100644
GIT binary patch
literal 5
McmZQzN=!-y00LJ5DF6Tf

literal 5
McmZQzOiW4!00L71C;$Ke

`

// The content of img.dat before and after binaryTestPatch.
const binaryTestOld, binaryTestNew = "\x00\x01abc", "\x00\x02abc"

func TestApplyBinary(t *testing.T) {
	parse := func(text string) *Patch {
		t.Helper()
		p, err := ParseUDiff(text, DefaultParseOptions)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	abbreviated := strings.Replace(binaryTestPatch, "9fc36a0bc577b5eacc60567d1383eed0f80b596f..26a8a86861178a772dbe7951f55ace44eb5be73f", "9fc36a0..26a8a86", 1)
	noIndex := strings.Replace(binaryTestPatch, "index 9fc36a0bc577b5eacc60567d1383eed0f80b596f..26a8a86861178a772dbe7951f55ace44eb5be73f 100644\n", "", 1)
	forwardOnly := strings.TrimSuffix(binaryTestPatch, "literal 5\nMcmZQzOiW4!00L71C;$Ke\n\n")
	wrongNew := strings.Replace(binaryTestPatch, "..26a8a86861178a772dbe7951f55ace44eb5be73f", "..26a8a86861178a772dbe7951f55ace44eb5be740", 1)
	text := "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n"

	for _, tc := range []struct {
		name    string
		patch   string
		files   MapFS
		reverse bool
		want    MapFS  // the final files
		err     error  // or the error, for errors.Is
		msg     string // and a part of its message
	}{
		{name: "forward", patch: binaryTestPatch, files: MapFS{"img.dat": binaryTestOld}, want: MapFS{"img.dat": binaryTestNew}},
		{name: "reverse", patch: binaryTestPatch, files: MapFS{"img.dat": binaryTestNew}, reverse: true, want: MapFS{"img.dat": binaryTestOld}},
		{name: "abbreviated", patch: abbreviated, files: MapFS{"img.dat": binaryTestOld}, want: MapFS{"img.dat": binaryTestNew}},
		{name: "no-index", patch: noIndex, files: MapFS{"img.dat": "anything at all"}, want: MapFS{"img.dat": binaryTestNew}},
		{name: "wrong-preimage", patch: binaryTestPatch, files: MapFS{"img.dat": binaryTestNew}, err: ErrBinaryMismatch,
			msg: "apply: img.dat: binary content does not match the patch: its blob is 26a8a86861178a772dbe7951f55ace44eb5be73f, the index line says 9fc36a0bc577b5eacc60567d1383eed0f80b596f"},
		{name: "wrong-abbreviated", patch: abbreviated, files: MapFS{"img.dat": "\x00\x03abc"}, err: ErrBinaryMismatch, msg: "the index line says 9fc36a0"},
		{name: "wrong-result", patch: wrongNew, files: MapFS{"img.dat": binaryTestOld}, err: ErrBinaryMismatch, msg: "apply: img.dat: the result does not match"},
		{name: "no-reverse-block", patch: forwardOnly, files: MapFS{"img.dat": binaryTestNew}, reverse: true, err: ErrBinaryNoData, msg: "the GIT binary patch has no reverse block"},
		{name: "no-data", patch: "diff --git a/bin.dat b/bin.dat\nindex 9fc36a0..26a8a86 100644\nBinary files a/bin.dat and b/bin.dat differ\n",
			files: MapFS{"bin.dat": binaryTestOld}, err: ErrBinaryNoData, msg: "apply: bin.dat: binary change without data: the patch only says the binary files differ"},
		{name: "missing", patch: binaryTestPatch, files: MapFS{}, err: ErrFileMissing},
		{name: "with-text", patch: text + binaryTestPatch, files: MapFS{"notes.txt": "a\n", "img.dat": binaryTestOld},
			want: MapFS{"notes.txt": "b\n", "img.dat": binaryTestNew}},
		// All or nothing: a binary file that does not match fails the text
		// file too, and a text hunk that does not match fails the binary.
		{name: "with-text-binary-fails", patch: text + binaryTestPatch, files: MapFS{"notes.txt": "a\n", "img.dat": "?"}, err: ErrBinaryMismatch},
		{name: "with-text-text-fails", patch: binaryTestPatch + text, files: MapFS{"notes.txt": "c\n", "img.dat": binaryTestOld}, err: ErrContextMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Apply(parse(tc.patch), tc.files, ApplyOptions{Reverse: tc.reverse})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("error %v, want %v with %q", err, tc.err, tc.msg)
				}
				if res != nil {
					t.Fatal("results with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := MapFS{}
			for k, v := range tc.files {
				got[k] = v
			}
			_, content, _ := Final(res)
			for k, v := range content {
				got[k] = string(v)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestParseBinaryErrors(t *testing.T) {
	head := "diff --git a/f b/f\nindex 9fc36a0..26a8a86 100644\nGIT binary patch\n"
	for _, tc := range []struct{ body, err string }{
		{"", `line 4: GIT binary patch: want "literal N" or "delta N"`},
		{"literal x\nHcmV?d00001\n\n", `line 4: GIT binary patch: bad size "x"`},
		{"literal 1\nHcmV?d00001\n\n", "line 4: GIT binary patch: literal block: the data holds 0 bytes, the header says 1"},
		{"literal 5\nMcmZQzN=!-y00LJ5DF6Tf\n\n", ""},
		{"literal 4\nMcmZQzN=!-y00LJ5DF6Tf\n\n", "the data holds 5 or more bytes, the header says 4"},
		{"delta 5\nMcmZQzN=!-y00LJ6DF6Tf\n\n", "delta block: the compressed data is corrupt"},
		{"literal 5\nMcmZQzN=!-y00LJ5DF6T\n\n", "line 5: GIT binary patch: data line of 20 characters"},
		{"literal 5\nAAAAAA\n\n", "line 4: GIT binary patch: literal block: the data is not zlib-compressed"},
		{"literal 5\nMcmZQzN=!-y00LJ5DF6Tf\n\nliteral 5\nMcmZQzN=!\n", "line 8: GIT binary patch: data line of 9 characters"},
		{"literal 0\n\n", "line 4: GIT binary patch: literal block: the data is not zlib-compressed"},
	} {
		_, err := ParseUDiff(head+tc.body, DefaultParseOptions)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.body, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.err)
		}
	}
}

func TestMakeBinary(t *testing.T) {
	fp := MakeBinary("a.bin", "a.bin", binaryTestOld, binaryTestNew, true)
	got, err := Print(&Patch{Files: []*FilePatch{fp}}, UDiff)
	if err != nil {
		t.Fatal(err)
	}
	// The header and names as git writes them; the data lines are
	// compress/zlib's, which need not be zlib's bytes.
	if want := "diff --git a/a.bin b/a.bin\nindex 9fc36a0bc577b5eacc60567d1383eed0f80b596f..26a8a86861178a772dbe7951f55ace44eb5be73f\nGIT binary patch\nliteral 5\n"; !strings.HasPrefix(got, want) {
		t.Errorf("printout starts\n%s\nwant\n%s", got, want)
	}
	fp = MakeBinary("a.bin", "a.bin", binaryTestOld, binaryTestNew, false)
	got, _ = Print(&Patch{Files: []*FilePatch{fp}}, UDiff)
	if want := "diff --git a/a.bin b/a.bin\nindex 9fc36a0..26a8a86\nBinary files a/a.bin and b/a.bin differ\n"; got != want {
		t.Errorf("printout\n%s\nwant\n%s", got, want)
	}
	if fp := MakeBinary("a", "a", "\x00", "\x00", true); fp.Binary {
		t.Error("equal contents make a binary change")
	}
	if !IsBinary("abc\x00") || IsBinary("abc") || IsBinary(strings.Repeat("a", 8000)+"\x00") {
		t.Error("IsBinary does not look at the first 8000 bytes for a NUL as git does")
	}
}

// TestGoGitdiffBinaryCases applies go-gitdiff's binary test cases (see
// testdata/binary/README.md) our way and with git apply, and compares.
func TestGoGitdiffBinaryCases(t *testing.T) {
	gittest.Need(t)
	const dir = "testdata/binary"
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	errSrc := "bin_fragment_delta_error.src"
	cases := []struct {
		patch, src, out string // out "" where go-gitdiff gives no result file
	}{
		{"bin_fragment_literal_create.patch", "bin_fragment_literal_create.src", "bin_fragment_literal_create.out"},
		{"bin_fragment_literal_modify.patch", "bin_fragment_literal_modify.src", "bin_fragment_literal_modify.out"},
		{"bin_fragment_delta_modify.patch", "bin_fragment_delta_modify.src", "bin_fragment_delta_modify.out"},
		{"bin_fragment_delta_modify_large.patch", "bin_fragment_delta_modify_large.src", "bin_fragment_delta_modify_large.out"},
		{"file_bin_modify.patch", "file_bin_modify.src", "file_bin_modify.out"},
		{"bin_fragment_literal_error_limit.patch", "bin_fragment_literal_create.src", ""},
		{"bin_fragment_delta_error_dst_size_limit.patch", errSrc, ""},
		{"bin_fragment_delta_error_incomplete_add.patch", errSrc, ""},
		{"bin_fragment_delta_error_incomplete_copy.patch", errSrc, ""},
		{"bin_fragment_delta_error_src_size.patch", errSrc, ""},
		{"bin_fragment_delta_error_dst_size_short.patch", errSrc, ""},
		{"bin_fragment_delta_error_limit_add.patch", errSrc, ""},
		{"bin_fragment_delta_error_limit_copy.patch", errSrc, ""},
	}
	compared, identical := 0, 0
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.patch, ".patch"), func(t *testing.T) {
			text, src := read(c.patch), read(c.src)
			p, err := ParseUDiff(text, ParseOptions{Strip: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Files) != 1 || !p.Files[0].Binary {
				t.Fatalf("want one binary file patch, got %d", len(p.Files))
			}
			name := p.Files[0].Path()
			printed, err := Print(p, UDiff)
			if err != nil {
				t.Fatal(err)
			}
			if printed != text {
				t.Fatalf("printout differs from the patch:\n%s", printed)
			}

			ours, _, ourErr := ApplyFile(src, p.Files[0], ApplyOptions{})
			// git apply needs the index line go-gitdiff's patches leave out:
			// the preimage's name, and the expected result's (any name when
			// none is expected: git must refuse before it compares).
			newName := strings.Repeat("1", 40)
			if c.out != "" {
				newName = BlobHash(read(c.out))
			} else if ourErr == nil {
				newName = BlobHash(ours)
			}
			indexed := strings.Replace(text, "\nGIT binary patch\n", "\nindex "+BlobHash(src)+".."+newName+" 100644\nGIT binary patch\n", 1)
			work := t.TempDir()
			writeTree(t, work, tree{name: src})
			_, gitErr := gittest.Run(t, work, indexed, "apply", "-")
			theirs := readTree(t, work)[name]
			compared++
			switch {
			case (ourErr == nil) != (gitErr == nil):
				t.Fatalf("we: %v; git apply: %v", ourErr, gitErr)
			case ourErr != nil:
				if !errors.Is(ourErr, ErrBinaryMismatch) {
					t.Fatalf("refused with %v, want ErrBinaryMismatch", ourErr)
				}
				identical++
				t.Logf("refused, as by git: %v", ourErr)
				return
			case ours != theirs:
				t.Fatalf("our result (%d bytes) differs from git apply's (%d bytes)", len(ours), len(theirs))
			case c.out != "" && ours != read(c.out):
				t.Fatalf("result differs from go-gitdiff's %s", c.out)
			}
			identical++
			if p.Files[0].BinaryReverse == nil {
				return
			}
			back, _, err := ApplyFile(ours, p.Files[0], ApplyOptions{Reverse: true})
			if err != nil || back != src {
				t.Fatalf("reverse: %v, same as the source: %v", err, back == src)
			}
			if _, err := gittest.Run(t, work, indexed, "apply", "-R", "-"); err != nil {
				t.Fatalf("git apply -R: %v", err)
			}
			if readTree(t, work)[name] != back {
				t.Fatal("reverse: our result differs from git apply -R's")
			}
			compared++
			identical++
		})
	}
	t.Logf("%d outcomes compared with git apply, %d the same (results byte-identical, or both refused)", compared, identical)
	if identical != compared {
		t.Errorf("%d of %d outcomes differ from git's", compared-identical, compared)
	}
}
