package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
)

const mcpMain = `package main

import "fmt"

func add(a, b int) int {
	return a + b
}

func main() {
	fmt.Println(add(1, 2))
}
`

// mcpMalformed is a model's answer whose hunk has wrong counts and line
// numbers and a blank context line without its space: tolerant apply
// recovers it, strict apply refuses it.
const mcpMalformed = "Here is the fix:\n```diff\n--- a/main.go\n+++ b/main.go\n@@ -40,9 +40,9 @@\n func add(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n\n func main() {\n```\n"

var mcpFixed = strings.Replace(mcpMain, "return a + b", "return a - b", 1)

// mcpDup has the same two lines twice: a hunk without line numbers fits
// at lines 1 and 4.
const mcpDup = "x = 1\ny = 2\n---\nx = 1\ny = 2\n"

// mcpAmbiguous edits main.go (which would apply) and dup.txt (ambiguous):
// all or nothing, so neither is written.
const mcpAmbiguous = "--- a/main.go\n+++ b/main.go\n@@\n func main() {\n-\tfmt.Println(add(1, 2))\n+\tfmt.Println(add(2, 2))\n }\n" +
	"--- a/dup.txt\n+++ b/dup.txt\n@@\n x = 1\n-y = 2\n+y = 3\n"

// mcpRepo makes a git repository with main.go and dup.txt, a directory
// outside it with a secret, and a symbolic link out.
func mcpRepo(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "repo"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "main.go"), mcpMain)
	write(filepath.Join(dir, "dup.txt"), mcpDup)
	write(filepath.Join(outside, "secret.txt"), "secret\n")
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "main.go", "dup.txt"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir, outside
}

// buildBoth builds patchbench and patchbench-full, so that patchbench mcp
// runs as an MCP client starts it: through the hand-over.
func buildBoth(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, b := range []string{"patchbench", "patchbench-full"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, b), "../"+b).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b, err, out)
		}
	}
	return filepath.Join(bin, "patchbench")
}

// call calls a tool and returns its text and error flag.
func call(t *testing.T, s *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res := callResult(t, s, name, args)
	return resultText(res), res.IsError
}

