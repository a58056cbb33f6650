package repo

import (
	"fmt"
	"strings"
	"testing"
)

// benchRepo makes a repository with n files of about size bytes each.
func benchRepo(b *testing.B, n, size int) (*Repo, string, []string) {
	b.Helper()
	dir := b.TempDir()
	git(b, "", "init", "-q", dir)
	files := map[string]string{}
	var names []string
	line := "the quick brown fox jumps over the lazy dog 0123456789\n"
	for i := range n {
		name := fmt.Sprintf("pkg%d/file%d.py", i%20, i)
		files[name] = strings.Repeat(line, size/len(line)+1)
		names = append(names, name)
	}
	writeFiles(b, dir, files)
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-q", "-m", "bench")
	git(b, dir, "gc", "-q")
	commit := git(b, dir, "rev-parse", "HEAD")
	return openT(b, dir), commit, names
}

// BenchmarkReadFile measures warm reads of 8 KiB files through the
// cat-file process, one reader and many.
func BenchmarkReadFile(b *testing.B) {
	r, commit, names := benchRepo(b, 500, 8<<10)
	ctx := b.Context()
	if _, err := r.ReadFile(ctx, commit, names[0]); err != nil { // start the process
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(8 << 10)
		i := 0
		for b.Loop() {
			if _, err := r.ReadFile(ctx, commit, names[i%len(names)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(8 << 10)
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := r.ReadFile(ctx, commit, names[i%len(names)]); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
	b.Run("abbrev-rev", func(b *testing.B) {
		b.SetBytes(8 << 10)
		i := 0
		for b.Loop() {
			if _, err := r.ReadFile(ctx, commit[:8], names[i%len(names)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkExists measures warm existence checks (cat-file --batch-check).
func BenchmarkExists(b *testing.B) {
	r, commit, names := benchRepo(b, 100, 1<<10)
	ctx := b.Context()
	i := 0
	for b.Loop() {
		if ok, err := r.Exists(ctx, commit, names[i%len(names)]); err != nil || !ok {
			b.Fatal(ok, err)
		}
		i++
	}
}
