package runner

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// listDir returns the names in dir with their contents, to see a refusal
// change nothing.
func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = d.Type().String() + ":" + string(b)
		return nil
	})
	return out
}

func TestOpenDirRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string) string // returns the --out
		opts DirOptions
		want string
	}{
		{"file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "F")
			os.WriteFile(p, []byte("keep"), 0o644)
			return p
		}, DirOptions{ResultsFile: "results.jsonl"}, "is a file, not a run directory"},
		{"file for merge", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "F")
			os.WriteFile(p, []byte("keep"), 0o644)
			return p
		}, DirOptions{ResultsFile: "results.jsonl", New: true}, "is a file"},
		{"other files", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "o")
			os.MkdirAll(filepath.Join(p, "sub"), 0o755)
			os.WriteFile(filepath.Join(p, "notes"), []byte("keep"), 0o644)
			return p
		}, DirOptions{ResultsFile: "results.jsonl", Resume: true}, "holds something else (notes, sub), not a run"},
		{"a run where none may be", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "r")
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, RunFile), []byte("{}"), 0o644)
			return p
		}, DirOptions{ResultsFile: "results.jsonl", New: true}, "already holds a run; give a missing or empty directory"},
		{"rows without resume", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "r")
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "results.jsonl"), []byte(`{"key":"a"}`+"\n"), 0o644)
			return p
		}, DirOptions{ResultsFile: "results.jsonl"}, "already holds a run: --resume to continue it"},
		{"directory link", func(t *testing.T, dir string) string {
			os.Mkdir(filepath.Join(dir, "real"), 0o755)
			p := filepath.Join(dir, "link")
			os.Symlink("real", p)
			return p
		}, DirOptions{ResultsFile: "results.jsonl"}, "is a symbolic link"},
		{"results link", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "r")
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(dir, "target"), []byte("keep"), 0o644)
			os.Symlink("../target", filepath.Join(p, "results.jsonl"))
			return p
		}, DirOptions{ResultsFile: "results.jsonl", Resume: true}, "results.jsonl is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := tc.make(t, dir)
			before := listDir(t, dir)
			if err := CheckDir(out, tc.opts); !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckDir: %v; want an ErrRunDir with %q", err, tc.want)
			}
			d, err := OpenDir(out, tc.opts)
			if err == nil {
				d.Release()
				t.Fatalf("OpenDir took %s", out)
			}
			if !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenDir: %v; want an ErrRunDir with %q", err, tc.want)
			}
			if after := listDir(t, dir); !mapsEqual(before, after) {
				t.Errorf("a refusal changed the directory:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestOpenDirTakes(t *testing.T) {
	dir := t.TempDir()
	// Missing: made, and said so.
	d, err := OpenDir(filepath.Join(dir, "new", "run"), DirOptions{ResultsFile: "results.jsonl"})
	if err != nil || !d.Created {
		t.Fatalf("OpenDir of a missing directory: %v, created %v", err, d != nil && d.Created)
	}
	d.Release()
	// Released with nothing written (a refused run): what OpenDir made is
	// taken back.
	if _, err := os.Lstat(filepath.Join(dir, "new", "run")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a run directory released unused is left: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "new", "run"), 0o755)
	// Empty, and again once released: the lock file it made is removed.
	for range 2 {
		d, err = OpenDir(filepath.Join(dir, "new", "run"), DirOptions{ResultsFile: "results.jsonl", New: true})
		if err != nil || d.Created {
			t.Fatalf("OpenDir of an empty directory: %v", err)
		}
		d.Release()
		if ents, err := os.ReadDir(filepath.Join(dir, "new", "run")); err != nil || len(ents) != 0 {
			t.Fatalf("an empty directory released unused holds %v (%v)", ents, err)
		}
	}
	// A run with rows, resumed or forced.
	os.WriteFile(filepath.Join(dir, "new", "run", "results.jsonl"), []byte(`{"key":"a"}`+"\n"), 0o644)
	for _, o := range []DirOptions{{ResultsFile: "results.jsonl", Resume: true}, {ResultsFile: "results.jsonl", Force: true}} {
		d, err = OpenDir(filepath.Join(dir, "new", "run"), o)
		if err != nil {
			t.Fatalf("OpenDir %+v: %v", o, err)
		}
		d.Release()
	}
}

