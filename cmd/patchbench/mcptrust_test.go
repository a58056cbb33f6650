package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/patchbench/patchbench/patch"
)

// The tests of this file are the MCP server's promises to the agents and
// people who run it: each runs the real binary (built by TestMCP).

// mcpProc is a server on stdio driven through its pipes.
type mcpProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan error
}

func startMCPProc(t *testing.T, pb string, args ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(pb, append([]string{"mcp"}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mcpProc{cmd: cmd, stdin: stdin, stdout: stdout, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// connect runs the SDK's client over the process's pipes.
func (p *mcpProc) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wait returns the exit code; a process that does not end is a failure
// (a hang guard, not a time measured).
func (p *mcpProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("the server was killed by %v", ws.Signal())
			}
			return ee.ExitCode()
		}
		t.Fatal(err)
	case <-time.After(time.Minute):
		t.Fatal("the server did not exit")
	}
	return -1
}

// ignoredSignals reads which signals a process ignores: a child started
// by it inherits them.
func ignoredSignals(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(`(?m)^SigIgn:\s*([0-9a-f]+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no SigIgn in /proc/%d/status", pid)
	}
	v, err := strconv.ParseUint(string(m[1]), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sigBit(s syscall.Signal) uint64 { return 1 << (uint(s) - 1) }

// testMCPNestedGit (item 1): a nested repository's .git and .git in
// another letter case are neither read nor written through the server.
func testMCPNestedGit(t *testing.T, pb string) {
	if patch.CheckPath("vendor/lib/.git/config") == nil || patch.CheckPath(".GIT/hooks/pre-commit") == nil {
		t.Skip("patch.CheckPath does not refuse nested or upper-case .git in this tree yet (branch confine)")
	}
	dir, _ := mcpRepo(t)
	lib := filepath.Join(dir, "vendor", "lib")
	if out, err := exec.Command("git", "init", "-q", lib).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	config := filepath.Join(lib, ".git", "config")
	before := readFile(t, config)
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()

	hook := "[core]\n\tfsmonitor = touch /tmp/pwned\n"
	writes := map[string]string{
		"update nested config": "*** Begin Patch\n*** Update File: vendor/lib/.git/config\n@@\n [core]\n+\tfsmonitor = touch /tmp/pwned\n*** End Patch\n",
		"add nested hook":      "*** Begin Patch\n*** Add File: vendor/lib/.Git/hooks/post-checkout\n+#!/bin/sh\n+touch /tmp/pwned\n*** End Patch\n",
		"add upper-case hook":  "--- /dev/null\n+++ b/.GIT/hooks/pre-commit\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch /tmp/pwned\n",
		"search-replace":       "vendor/lib/.git/config\n<<<<<<< SEARCH\n[core]\n=======\n" + hook + ">>>>>>> REPLACE\n",
	}
	for name, pt := range writes {
		for _, strict := range []bool{false, true} {
			text, failed := call(t, s, "apply_patch", map[string]any{"patch": pt, "strict": strict})
			if !failed || !strings.Contains(text, ".git") || !strings.Contains(text, "unsafe path") {
				t.Errorf("%s (strict %v): failed=%v\n%s", name, strict, failed, text)
			}
		}
	}
	if got := readFile(t, config); got != before {
		t.Errorf("vendor/lib/.git/config changed:\n%s", got)
	}
	for _, p := range []string{filepath.Join(dir, ".GIT"), filepath.Join(lib, ".Git"), filepath.Join(lib, ".git", "hooks", "post-checkout")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view_file", map[string]any{"path": "vendor/lib/.git/config"}},
		{"view_file", map[string]any{"path": "vendor/lib/.GIT/config"}},
		{"view_directory", map[string]any{"path": "vendor/lib/.git"}},
		{"diff", map[string]any{"old_path": "vendor/lib/.git/config", "new_text": ""}},
		{"apply_patch", map[string]any{"patch": "<<<<<<< SEARCH\n[core]\n=======\n" + hook + ">>>>>>> REPLACE\n", "target": "vendor/lib/.git/config"}},
	} {
		if text, failed := call(t, s, c.tool, c.args); !failed || !strings.Contains(text, ".git") {
			t.Errorf("%s %v: failed=%v\n%s", c.tool, c.args, failed, text)
		}
	}
	// The searches do not look inside a nested .git either.
	if text, _ := call(t, s, "grep_search", map[string]any{"pattern": "repositoryformatversion"}); strings.Contains(text, ".git") {
		t.Errorf("grep_search shows a nested .git:\n%s", text)
	}
	if text, _ := call(t, s, "view_directory", map[string]any{"path": "vendor/lib"}); strings.Contains(text, ".git") {
		t.Errorf("view_directory shows a nested .git:\n%s", text)
	}
}

// testMCPSignals (item 2): after a real apply the server still ends on
// SIGTERM, with exit status 0, and ignores no signal a child would
// inherit.
func testMCPSignals(t *testing.T, pb string) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir, _ := mcpRepo(t)
			p := startMCPProc(t, pb, "--root", dir)
			s := p.connect(t)
			if text, failed := call(t, s, "apply_patch", map[string]any{"patch": mcpMalformed}); failed || readFile(t, filepath.Join(dir, "main.go")) != mcpFixed {
				t.Fatalf("apply_patch: %s", text)
			}
			if ign := ignoredSignals(t, p.cmd.Process.Pid); ign&(sigBit(syscall.SIGTERM)|sigBit(syscall.SIGINT)) != 0 {
				t.Errorf("after an apply the server ignores signals (SigIgn %#x): its children would too", ign)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != 0 {
				t.Errorf("exit status %d after %v, want 0", code, sig)
			}
		})
	}
}

// rawSession speaks JSON-RPC to the server line by line, as a client
// that sends whatever it likes.
type rawSession struct {
	p  *mcpProc
	br *bufio.Reader
}

func (r *rawSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.p.stdin, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

type rawAnswer struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rawSession) read(t *testing.T) rawAnswer {
	t.Helper()
	line, err := r.br.ReadString('\n')
	if err != nil {
		t.Fatalf("the server's answer: %v (the session ended)", err)
	}
	var a rawAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return a
}

// testMCPBadFrames (item 3): a line that is not JSON, nests too deep or
// is over 16 MiB is answered with a JSON-RPC error and the session goes
// on.
func testMCPBadFrames(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	p := startMCPProc(t, pb, "--root", dir)
	r := &rawSession{p: p, br: bufio.NewReader(p.stdout)}
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a := r.read(t); a.Error != nil || a.ID != float64(1) {
		t.Fatalf("initialize: %+v", a)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	viewCall := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"view_file","arguments":{"path":"main.go","start_line":5,"end_line":5}}}`, id)
	}
	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"view_file","arguments":{"path":"` + strings.Repeat("a", 16<<20) + `"}}}`
	for i, c := range []struct {
		name, line string
		code       int
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":`, -32700},
		{"nested 10001 deep", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), -32700},
		{"object nested 10001 deep", `{"jsonrpc":"2.0","id":3,"method":"ping","params":` + strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001) + "}", -32700},
		{"over 16 MiB", huge, -32700},
		{"not JSON-RPC", `{"hello":"world"}`, -32600},
		{"batch", `[` + viewCall(50) + `]`, -32600},
	} {
		r.send(t, c.line)
		a := r.read(t)
		if a.Error == nil || a.Error.Code != c.code || a.ID != nil {
			t.Errorf("%s: answer %+v, want error %d with id null", c.name, a, c.code)
		}
		// The session goes on: the next call is answered.
		id := 10 + i
		r.send(t, viewCall(id))
		a = r.read(t)
		if a.Error != nil || a.ID != float64(id) || !strings.Contains(string(a.Result), `func add(a, b int) int`) {
			t.Errorf("after %s: call %d answered %+v", c.name, id, a)
		}
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit status %d at the end of the input, want 0", code)
	}
}

