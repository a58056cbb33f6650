package patch_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/testtree"
	"github.com/patchbench/patchbench/patch"
)

// killCase is a write to kill: the tree before and after results.
type killCase struct {
	old, new map[string]string
	results  []patch.FileResult
	steps    int // the paths of Final(results)
}

var killCases = map[string]killCase{
	// Files modified, one deleted (its directory left empty, so removed),
	// one created in directories the write makes, one renamed into
	// another.
	"many": {
		old: map[string]string{"a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n", "gone/del.txt": "del\n", "ren/old.txt": "moved\n", "keep.txt": "keep\n"},
		new: map[string]string{"a.txt": "A\n", "b.txt": "B\n", "sub/c.txt": "C\n", "new/dir/n.txt": "n\n", "moved/new.txt": "moved!\n", "keep.txt": "keep\n"},
		results: []patch.FileResult{
			{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("A\n")},
			{OldPath: "b.txt", Path: "b.txt", Op: patch.Modify, Content: []byte("B\n")},
			{OldPath: "sub/c.txt", Path: "sub/c.txt", Op: patch.Modify, Content: []byte("C\n")},
			{OldPath: "gone/del.txt", Op: patch.Delete},
			{Path: "new/dir/n.txt", Op: patch.Create, Content: []byte("n\n")},
			{OldPath: "ren/old.txt", Path: "moved/new.txt", Op: patch.Rename, Content: []byte("moved!\n")},
		},
		steps: 7,
	},
	// x renamed to x/y (a directory takes the file's place), and a and b
	// swapped.
	"renames": {
		old: map[string]string{"x": "x\n", "a": "a\n", "b": "b\n"},
		new: map[string]string{"x/y": "x\n", "a": "b\n", "b": "a\n"},
		results: []patch.FileResult{
			{OldPath: "x", Path: "x/y", Op: patch.Rename, Content: []byte("x\n")},
			{OldPath: "b", Path: "a", Op: patch.Rename, Content: []byte("b\n")},
			{OldPath: "a", Path: "b", Op: patch.Rename, Content: []byte("a\n")},
		},
		steps: 4,
	},
	// x/y renamed back to x (a file takes the place of the directory
	// whose only file leaves), and a and b swapped.
	"renames back": {
		old: map[string]string{"x/y": "x\n", "x/sub/z": "z\n", "a": "a\n", "b": "b\n"},
		new: map[string]string{"x": "x!\n", "a": "b\n", "b": "a\n"},
		results: []patch.FileResult{
			{OldPath: "x/sub/z", Op: patch.Delete},
			{OldPath: "x/y", Path: "x", Op: patch.Rename, Content: []byte("x!\n")},
			{OldPath: "b", Path: "a", Op: patch.Rename, Content: []byte("b\n")},
			{OldPath: "a", Path: "b", Op: patch.Rename, Content: []byte("a\n")},
		},
		steps: 5,
	},
}

// TestWriteFileOverDirectory: a file takes a directory's place only when
// the write removes every file in it (as git apply does); otherwise the
// write is refused before anything changes.
func TestWriteFileOverDirectory(t *testing.T) {
	old := map[string]string{"x/y": "x\n", "x/stays": "s\n", "a": "a\n"}
	dir := t.TempDir()
	testtree.Write(t, dir, old)
	err := patch.WriteResults(dir, []patch.FileResult{
		{OldPath: "a", Path: "a", Op: patch.Modify, Content: []byte("A\n")},
		{OldPath: "x/y", Path: "x", Op: patch.Rename, Content: []byte("x\n")},
	})
	if err == nil || !strings.Contains(err.Error(), "x/stays in it stays") {
		t.Fatalf("err = %v, want a refusal naming x/stays", err)
	}
	if d := cmp.Diff(old, testtree.Read(t, dir)); d != "" {
		t.Errorf("the refused write changed the tree (-want +got):\n%s", d)
	}
}

// killPoints are where a write of steps files is killed: every point
// OnWrite names.
func killPoints(steps int) []string {
	points := []string{"journal", "temps"}
	for i := 1; i <= steps; i++ {
		points = append(points, fmt.Sprintf("step %d", i))
	}
	return append(points, "commit")
}

