package patch

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzBinary feeds arbitrary bytes to every decoder of binary patches:
// the text after "GIT binary patch" to the parser, and the bytes as data
// lines, as a delta, and as the target of the delta and base85 encoders.
// A body that starts with "index " replaces the extended headers, blob
// names included. Nothing may panic; the parser fails only with a
// *ParseError; what parses
// prints and parses back the same; a delta that applies makes exactly its
// announced size; and both encoders round-trip. Seeds: the go-gitdiff cases
// in testdata/binary, the binary golden cases, and testdata/fuzz/FuzzBinary.
func FuzzBinary(f *testing.F) {
	for _, glob := range []string{"testdata/binary/*.patch", "testdata/formats/udiff-binary*.txtar"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			for _, sec := range strings.SplitAfter(string(b), "GIT binary patch\n")[1:] {
				sec, _, _ = strings.Cut(sec, "diff --git ")
				f.Add([]byte(binaryTestOld), sec)
				if p, err := ParseUDiff("diff --git a/f b/f\nGIT binary patch\n"+sec, DefaultParseOptions); err == nil {
					// The payloads as raw input: deltas reach applyDelta.
					for _, blk := range []*BinaryBlock{p.Files[0].BinaryForward, p.Files[0].BinaryReverse} {
						if blk != nil && len(blk.Data) < 4096 {
							f.Add(blk.Data[:min(len(blk.Data), 64)], string(blk.Data))
						}
					}
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, body string) {
		text := "diff --git a/f b/f\nindex 9fc36a0..26a8a86 100644\nGIT binary patch\n" + body
		if strings.HasPrefix(body, "index ") {
			// The fuzzer's own extended headers and blob names.
			text = "diff --git a/f b/f\n" + body
		}
		p, err := ParseUDiff(text, DefaultParseOptions)
		if checkParse(t, UDiff, p, err) {
			for _, fp := range p.Files {
				ApplyFile(string(src), fp, ApplyOptions{})
				ApplyFile(string(src), fp, ApplyOptions{Reverse: true})
			}
			if hasPaths(p) {
				roundTrip(t, p, UDiff, true)
			}
		}

		for _, l := range strings.Split(body, "\n") {
			if b, err := appendBinaryLine(nil, l); err == nil {
				if n := (len(l) - 1) / 5 * 4; len(b) > n || len(b) <= n-4 {
					t.Fatalf("%q decodes to %d bytes", l, len(b))
				}
			}
		}

		data := []byte(body)
		if out, err := applyDelta(src, data); err == nil {
			_, dstSize, _, _ := deltaHeader(data)
			if uint64(len(out)) != dstSize {
				t.Fatalf("delta made %d bytes, announced %d", len(out), dstSize)
			}
		}

		d := makeDelta(src, data)
		if out, err := applyDelta(src, d); err != nil || !bytes.Equal(out, data) {
			t.Fatalf("makeDelta does not round-trip: %v", err)
		}
		var lines strings.Builder
		appendBinaryLines(&lines, data)
		var back []byte
		for _, l := range strings.Split(strings.TrimSuffix(lines.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			if back, err = appendBinaryLine(back, l); err != nil {
				t.Fatalf("base85 line %q: %v", l, err)
			}
		}
		if !bytes.Equal(back, data) {
			t.Fatal("base85 lines do not round-trip")
		}
	})
}
