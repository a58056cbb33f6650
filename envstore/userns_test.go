package envstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchbench/patchbench/internal/nobody"
	"github.com/patchbench/patchbench/sandbox"
)

// TestUserNSOverlay: an ordinary user's test stage in constant time. As
// nobody, on a store nobody built, a temporary restore that may use a user
// namespace (RestoreOptions.Namespace) mounts an overlay there: the test
// command, run by each sandbox runner in that namespace, sees the tree,
// writes into it (append after chmod, a new file, a delete) and the next
// command sees its writes; this process writes through Path; the mount
// point outside stays empty; the store's files hash the same after; and
// after Release no holder, layer, record or mount is left. A run killed
// with such a restore leaves nothing mounted (its holder dies with it),
// and ReleaseStale removes its layers. On a store root built, whose tree
// nobody's namespace cannot map, the restore makes files instead and says
// why (EOVERFLOW). Run as root, it runs itself again as nobody.
func TestUserNSOverlay(t *testing.T) {
	nobody.Test{Prefix: "envstore-userns-", AsNobody: func(base string) { userNSAsNobody(t, base) }, Want: "method overlay-userns",
		Setup: func(base string) (env, paths []string) {
			t.Cleanup(func() { removeAll(base) })
			_, commits := builtStore(t, filepath.Join(base, "store"), 3)
			// A store root built and materialized: nobody may read it,
			// not map it.
			rootStore, _ := builtStore(t, filepath.Join(base, "rootstore"), 3)
			if _, err := rootStore.Materialize(context.Background(), commits[2]); err != nil {
				t.Fatal(err)
			}
			os.Mkdir(filepath.Join(base, "restores"), 0o755)
			return []string{"ENVSTORE_TEST_COMMIT=" + commits[2]}, []string{filepath.Join(base, "store"), filepath.Join(base, "restores")}
		}}.Run(t)
}

