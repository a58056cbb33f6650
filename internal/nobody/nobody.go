// Package nobody runs a test again as the user nobody (uid and gid 65534):
// the tests of what an ordinary user can do (hard links into a store, an
// overlay in a user namespace) when the tests run as root.
package nobody

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// UID and GID are nobody's.
const UID, GID = 65534, 65534

// Rerun runs the test called name again as nobody, in base, with env added
// and HOME and TMPDIR set to home, after handing nobody a copy of the test
// binary (the build cache's directories are private) and the given paths
// (all of base when none). It fails t unless that test passes, and returns
// its output.
func Rerun(t testing.TB, base, name, home string, env []string, paths ...string) string {
	t.Helper()
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, filepath.Base(os.Args[0]))
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		paths = []string{base}
	}
	for _, d := range append(paths, bin) {
		err := filepath.WalkDir(d, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, UID, GID)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = base
	cmd.Env = append(append(os.Environ(), env...), "HOME="+home, "TMPDIR="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: UID, Gid: GID}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("the test as nobody: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the test as nobody did not run")
	}
	return string(out)
}