// testMCPStrictArgs (item 4): argument names are exact, given once, and
// known.
func testMCPStrictArgs(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	main := filepath.Join(dir, "main.go")
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()
	pt, _ := json.Marshal(mcpMalformed)
	for _, c := range []struct {
		args, want string
	}{
		{`{"patch":` + string(pt) + `,"dry_run":true,"DRY_RUN":false}`, `unknown argument "DRY_RUN"`},
		{`{"patch":` + string(pt) + `,"dry_run":true,"dry_run":false}`, `key "dry_run" given twice`},
		{`{"PATCH":` + string(pt) + `}`, `unknown argument "PATCH"`},
		{`{"patch":` + string(pt) + `,"Dry_Run":false}`, `unknown argument "Dry_Run"`},
		{`{"patch":` + string(pt) + `,"force":true}`, `unknown argument "force"`},
	} {
		text, failed := call(t, s, "apply_patch", json.RawMessage(c.args))
		if !failed || !strings.Contains(text, c.want) {
			t.Errorf("%s: failed=%v, want %q in\n%s", c.args, failed, c.want, text)
		}
		if readFile(t, main) != mcpMain {
			t.Fatalf("%s wrote main.go", c.args)
		}
	}
	// Read tools too.
	if text, failed := call(t, s, "view_file", json.RawMessage(`{"path":"main.go","PATH":"dup.txt"}`)); !failed || !strings.Contains(text, `unknown argument "PATH"`) {
		t.Errorf("view_file with PATH: failed=%v\n%s", failed, text)
	}
	// The exact names still work.
	if text, failed := call(t, s, "apply_patch", json.RawMessage(`{"patch":`+string(pt)+`,"dry_run":true}`)); failed || readFile(t, main) != mcpMain {
		t.Errorf("dry_run: failed=%v\n%s", failed, text)
	}
}

