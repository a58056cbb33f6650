package repair_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// commitDiff is git's own diff of one real commit, with the files it reads
// and writes.
type commitDiff struct {
	ID   string // repo@commit
	Diff string
	// Diffs are git's diffs at the context widths commitsOf was asked for.
	Diffs    map[int]string
	Old, New patch.MapFS // by path; a created file is only in New, a deleted one only in Old
}

var (
	realOnce    sync.Once
	realCommits []commitDiff
	realErr     error
)

// loadRealCommits returns git's diffs of every 20th first-parent commit of
// the click and cobra histories and of the first ten that create, and
// delete, a file (commits with binary files, mode changes, links or
// submodules are left out), made with the git binary from
// ../shared/data/repos. Skips without git or the bundles.
func loadRealCommits(t testing.TB) []commitDiff {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(testdata.SharedDir(), "repos")
	if _, err := os.Stat(filepath.Join(dir, "click.bundle")); err != nil {
		t.Skipf("bundles not found: %v", err)
	}
	realOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "repair-real-")
		if err != nil {
			realErr = err
			return
		}
		defer os.RemoveAll(tmp)
		for _, name := range []string{"click", "cobra"} {
			cs, err := commitsOf(filepath.Join(dir, name+".bundle"), filepath.Join(tmp, name), name, 20)
			if err != nil {
				realErr = err
				return
			}
			realCommits = append(realCommits, cs...)
		}
	})
	if realErr != nil {
		t.Fatal(realErr)
	}
	return realCommits
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// commitsOf clones bundle to repo and returns git's diffs of every step-th
// first-parent commit and of the first ten that create, and delete, a file;
// with contexts, also its diffs at those widths (-U).
func commitsOf(bundle, repo, name string, step int, contexts ...int) ([]commitDiff, error) {
	if out, err := exec.Command("git", "clone", "-q", "--bare", bundle, repo).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("clone %s: %v: %s", bundle, err, out)
	}
	list, err := git(repo, "rev-list", "--first-parent", "--no-merges", "HEAD")
	if err != nil {
		return nil, err
	}
	pick := map[string]bool{}
	for i, c := range strings.Fields(list) {
		pick[c] = pick[c] || i%step == 0
	}
	for _, filter := range []string{"A", "D"} {
		some, err := git(repo, "log", "--first-parent", "--no-merges", "--diff-filter="+filter, "--format=%H", "-n", "10")
		if err != nil {
			return nil, err
		}
		for _, c := range strings.Fields(some) {
			pick[c] = true
		}
	}
	var out []commitDiff
	var wantBlobs []string
	type pending struct {
		cd    commitDiff
		files [][3]string // status, path, commit
	}
	var ps []pending
	for _, c := range strings.Fields(list) {
		if !pick[c] {
			continue
		}
		d, err := git(repo, "diff", "--no-renames", "--no-ext-diff", "--no-color", c+"^", c)
		if err != nil {
			continue // the root commit
		}
		if d == "" || strings.Contains(d, "\nBinary files ") || strings.Contains(d, "GIT binary patch") ||
			strings.Contains(d, "\nold mode ") || strings.Contains(d, " mode 120000") || strings.Contains(d, " mode 160000") {
			continue
		}
		st, err := git(repo, "diff", "--no-renames", "--name-status", c+"^", c)
		if err != nil {
			return nil, err
		}
		p := pending{cd: commitDiff{ID: name + "@" + c[:12], Diff: d, Old: patch.MapFS{}, New: patch.MapFS{}}}
		for _, u := range contexts {
			du, err := git(repo, "diff", "--no-renames", "--no-ext-diff", "--no-color", fmt.Sprintf("-U%d", u), c+"^", c)
			if err != nil {
				return nil, err
			}
			if p.cd.Diffs == nil {
				p.cd.Diffs = map[int]string{}
			}
			p.cd.Diffs[u] = du
		}
		for _, l := range strings.Split(strings.TrimSpace(st), "\n") {
			f := strings.SplitN(l, "\t", 2)
			if len(f) != 2 {
				continue
			}
			if f[0] != "A" {
				p.files = append(p.files, [3]string{"old", f[1], c + "^"})
				wantBlobs = append(wantBlobs, c+"^:"+f[1])
			}
			if f[0] != "D" {
				p.files = append(p.files, [3]string{"new", f[1], c})
				wantBlobs = append(wantBlobs, c+":"+f[1])
			}
		}
		ps = append(ps, p)
	}
	blobs, err := catFiles(repo, wantBlobs)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		for _, f := range p.files {
			b := blobs[f[2]+":"+f[1]]
			if f[0] == "old" {
				p.cd.Old[f[1]] = b
			} else {
				p.cd.New[f[1]] = b
			}
		}
		out = append(out, p.cd)
	}
	return out, nil
}

// catFiles reads the named blobs with one git cat-file --batch.
func catFiles(repo string, names []string) (map[string]string, error) {
	cmd := exec.Command("git", "-C", repo, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := bufio.NewReader(stdout)
	out := map[string]string{}
	for _, n := range names {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("cat-file %s: %w", n, err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 {
			return nil, fmt.Errorf("cat-file %s: %q", n, hdr)
		}
		size, _ := strconv.Atoi(f[2])
		b := make([]byte, size+1)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		out[n] = string(b[:size])
	}
	return out, cmd.Wait()
}