// callResult calls a tool. A structured answer must come with its JSON as
// the text, as the specification asks of servers.
func callResult(t *testing.T, s *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.StructuredContent != nil {
		var fromText, structured any
		if err := json.Unmarshal([]byte(resultText(res)), &fromText); err != nil {
			t.Fatalf("%s: the text of a structured answer is not JSON: %v\n%s", name, err, resultText(res))
		}
		json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &structured)
		if d := cmp.Diff(structured, fromText); d != "" {
			t.Errorf("%s: text and structured content differ (-structured +text):\n%s", name, d)
		}
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCP starts the real binary and talks to it with the SDK's client,
// over stdio and over streamable HTTP on 127.0.0.1.
func TestMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	pb := buildBoth(t)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)

	t.Run("stdio", func(t *testing.T) {
		dir, outside := mcpRepo(t)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(pb, "mcp", "--root", dir)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		exerciseMCP(t, s, dir, outside)
	})

	t.Run("http", func(t *testing.T) {
		dir, outside := mcpRepo(t)
		cmd := exec.Command(pb, "mcp", "--root", dir, "--http", ":0")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		br := bufio.NewReader(stderr)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no address line: %v", err)
		}
		// The rest of the server's standard error, shown when a test fails.
		rest := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(br)
			rest <- string(b)
		}()
		defer func() {
			cmd.Process.Kill()
			if msg := <-rest; t.Failed() && msg != "" {
				t.Logf("server's standard error:\n%s", msg)
			}
		}()
		url := regexp.MustCompile(`http://\S+/mcp`).FindString(line)
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("serving on %q (line %q), want loopback", url, line)
		}
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		exerciseMCP(t, s, dir, outside)
	})

	// A client that writes its requests and closes its end at once, as
	// printf ... | patchbench mcp does: every request read before the end
	// of the input is answered before the server exits (the SDK cancelled
	// those in flight at the end of the input, and answered nothing in 3
	// runs of 5). Twenty runs, since the loss depended on timing.
	t.Run("stdio input closed after the requests", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"diff","arguments":{"old_text":"a\nb\n","new_text":"a\nc\n","new_path":"f.txt"}}}
{"jsonrpc":"2.0","id":"last","method":"ping"}
`
		for run := range 20 {
			cmd := exec.Command(pb, "mcp", "--root", dir)
			cmd.Stdin = strings.NewReader(in)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("run %d: %v\n%s", run, err, stderr.String())
			}
			got := map[string]string{}
			for l := range strings.Lines(string(out)) {
				var a struct {
					ID     any             `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal([]byte(l), &a); err != nil {
					t.Fatalf("run %d: answer %q: %v", run, l, err)
				}
				got[fmt.Sprint(a.ID)] = string(a.Result) + string(a.Error)
			}
			for id, want := range map[string]string{"1": `"serverInfo"`, "2": `"apply_patch"`, "3": `+c`, "last": `{}`} {
				if !strings.Contains(got[id], want) {
					t.Errorf("run %d: answer to request %s is %q, want one holding %s (answers: %v)", run, id, got[id], want, got)
				}
			}
			if len(got) != 4 {
				t.Errorf("run %d: %d answers, want 4: %v", run, len(got), got)
			}
		}
	})

	t.Run("agent", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(pb, "mcp", "--root", dir)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		agentSession(t, s, dir)
	})

	t.Run("lsp", func(t *testing.T) {
		if _, err := exec.LookPath("gopls"); err != nil {
			t.Skip("gopls is not on PATH (go install golang.org/x/tools/gopls@v0.23.0)")
		}
		dir := t.TempDir()
		for name, text := range map[string]string{
			"go.mod":    "module example.com/m\n\ngo 1.22\n",
			"util/u.go": "package util\n\n// Helper doubles x.\nfunc Helper(x int) int {\n\treturn 2 * x\n}\n",
			"main.go":   "package main\n\nimport \"example.com/m/util\"\n\nfunc main() {\n\tprintln(util.Helper(1))\n}\n",
		} {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(pb, "mcp", "--root", dir, "--lsp-tools", "true")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		def := map[string]any{"path": "main.go", "line": 6, "symbol": "Helper"}
		if text, failed := call(t, s, "definition", def); failed || !strings.Contains(text, "util/u.go:4: func Helper(x int) int {") {
			t.Fatalf("definition: failed=%v\n%s", failed, text)
		}
		// An edit through the server moves the definition; the language
		// server must answer from the new text.
		edit := "--- a/util/u.go\n+++ b/util/u.go\n@@ -1,3 +1,5 @@\n package util\n \n+const two = 2\n+\n // Helper doubles x.\n"
		if text, failed := call(t, s, "apply_patch", map[string]any{"patch": edit}); failed {
			t.Fatalf("apply_patch: %s", text)
		}
		if text, failed := call(t, s, "definition", def); failed || !strings.Contains(text, "util/u.go:6: func Helper(x int) int {") {
			t.Errorf("definition after the edit: failed=%v\n%s", failed, text)
		}
		if text, failed := call(t, s, "references", map[string]any{"path": "util/u.go", "line": 6, "symbol": "Helper"}); failed || !strings.Contains(text, "main.go:6: println(util.Helper(1))") {
			t.Errorf("references: failed=%v\n%s", failed, text)
		}
		// A file made on disk by someone else, and an edit of the open
		// main.go that calls into it: the server learns of both.
		if err := os.WriteFile(filepath.Join(dir, "util", "v.go"), []byte("package util\n\n// Other is new.\nfunc Other() int { return 3 }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		call2 := "--- a/main.go\n+++ b/main.go\n@@ -6,2 +6,3 @@\n \tprintln(util.Helper(1))\n+\tprintln(util.Other())\n }\n"
		if text, failed := call(t, s, "apply_patch", map[string]any{"patch": call2}); failed {
			t.Fatalf("apply_patch: %s", text)
		}
		if text, failed := call(t, s, "definition", map[string]any{"path": "main.go", "line": 7, "symbol": "Other"}); failed || !strings.Contains(text, "util/v.go:4: func Other() int { return 3 }") {
			t.Errorf("definition in a new file: failed=%v\n%s", failed, text)
		}
		if text, failed := call(t, s, "definition", map[string]any{"path": "../outside.go", "line": 1, "symbol": "x"}); !failed {
			t.Errorf("definition outside the root: %s", text)
		}
	})

	t.Run("lsp flags", func(t *testing.T) {
		out, err := exec.Command(pb, "mcp", "--root", t.TempDir(), "--lsp-tools", "true").CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--lsp-tools true") {
			t.Errorf("--lsp-tools true on an empty directory: %v\n%s", err, out)
		}
		out, err = exec.Command(pb, "mcp", "--root", t.TempDir(), "--lsp-tools", "maybe").CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "want true, false or auto") {
			t.Errorf("--lsp-tools maybe: %v\n%s", err, out)
		}
	})

	// The server's promises, one subtest each (mcptrust_test.go).
	t.Run("nested .git", func(t *testing.T) { testMCPNestedGit(t, pb) })
	t.Run("signals", func(t *testing.T) { testMCPSignals(t, pb) })
	t.Run("bad frames", func(t *testing.T) { testMCPBadFrames(t, pb) })
	t.Run("strict arguments", func(t *testing.T) { testMCPStrictArgs(t, pb) })
	t.Run("bounded errors", func(t *testing.T) { testMCPBoundedErrors(t, pb) })
	t.Run("http security", func(t *testing.T) { testMCPHTTP(t, pb) })
	t.Run("fifo", func(t *testing.T) { testMCPFIFO(t, pb) })
	t.Run("described", func(t *testing.T) { testMCPDescribed(t, pb) })
	t.Run("npm client", func(t *testing.T) { testMCPNodeClient(t, pb) })
	t.Run("fidelity", func(t *testing.T) { testMCPFidelity(t, pb) })
	t.Run("request ids", func(t *testing.T) { testMCPRequestIDs(t, pb) })
	t.Run("request ids http", func(t *testing.T) { testMCPRequestIDsHTTP(t, pb) })
	t.Run("backup name", func(t *testing.T) { testMCPBackupName(t, pb) })
	t.Run("apply once little", func(t *testing.T) { testMCPApplyOnceLittle(t, pb) })
	t.Run("killed write", func(t *testing.T) { testMCPKilledWrite(t, pb) })
	t.Run("large files", func(t *testing.T) { testMCPLargeFiles(t, pb) })
	t.Run("search bounds", func(t *testing.T) { testMCPSearchBounds(t, pb) })
	t.Run("concurrent clients", func(t *testing.T) { testMCPConcurrentClients(t, pb) })
	t.Run("many calls", func(t *testing.T) { testMCPManyCalls(t, pb) })
	t.Run("cancel mid-write", func(t *testing.T) { testMCPCancelMidWrite(t, pb) })
	t.Run("symlink swap", func(t *testing.T) { testMCPSymlinkSwap(t, pb) })

	t.Run("token flags", func(t *testing.T) {
		short := filepath.Join(t.TempDir(), "token")
		os.WriteFile(short, []byte("secret\n"), 0o600)
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--token-file", short}, "--token-file needs --http"},
			{[]string{"--http", ":0", "--token-file", short}, "want at least 16"},
			{[]string{"--http", ":0", "--token-file", filepath.Join(t.TempDir(), "missing")}, "--token-file"},
			{[]string{"--call-timeout", "0s"}, "want a positive duration"},
		} {
			out, err := exec.Command(pb, append([]string{"mcp", "--root", t.TempDir()}, c.args...)...).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
				t.Errorf("%v: %v\n%s", c.args, err, out)
			}
		}
	})

	t.Run("remote refused", func(t *testing.T) {
		out, err := exec.Command(pb, "mcp", "--root", t.TempDir(), "--http", "0.0.0.0:0").CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--allow-remote") {
			t.Errorf("--http 0.0.0.0:0: %v\n%s", err, out)
		}
	})
}