// testMCPBoundedErrors (item 5): a failed call does not echo a long input
// back whole.
func testMCPBoundedErrors(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()
	long := strings.Repeat("d/", 40_000) + "f.go" // 80 KB
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view_file", map[string]any{"path": long}},
		{"view_file", map[string]any{"path": "../" + long}},
		{"view_directory", map[string]any{"path": long}},
		{"diff", map[string]any{"old_path": long, "new_text": "x\n"}},
		{"apply_patch", map[string]any{"patch": "--- a/" + long + "\n+++ b/" + long + "\n@@ -1 +1 @@\n-a\n+b\n"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: ../" + long + "\n@@\n-a\n+b\n*** End Patch\n"}},
		{"apply_patch", map[string]any{"patch": "<<<<<<< SEARCH\n" + strings.Repeat("nothere\n", 10_000) + "=======\nb\n>>>>>>> REPLACE\n", "target": "main.go"}},
		{"repair", map[string]any{"patch": "--- a/" + long + "\n+++ b/" + long + "\n@@ -1 +1 @@\n-a\n+b\n"}},
		{"convert", map[string]any{"patch": "--- a/" + long + "\n+++ b/" + long + "\n@@ -1 +1 @@\n-a\n+b\n", "to": "v4a"}},
	} {
		res := callResult(t, s, c.tool, c.args)
		text := resultText(res)
		if !res.IsError {
			t.Errorf("%s: not an error:\n%.300s", c.tool, text)
		}
		if len(text) > 10_000 {
			t.Errorf("%s: a %d-byte answer to an 80 KB input; want at most 10,000 bytes", c.tool, len(text))
		}
	}
}

// httpServer is patchbench mcp --http started for a test.
type httpServer struct {
	*mcpProc
	url, token string
}

func startHTTP(t *testing.T, pb string, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(pb, append([]string{"mcp", "--http", ":0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mcpProc{cmd: cmd, exited: make(chan error, 1)}
	br := bufio.NewReader(stderr)
	h := &httpServer{mcpProc: p}
	for h.url == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("no address line: %v", err)
		}
		if m := regexp.MustCompile(`bearer token .*: (\S+)$`).FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			h.token = m[1]
		}
		h.url = regexp.MustCompile(`http://\S+/mcp`).FindString(line)
	}
	if slices.Contains(args, "--allow-remote") {
		// The token line follows the address line.
		line, _ := br.ReadString('\n')
		if m := regexp.MustCompile(`bearer token .*: (\S+)$`).FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			h.token = m[1]
		}
	}
	go io.Copy(os.Stderr, br)
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return h
}

