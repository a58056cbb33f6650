package envstore

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRestore restores a 10,000-file tree (100 directories of 100
// files of 200 to 1,200 bytes) by each method, against cp -a of the same
// tree. Hard links are asked for with ReadOnlyUse, so that root measures
// them too. With $PATCHBENCH_REFLINK_DIR (a directory on XFS or Btrfs) the
// store and the restores are made there, and reflinks are measured.
//
//	go test ./envstore -run '^$' -bench Restore -benchtime 5x
func BenchmarkRestore(b *testing.B) {
	base := b.TempDir()
	if d := os.Getenv("PATCHBENCH_REFLINK_DIR"); d != "" {
		var err error
		if base, err = os.MkdirTemp(d, "envstore-bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { removeAll(base) })
	}
	src := filepath.Join(b.TempDir(), "src")
	for d := range 100 {
		for f := range 100 {
			body := fmt.Sprintf("file %d of directory %d\n", f, d)
			for len(body) < 200+f*10 {
				body += body
			}
			writeFile(b, src, fmt.Sprintf("d%03d/f%03d.txt", d, f), body[:200+f*10], 0o644)
		}
	}
	git(b, src, "init", "-q", "-b", "main")
	git(b, src, "add", "-A")
	git(b, src, "commit", "-q", "-m", "tree")
	commit := git(b, src, "rev-parse", "HEAD")
	s := openStore(b, filepath.Join(base, "store"))
	ctx := context.Background()
	if res, err := s.Build(ctx, openRepo(b, src), []string{commit}, BuildOptions{Setup: "true", Runner: runner()}); err != nil || res[0].Status != StatusBuilt {
		b.Fatalf("build: %v %+v", err, res)
	}
	plain := filepath.Join(base, "plain")
	if _, err := s.Restore(ctx, commit, plain, RestoreOptions{Method: RestoreCopy}); err != nil {
		b.Fatal(err)
	}
	methods := []struct {
		name string
		opts RestoreOptions
	}{
		{"auto", RestoreOptions{}},
		{"copy", RestoreOptions{Method: RestoreCopy}},
		{"hardlink", RestoreOptions{Method: RestoreLink, ReadOnlyUse: true}},
	}
	if s.probe(base).reflink {
		methods = append(methods, struct {
			name string
			opts RestoreOptions
		}{"reflink", RestoreOptions{Method: RestoreReflink}})
	}
	for _, m := range methods {
		b.Run(m.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				dest := filepath.Join(base, fmt.Sprintf("%s-%d", m.name, i))
				if _, err := s.Restore(ctx, commit, dest, m.opts); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				removeAll(dest)
				b.StartTimer()
			}
		})
	}
	b.Run("cp-a", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			dest := filepath.Join(base, fmt.Sprintf("cp-%d", i))
			if out, err := exec.Command("cp", "-a", plain, dest).CombinedOutput(); err != nil {
				b.Fatalf("cp -a: %v\n%s", err, out)
			}
			b.StopTimer()
			removeAll(dest)
			b.StartTimer()
		}
	})
}

// BenchmarkOverlayRestore restores, as an overlay, materialized trees of
// 1,000, 10,000 and 100,000 files (100 files of 200 to 1,190 bytes to a
// directory): the time and the bytes allocated per restore stay the same
// whatever the size, as the manifest is not decoded. cp -a of the same
// tree runs beside it. Needs the privilege to mount an overlay (root).
//
//	go test ./envstore -run '^$' -bench OverlayRestore -benchtime 20x -benchmem [-sizes 1000,10000]
//
// As an ordinary user (where the kernel mounts an overlay in a user
// namespace) it times the test stages' overlay-userns restores instead.
var benchSizes = flag.String("sizes", "1000,10000,100000", "tree sizes of BenchmarkOverlayRestore, in files")

func BenchmarkOverlayRestore(b *testing.B) {
	// Without the privilege to mount one others see, the overlay of a
	// test stage: in a user namespace, released with its holder.
	opts, method := RestoreOptions{Overlay: true}, "overlay"
	if ok, why := OverlayAvailable(b.TempDir()); !ok {
		if p := probeOverlay(b.TempDir()); !p.userns {
			b.Skipf("cannot mount an overlay here: %s", why)
		}
		opts, method = RestoreOptions{Overlay: true, Temporary: true, Namespace: true}, MethodUserNSOverlay
	}
	ctx := context.Background()
	var sizes []int
	for _, f := range strings.Split(*benchSizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatalf("-sizes: %v", err)
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		base := b.TempDir()
		src := filepath.Join(base, "src")
		writeFile(b, src, "gen.py", `import os, sys
for i in range(int(sys.argv[1])):
    os.makedirs(f"d{i // 100:04d}", exist_ok=True)
    with open(f"d{i // 100:04d}/f{i % 100:03d}.txt", "w") as out:
        out.write((f"file {i}\n" * 100)[: 200 + i % 100 * 10])
`, 0o644)
		git(b, src, "init", "-q", "-b", "main")
		git(b, src, "add", "-A")
		git(b, src, "commit", "-q", "-m", "gen")
		commit := git(b, src, "rev-parse", "HEAD")
		s := openStore(b, filepath.Join(base, "store"))
		if res, err := s.Build(ctx, openRepo(b, src), []string{commit}, BuildOptions{Setup: fmt.Sprintf("%s gen.py %d", strings.TrimSuffix(pySetup(), pySetupArgs), n), Runner: runner()}); err != nil || res[0].Status != StatusBuilt {
			b.Fatalf("build: %v %+v", err, res)
		}
		plain := filepath.Join(base, "plain")
		if _, err := s.Restore(ctx, commit, plain, RestoreOptions{Method: RestoreCopy}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Materialize(ctx, commit); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("files=%d/%s", n, method), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				dest := filepath.Join(base, fmt.Sprintf("o-%d", i))
				res, err := s.Restore(ctx, commit, dest, opts)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if res.Files < n || res.Method != method {
					b.Fatalf("restored %d files by %s, want %d by %s", res.Files, res.Method, n, method)
				}
				if err := res.Release(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("files=%d/cp-a", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				dest := filepath.Join(base, fmt.Sprintf("cp-%d", i))
				if out, err := exec.Command("cp", "-a", plain, dest).CombinedOutput(); err != nil {
					b.Fatalf("cp -a: %v\n%s", err, out)
				}
				b.StopTimer()
				removeAll(dest)
				b.StartTimer()
			}
		})
	}
}
