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

// Var holds, in the run of a test as nobody, the base directory root
// made for it.
const Var = "PATCHBENCH_TEST_NOBODY_BASE"

// Test is a test that root runs again as nobody, on a directory root
// fills.
type Test struct {
	// Prefix begins the base directory's name (os.MkdirTemp).
	Prefix string
	// Setup fills base (a new directory, removed when the test ends;
	// base/home is made, nobody's HOME and TMPDIR) and returns the
	// variables ("NAME=value") the run as nobody needs, and the paths
	// under base to hand nobody (all of base when none; base/home
	// always). It may skip the test.
	Setup func(base string) (env, paths []string)
	// AsNobody is the test as nobody, on base.
	AsNobody func(base string)
	// Want, when set, is a string the run as nobody must print (a test
	// that passes by skipping its core prints it not).
	Want string
	// AsMe, when this process is not root, runs Setup and AsNobody as
	// this user, in this process (the variables set for the test);
	// without it the test is skipped then.
	AsMe bool
}

// Run runs the test t as nobody: in the run as nobody (Var set), AsNobody;
// as root, Setup, then the test binary again as nobody, failing t unless
// that test passes and prints Want; as another user, skipped, or as AsMe
// says.
func (nt Test) Run(t *testing.T) {
	t.Helper()
	if base := os.Getenv(Var); base != "" {
		nt.AsNobody(base)
		return
	}
	root := os.Geteuid() == 0
	if !root && !nt.AsMe {
		t.Skip("runs as root, which runs it again as nobody")
	}
	base, err := os.MkdirTemp("", nt.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env, paths := nt.Setup(base)
	if !root {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		nt.AsNobody(base)
		return
	}
	if len(paths) > 0 {
		paths = append(paths, home)
	}
	out := rerun(t, base, t.Name(), home, append(env, Var+"="+base), paths...)
	if !strings.Contains(out, nt.Want) {
		t.Fatalf("the test as nobody did not print %q", nt.Want)
	}
}

// rerun runs the test called name again as nobody, in base, with env added
// and HOME and TMPDIR set to home, after handing nobody a copy of the test
// binary (the build cache's directories are private) and the given paths
// (all of base when none). It fails t unless that test passes, and returns
// its output.
func rerun(t testing.TB, base, name, home string, env []string, paths ...string) string {
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
