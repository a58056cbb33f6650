package patch_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/patch"
)

// killOld and killNew are the trees before and after killResults: files
// modified, one deleted (its directory left empty, so removed), one
// created in directories the write makes, one renamed into another.
var (
	killOld = map[string]string{"a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n", "gone/del.txt": "del\n", "ren/old.txt": "moved\n", "keep.txt": "keep\n"}
	killNew = map[string]string{"a.txt": "A\n", "b.txt": "B\n", "sub/c.txt": "C\n", "new/dir/n.txt": "n\n", "moved/new.txt": "moved!\n", "keep.txt": "keep\n"}
)

var killResults = []patch.FileResult{
	{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("A\n")},
	{OldPath: "b.txt", Path: "b.txt", Op: patch.Modify, Content: []byte("B\n")},
	{OldPath: "sub/c.txt", Path: "sub/c.txt", Op: patch.Modify, Content: []byte("C\n")},
	{OldPath: "gone/del.txt", Op: patch.Delete},
	{Path: "new/dir/n.txt", Op: patch.Create, Content: []byte("n\n")},
	{OldPath: "ren/old.txt", Path: "moved/new.txt", Op: patch.Rename, Content: []byte("moved!\n")},
}

// killPoints are where a write is killed: every point OnWrite names.
// Final(killResults) has 7 paths, so 7 steps.
var killPoints = []string{"journal", "temps", "step 1", "step 2", "step 3", "step 4", "step 5", "step 6", "step 7", "commit"}

// TestWriteKilledHelper is the process that TestWriteKilled kills: it
// writes killResults and stops at the point named in its environment.
func TestWriteKilledHelper(t *testing.T) {
	dir, point := os.Getenv("PATCHBENCH_KILL_DIR"), os.Getenv("PATCHBENCH_KILL_POINT")
	if dir == "" {
		t.Skip("run by TestWriteKilled")
	}
	r, err := patch.OpenRoot(filepath.Join(dir, "tree"))
	if err != nil {
		t.Fatal(err)
	}
	r.OnWrite(func(p string) {
		if p == point {
			os.WriteFile(filepath.Join(dir, "paused"), nil, 0o644)
			time.Sleep(time.Hour) // until killed
		}
	})
	if err := r.WriteResults(killResults); err != nil {
		t.Fatal(err)
	}
}

// TestWriteKilled kills a multi-file write with SIGKILL at every point
// where the tree differs, then recovers: the tree is all old (killed
// before the commit) or all new (after), with no journal, backup,
// temporary file or directory left over; a second recovery finds nothing.
func TestWriteKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	mixed := 0
	for _, point := range killPoints {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			tree := filepath.Join(dir, "tree")
			writeFiles(t, tree, killOld)
			killAt(t, dir, point)
			crashed := listTree(t, tree)
			if !sameFiles(crashed, killOld) && !sameFiles(crashed, killNew) {
				mixed++
			}
			r, err := patch.OpenRoot(tree)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			did, err := r.Recover()
			if err != nil || len(did) != 1 {
				t.Fatalf("recover: %v, %q; want one write recovered", err, did)
			}
			want := killOld
			if point == "commit" {
				want = killNew
			}
			if d := cmp.Diff(want, listTree(t, tree)); d != "" {
				t.Errorf("after recovery (-want +got):\n%s\nleft by the kill: %v", d, crashed)
			}
			if did, err := r.Recover(); err != nil || len(did) != 0 {
				t.Errorf("second recovery: %v, %q; want nothing to do", err, did)
			}
		})
	}
	if mixed < 5 {
		t.Errorf("only %d kills left a tree neither old nor new: the test does not stop the write where it matters", mixed)
	}
}

// killAt runs TestWriteKilledHelper on dir/tree, waits until it stops at
// point, and kills it with SIGKILL.
func killAt(t *testing.T, dir, point string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteKilledHelper$")
	cmd.Env = append(os.Environ(), "PATCHBENCH_KILL_DIR="+dir, "PATCHBENCH_KILL_POINT="+point)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if _, err := os.Stat(filepath.Join(dir, "paused")); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the writer ended before %s: %v\n%s", point, err, out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the writer did not reach %s", point)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listTree maps every file under dir, hidden ones included, to its
// content, and every empty directory D to "D/".
func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if es, _ := os.ReadDir(p); len(es) == 0 && p != dir {
				out[rel+"/"] = ""
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string]string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
