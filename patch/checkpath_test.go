package patch_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// TestIsDotGit: the components git's verify_path refuses as .git, and
// names that only look like it.
func TestIsDotGit(t *testing.T) {
	for c, want := range map[string]bool{
		".git": true, ".GIT": true, ".Git": true, ".gIt": true,
		".git.": true, ".git ": true, ".git. .": true, ".git::$INDEX_ALLOCATION": true, ".git:x": true,
		"git~1": true, "GIT~1": true, "git~1.": true,
		".g\u200cit": true, "\ufeff.git": true, ".gi\u200dt": true,
		".gitignore": false, ".gitmodules": false, ".github": false, "git": false, ".gi": false,
		"git~2": false, "git~10": false, "x.git": false, ".git.x": false, "": false, ".g\u00e9it": false,
	} {
		if got := patch.IsDotGit(c); got != want {
			t.Errorf("IsDotGit(%q) = %v, want %v", c, got, want)
		}
	}
}

// TestCheckPathBounds: a path at the bounds passes, one past them is
// refused naming the bound.
func TestCheckPathBounds(t *testing.T) {
	deep := strings.Repeat("d/", patch.MaxPathDepth-1) + "f"
	long := strings.Repeat("x", patch.MaxPathBytes)
	for _, p := range []string{deep, long} {
		if err := patch.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%d bytes, %d components): %v", len(p), strings.Count(p, "/")+1, err)
		}
	}
	for p, want := range map[string]string{
		"d/" + deep: "257 components deep, over the bound of 256 (MaxPathDepth)",
		long + "x":  "4097 bytes, over the bound of 4096 (MaxPathBytes)",
	} {
		if err := patch.CheckPath(p); !errors.Is(err, patch.ErrUnsafePath) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPath: %v, want an unsafe-path error containing %q", err, want)
		}
	}
}

// TestRootSpecialFiles: a socket and a device are refused before they are
// read (a read of /dev/zero would never end).
func TestRootSpecialFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a socket file and /dev/zero")
	}
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Skipf("no unix socket: %v", err)
	}
	defer l.Close()
	r, err := patch.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadFile("sock"); err == nil || !strings.Contains(err.Error(), `unsafe path "sock": a socket, not a regular file`) {
		t.Errorf("ReadFile(sock): %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dev, err := patch.OpenRoot("/dev")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if _, err := dev.ReadFile("zero"); err == nil || !strings.Contains(err.Error(), `unsafe path "zero": a character device, not a regular file`) {
		t.Errorf("ReadFile(zero): %v", err)
	}
	if err := dev.WriteResults([]patch.FileResult{{OldPath: "null", Path: "null", Op: patch.Modify, Content: []byte("x")}}); err == nil || !strings.Contains(err.Error(), `unsafe path "null": a character device`) {
		t.Errorf("WriteResults(null): %v", err)
	}
}