func exerciseMCP(t *testing.T, s *mcp.ClientSession, dir, outside string) {
	ctx := context.Background()
	main := filepath.Join(dir, "main.go")

	lt, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s: no description or schema", tool.Name)
		}
	}
	for _, want := range []string{"apply_patch", "repair", "diff", "convert", "view_file", "view_directory", "grep_search", "find_symbol"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	// strict refuses the malformed patch; dry_run writes nothing.
	if text, failed := call(t, s, "apply_patch", map[string]any{"patch": mcpMalformed, "strict": true}); !failed || !strings.Contains(text, "refused") {
		t.Errorf("strict apply of the malformed patch: failed=%v\n%s", failed, text)
	}
	text, failed := call(t, s, "apply_patch", map[string]any{"patch": mcpMalformed, "dry_run": true})
	if failed || !strings.Contains(text, "dry run") || readFile(t, main) != mcpMain {
		t.Errorf("dry run: failed=%v, main.go changed=%v\n%s", failed, readFile(t, main) != mcpMain, text)
	}

	// The tolerant engine recovers it; the report gives tier and repairs.
	text, failed = call(t, s, "apply_patch", map[string]any{"patch": mcpMalformed})
	if failed || readFile(t, main) != mcpFixed {
		t.Fatalf("tolerant apply: failed=%v\n%s\nmain.go:\n%s", failed, text, readFile(t, main))
	}
	rep := report(t, text)
	h := rep.Files[0].Hunks[0]
	if rep.Status != "applied" || !rep.Written || rep.Summary != "applied: main.go (applied)" || h.Tier == "" || h.Line != 5 || h.Offset != 5-40 || len(h.Repairs) == 0 {
		t.Errorf("report %+v", rep)
	}

	// Ambiguous: refused with both places, nothing written.
	text, failed = call(t, s, "apply_patch", map[string]any{"patch": mcpAmbiguous})
	if rep := report(t, text); !failed || rep.Written || !strings.HasPrefix(rep.Summary, "refused, nothing written") || !strings.Contains(rep.Summary, "dup.txt hunk 1 at lines 1 4") {
		t.Errorf("ambiguous: failed=%v\n%s", failed, text)
	}
	if readFile(t, main) != mcpFixed || readFile(t, filepath.Join(dir, "dup.txt")) != mcpDup {
		t.Errorf("ambiguous patch wrote files")
	}
	var cands []int
	for _, f := range report(t, text).Files {
		for _, h := range f.Hunks {
			cands = append(cands, h.Candidates...)
		}
	}
	if !slices.Equal(cands, []int{1, 4}) {
		t.Errorf("candidates %v, want [1 4]", cands)
	}

	// Search tools read the working tree as it is now.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"view_file", map[string]any{"path": "main.go", "start_line": 5, "end_line": 7}, "6\t\treturn a - b"},
		{"view_directory", map[string]any{}, "dup.txt"},
		{"grep_search", map[string]any{"pattern": `a - b`}, "main.go:6:"},
		{"repair", map[string]any{"patch": strings.NewReplacer("a - b", "a * b", "a + b", "a - b").Replace(mcpMalformed)}, "@@ -3,7 +3,7 @@\n import \"fmt\"\n"},
		{"convert", map[string]any{"patch": "--- a/dup.txt\n+++ b/dup.txt\n@@ -1,5 +1,5 @@\n x = 1\n-y = 2\n+y = 3\n ---\n x = 1\n y = 2\n", "to": "search-replace"}, "<<<<<<< SEARCH"},
		{"diff", map[string]any{"old_text": "a\nb\n", "new_text": "a\nc\n", "new_path": "f.txt"}, "-b\n+c\n"},
		{"diff", map[string]any{"old_path": "dup.txt", "new_path": "main.go", "format": "udiff-h"}, "+package main"},
	} {
		text, failed := call(t, s, c.tool, c.args)
		if failed || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: failed=%v, want %q in\n%s", c.tool, c.args, failed, c.want, text)
		}
	}
	if slices.Contains(names, "find_symbol") {
		if text, failed := call(t, s, "find_symbol", map[string]any{"name": "add"}); failed || !strings.Contains(text, "main.go") {
			t.Errorf("find_symbol add: %s", text)
		}
	}

	// Confinement: absolute, "..", a symbolic link out, .git; for writes
	// and reads. Nothing outside changes.
	gitConfig := readFile(t, filepath.Join(dir, ".git", "config"))
	v4a := func(p string) string {
		return "*** Begin Patch\n*** Update File: " + p + "\n@@\n-secret\n+stolen\n*** End Patch\n"
	}
	for _, p := range []string{filepath.Join(outside, "secret.txt"), "../outside/secret.txt", "out/secret.txt", ".git/config"} {
		for _, strict := range []bool{false, true} {
			text, failed := call(t, s, "apply_patch", map[string]any{"patch": v4a(p), "strict": strict})
			if !failed || !strings.Contains(text, "unsafe path") {
				t.Errorf("apply_patch %s strict=%v: failed=%v\n%s", p, strict, failed, text)
			}
		}
		// Refusals of reads speak of reads.
		text, failed := call(t, s, "view_file", map[string]any{"path": p})
		if !failed || !strings.Contains(text, "outside") || strings.Contains(text, "edited") || strings.Contains(text, "patch") {
			t.Errorf("view_file %s: failed=%v\n%s", p, failed, text)
		}
		text, failed = call(t, s, "diff", map[string]any{"old_path": p, "new_text": ""})
		if !failed || !strings.Contains(text, "unsafe path") || strings.Contains(text, "edited") || strings.Contains(text, "patch") {
			t.Errorf("diff %s: failed=%v\n%s", p, failed, text)
		}
		text, failed = call(t, s, "apply_patch", map[string]any{"patch": "<<<<<<< SEARCH\nsecret\n=======\nstolen\n>>>>>>> REPLACE\n", "target": p})
		if !failed || !strings.Contains(text, "unsafe path") {
			t.Errorf("apply_patch target %s: failed=%v\n%s", p, failed, text)
		}
	}
	for _, p := range []string{"out", ".git"} {
		text, failed := call(t, s, "view_directory", map[string]any{"path": p})
		if !failed || !strings.Contains(text, "outside") {
			t.Errorf("view_directory %s: failed=%v\n%s", p, failed, text)
		}
	}
	if readFile(t, filepath.Join(outside, "secret.txt")) != "secret\n" || readFile(t, filepath.Join(dir, ".git", "config")) != gitConfig {
		t.Errorf("a refused patch changed a file outside the root or in .git")
	}

	// Bounds: an oversized patch is refused and says so.
	big := strings.Repeat("x", 1<<20+1)
	if text, failed := call(t, s, "apply_patch", map[string]any{"patch": big}); !failed || !strings.Contains(text, "over the bound") {
		t.Errorf("oversized patch: failed=%v, %.200s", failed, text)
	}
}

