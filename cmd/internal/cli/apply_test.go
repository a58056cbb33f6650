package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/internal/testtree"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestApplyInputFastPath: `apply -` takes the fast path for a large
// well-formed diff however standard input comes (a pipe, spooled to a
// temporary file; a regular file, read from where it stands; a pipe
// with no temporary directory, held in memory), leaves nothing in the
// temporary directory, and leaves to the engine a diff with a hunk off
// by a line and one under repair.FastMinSize, each applied all the
// same. Brief tells the paths apart: only the fast path leaves the
// hunks out of the report.
func TestApplyInputFastPath(t *testing.T) {
	old, neu, diff := testdata.ManyHunks(1000)
	off := strings.Replace(diff, "@@ -1602,7 +1602,7 @@", "@@ -1601,7 +1601,7 @@", 1)
	smallOld, smallNew, small := testdata.ManyHunks(100)
	if off == diff || len(small) >= repair.FastMinSize || len(diff) < 2*repair.FastMinSize {
		t.Fatalf("the cases are not what they say: %d, %d bytes", len(small), len(diff))
	}
	patches := []struct {
		name, old, neu, text string
		fast                 bool
	}{
		{"well-formed", old, neu, diff, true},
		{"a hunk off by a line", old, neu, off, false},
		{"under FastMinSize", smallOld, smallNew, small, false},
	}
	// stdin makes standard input holding text.
	kinds := []struct {
		name  string
		stdin func(t *testing.T, text string) io.Reader
		noTmp bool // TMPDIR names no directory
	}{
		{"pipe", pipeOf, false},
		{"pipe, no temporary directory", pipeOf, true},
		{"reader", func(t *testing.T, text string) io.Reader { return strings.NewReader(text) }, false},
		{"regular file after 5 bytes", func(t *testing.T, text string) io.Reader {
			p := filepath.Join(t.TempDir(), "p.diff")
			if err := os.WriteFile(p, []byte("junk\n"+text), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if _, err := f.Seek(5, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			return f
		}, false},
	}
	for _, k := range kinds {
		for _, p := range patches {
			t.Run(k.name+"/"+p.name, func(t *testing.T) {
				tmp := t.TempDir()
				if k.noTmp {
					t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
				} else {
					t.Setenv("TMPDIR", tmp)
				}
				dir, root := testtree.Root(t, map[string]string{"f": p.old})
				in := k.stdin(t, p.text)
				rep, err := applyInput(root, "-", Stdio{In: in}, repair.ApplyOptions{Name: "-", Strip: 1, Brief: true})
				if err != nil || rep.Status != repair.StatusApplied || len(rep.Files) != 1 {
					t.Fatalf("apply: %v, %+v", err, rep)
				}
				if fast := rep.Files[0].Hunks == nil; fast != p.fast {
					t.Errorf("fast path taken: %v, want %v", fast, p.fast)
				}
				if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != p.neu {
					t.Errorf("the file after is not the new one")
				}
				if left, _ := os.ReadDir(tmp); len(left) != 0 {
					t.Errorf("left in the temporary directory: %v", left)
				}
				if f, ok := in.(*os.File); ok && strings.HasPrefix(k.name, "regular file") {
					if pos, _ := f.Seek(0, io.SeekCurrent); pos != int64(5+len(p.text)) {
						t.Errorf("standard input left at %d, want its end %d", pos, 5+len(p.text))
					}
				}
			})
		}
	}
}

// pipeOf returns the reading end of a pipe that a goroutine writes text
// to.
func pipeOf(t *testing.T, text string) io.Reader {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		io.WriteString(w, text)
		w.Close()
	}()
	return r
}

// TestReadStdinSpoolFails: a temporary file whose writes fail (a full
// disk) at once or after two chunks and a part leaves standard input
// whole in memory, byte for byte; one that cannot be made, too; a read
// error is returned; with none of these, the spool holds it all.
func TestReadStdinSpoolFails(t *testing.T) {
	text := strings.Repeat("0123456789abcdef", 3*repair.FastMinSize/16+100) // over 3 chunks
	full := func(n int) func() (*spooled, error) {
		return func() (*spooled, error) {
			f, err := os.CreateTemp(t.TempDir(), "spool")
			if err != nil {
				return nil, err
			}
			return &spooled{spoolFile: &fullFile{File: f, left: n}}, nil
		}
	}
	tests := []struct {
		name   string
		create func() (*spooled, error)
		in     io.Reader
		spool  bool
		err    bool
	}{
		{"spooled", full(len(text)), strings.NewReader(text), true, false},
		{"full disk", full(0), strings.NewReader(text), false, false},
		{"full disk after two chunks and a part", full(2*repair.FastMinSize + 100), strings.NewReader(text), false, false},
		{"no temporary file", func() (*spooled, error) { return nil, os.ErrPermission }, strings.NewReader(text), false, false},
		{"read error", full(len(text)), io.MultiReader(strings.NewReader(text[:repair.FastMinSize+10]), errReader{}), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, got, err := readStdin(tc.in, tc.create)
			if tc.err {
				if err == nil || sp != nil {
					t.Errorf("read error: %v, spool %v", err, sp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (sp != nil) != tc.spool {
				t.Fatalf("spooled: %v, want %v", sp != nil, tc.spool)
			}
			if sp != nil {
				defer sp.Close()
				got = make([]byte, sp.size)
				if _, err := sp.ReadAt(got, 0); err != nil {
					t.Fatal(err)
				}
			}
			if string(got) != text {
				t.Errorf("standard input: %d bytes, want %d; equal prefix %d", len(got), len(text), commonPrefix(string(got), text))
			}
		})
	}
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// fullFile takes left bytes, then writes what fits and fails, as a file
// on a full disk does.
type fullFile struct {
	*os.File
	left int
}

func (f *fullFile) Write(b []byte) (int, error) {
	if len(b) > f.left {
		n, _ := f.File.Write(b[:f.left])
		f.left = 0
		return n, syscall.ENOSPC
	}
	f.left -= len(b)
	return f.File.Write(b)
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }
