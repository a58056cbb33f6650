package diff

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
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
)

var updatePathological = flag.Bool("update-pathological", false, "rewrite testdata/pathological from the generator in parity_test.go")

var dumpPathological = flag.String("dump-pathological", "", "write every pathological pair, large ones too, as NAME.old and NAME.new into this directory (for BenchmarkFiles and timing loops)")

// pair is two versions of a file.
type pair struct {
	name, old, new string
	// gitLog is git's count from git log -p when the pair came from a
	// history (one git process for all pairs instead of one per pair,
	// which took most of the test's time), else -1.
	gitLog int
}

// shippedMax is the largest pathological pair (both sides) kept in
// testdata/pathological; larger ones are generated when the test runs.
const shippedMax = 64 << 10

// TestPathologicalTestdata keeps testdata/pathological equal to the small
// pairs of the generator (go test ./diff -run Pathological
// -update-pathological rewrites it).
func TestPathologicalTestdata(t *testing.T) {
	dir := filepath.Join("testdata", "pathological")
	if *updatePathological {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
	}
	if *dumpPathological != "" {
		for _, p := range pathological() {
			base := filepath.Join(*dumpPathological, p.name)
			if err := os.WriteFile(base+".old", []byte(p.old), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".new", []byte(p.new), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	n := 0
	for _, p := range pathological() {
		if len(p.old)+len(p.new) > shippedMax {
			continue
		}
		n++
		base := filepath.Join(dir, p.name)
		if *updatePathological {
			if err := os.WriteFile(base+".old", []byte(p.old), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".new", []byte(p.new), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err1 := os.ReadFile(base + ".old")
		neu, err2 := os.ReadFile(base + ".new")
		if err1 != nil || err2 != nil || string(old) != p.old || string(neu) != p.new {
			t.Errorf("%s: testdata/pathological differs from the generator; run with -update-pathological", p.name)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.old")); len(files) != n {
		t.Errorf("testdata/pathological has %d pairs, the generator %d", len(files), n)
	}
}

// peerChanged returns the changed-line count of git diff --no-index (its
// default algorithm) and of GNU diff -u on the files a and b.
func peerChanged(a, b string) (git, gnu int, err error) {
	run := func(args ...string) (int, error) {
		cmd := exec.Command(args[0], append(args[1:], a, b)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C")
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			return 0, fmt.Errorf("%s: %w", args[0], err)
		}
		return changedLines(out), nil
	}
	if git, err = run("git", "-c", "core.quotepath=off", "diff", "--no-index", "--no-color", "--no-ext-diff"); err != nil {
		return 0, 0, err
	}
	gnu, err = gnuChanged(a, b)
	return git, gnu, err
}

// gnuChanged counts the changed lines of diff -u a b.
func gnuChanged(a, b string) (int, error) {
	cmd := exec.Command("diff", "-u", a, b)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return 0, fmt.Errorf("diff: %w", err)
	}
	return changedLines(out), nil
}

// changedLines counts the - and + lines of a unified diff after its first
// hunk header.
func changedLines(out []byte) int {
	n, in := 0, false
	for _, l := range bytes.Split(out, []byte("\n")) {
		switch {
		case bytes.HasPrefix(l, []byte("@@ ")):
			in = true
		case in && len(l) > 0 && (l[0] == '+' || l[0] == '-'):
			n++
		}
	}
	return n
}

// binary reports whether git and GNU diff would call s binary.
func binary(s string) bool {
	return strings.IndexByte(s[:min(len(s), 8000)], 0) >= 0
}

// TestParity diffs many file pairs with the default algorithm and with git
// diff and GNU diff, and fails on every pair where the script changes more
// lines than the smaller of the two: the pathological pairs (always), the
// Diff-XYZ development triples and, unless -short, every modified file of
// every commit of the click and cobra bundles in ../shared/data (each
// skipped when its data is missing). A history's git counts come from one
// git log -p, checked against git diff --no-index on every 50th pair. Needs
// git and GNU diff.
func TestParity(t *testing.T) {
	for _, tool := range []string{"git", "diff"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	if out, err := exec.Command("diff", "--version").Output(); err != nil || !bytes.Contains(out, []byte("GNU")) {
		t.Skip("diff is not GNU diff")
	}
	t.Run("pathological", func(t *testing.T) { parity(t, pathological()) })
	t.Run("diffxyz", func(t *testing.T) {
		var ps []pair
		for _, tr := range readTriples(t) {
			ps = append(ps, pair{tr.ID, tr.OldCode, tr.NewCode, -1})
		}
		if testing.Short() {
			ps = ps[:min(len(ps), 100)]
		}
		parity(t, ps)
	})
	for _, repo := range []string{"click", "cobra"} {
		t.Run(repo, func(t *testing.T) {
			if testing.Short() {
				t.Skip("-short")
			}
			parity(t, bundlePairs(t, filepath.Join(testdata.SharedDir(), "repos", repo+".bundle")))
		})
	}
}

func parity(t *testing.T, ps []pair) {
	t.Helper()
	type result struct {
		ours, git, gnu int
		err            error
	}
	results := make([]result, len(ps))
	work := make(chan int)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			for i := range work {
				p, r := ps[i], &results[i]
				if binary(p.old) || binary(p.new) {
					r.ours = -1
					continue
				}
				r.ours = cost(Lines(splitText(p.old), splitText(p.new), Histogram))
				if r.err = os.WriteFile(a, []byte(p.old), 0o644); r.err == nil {
					r.err = os.WriteFile(b, []byte(p.new), 0o644)
				}
				switch {
				case r.err != nil:
				// Every 50th pair of a history is also diffed by git diff
				// --no-index, which must count what git log counted: it
				// keeps the log's counts aligned with their pairs.
				case p.gitLog < 0 || i%50 == 0:
					r.git, r.gnu, r.err = peerChanged(a, b)
					if r.err == nil && p.gitLog >= 0 && r.git != p.gitLog {
						r.err = fmt.Errorf("git diff --no-index changes %d lines, git log -p %d", r.git, p.gitLog)
					}
				default:
					r.git = p.gitLog
					r.gnu, r.err = gnuChanged(a, b)
				}
			}
		}()
	}
	for i := range ps {
		work <- i
	}
	close(work)
	wg.Wait()
	var n, ours, git, gnu int
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("%s: %v", ps[i].name, r.err)
		}
		if r.ours < 0 {
			continue
		}
		n++
		ours, git, gnu = ours+r.ours, git+r.git, gnu+r.gnu
		if r.ours > min(r.git, r.gnu) {
			t.Errorf("%s: %d changed lines, git diff %d, GNU diff %d", ps[i].name, r.ours, r.git, r.gnu)
		}
	}
	t.Logf("%d pairs: changed lines %d, git diff %d, GNU diff %d", n, ours, git, gnu)
}

// bundlePairs clones a bundle and returns the two versions of every file
// that a non-merge commit modified; it skips without the bundle.
func bundlePairs(t *testing.T, bundle string) []pair {
	t.Helper()
	if _, err := os.Stat(bundle); err != nil {
		t.Skipf("no %s", bundle)
	}
	dir := filepath.Join(t.TempDir(), "repo")
	git := func(args ...string) *exec.Cmd {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		return cmd
	}
	if out, err := exec.Command("git", "clone", "-q", "--bare", bundle, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone %s: %v\n%s", bundle, err, out)
	}
	out, err := git("log", "--all", "--no-merges", "--diff-filter=M", "--raw", "--no-abbrev", "--format=C %h").Output()
	if err != nil {
		t.Fatalf("git log in %s: %v", bundle, err)
	}
	type job struct{ name, a, b string }
	var jobs []job
	commit := ""
	for _, l := range strings.Split(string(out), "\n") {
		if c, ok := strings.CutPrefix(l, "C "); ok {
			commit = c
			continue
		}
		tab := strings.IndexByte(l, '\t')
		f := strings.Fields(l[:max(tab, 0)])
		if !strings.HasPrefix(l, ":") || tab < 0 || len(f) < 4 {
			continue
		}
		jobs = append(jobs, job{commit + ":" + l[tab+1:], f[2], f[3]})
	}
	cmd := git("cat-file", "--batch")
	in, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w := bufio.NewWriter(in)
		for _, j := range jobs {
			fmt.Fprintf(w, "%s\n%s\n", j.a, j.b)
		}
		w.Flush()
		in.Close()
	}()
	r := bufio.NewReaderSize(stdout, 1<<20)
	read := func() string {
		h, err := r.ReadString('\n')
		f := strings.Fields(h)
		if err != nil || len(f) != 3 {
			t.Fatalf("git cat-file --batch in %s: %q %v", bundle, h, err)
		}
		size, _ := strconv.Atoi(f[2])
		b := make([]byte, size+1)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatal(err)
		}
		return string(b[:size])
	}
	var ps []pair
	for _, j := range jobs {
		ps = append(ps, pair{j.name, read(), read(), -1})
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// git's counts: the same commits' patches, in the same order as --raw
	// listed their files.
	patches, err := git("log", "--all", "--no-merges", "--diff-filter=M", "-p", "--no-color", "--no-ext-diff", "--format=C %h").Output()
	if err != nil {
		t.Fatalf("git log -p in %s: %v", bundle, err)
	}
	var counts []int
	inHunk := false
	for _, l := range strings.Split(string(patches), "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			counts, inHunk = append(counts, 0), false
		case strings.HasPrefix(l, "@@ "):
			inHunk = len(counts) > 0
		case inHunk && len(l) > 0 && (l[0] == '+' || l[0] == '-'):
			counts[len(counts)-1]++
		case strings.HasPrefix(l, "C "):
			inHunk = false
		}
	}
	if len(counts) != len(ps) {
		t.Fatalf("git log -p in %s: %d files, --raw listed %d", bundle, len(counts), len(ps))
	}
	for i := range ps {
		ps[i].gitLog = counts[i]
	}
	return ps
}