type mcpReport struct {
	Summary string `json:"summary"`
	Written bool   `json:"written"`
	Error   string `json:"error"`
	Status  string `json:"status"`
	Files   []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
		Hunks  []struct {
			Tier       string   `json:"tier"`
			Line       int      `json:"line"`
			Offset     int      `json:"offset"`
			Repairs    []string `json:"repairs"`
			Candidates []int    `json:"candidates"`
		} `json:"hunks"`
	} `json:"files"`
}

// report decodes the JSON report of an apply_patch answer (its text,
// which callResult checked to be its structured content).
func report(t *testing.T, text string) mcpReport {
	t.Helper()
	var r mcpReport
	if json.Unmarshal([]byte(text), &r) != nil || r.Summary == "" {
		t.Fatalf("no report in\n%s", text)
	}
	return r
}

// agentSession lets a scripted model find the function and edit it with a
// malformed patch through the MCP tools, as an agent would.
func agentSession(t *testing.T, s *mcp.ClientSession, dir string) {
	ctx := context.Background()
	srv := llmtest.NewServer(llmtest.Config{Script: []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{{Name: "grep_search", Arguments: `{"pattern":"func add"}`}}},
		{ToolCalls: []llm.ToolCall{{Name: "view_file", Arguments: `{"path":"main.go","start_line":5,"end_line":7}`}}},
		{ToolCalls: []llm.ToolCall{{Name: "apply_patch", Arguments: mustJSON(t, map[string]any{"patch": mcpMalformed})}}},
		{Text: "add now subtracts."},
	}})
	defer srv.Close()
	lt, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "openai/scripted", Messages: []llm.Message{{Role: "user", Content: "Make add subtract."}}}
	for _, tool := range lt.Tools {
		req.Tools = append(req.Tools, llm.Tool{Name: tool.Name, Description: tool.Description, Parameters: json.RawMessage(mustJSON(t, tool.InputSchema))})
	}
	c, err := llm.New(ctx, req.Model, llm.Options{BaseURL: srv.OpenAIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, tc llm.ToolCall) (llm.ToolOutput, error) {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.Arguments), &args); err != nil {
			return llm.ToolOutput{Content: err.Error(), IsError: true}, nil
		}
		text, failed := call(t, s, tc.Name, args)
		return llm.ToolOutput{Content: text, IsError: failed}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	a, err := llm.RunAgent(cctx, c, req, run, 10)
	if err != nil {
		t.Fatal(err)
	}
	if a.ToolCalls != 3 || a.Text != "add now subtracts." {
		t.Errorf("agent: %d tool calls, text %q", a.ToolCalls, a.Text)
	}
	// What the model read: the grep hit and the lines it then edited.
	var results []string
	for _, m := range a.Messages {
		for _, r := range m.ToolResults {
			if r.IsError {
				t.Errorf("tool result is an error: %s", r.Content)
			}
			results = append(results, r.Content)
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], "main.go:5: func add") || !strings.Contains(results[1], "6\t\treturn a + b") {
		t.Errorf("tool results %q", results)
	}
	out, err := exec.Command("git", "-C", dir, "diff", "--numstat").Output()
	if err != nil || string(out) != "1\t1\tmain.go\n" || readFile(t, filepath.Join(dir, "main.go")) != mcpFixed {
		t.Errorf("git diff --numstat: %q %v\n%s", out, err, readFile(t, filepath.Join(dir, "main.go")))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