// headerTransport adds headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (h *httpServer) connect(t *testing.T, headers headerTransport, sse bool) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: headers}, DisableStandaloneSSE: !sse, MaxRetries: -1}, nil)
}

// post sends an initialize request and returns the status.
func (h *httpServer) post(t *testing.T, url string, headers map[string]string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// testMCPHTTP (item 6): origin and host checks, bearer tokens, idle
// sessions, and a clean stop with an open stream.
func testMCPHTTP(t *testing.T, pb string) {
	t.Run("origin", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		h := startHTTP(t, pb, "--root", dir)
		if code := h.post(t, h.url, nil); code != http.StatusOK {
			t.Errorf("a plain client: status %d, want 200", code)
		}
		// A page of another site, through the browser.
		if code := h.post(t, h.url, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
			t.Errorf("cross-site browser request: status %d, want 403", code)
		}
		if code := h.post(t, h.url, map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
			t.Errorf("request with a foreign Origin: status %d, want 403", code)
		}
		// DNS rebinding: a name that resolves to 127.0.0.1.
		if code := h.post(t, h.url, map[string]string{"Host": "evil.example:80"}); code != http.StatusForbidden {
			t.Errorf("Host evil.example on loopback: status %d, want 403", code)
		}
	})

	t.Run("token file", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		tf := filepath.Join(t.TempDir(), "token")
		os.WriteFile(tf, []byte("0123456789abcdef0123\n"), 0o600)
		h := startHTTP(t, pb, "--root", dir, "--token-file", tf)
		if code := h.post(t, h.url, nil); code != http.StatusUnauthorized {
			t.Errorf("no token: status %d, want 401", code)
		}
		if code := h.post(t, h.url, map[string]string{"Authorization": "Bearer wrong-token-wrong-token"}); code != http.StatusUnauthorized {
			t.Errorf("wrong token: status %d, want 401", code)
		}
		if _, err := h.connect(t, headerTransport{}, false); err == nil {
			t.Errorf("the SDK client connected without the token")
		}
		s, err := h.connect(t, headerTransport{"Authorization": "Bearer 0123456789abcdef0123"}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if text, failed := call(t, s, "view_file", map[string]any{"path": "main.go"}); failed {
			t.Errorf("view_file with the token: %s", text)
		}
	})

	t.Run("remote needs a token", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		h := startHTTP(t, pb, "--root", dir, "--http", "0.0.0.0:0", "--allow-remote")
		if h.token == "" {
			t.Fatal("no token printed for a server off loopback")
		}
		// Listening on every address; reach it on loopback.
		h.url = "http://127.0.0.1:" + regexp.MustCompile(`:(\d+)/mcp$`).FindStringSubmatch(h.url)[1] + "/mcp"
		if code := h.post(t, h.url, nil); code != http.StatusUnauthorized {
			t.Errorf("no token: status %d, want 401", code)
		}
		s, err := h.connect(t, headerTransport{"Authorization": "Bearer " + h.token}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if text, failed := call(t, s, "view_file", map[string]any{"path": "main.go"}); failed {
			t.Errorf("view_file with the token: %s", text)
		}
	})

	t.Run("session timeout", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		h := startHTTP(t, pb, "--root", dir, "--session-timeout", "1s")
		s, err := h.connect(t, headerTransport{}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, failed := call(t, s, "view_file", map[string]any{"path": "main.go"}); failed {
			t.Fatal("view_file failed")
		}
		time.Sleep(3 * time.Second)
		_, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "view_file", Arguments: map[string]any{"path": "main.go"}})
		if err == nil {
			t.Errorf("a session idle for 3s with --session-timeout 1s still answers")
		}
	})

	t.Run("SIGTERM with an open stream", func(t *testing.T) {
		dir, _ := mcpRepo(t)
		h := startHTTP(t, pb, "--root", dir)
		s, err := h.connect(t, headerTransport{}, true) // holds the GET event stream open
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if text, failed := call(t, s, "apply_patch", map[string]any{"patch": mcpMalformed}); failed {
			t.Fatalf("apply_patch: %s", text)
		}
		if ign := ignoredSignals(t, h.cmd.Process.Pid); ign&(sigBit(syscall.SIGTERM)|sigBit(syscall.SIGINT)) != 0 {
			t.Errorf("after an apply the server ignores signals (SigIgn %#x)", ign)
		}
		h.cmd.Process.Signal(syscall.SIGTERM)
		if code := h.wait(t); code != 0 {
			t.Errorf("exit status %d after SIGTERM, want 0", code)
		}
	})
}

