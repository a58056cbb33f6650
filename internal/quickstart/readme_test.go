package quickstart

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readmeBlock is a code block of README.md: its commands, the line it
// starts at, and why it is not run (empty: it is run).
type readmeBlock struct {
	line   int
	text   string
	notRun string
}

// notRunMark, on its own line before a block (a blank line between), says
// why the block is not run: it needs a key or the network, say.
const notRunMark = "<!-- not run: "

// readmeBlocks returns the code blocks of a Markdown text: indented ones
// (four spaces after a blank line) and fenced ones. A line indented four
// spaces right after a line of text is no code block (Markdown makes it
// part of the paragraph, and renders it as text): it is returned in
// problems.
func readmeBlocks(text string) (blocks []readmeBlock, problems []string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var notRun string
	prevBlank, prevText := true, false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```"):
			b := readmeBlock{line: i + 1, notRun: notRun}
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body = append(body, lines[i])
			}
			b.text = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, b)
			notRun, prevBlank, prevText = "", false, false
			continue
		case strings.HasPrefix(l, "    ") && prevBlank:
			b := readmeBlock{line: i + 1, notRun: notRun}
			var body []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				body = append(body, strings.TrimPrefix(lines[i], "    "))
			}
			i--
			b.text = strings.TrimRight(strings.Join(body, "\n"), "\n") + "\n"
			blocks = append(blocks, b)
			notRun, prevBlank, prevText = "", strings.TrimSpace(lines[i]) == "", false
			continue
		case strings.HasPrefix(l, "    ") && prevText && strings.TrimSpace(l) != "":
			problems = append(problems, "README.md:"+strconv.Itoa(i+1)+": an indented line right after a line of text renders as text, not as a code block (a blank line before it would make one): "+strings.TrimSpace(l))
		case strings.HasPrefix(l, notRunMark):
			notRun = strings.TrimSuffix(strings.TrimPrefix(l, notRunMark), " -->")
		case strings.TrimSpace(l) != "" && notRun != "":
			problems = append(problems, "README.md:"+strconv.Itoa(i+1)+": a not-run mark is followed by text, not by a code block")
			notRun = ""
		}
		prevBlank = strings.TrimSpace(l) == ""
		prevText = !prevBlank && !strings.HasPrefix(l, "<!--") && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "|")
	}
	return blocks, problems
}

// TestReadmeBlocks: the block reader finds indented and fenced blocks,
// their not-run marks, and the indented line that renders as text.
func TestReadmeBlocks(t *testing.T) {
	text := "# t\n\nSome text:\n\n    a one\n    a two \\\n        continued\n\n    a three\n\n" +
		"<!-- not run: needs a key -->\n\n    b one\n\n```sh\nc one\n```\n\nText right before:\n    d one\n"
	blocks, problems := readmeBlocks(text)
	want := []readmeBlock{
		{5, "a one\na two \\\n    continued\n\na three\n", ""},
		{13, "b one\n", "needs a key"},
		{15, "c one\n", ""},
	}
	if len(blocks) != len(want) {
		t.Fatalf("blocks %+v, want %+v", blocks, want)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, blocks[i], want[i])
		}
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "README.md:20:") {
		t.Errorf("problems %q, want one at line 20", problems)
	}
}

// TestREADME runs README.md's code blocks as a user pastes them, top to
// bottom in one shell session (a cd carries over), in a clone of this
// repository with patchbench and patchbench-full on PATH. A block that
// cannot run here says why before it (<!-- not run: REASON -->). Every
// command of a run block must succeed, and the files the README says the
// quick starts write must be there.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs every quick start")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, problems := readmeBlocks(string(text))
	for _, p := range problems {
		t.Error(p)
	}
	// The quick starts read the repository's history (ape build, env
	// build, the SWE sample's commits): a clone of it.
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "patchbench")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/patchbench", "./cmd/patchbench-full")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		// No key: an example that needs one must be marked.
		"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	cwd := filepath.Join(t.TempDir(), "cwd")
	if err := os.WriteFile(cwd, []byte(clone), 0o644); err != nil {
		t.Fatal(err)
	}
	// As root the env block's restore mounts an overlay; the README says
	// how to release it, and a mount left would keep the temporary
	// directory from being removed.
	t.Cleanup(func() { releaseMounts(t, filepath.Join(bin, "patchbench"), clone) })
	ran := 0
	for _, b := range blocks {
		if b.notRun != "" {
			t.Logf("README.md:%d: not run: %s", b.line, b.notRun)
			continue
		}
		ran++
		// Each block starts where the last one left the shell.
		script := "set -eo pipefail\ncd \"$(cat " + shellQuote(cwd) + ")\"\n" + b.text + "pwd > " + shellQuote(cwd) + "\n"
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("README.md:%d: %v\n%s\noutput:\n%s", b.line, err, b.text, tail(out.String(), 40))
		}
	}
	if ran == 0 {
		t.Fatal("no block of README.md ran")
	}
	// What the README says the quick starts write.
	for _, f := range []string{
		"out/sample/report.md", "out/sample/report.json", "out/sample/report.html",
		"out/engine/fix.diff", "out/engine/clean.diff",
		"out/dxyz/report.md", "out/swe/report.json", "out/swe/errors.md", "out/swe/predictions.repaired.jsonl",
		"out/loc-bm25/report.md", "out/ape/report.md", "out/merged/report.json",
	} {
		if _, err := os.Stat(filepath.Join(clone, f)); err != nil {
			t.Errorf("the quick starts did not write %s: %v", f, err)
		}
	}
	// The engine's quick start ends with the edit applied, strictly.
	got, _ := os.ReadFile(filepath.Join(clone, "out/engine/old.py"))
	want, _ := os.ReadFile(filepath.Join(clone, "testdata/quickstart/new.py"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("out/engine/old.py after the engine's quick start:\n%s\nwant testdata/quickstart/new.py:\n%s", got, want)
	}
	// A merged run's report.json is the single run's, byte for byte.
	merged, _ := os.ReadFile(filepath.Join(clone, "out/merged/report.json"))
	single, _ := os.ReadFile(filepath.Join(clone, "out/dxyz/report.json"))
	if len(single) == 0 || !bytes.Equal(merged, single) {
		t.Errorf("out/merged/report.json differs from out/dxyz/report.json (%d and %d bytes)", len(merged), len(single))
	}
	// The environment store holds what the setup left, restored in out/.
	entries, _ := filepath.Glob(filepath.Join(clone, "out/pb-env/bin/*"))
	if len(entries) == 0 {
		t.Errorf("out/pb-env/bin holds nothing: the setup's output was not stored and restored")
	}
}

// releaseMounts releases, with the binary's env release, every overlay
// mounted under dir.
func releaseMounts(t *testing.T, patchbench, dir string) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[2] != "overlay" || !strings.HasPrefix(f[1], dir+"/") {
			continue
		}
		if out, err := exec.Command(patchbench, "env", "release", f[1]).CombinedOutput(); err != nil {
			t.Errorf("env release %s: %v\n%s", f[1], err, out)
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tail is the last n lines of s.
func tail(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
