package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiffRefusesSpecialFiles: diff compares regular files only, as git
// diff --no-index does ("unsupported file type"); a device is read for
// ever and a named pipe blocks the read. Exit 2, the path named, nothing
// printed.
func TestDiffRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	cases := []struct{ name, old, new, bad, kind string }{
		{"device old", "/dev/zero", file, "/dev/zero", "character device"},
		{"device new", file, "/dev/zero", "/dev/zero", "character device"},
		{"fifo old", fifo, file, fifo, "named pipe"},
		{"fifo new", file, fifo, fifo, "named pipe"},
		{"directory", dir, file, dir, "directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errs := run(t, "diff", c.old, c.new)
				done <- result{code, out, errs}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("diff did not return: it reads the special file")
			}
			want := "patchbench: diff: " + c.bad + ": unsupported file type (a " + c.kind + "); only regular files are compared"
			if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, no output, %q", r.code, r.stdout, r.stderr, ExitUsage, want)
			}
		})
	}
}