// testMCPFIFO (item 7): a named pipe in the root blocks no call past its
// deadline, and does not keep apply_patch's lock.
func testMCPFIFO(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.txt"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	p := startMCPProc(t, pb, "--root", dir, "--call-timeout", "3s")
	s := p.connect(t)
	defer s.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"diff", map[string]any{"old_path": "pipe.txt", "new_text": "x\n"}},
		{"view_file", map[string]any{"path": "pipe.txt"}},
		{"apply_patch", map[string]any{"patch": "--- a/pipe.txt\n+++ b/pipe.txt\n@@ -1 +1 @@\n-a\n+b\n"}},
		{"apply_patch", map[string]any{"patch": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "target": "pipe.txt", "strict": true}},
		{"repair", map[string]any{"patch": "--- a/pipe.txt\n+++ b/pipe.txt\n@@ -1 +1 @@\n-a\n+b\n"}},
	} {
		text, failed := call(t, s, c.tool, c.args)
		if !failed || !(strings.Contains(text, "named pipe") || strings.Contains(text, "not a regular file") || strings.Contains(text, "deadline")) {
			t.Errorf("%s %v: failed=%v\n%s", c.tool, c.args, failed, text)
		}
	}
	// The lock is free: the next apply_patch writes.
	if text, failed := call(t, s, "apply_patch", map[string]any{"patch": mcpMalformed}); failed || readFile(t, filepath.Join(dir, "main.go")) != mcpFixed {
		t.Errorf("apply_patch after the pipe: failed=%v\n%s", failed, text)
	}
	if st, err := os.Lstat(filepath.Join(dir, "pipe.txt")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v", err)
	}
}