// The pathological pairs: repeated and blank lines, long and huge lines,
// files without a final newline, CRLF, files that differ completely,
// reordered blocks, a moved function, 100,000-line files with one change,
// repetitive code, random lines over small alphabets, shuffled and
// reversed files. Deterministic.

type prng uint64

func (r *prng) intn(n int) int {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int((z ^ (z >> 31)) % uint64(n))
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func rep(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func randLines(r *prng, n, alpha int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, r.intn(alpha))
	}
	return out
}

// mutate: delete/insert/modify about rate/1000 of lines
func mutateRate(r *prng, a []string, rate, alpha int) []string {
	var out []string
	for _, l := range a {
		switch x := r.intn(1000); {
		case x < rate/3:
		case x < 2*rate/3:
			out = append(out, fmt.Sprint(r.intn(alpha)), l)
		case x < rate:
			out = append(out, l+"'")
		default:
			out = append(out, l)
		}
	}
	return out
}

func fakeCode(r *prng, funcs int) []string {
	var out []string
	for f := 0; f < funcs; f++ {
		out = append(out, fmt.Sprintf("func f%d(x int) error {", f))
		for k := 0; k < 3+r.intn(8); k++ {
			switch r.intn(4) {
			case 0:
				out = append(out, "\tif err != nil {", "\t\treturn err", "\t}")
			case 1:
				out = append(out, fmt.Sprintf("\tx += %d", r.intn(5)))
			case 2:
				out = append(out, "")
			default:
				out = append(out, "\tfor i := 0; i < x; i++ {", "\t\tx--", "\t}")
			}
		}
		out = append(out, "\treturn nil", "}", "")
	}
	return out
}