// TestOpenDirHeldByAnotherProcess holds a directory in a child process
// (the test binary in mode "hold") and checks that this one is refused,
// the holder named, and takes the directory once the child is killed.
func TestOpenDirHeldByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold", "RUNNER_TEST_OUT="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	for _, try := range []func() error{
		func() error { return CheckDir(dir, DirOptions{ResultsFile: "results.jsonl", Resume: true}) },
		func() error {
			d, err := OpenDir(dir, DirOptions{ResultsFile: "results.jsonl", Resume: true})
			d.Release()
			return err
		},
		func() error {
			_, err := Run(context.Background(), makeCases(1), succeed, Options{Out: filepath.Join(dir, "results.jsonl"), Resume: true})
			return err
		},
	} {
		err := try()
		want := "is in use by pid " + strconv.Itoa(cmd.Process.Pid) + " (runner-test hold), started 20"
		if !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want an ErrRunDir with %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run wrote its results file: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// The kernel dropped the lock with the process: nothing stale.
	d, err := OpenDir(dir, DirOptions{ResultsFile: "results.jsonl", Resume: true})
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	d.Release()
}

// holdHelper is the child of TestOpenDirHeldByAnotherProcess: it takes dir,
// says so, and waits to be killed.
func holdHelper(dir string) error {
	d, err := OpenDir(dir, DirOptions{Command: "runner-test hold", ResultsFile: "results.jsonl"})
	if err != nil {
		return err
	}
	defer d.Release()
	os.Stdout.WriteString("held\n")
	time.Sleep(time.Hour)
	return errors.New("helper was not killed")
}

// TestRunLocksItsDirectory: two runs on one results file in one process
// (Options.Dir unset): the second is refused while the first runs.
func TestRunLocksItsDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := Run(context.Background(), makeCases(1), func(ctx context.Context, c Case) (Result, error) {
			close(started)
			<-release
			return succeed(ctx, c)
		}, Options{Out: out})
		done <- err
	}()
	<-started
	_, err := Run(context.Background(), makeCases(3), succeed, Options{Out: out, Resume: true})
	if !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), "is in use by pid") {
		t.Errorf("second run: %v; want it refused as in use", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	assertEachOnce(t, out, []string{"k000"})
}

// TestResumeDoesNotFollowALink: a results file that is a symbolic link is
// neither read nor appended to; its target is unchanged.
func TestResumeDoesNotFollowALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	content := `{"key":"k000","id":"x","failed":false}` + "\n"
	os.WriteFile(target, []byte(content), 0o644)
	os.Mkdir(filepath.Join(dir, "run"), 0o755)
	out := filepath.Join(dir, "run", "results.jsonl")
	os.Symlink("../target.jsonl", out)
	for _, resume := range []bool{true, false} {
		_, err := Run(context.Background(), makeCases(3), succeed, Options{Out: out, Resume: resume})
		if !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("resume %v: %v; want a refusal", resume, err)
		}
		if _, err := Plan(makeCases(3), Options{Out: out, Resume: true}); !errors.Is(err, ErrRunDir) {
			t.Errorf("Plan read through the link: %v", err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != content {
		t.Errorf("the link's target changed: %q", b)
	}
}

func TestRecordRun(t *testing.T) {
	dir := t.TempDir()
	type info struct {
		Dataset  string   `json:"dataset"`
		Hash     string   `json:"dataset_sha256"`
		Tasks    []string `json:"tasks"`
		N        int      `json:"n"`
		Started  string   `json:"started"`
		Workers  int      `json:"workers"`
		Optional string   `json:"optional,omitempty"`
	}
	first := info{Dataset: "/a/data.jsonl", Hash: "h1", Tasks: []string{"apply"}, N: 2, Started: "t1", Workers: 4}
	if err := RecordRun(dir, first, true); err != nil { // nothing recorded yet
		t.Fatal(err)
	}
	// The same run, moved and restarted with other workers: accepted.
	same := first
	same.Dataset, same.Started, same.Workers = "/b/data.jsonl", "t2", 8
	if err := RecordRun(dir, same, true, "dataset", "workers"); err != nil {
		t.Errorf("same run: %v", err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, RunFile))
	for _, tc := range []struct {
		change func(*info)
		want   string
	}{
		{func(i *info) { i.Hash = "h2" }, `dataset_sha256 (recorded "h1", now "h2")`},
		{func(i *info) { i.Tasks = []string{"apply", "diffgen"} }, `tasks (recorded ["apply"], now ["apply","diffgen"])`},
		{func(i *info) { i.N, i.Optional = 3, "x" }, `n (recorded 2, now 3); optional (recorded nothing, now "x")`},
	} {
		next := same
		tc.change(&next)
		err := RecordRun(dir, next, true, "dataset", "workers")
		if !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v; want an ErrRunDir naming %s", err, tc.want)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, RunFile)); string(after) != string(before) {
			t.Errorf("a refused resume rewrote %s", RunFile)
		}
	}
	// A run recorded before the hash is compared by the dataset's path.
	old := t.TempDir()
	WriteRunInfo(old, map[string]any{"dataset": "/a/data.jsonl", "tasks": []string{"apply"}, "n": 2, "workers": 4})
	same.Dataset = "/a/data.jsonl"
	if err := RecordRun(old, same, true, "dataset", "workers"); err != nil {
		t.Errorf("a run recorded without its hash, same path: %v", err)
	}
	WriteRunInfo(old, map[string]any{"dataset": "/a/data.jsonl", "tasks": []string{"apply"}, "n": 2, "workers": 4})
	moved := same
	moved.Dataset = "/b/other.jsonl"
	if err := RecordRun(old, moved, true, "dataset", "workers"); !errors.Is(err, ErrRunDir) || !strings.Contains(err.Error(), "differs in dataset (") {
		t.Errorf("a run recorded without its hash, other path: %v; want it refused", err)
	}

	// Without resume (a new run, or --force), run.json is replaced.
	other := same
	other.Hash = "h3"
	if err := RecordRun(dir, other, false); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, RunFile)); !strings.Contains(string(after), `"h3"`) {
		t.Errorf("run.json not replaced: %s", after)
	}
}

func TestHashFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	a, b, c := write("a.jsonl", "row\n"), write("moved/b.jsonl", "row\n"), write("c.jsonl", "row2\n")
	ha, _ := HashFiles(a)
	hb, _ := HashFiles(b)
	hc, _ := HashFiles(c)
	if ha != hb || ha == hc || len(ha) != 64 {
		t.Errorf("same bytes elsewhere %s %s; other bytes %s", ha, hb, hc)
	}
	write("d1/x.jsonl", "1")
	write("d2/y.jsonl", "1")
	h1, _ := HashFiles(filepath.Join(dir, "d1"))
	h2, _ := HashFiles(filepath.Join(dir, "d2"))
	if h1 == h2 {
		t.Error("directories with files of other names hash alike")
	}
	if _, err := HashFiles(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing dataset hashed")
	}
}

func TestDiskName(t *testing.T) {
	ids := []string{"a/b", "a_b", "a:b", "a b", `a\b`, "a\x00b", "A_B", "_a", ".a", ".", "..", "", "~",
		"django__django-11099", strings.Repeat("x", 80), strings.Repeat("x", 81), strings.Repeat("x", 300),
		strings.Repeat("x", 301), "é", "e\u0301", "a_b~" + DiskName("a/b")[4:]}
	seen := map[string]string{}
	for _, id := range ids {
		name := DiskName(id)
		if prev, ok := seen[name]; ok {
			t.Errorf("DiskName(%q) = DiskName(%q) = %q", id, prev, name)
		}
		seen[name] = id
		if name == "" || name == "." || name == ".." || name[0] == '.' || len(name) > 100 ||
			strings.ContainsAny(name, "/\\:\x00 ") || !utf8.ValidString(name) {
			t.Errorf("DiskName(%q) = %q: not a plain short name", id, name)
		}
		if DiskName(id) != name {
			t.Errorf("DiskName(%q) is not stable", id)
		}
	}
	// Plain ids keep their names, so run directories stay readable.
	for _, id := range []string{"django__django-11099", "a_b", strings.Repeat("x", 80)} {
		if DiskName(id) != id {
			t.Errorf("DiskName(%q) = %q", id, DiskName(id))
		}
	}
	if got := DiskName("a/b"); !strings.HasPrefix(got, "a_b~") || len(got) != len("a_b~")+16 {
		t.Errorf("DiskName(a/b) = %q", got)
	}
	if !slices.Contains(ids, "a_b") {
		t.Fatal("test lost its case")
	}
}
