package envstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSparseRestore: a large sparse file a setup leaves is restored sparse
// by every method (a copy writes its data, not its holes), with the same
// bytes; a named pipe and a socket the setup leaves are named in the
// build's result, not dropped silently.
func TestSparseRestore(t *testing.T) {
	const size = 1 << 30
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(dir, 0o755)
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "README", "sparse\n", 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	commit := git(t, dir, "rev-parse", "HEAD")
	// 1 GiB with two bytes of data (one in the middle, one at the end), a
	// fifo and a socket (python's, when an interpreter is at hand).
	setup := "truncate -s 1G big.bin && printf a | dd of=big.bin bs=1 seek=500000000 conv=notrunc 2>/dev/null && " +
		"printf z | dd of=big.bin bs=1 seek=1073741823 conv=notrunc 2>/dev/null && mkdir run && mkfifo run/fifo"
	withSocket := false
	if py := pySetup(); strings.HasPrefix(py, "/") {
		interp := strings.Fields(py)[0]
		setup += " && " + interp + ` -c "import socket; socket.socket(socket.AF_UNIX).bind('run/sock')"`
		withSocket = true
	}
	s := openStore(t, filepath.Join(t.TempDir(), "store"))
	res, err := s.Build(ctx, openRepo(t, dir), []string{commit}, BuildOptions{Setup: setup, Runner: runner()})
	if err != nil || res[0].Status != StatusBuilt {
		t.Fatalf("build: %v %+v", err, res)
	}
	want := []string{"run/fifo (named pipe)"}
	if withSocket {
		want = append(want, "run/sock (socket)")
	}
	if diff := cmp.Diff(want, res[0].SkippedPaths); diff != "" {
		t.Errorf("skipped paths (-want +got):\n%s", diff)
	}
	if res[0].Skipped != len(want) {
		t.Errorf("skipped %d, want %d", res[0].Skipped, len(want))
	}

	methods := []RestoreMethod{RestoreCopy}
	if os.Geteuid() != 0 {
		methods = append(methods, RestoreLink)
	}
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "t")
			if _, err := s.Restore(ctx, commit, dest, RestoreOptions{Method: m}); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dest, "big.bin")
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err != nil {
				t.Fatal(err)
			}
			if st.Size != size {
				t.Errorf("size %d, want %d", st.Size, size)
			}
			// Two data blocks, a few more for metadata: far below the
			// 2,097,152 blocks of 512 bytes a dense copy takes.
			if st.Blocks > 1024 {
				t.Errorf("restored %s takes %d blocks of 512 bytes (%d MB): not sparse", p, st.Blocks, st.Blocks*512>>20)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := make([]byte, 1)
			for off, c := range map[int64]byte{0: 0, 500000000: 'a', 500000001: 0, size - 1: 'z'} {
				if _, err := f.ReadAt(b, off); err != nil || b[0] != c {
					t.Errorf("byte %d: %q %v, want %q", off, b, err, c)
				}
			}
		})
	}
}