// TestWriteKilledHelper is the process that TestWriteKilled kills: it
// writes a killCase's results and stops at the point named in its environment.
func TestWriteKilledHelper(t *testing.T) {
	dir, point, kc := os.Getenv("PATCHBENCH_KILL_DIR"), os.Getenv("PATCHBENCH_KILL_POINT"), killCases[os.Getenv("PATCHBENCH_KILL_CASE")]
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
	if err := r.WriteResults(kc.results); err != nil {
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
	for name, kc := range killCases {
		mixed := 0
		for _, point := range killPoints(kc.steps) {
			t.Run(name+"/"+point, func(t *testing.T) {
				dir := t.TempDir()
				tree := filepath.Join(dir, "tree")
				testtree.Write(t, tree, kc.old)
				killAt(t, dir, name, point)
				crashed := testtree.Read(t, tree)
				if !sameFiles(crashed, kc.old) && !sameFiles(crashed, kc.new) {
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
				want := kc.old
				if point == "commit" {
					want = kc.new
				}
				if d := cmp.Diff(want, testtree.Read(t, tree)); d != "" {
					t.Errorf("after recovery (-want +got):\n%s\nleft by the kill: %v", d, crashed)
				}
				if did, err := r.Recover(); err != nil || len(did) != 0 {
					t.Errorf("second recovery: %v, %q; want nothing to do", err, did)
				}
			})
		}
		if mixed < kc.steps/2 {
			t.Errorf("%s: only %d kills left a tree neither old nor new: the test does not stop the write where it matters", name, mixed)
		}
		// Not killed, the write gives the new tree and nothing else.
		dir := t.TempDir()
		testtree.Write(t, dir, kc.old)
		if err := patch.WriteResults(dir, kc.results); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(kc.new, testtree.Read(t, dir)); d != "" {
			t.Errorf("%s written (-want +got):\n%s", name, d)
		}
	}
}

// killAt runs TestWriteKilledHelper on dir/tree, waits until it stops at
// point, and kills it with SIGKILL.
func killAt(t *testing.T, dir, name, point string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteKilledHelper$")
	cmd.Env = append(os.Environ(), "PATCHBENCH_KILL_DIR="+dir, "PATCHBENCH_KILL_CASE="+name, "PATCHBENCH_KILL_POINT="+point)
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

func sameFiles(a, b map[string]string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestWriteResultsStreamed: a result whose content is streamed
// (WriteContent) is written as one with Content; when the stream fails,
// the whole write is undone, the other files included, and nothing is
// left behind.
func TestWriteResultsStreamed(t *testing.T) {
	old := map[string]string{"a.txt": "a\n", "b.txt": "b\n"}
	stream := func(s string, err error) func(io.Writer) error {
		return func(w io.Writer) error {
			if _, werr := io.WriteString(w, s); werr != nil {
				return werr
			}
			return err
		}
	}
	tests := []struct {
		name    string
		results []patch.FileResult
		want    map[string]string
		wantErr bool
	}{
		{"streamed", []patch.FileResult{
			{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("A\n")},
			{OldPath: "b.txt", Path: "b.txt", Op: patch.Modify, Content: []byte{}, WriteContent: stream("streamed B\n", nil)},
		}, map[string]string{"a.txt": "A\n", "b.txt": "streamed B\n"}, false},
		{"stream fails", []patch.FileResult{
			{OldPath: "a.txt", Path: "a.txt", Op: patch.Modify, Content: []byte("A\n")},
			{OldPath: "b.txt", Path: "b.txt", Op: patch.Modify, Content: []byte{}, WriteContent: stream("half", errors.New("the patch changed"))},
		}, old, true},
		{"a later result writes the path", []patch.FileResult{
			{OldPath: "b.txt", Path: "b.txt", Op: patch.Modify, Content: []byte{}, WriteContent: stream("streamed\n", nil)},
			{OldPath: "b.txt", Path: "b.txt", Op: patch.Modify, Content: []byte("last\n")},
		}, map[string]string{"a.txt": "a\n", "b.txt": "last\n"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testtree.Write(t, dir, old)
			err := patch.WriteResults(dir, tc.results)
			if (err != nil) != tc.wantErr {
				t.Fatalf("WriteResults: %v, want an error: %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.want, testtree.Read(t, dir)); d != "" {
				t.Errorf("tree after (-want +got):\n%s", d)
			}
		})
	}
}