// testMCPDescribed (item 8): what an agent sees of the tools.
func testMCPDescribed(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	if err := os.Symlink("main.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()
	lt, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range lt.Tools {
		tools[tool.Name] = tool
		a := tool.Annotations
		if tool.Title == "" || a == nil || a.Title != tool.Title {
			t.Errorf("%s: title %q, annotations %+v", tool.Name, tool.Title, a)
			continue
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint %v, want false (the tools touch only the root)", tool.Name, a.OpenWorldHint)
		}
		if !strings.Contains(tool.Description, "relative to the root") || !strings.Contains(tool.Description, ".git") || !strings.Contains(tool.Description, "symbolic link") {
			t.Errorf("%s: the description does not say which paths are taken:\n%s", tool.Name, tool.Description)
		}
		write := tool.Name == "apply_patch"
		if a.ReadOnlyHint == write || a.IdempotentHint == write {
			t.Errorf("%s: readOnlyHint %v, idempotentHint %v", tool.Name, a.ReadOnlyHint, a.IdempotentHint)
		}
		if write != (a.DestructiveHint != nil && *a.DestructiveHint) {
			t.Errorf("%s: destructiveHint %v", tool.Name, a.DestructiveHint)
		}
	}
	ap := tools["apply_patch"]
	if ap == nil {
		t.Fatal("no apply_patch")
	}
	// Each format as every prompt of patchbench describes it, then the
	// file operations beyond one file's edit.
	for _, f := range patch.Formats {
		if !strings.Contains(ap.Description, patch.FormatDescription(f)) {
			t.Errorf("apply_patch's description lacks the description of %s", f)
		}
	}
	for _, g := range []string{"*** Begin Patch", "*** Update File: PATH", "*** Add File: PATH", "<<<<<<< SEARCH", ">>>>>>> REPLACE", "@@ -A,B +C,D @@", "`CON `", "--- /dev/null"} {
		if !strings.Contains(ap.Description, g) {
			t.Errorf("apply_patch's description lacks the grammar line %q", g)
		}
	}
	schema, _ := json.Marshal(ap.OutputSchema)
	if !strings.Contains(string(schema), `"summary"`) || !strings.Contains(string(schema), `"candidates"`) {
		t.Errorf("apply_patch's output schema: %s", schema)
	}
	res := callResult(t, s, "apply_patch", map[string]any{"patch": mcpMalformed, "dry_run": true})
	var rep mcpReport
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &rep); err != nil || res.IsError || rep.Status != "applied" || rep.Written || len(rep.Files) != 1 {
		t.Errorf("structured content %+v (%v)", rep, err)
	}
	// Read tools' refusals are worded for reads.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view_file", map[string]any{"path": "link.go"}},
		{"diff", map[string]any{"old_path": "link.go", "new_text": ""}},
	} {
		text, failed := call(t, s, c.tool, c.args)
		if !failed || !strings.Contains(text, "symbolic links are not followed") || strings.Contains(text, "edited") {
			t.Errorf("%s %v: failed=%v\n%s", c.tool, c.args, failed, text)
		}
	}
	text, failed := call(t, s, "apply_patch", map[string]any{"patch": "--- a/link.go\n+++ b/link.go\n@@ -1 +1 @@\n-package main\n+package other\n"})
	if !failed || !strings.Contains(text, "symbolic links are not edited") {
		t.Errorf("apply_patch on a link: failed=%v\n%s", failed, text)
	}
}

// nodeClientDir holds the pinned TypeScript SDK (package.json); .ci/run
// installs it with npm ci. Tests never reach the network.
const nodeClientDir = "testdata/mcp-node"

