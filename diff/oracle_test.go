package diff

import (
	"github.com/patchbench/patchbench/internal/testdata"

	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

type triple struct {
	ID      string `json:"id"`
	OldCode string `json:"old_code"`
	NewCode string `json:"new_code"`
}

func readTriples(t *testing.T) []triple {
	t.Helper()
	return testdata.Load[triple](t, "diffxyz-dev.jsonl.gz")
}

// splitText splits text into lines without their "\n". A last line
// without one keeps a "\n" that no other line can hold, so that it
// compares different from the same text with a newline, as in git.
func splitText(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.Split(s, "\n")
	if ls[len(ls)-1] == "" {
		return ls[:len(ls)-1]
	}
	ls[len(ls)-1] += "\n"
	return ls
}

// gitHunks runs git diff -U0 on the two texts and returns the number of
// changed lines and the hunk headers.
func gitHunks(dir, old, new string, histogram bool) (changed int, hunks []string, err error) {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(old), 0o644); err != nil {
		return 0, nil, err
	}
	if err := os.WriteFile(b, []byte(new), 0o644); err != nil {
		return 0, nil, err
	}
	args := []string{"-c", "core.quotepath=off", "diff", "--no-index", "--no-color", "--no-ext-diff", "-U0"}
	if histogram {
		args = append(args, "--histogram")
	} else {
		args = append(args, "--diff-algorithm=myers")
	}
	cmd := exec.Command("git", append(args, a, b)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return 0, nil, err
	}
	// The ---/+++ file headers come before the first hunk; after it, a
	// line starting with "---" is a deleted line "--...".
	inHunks := false
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case !inHunks && !strings.HasPrefix(l, "@@ "):
		case strings.HasPrefix(l, "@@ "):
			inHunks = true
			if i := strings.Index(l[3:], " @@"); i >= 0 {
				hunks = append(hunks, l[3:3+i])
			}
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
			changed++
		}
	}
	return changed, hunks, nil
}

// hunkHeaders renders a script as git's -U0 hunk ranges.
func hunkHeaders(es []Edit) []string {
	r := func(start, end int) string {
		switch end - start {
		case 0:
			return strconv.Itoa(start) + ",0"
		case 1:
			return strconv.Itoa(start + 1)
		}
		return strconv.Itoa(start+1) + "," + strconv.Itoa(end-start)
	}
	var hs []string
	for _, e := range es {
		hs = append(hs, "-"+r(e.OldStart, e.OldEnd)+" +"+r(e.NewStart, e.NewEnd))
	}
	return hs
}

// TestGitOracle diffs the Diff-XYZ development triples with both
// algorithms and with git. Each algorithm's total of changed lines must not
// exceed git's (git diff's default, Myers); how often the hunks are exactly
// git's is logged.
func TestGitOracle(t *testing.T) {
	triples := readTriples(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	if testing.Short() {
		triples = triples[:50]
	}
	type result struct {
		git, gitHist int
		ours         [2]int // by algorithm
		sameM, sameH bool
		err          error
	}
	results := make([]result, len(triples))
	var wg sync.WaitGroup
	work := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			for i := range work {
				tr := triples[i]
				r := &results[i]
				var gh, ghh []string
				r.git, gh, r.err = gitHunks(dir, tr.OldCode, tr.NewCode, false)
				if r.err != nil {
					continue
				}
				if testing.Verbose() {
					// Only logged: worth a second git run when shown.
					r.gitHist, ghh, r.err = gitHunks(dir, tr.OldCode, tr.NewCode, true)
					if r.err != nil {
						continue
					}
				}
				a, b := splitText(tr.OldCode), splitText(tr.NewCode)
				for k, alg := range algorithms {
					es := Lines(a, b, alg)
					r.ours[k] = cost(es)
					same := strings.Join(hunkHeaders(es), "|")
					if alg == Myers {
						r.sameM = same == strings.Join(gh, "|")
					} else {
						r.sameH = same == strings.Join(ghh, "|")
					}
				}
			}
		}()
	}
	for i := range triples {
		work <- i
	}
	close(work)
	wg.Wait()

	var git, gitHist, sameM, sameH int
	var ours [2]int
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("%s: git diff: %v", triples[i].ID, r.err)
		}
		git += r.git
		gitHist += r.gitHist
		ours[0] += r.ours[0]
		ours[1] += r.ours[1]
		if r.sameM {
			sameM++
		}
		if r.sameH {
			sameH++
		}
	}
	t.Logf("%d triples, changed lines: git myers %d, our myers %d, our histogram %d",
		len(triples), git, ours[0], ours[1])
	t.Logf("hunks identical to git's myers: %d/%d", sameM, len(triples))
	if testing.Verbose() {
		t.Logf("git histogram %d changed lines; hunks identical to git's histogram: %d/%d", gitHist, sameH, len(triples))
	}
	for k, alg := range algorithms {
		if ours[k] > git {
			t.Errorf("%v: %d changed lines in total, git diff %d", alg, ours[k], git)
		}
	}
}