func pathological() []pair {
	var ps []pair
	add := func(name string, a, b string) { ps = append(ps, pair{name, a, b, -1}) }
	r := prng(7)
	// repeated lines
	add("repeat-x-1000-1001", joinLines(rep("x", 1000)), joinLines(rep("x", 1001)))
	b := rep("x", 1000)
	b[500] = "y"
	add("repeat-x-mid-change", joinLines(rep("x", 1000)), joinLines(b))
	add("repeat-ab", joinLines(strings.Split(strings.Repeat("a\nb\n", 500), "\n")[:1000]), joinLines(strings.Split(strings.Repeat("b\na\n", 500), "\n")[:1000]))
	add("blank-500-300", joinLines(rep("", 500)), joinLines(rep("", 300)))
	b = rep("", 500)
	b[250] = "text"
	add("blank-one-text", joinLines(rep("", 500)), joinLines(b))
	add("blank-vs-empty", joinLines(rep("", 50)), "")
	add("empty-vs-text", "", "a\nb\n")
	// long lines
	long := func(seed byte, n int) string { return strings.Repeat(string('a'+seed%26), n) }
	la := []string{long(0, 100000), long(1, 100000), long(2, 100000), long(3, 100000)}
	lb := append([]string{}, la...)
	lb[2] = lb[2][:50000] + "Z" + lb[2][50001:]
	add("long-lines", joinLines(la), joinLines(lb))
	add("huge-one-line", strings.Repeat("abcdefgh", 1<<19), strings.Repeat("abcdefgh", 1<<19)[:1<<21]+"X"+strings.Repeat("abcdefgh", 1<<19)[1<<21+1:])
	add("huge-one-line-noeol", strings.Repeat("q", 3<<20), strings.Repeat("q", 3<<20)+"\n")
	// no final newline
	add("noeol-added", "a\nb\nc", "a\nb\nc\n")
	add("noeol-removed", "a\nb\nc\n", "a\nb\nc")
	add("noeol-both-change", "a\nb\nc", "a\nb\nd")
	add("noeol-append", "a\nb\nc", "a\nb\nc\nd")
	add("noeol-repeated-last", joinLines(rep("x", 20))+"x", joinLines(rep("x", 21)))
	// CRLF
	c := fakeCode(&r, 40)
	crlf := strings.ReplaceAll(joinLines(c), "\n", "\r\n")
	add("crlf-to-lf", crlf, joinLines(c))
	c2 := mutateRate(&r, c, 30, 10)
	add("crlf-edit", crlf, strings.ReplaceAll(joinLines(c2), "\n", "\r\n"))
	add("crlf-mixed", crlf, strings.Replace(crlf, "\r\n", "\n", 20))
	// completely different
	add("all-different", joinLines(randLines(&r, 2000, 1<<30, "a")), joinLines(randLines(&r, 2000, 1<<30, "b")))
	add("all-different-shared-blank", joinLines(randLinesBlank(&r, 3000, "a")), joinLines(randLinesBlank(&r, 3000, "b")))
	// reordered blocks
	blocks := [][]string{}
	for i := 0; i < 20; i++ {
		blocks = append(blocks, fakeCode(&r, 3))
	}
	var oa, ob []string
	for _, bl := range blocks {
		oa = append(oa, bl...)
	}
	perm := []int{5, 3, 19, 0, 1, 2, 4, 18, 6, 7, 9, 8, 10, 11, 17, 12, 13, 14, 15, 16}
	for _, i := range perm {
		ob = append(ob, blocks[i]...)
	}
	add("reordered-blocks", joinLines(oa), joinLines(ob))
	// moved function
	c = fakeCode(&r, 30)
	fn := 0
	var start, end int
	for i, l := range c {
		if strings.HasPrefix(l, "func ") {
			fn++
			if fn == 5 {
				start = i
			}
			if fn == 6 {
				end = i
			}
		}
	}
	moved := append(append(append([]string{}, c[:start]...), c[end:]...), c[start:end]...)
	add("moved-function", joinLines(c), joinLines(moved))
	// big files, one change
	big := make([]string, 100000)
	for i := range big {
		big[i] = fmt.Sprintf("line %d of the file", i)
	}
	b = append([]string{}, big...)
	b[0] = "changed first"
	add("100k-change-start", joinLines(big), joinLines(b))
	b = append([]string{}, big...)
	b[len(b)-1] = "changed last"
	add("100k-change-end", joinLines(big), joinLines(b))
	b = append(append([]string{}, big...), "appended")
	add("100k-append", joinLines(big), joinLines(b))
	add("100k-insert-start", joinLines(big), joinLines(append([]string{"new first"}, big...)))
	// repetitive code
	c = fakeCode(&r, 2000)
	add("code-2000-funcs-1pct", joinLines(c), joinLines(mutateRate(&r, c, 10, 50)))
	add("code-2000-funcs-10pct", joinLines(c), joinLines(mutateRate(&r, c, 100, 50)))
	// small alphabet random
	for _, alpha := range []int{2, 3, 5, 20} {
		for _, n := range []int{200, 3000, 30000} {
			a := randLines(&r, n, alpha, "")
			add(fmt.Sprintf("rand-a%d-n%d-1pct", alpha, n), joinLines(a), joinLines(mutateRate(&r, a, 10, alpha)))
			add(fmt.Sprintf("rand-a%d-n%d-20pct", alpha, n), joinLines(a), joinLines(mutateRate(&r, a, 200, alpha)))
		}
	}
	// shuffled same lines
	a := make([]string, 20000)
	for i := range a {
		a[i] = fmt.Sprint("l", i%5000)
	}
	sh := append([]string{}, a...)
	for i := len(sh) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		sh[i], sh[j] = sh[j], sh[i]
	}
	add("shuffled-20k", joinLines(a), joinLines(sh))
	// reversed
	rv := make([]string, len(c))
	for i := range c {
		rv[i] = c[len(c)-1-i]
	}
	add("reversed-code", joinLines(c), joinLines(rv))
	return ps
}

func randLinesBlank(r *prng, n int, p string) []string {
	out := randLines(r, n, 1<<30, p)
	for i := range out {
		if r.intn(4) == 0 {
			out[i] = ""
		}
		if r.intn(6) == 0 {
			out[i] = "}"
		}
	}
	return out
}