func userNSAsNobody(t *testing.T, base string) {
	ctx := context.Background()
	commit := os.Getenv("ENVSTORE_TEST_COMMIT")
	s, err := OpenExisting(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ENVSTORE_TEST_USERNS_CHILD") != "" {
		// A run killed while its restore is mounted.
		res, err := s.Restore(ctx, commit, os.Getenv("ENVSTORE_TEST_DEST"), RestoreOptions{Overlay: true, Temporary: true, Namespace: true})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("mounted %d\n", res.NamespacePID)
		select {}
	}
	if ok, why := OverlayAvailable(base); ok {
		t.Skipf("nobody can mount an overlay others see here: %s", why)
	}
	// The tree is made first, so that its files are compared too.
	if _, err := s.Materialize(ctx, commit); err != nil {
		t.Fatal(err)
	}
	before := storeHash(t, s)
	runners := []sandbox.Runner{sandbox.Plain{}}
	if b, err := sandbox.NewBwrap(ctx); err == nil {
		runners = append(runners, b)
	} else {
		t.Logf("no bubblewrap as nobody: %v", err)
	}
	for i, r := range runners {
		dest := filepath.Join(base, "restores", fmt.Sprintf("t%d", i))
		res, err := s.Restore(ctx, commit, dest, RestoreOptions{Overlay: true, Temporary: true, Namespace: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("method %s: %s", res.Method, res.MethodReason)
		if res.Method != MethodUserNSOverlay || res.NamespacePID == 0 {
			t.Fatalf("%s: method %s (%s), want %s", r.Name(), res.Method, res.MethodReason, MethodUserNSOverlay)
		}
		// This process writes through Path, by descriptors.
		if err := os.WriteFile(filepath.Join(res.Path, "from-harness.txt"), []byte("harness\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run := func(script string) sandbox.Result {
			t.Helper()
			out, err := r.Run(ctx, sandbox.Command{Dir: res.Dir, Args: []string{"/bin/sh", "-c", script}, Namespace: res.NamespacePID, Timeout: time.Minute})
			if err != nil || out.ExitCode != 0 {
				t.Fatalf("%s: %s: exit %d, %v\n%s%s", r.Name(), script, out.ExitCode, err, out.Stdout, out.Stderr)
			}
			return out
		}
		out := run(`id -u; cat README from-harness.txt; chmod u+w pkg/core.py && echo appended >> pkg/core.py && echo new > new.txt && rm -r pkg/__pycache__`)
		for _, want := range []string{"65534\n", "harness\n"} {
			if !strings.Contains(string(out.Stdout), want) {
				t.Errorf("%s: the test command's output %q lacks %q", r.Name(), out.Stdout, want)
			}
		}
		out = run(`tail -n 1 pkg/core.py; cat new.txt; test ! -e pkg/__pycache__ && echo deleted`)
		if got := string(out.Stdout); got != "appended\nnew\ndeleted\n" {
			t.Errorf("%s: a second command sees %q, want the first one's writes", r.Name(), got)
		}
		if b, err := os.ReadFile(filepath.Join(res.Path, "new.txt")); err != nil || string(b) != "new\n" {
			t.Errorf("%s: this process reads %q, %v through Path", r.Name(), b, err)
		}
		// Git (or any program that takes its working directory's path)
		// runs inside the namespace.
		enter, err := res.Enter()
		if err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(enter[0], append(enter[1:], "cat", "new.txt")...).CombinedOutput(); err != nil || string(b) != "new\n" {
			t.Errorf("%s: a program run through Enter reads %q, %v", r.Name(), b, err)
		}
		if ents, err := os.ReadDir(dest); err != nil || len(ents) != 0 {
			t.Errorf("%s: the mount point outside the namespace holds %d entries (%v): a write went around the overlay", r.Name(), len(ents), err)
		}
		layers := overlayDirName(dest)
		if err := res.Release(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", res.NamespacePID)); err == nil {
			t.Errorf("%s: the holder %d runs after Release", r.Name(), res.NamespacePID)
		}
		for _, p := range []string{dest, layers, s.mountRecordPath(dest)} {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s left after Release: %v", r.Name(), p, err)
			}
		}
	}
	storeUnchanged(t, before, storeHash(t, s))
	mustVerify(t, s)

	// Killed: its holder dies with it, so nothing stays mounted, and the
	// next ReleaseStale removes what it left.
	killed := filepath.Join(base, "restores", "killed")
	cmd := exec.Command(os.Args[0], "-test.run=^TestUserNSOverlay$")
	cmd.Env = append(os.Environ(), "ENVSTORE_TEST_USERNS_CHILD=1", "ENVSTORE_TEST_DEST="+killed)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := stdout.Read(buf)
	var holder int
	if _, err := fmt.Sscanf(string(buf[:n]), "mounted %d", &holder); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	gone := false
	for i := 0; i < 400 && !gone; i++ {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", holder))
		gone = errors.Is(err, fs.ErrNotExist)
		time.Sleep(5 * time.Millisecond)
	}
	if !gone {
		t.Errorf("the killed run's holder %d still runs, its namespace and mount with it", holder)
	}
	if n, err := s.ReleaseStale(ctx); err != nil || n != 1 {
		t.Errorf("ReleaseStale after the killed run: %d, %v; want 1", n, err)
	}
	if _, err := os.Lstat(overlayDirName(killed)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed run's layers are left: %v", err)
	}

	// Root's store: the namespace cannot map its owner, so files.
	rs, err := OpenExisting(filepath.Join(base, "rootstore"))
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(base, "restores", "root")
	res, err := rs.Restore(ctx, commit, dest, RestoreOptions{Overlay: true, Temporary: true, Namespace: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("root's store: method %s: %s", res.Method, res.MethodReason)
	if res.Method == MethodUserNSOverlay || res.NamespacePID != 0 || !strings.Contains(res.MethodReason, "EOVERFLOW") || !strings.Contains(res.MethodReason, "uid 0") {
		t.Errorf("root's store restored by %s (%s), want files and the reason", res.Method, res.MethodReason)
	}
	if _, err := os.Stat(filepath.Join(dest, "README")); err != nil {
		t.Error(err)
	}
}