// testMCPNodeClient runs the end-to-end session with the official
// TypeScript SDK's client, over stdio and streamable HTTP.
func testMCPNodeClient(t *testing.T, pb string) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(nodeClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("the TypeScript MCP SDK is not installed in %s (.ci/run does: cd %s && npm ci)", nodeClientDir, nodeClientDir)
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			dir, _ := mcpRepo(t)
			plan := map[string]any{"calls": []map[string]any{
				{"name": "apply_patch", "arguments": map[string]any{"patch": mcpMalformed, "dry_run": true}},
				{"name": "apply_patch", "arguments": map[string]any{"patch": mcpMalformed}},
				{"name": "apply_patch", "arguments": map[string]any{"patch": mcpAmbiguous}},
				{"name": "apply_patch", "arguments": map[string]any{"patch": mcpMalformed, "DRY_RUN": true}},
				{"name": "view_file", "arguments": map[string]any{"path": "main.go", "start_line": 6, "end_line": 6}},
				{"name": "view_file", "arguments": map[string]any{"path": "../outside/secret.txt"}},
				{"name": "apply_patch", "arguments": map[string]any{"patch": "*** Begin Patch\n*** Add File: sub/.GIT/hooks/pre-commit\n+x\n*** End Patch\n"}},
			}}
			if transport == "stdio" {
				plan["command"] = []string{pb, "mcp", "--root", dir}
			} else {
				h := startHTTP(t, pb, "--root", dir)
				plan["url"] = h.url
			}
			pf := filepath.Join(t.TempDir(), "plan.json")
			os.WriteFile(pf, []byte(mustJSON(t, plan)), 0o644)
			cmd := exec.Command(node, "client.mjs", pf)
			cmd.Dir = nodeClientDir
			cmd.Stderr = os.Stderr
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("node client.mjs: %v\n%s", err, b)
			}
			var got struct {
				Tools []struct {
					Name         string          `json:"name"`
					Title        string          `json:"title"`
					OutputSchema json.RawMessage `json:"outputSchema"`
					Annotations  struct {
						ReadOnly    *bool `json:"readOnlyHint"`
						Destructive *bool `json:"destructiveHint"`
					} `json:"annotations"`
				} `json:"tools"`
				Calls []struct {
					IsError    bool       `json:"isError"`
					Text       string     `json:"text"`
					Thrown     string     `json:"thrown"`
					Structured *mcpReport `json:"structuredContent"`
				} `json:"calls"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			for _, tool := range got.Tools {
				ro := tool.Annotations.ReadOnly != nil && *tool.Annotations.ReadOnly
				if tool.Title == "" || ro == (tool.Name == "apply_patch") {
					t.Errorf("tool %s: title %q, readOnlyHint %v", tool.Name, tool.Title, tool.Annotations.ReadOnly)
				}
				if tool.Name == "apply_patch" && (len(tool.OutputSchema) == 0 || tool.Annotations.Destructive == nil || !*tool.Annotations.Destructive) {
					t.Errorf("apply_patch: output schema %s, destructiveHint %v", tool.OutputSchema, tool.Annotations.Destructive)
				}
			}
			if len(got.Calls) != 7 {
				t.Fatalf("%d calls answered", len(got.Calls))
			}
			for i, c := range got.Calls {
				if c.Thrown != "" {
					t.Errorf("call %d: the SDK client threw: %s", i, c.Thrown)
				}
			}
			c := got.Calls
			if c[0].IsError || c[0].Structured == nil || c[0].Structured.Status != "applied" || c[0].Structured.Written {
				t.Errorf("dry run: %+v", c[0])
			}
			if c[1].IsError || c[1].Structured == nil || !c[1].Structured.Written || readFile(t, filepath.Join(dir, "main.go")) != mcpFixed {
				t.Errorf("apply: %+v", c[1])
			}
			if !c[2].IsError || c[2].Structured == nil || c[2].Structured.Status != "refused" || !strings.Contains(c[2].Structured.Summary, "dup.txt hunk 1 at lines 1 4") {
				t.Errorf("ambiguous: %+v", c[2])
			}
			if !c[3].IsError || !strings.Contains(c[3].Text, `unknown argument "DRY_RUN"`) {
				t.Errorf("DRY_RUN: %+v", c[3])
			}
			if c[4].IsError || !strings.Contains(c[4].Text, "return a - b") {
				t.Errorf("view_file: %+v", c[4])
			}
			if !c[5].IsError || !strings.Contains(c[5].Text, "outside") {
				t.Errorf("view_file outside: %+v", c[5])
			}
			if patch.CheckPath("sub/.GIT/hooks/pre-commit") != nil { // else the tree predates the refusal (branch confine)
				if !c[6].IsError || c[6].Structured == nil || c[6].Structured.Status != "refused" {
					t.Errorf(".GIT: %+v", c[6])
				}
				if _, err := os.Lstat(filepath.Join(dir, "sub")); err == nil {
					t.Errorf("sub/.GIT was created")
				}
			}
		})
	}
}
