package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests of this file are the red-team pass over the MCP server
// (docs/mcp.md): an agent or an attacker using it on the default
// settings. Each runs the real binary, built by TestMCP.

// corpusCase is one case of patch/repair/testdata/*.jsonl.gz.
type corpusCase struct {
	ID      string `json:"id"`
	Path    string `json:"path"`
	OldCode string `json:"old_code"`
	Patch   string `json:"patch"`
}

func readCorpus(t *testing.T, file string) []corpusCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// resetDir empties dir (not dir itself: the server keeps it open) and
// writes the case's file with mode.
func resetDir(t *testing.T, dir string, c corpusCase, mode os.FileMode) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(dir, filepath.FromSlash(c.Path))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(c.OldCode), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// dirState is every file under dir: its mode and contents.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		val := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			val += " " + string(b)
		}
		st[filepath.ToSlash(rel)] = val
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// testMCPFidelity: apply_patch through the server gives exactly the
// CLI's result on every case of the two corpora: the same refusals, the
// same report, the same bytes and modes on disk. Every case runs the
// default (tolerant, real), and one of strict/dry-run, strict/real and
// tolerant/dry-run in turn, so each combination meets a third of the
// cases; a CLI start per run is what the test costs.
func testMCPFidelity(t *testing.T, pb string) {
	var cases []corpusCase
	for _, f := range []string{"../../patch/repair/testdata/fidelity.jsonl.gz", "../../patch/repair/testdata/formats.jsonl.gz"} {
		cases = append(cases, readCorpus(t, f)...)
	}
	if len(cases) < 1277 {
		t.Fatalf("%d cases read, want the two corpora's 1,277", len(cases))
	}
	base := t.TempDir()
	srvDir, cliDir := filepath.Join(base, "srv"), filepath.Join(base, "cli")
	os.Mkdir(srvDir, 0o755)
	os.Mkdir(cliDir, 0o755)
	p := startMCPProc(t, pb, "--root", srvDir, "--lsp-tools", "false")
	s := p.connect(t)
	defer s.Close()
	diffs := 0
	counts := map[string]int{}
	for i, c := range cases {
		mode := os.FileMode(0o644)
		if i%2 == 1 {
			mode = 0o755
		}
		type combo struct{ strict, dry bool }
		others := []combo{{true, true}, {true, false}, {false, true}}
		for _, co := range []combo{{false, false}, others[i%3]} {
			strict, dry := co.strict, co.dry
			resetDir(t, srvDir, c, mode)
			resetDir(t, cliDir, c, mode)
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "apply_patch",
				Arguments: map[string]any{"patch": c.Patch, "strict": strict, "dry_run": dry}})
			if err != nil {
				t.Fatalf("%s: %v", c.ID, err)
			}
			var srvRep map[string]any
			if err := json.Unmarshal([]byte(resultText(res)), &srvRep); err != nil {
				t.Fatalf("%s: the answer is not JSON: %v\n%s", c.ID, err, resultText(res))
			}
			for _, k := range []string{"summary", "written", "hunks_omitted"} {
				delete(srvRep, k)
			}
			args := []string{"apply", "--json", "-C", cliDir}
			if strict {
				args = append(args, "--strict")
			}
			if dry {
				args = append(args, "--check")
			}
			// On standard input, as the server feeds the patch.
			cmd := exec.Command(pb, append(args, "-")...)
			cmd.Stdin = strings.NewReader(c.Patch)
			out, err := cmd.Output()
			cliFailed := err != nil
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatal(err)
			}
			var cliRep map[string]any
			if err := json.Unmarshal(out, &cliRep); err != nil {
				t.Fatalf("%s: the CLI's report is not JSON: %v\n%s", c.ID, err, out)
			}
			what := fmt.Sprintf("%s strict=%v dry_run=%v", c.ID, strict, dry)
			counts[fmt.Sprint(cliRep["status"])]++
			if res.IsError != cliFailed {
				t.Errorf("%s: server failed=%v, CLI failed=%v", what, res.IsError, cliFailed)
				diffs++
			}
			if d := cmp.Diff(cliRep, srvRep); d != "" {
				t.Errorf("%s: reports differ (-cli +server):\n%s", what, d)
				diffs++
			}
			if d := cmp.Diff(dirState(t, cliDir), dirState(t, srvDir)); d != "" {
				t.Errorf("%s: files differ (-cli +server):\n%s", what, d)
				diffs++
			}
			if diffs > 20 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d cases x 2 runs, statuses %v, %d differences", len(cases), counts, diffs)
}

// testMCPRequestIDs: a request id the server cannot give back exactly (a
// fraction, an integer past 2^53 or past int64, null) is refused with
// -32600 and id null, never answered under another id, which a client
// would take for the answer of its request with that id; ids it can give
// back are given back byte for byte.
func testMCPRequestIDs(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	p := startMCPProc(t, pb, "--root", dir)
	r := &rawSession{p: p, br: bufio.NewReader(p.stdout)}
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a := r.read(t); a.Error != nil {
		t.Fatalf("initialize: %+v", a)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	readLine := func() string {
		line, err := r.br.ReadString('\n')
		if err != nil {
			t.Fatalf("the server's answer: %v (the session ended)", err)
		}
		return line
	}
	for i, id := range []string{`1.5`, `9007199254740993`, `1e300`, `-0.5`, `1E2`, `null`, `18446744073709551616`,
		`9223372036854775807`, `-9223372036854775808`, `1, "id":2.5`} {
		r.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		// A ping after it: its answer must come, and come after the
		// refusal (or alone, had the bad one been dropped).
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"after-%d","method":"ping"}`, i))
		line := readLine()
		var a rawAnswer
		json.Unmarshal([]byte(line), &a)
		if a.Error == nil || a.Error.Code != -32600 || a.ID != nil {
			t.Errorf("id %s: answered %s; want error -32600 with id null", id, strings.TrimSpace(line))
			if a.ID == fmt.Sprintf("after-%d", i) {
				continue
			}
		}
		if line := readLine(); !strings.Contains(line, fmt.Sprintf(`"id":"after-%d"`, i)) {
			t.Errorf("after id %s: answered %s", id, strings.TrimSpace(line))
		}
	}
	for _, id := range []string{`"s"`, `""`, `-7`, `0`, `9007199254740992`, `-9007199254740992`} {
		r.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		if line := readLine(); !strings.Contains(line, `"id":`+id+`,`) || strings.Contains(line, `"error"`) {
			t.Errorf("id %s: answered %s; want the id given back", id, strings.TrimSpace(line))
		}
	}
}

// testMCPRequestIDsHTTP: the same over HTTP, where the SDK decodes the
// request: an initialize with id 1.5 was answered with id 1.
func testMCPRequestIDsHTTP(t *testing.T, pb string) {
	dir, _ := mcpRepo(t)
	h := startHTTP(t, pb, "--root", dir)
	for _, id := range []string{`1.5`, `9007199254740993`, `null`} {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		req, _ := http.NewRequest("POST", h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"id":null`) || !strings.Contains(string(b), `-32600`) {
			t.Errorf("initialize with id %s over HTTP: %d %s; want 400 and error -32600 with id null", id, resp.StatusCode, b)
		}
	}
	// A client that sends good ids is served.
	s, err := h.connect(t, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if text, failed := call(t, s, "view_file", map[string]any{"path": "main.go"}); failed {
		t.Errorf("view_file: %s", text)
	}
}

// testMCPBackupName: a file named like the applier's backup of another
// (X.patchbench-orig) is the user's file: an edit of X leaves it as it
// is, and an edit of both writes both.
func testMCPBackupName(t *testing.T, pb string) {
	dir := t.TempDir()
	for name, text := range map[string]string{"a.txt": "a\nb\n", "a.txt.patchbench-orig": "precious\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()
	edit := "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
	both := edit + "--- a/a.txt.patchbench-orig\n+++ b/a.txt.patchbench-orig\n@@ -1 +1 @@\n-precious\n+still precious\n"
	for _, c := range []struct {
		patch     string
		a, backup string
	}{
		{edit, "a\nc\n", "precious\n"},
		{both, "a\nc\n", "still precious\n"},
	} {
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\nb\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "a.txt.patchbench-orig"), []byte("precious\n"), 0o644)
		if text, failed := call(t, s, "apply_patch", map[string]any{"patch": c.patch}); failed {
			t.Fatalf("apply_patch: %s", text)
		}
		for name, want := range map[string]string{"a.txt": c.a, "a.txt.patchbench-orig": c.backup} {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
				t.Errorf("after %q: %s is %q (%v), want %q", c.patch, name, got, err, want)
			}
		}
	}
	if st := dirState(t, dir); len(st) != 2 {
		t.Errorf("files left: %v", st)
	}
}

// testMCPApplyOnceLittle: an agent that sends an edit again whose added
// lines say little (a blank line after its search text, a brace appended
// by an empty SEARCH) gets the edit once: the first call applies it, the
// next ones are refused and write nothing. Before, each call added the
// line again.
func testMCPApplyOnceLittle(t *testing.T, pb string) {
	dir := t.TempDir()
	const src = "package m\n\nfunc f() int {\n\treturn 0\n}\nfunc g() {}\n"
	p := startMCPProc(t, pb, "--root", dir)
	s := p.connect(t)
	defer s.Close()
	for _, c := range []struct{ patch, want string }{
		{"m.go\n<<<<<<< SEARCH\n\treturn 0\n}\n=======\n\treturn 0\n}\n\n>>>>>>> REPLACE\n", strings.Replace(src, "}\nfunc g", "}\n\nfunc g", 1)},
		{"*** Begin Patch\n*** Update File: m.go\n@@\n \treturn 0\n }\n+\n*** End Patch\n", strings.Replace(src, "}\nfunc g", "}\n\nfunc g", 1)},
		{"m.go\n<<<<<<< SEARCH\n=======\n}\n>>>>>>> REPLACE\n", src + "}\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "m.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			text, failed := call(t, s, "apply_patch", map[string]any{"patch": c.patch})
			if failed != (i > 0) {
				t.Errorf("call %d of %q: failed=%v: %.300s", i+1, c.patch, failed, text)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "m.go")); err != nil || string(got) != c.want {
				t.Fatalf("after call %d of %q: m.go is %q (%v), want %q", i+1, c.patch, got, err, c.want)
			}
		}
	}
}

// peakRSS is the most memory the process has held (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// testMCPLargeFiles: a file of 6 GiB in the tree (sparse: it costs no
// disk) is not read into memory by the read tools: view_file and diff
// refuse it, grep_search passes it by, and the server's memory stays
// small.
func testMCPLargeFiles(t *testing.T, pb string) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nvar needle = 1\n"), 0o644)
	f, err := os.Create(filepath.Join(dir, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(6 << 30); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	f.Close()
	p := startMCPProc(t, pb, "--root", dir, "--lsp-tools", "false")
	s := p.connect(t)
	defer s.Close()
	for _, c := range []struct {
		tool   string
		args   map[string]any
		failed bool
		want   string
	}{
		{"view_file", map[string]any{"path": "huge.txt"}, true, "over the bound"},
		{"diff", map[string]any{"old_path": "huge.txt", "new_text": "x\n"}, true, "over the bound"},
		{"grep_search", map[string]any{"pattern": "needle"}, false, "a.go:3: var needle = 1"},
		{"grep_search", map[string]any{"pattern": "needle"}, false, "huge.txt"},
	} {
		text, failed := call(t, s, c.tool, c.args)
		if failed != c.failed || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: failed=%v %q; want failed=%v and %q", c.tool, c.args, failed, text, c.failed, c.want)
		}
	}
	if rss := peakRSS(t, p.cmd.Process.Pid); rss > 1<<30 {
		t.Errorf("the server held %d MiB at its peak; the 6 GiB file was read", rss>>20)
	}
}

// testMCPSearchBounds: grep_search refuses a pattern whose program is
// too large to run in bounded time (the search could not be stopped at
// the call's deadline: it went on taking a core), and an answer that
// quotes a long input keeps what it says.
func testMCPSearchBounds(t *testing.T, pb string) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "long.txt"), []byte(strings.Repeat("A", 1<<20)+"\n"), 0o644)
	p := startMCPProc(t, pb, "--root", dir, "--lsp-tools", "false", "--call-timeout", "20s")
	s := p.connect(t)
	defer s.Close()
	for _, pat := range []string{"(?i)" + strings.Repeat("[a-z]", 50_000), strings.Repeat("x", 300_000)} {
		text, failed := call(t, s, "grep_search", map[string]any{"pattern": pat})
		if !failed || !strings.Contains(text, "over the bound") {
			t.Errorf("a pattern of %d bytes: failed=%v %.300q", len(pat), failed, text)
		}
	}
	name := strings.Repeat("x", 300_000)
	text, failed := call(t, s, "find_symbol", map[string]any{"name": name})
	if !failed || !strings.Contains(text, "name is 300000 bytes, over the bound") {
		t.Errorf("find_symbol of a long name: failed=%v, %d bytes: %.200q", failed, len(text), text)
	}
}

// testMCPConcurrentClients: two agents editing the same file at once,
// each through its own server (as MCP clients start one each) and both
// through one HTTP server: no edit is lost. Each client changes its own
// lines, by context (no line numbers), one call at a time; at the end
// every change is in the file.
func testMCPConcurrentClients(t *testing.T, pb string) {
	const lines, perClient = 200, 30
	var orig strings.Builder
	for i := range lines {
		fmt.Fprintf(&orig, "line %d\n", i)
	}
	edit := func(i int) string {
		return fmt.Sprintf("--- a/f.txt\n+++ b/f.txt\n@@\n line %d\n-line %d\n+changed %d\n line %d\n", i-1, i, i, i+1)
	}
	run := func(t *testing.T, dir string, sessions [2]*mcp.ClientSession) {
		errs := make(chan string, 2*perClient+1)
		done := make(chan bool)
		for c, s := range sessions {
			go func() {
				defer func() { done <- true }()
				for k := range perClient {
					i := 2 + 3*(c*perClient+k) // lines 2, 5, 8, ...: contexts never overlap an edit
					res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "apply_patch", Arguments: map[string]any{"patch": edit(i)}})
					if err != nil {
						errs <- err.Error()
					} else if res.IsError {
						errs <- resultText(res)
					}
				}
			}()
		}
		// A reader meanwhile: the file is always there, whole.
		stop := make(chan bool)
		readerDone := make(chan bool)
		go func() {
			defer close(readerDone)
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := sessions[0].CallTool(context.Background(), &mcp.CallToolParams{Name: "view_file",
					Arguments: map[string]any{"path": "f.txt", "start_line": lines, "end_line": lines}})
				if err != nil || res.IsError || !strings.Contains(resultText(res), fmt.Sprintf("line %d", lines-1)) {
					errs <- fmt.Sprintf("view_file while writing: %v %s", err, resultText(res))
					return
				}
			}
		}()
		<-done
		<-done
		close(stop)
		<-readerDone
		close(errs)
		for e := range errs {
			t.Errorf("apply_patch: %.300s", e)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
		lost := 0
		for k := range 2 * perClient {
			i := 2 + 3*k
			if !strings.Contains(string(b), fmt.Sprintf("\nchanged %d\n", i)) {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("%d of %d edits lost", lost, 2*perClient)
		}
	}
	t.Run("two servers", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(orig.String()), 0o644)
		var ss [2]*mcp.ClientSession
		for i := range ss {
			ss[i] = startMCPProc(t, pb, "--root", dir, "--lsp-tools", "false").connect(t)
			defer ss[i].Close()
		}
		run(t, dir, ss)
	})
	t.Run("one http server", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(orig.String()), 0o644)
		h := startHTTP(t, pb, "--root", dir, "--lsp-tools", "false")
		var ss [2]*mcp.ClientSession
		for i := range ss {
			s, err := h.connect(t, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			ss[i] = s
			defer s.Close()
		}
		run(t, dir, ss)
	})
}

// testMCPManyCalls: a client that sends hundreds of calls without waiting
// for the answers (pipelined, as JSON-RPC allows) gets every answer, and
// the server's memory and open files stay bounded: each grep_search reads
// a 6 MB file, and run all at once (300) they held 1.8 GB and 300 descriptors.
func testMCPManyCalls(t *testing.T, pb string) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&b, "matchme %d %s\n", i, strings.Repeat("x", 50))
	}
	os.WriteFile(filepath.Join(dir, "many.txt"), []byte(b.String()), 0o644)
	p := startMCPProc(t, pb, "--root", dir, "--lsp-tools", "false")
	r := &rawSession{p: p, br: bufio.NewReaderSize(p.stdout, 1<<20)}
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a := r.read(t); a.Error != nil {
		t.Fatalf("initialize: %+v", a)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const n = 300
	pid := p.cmd.Process.Pid
	maxFDs := 0
	sent := make(chan bool)
	go func() {
		defer close(sent)
		for i := range n {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"grep_search","arguments":{"pattern":"matchme \\d+ x+$"}}}`, 100+i)
			if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
				return
			}
		}
	}()
	answered := map[any]bool{}
	failed := 0
	for len(answered) < n {
		if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
			maxFDs = max(maxFDs, len(ents))
		}
		a := r.read(t)
		answered[a.ID] = true
		if a.Error != nil || strings.Contains(string(a.Result), `"isError":true`) {
			failed++
		}
	}
	<-sent
	if failed > 0 {
		t.Errorf("%d of %d calls failed", failed, n)
	}
	if maxFDs > 200 {
		t.Errorf("%d descriptors open at once", maxFDs)
	}
	if rss := peakRSS(t, pid); rss > 1<<30 {
		t.Errorf("the server held %d MiB at its peak", rss>>20)
	}
}

// testMCPCancelMidWrite: a call cancelled (notifications/cancelled) at
// any moment leaves the files of a many-file patch all old or all new.
func testMCPCancelMidWrite(t *testing.T, pb string) {
	dir := t.TempDir()
	const files = 60
	var pt strings.Builder
	for i := range files {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte("old\n"), 0o644)
		fmt.Fprintf(&pt, "--- a/f%02d.txt\n+++ b/f%02d.txt\n@@ -1 +1 @@\n-old\n+new\n", i, i)
	}
	p := startMCPProc(t, pb, "--root", dir, "--lsp-tools", "false")
	s := p.connect(t)
	defer s.Close()
	outcomes := map[string]int{}
	for round := range 30 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(time.Duration(round%10) * time.Millisecond) // spreads the cancellation over the call; nothing asserted on time
			cancel()
		}()
		s.CallTool(ctx, &mcp.CallToolParams{Name: "apply_patch", Arguments: map[string]any{"patch": pt.String()}})
		cancel()
		// A dry run waits for the apply before it to end.
		call(t, s, "apply_patch", map[string]any{"patch": pt.String(), "dry_run": true})
		counts := map[string]int{}
		for i := range files {
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)))
			counts[string(b)]++
		}
		if len(counts) != 1 {
			t.Fatalf("round %d: files %v; want all old or all new", round, counts)
		}
		for k := range counts {
			outcomes[strings.TrimSpace(k)]++
		}
		if ents, _ := os.ReadDir(dir); len(ents) != files {
			t.Fatalf("round %d: %d entries, want %d (temporary files left)", round, len(ents), files)
		}
		for i := range files {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte("old\n"), 0o644)
		}
	}
	t.Logf("outcomes %v", outcomes)
}

// testMCPSymlinkSwap: while apply_patch edits sub/f.txt, another process
// swaps the directory sub for a symbolic link, to a directory outside
// the root or to the root's .git: no write lands through the link.
var swapCalls = 300

func testMCPSymlinkSwap(t *testing.T, pb string) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(dir, "sub"), filepath.Join(dir, ".git"), outside} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f.txt"), []byte("a\nb\nc\n"), 0o644)
		os.WriteFile(filepath.Join(d, "g.txt"), []byte("secret of "+filepath.Base(d)+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "sub", "g.txt"), []byte("public\n"), 0o644)
	p := startMCPProc(t, pb, "--root", dir, "--lsp-tools", "false")
	s := p.connect(t)
	defer s.Close()
	for _, target := range []string{outside, ".git"} {
		stop := make(chan bool)
		swapped := make(chan int)
		go func() {
			n := 0
			defer func() { swapped <- n }()
			sub, keep := filepath.Join(dir, "sub"), filepath.Join(base, "sub.keep")
			for {
				select {
				case <-stop:
					return
				default:
				}
				if os.Rename(sub, keep) != nil {
					continue
				}
				os.Symlink(target, sub)
				os.Remove(sub)
				os.Rename(keep, sub)
				n++
			}
		}()
		for i := range swapCalls {
			from, to := "b", "B"
			if i%2 == 1 {
				from, to = "B", "b"
			}
			s.CallTool(context.Background(), &mcp.CallToolParams{Name: "apply_patch", Arguments: map[string]any{
				"patch": fmt.Sprintf("--- a/sub/f.txt\n+++ b/sub/f.txt\n@@ -1,3 +1,3 @@\n a\n-%s\n+%s\n c\n", from, to)}})
			for _, tool := range []string{"view_file", "diff"} {
				args := map[string]any{"path": "sub/g.txt"}
				if tool == "diff" {
					args = map[string]any{"old_path": "sub/g.txt", "new_text": "x\n"}
				}
				res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err == nil && strings.Contains(resultText(res), "secret") {
					t.Errorf("link to %s: %s read through it: %.200s", target, tool, resultText(res))
				}
			}
		}
		close(stop)
		n := <-swapped
		for _, f := range []string{filepath.Join(outside, "f.txt"), filepath.Join(dir, ".git", "f.txt")} {
			if b, _ := os.ReadFile(f); string(b) != "a\nb\nc\n" {
				t.Errorf("link to %s (%d swaps): %s was written: %q", target, n, f, b)
			}
		}
		for _, d := range []string{outside, filepath.Join(dir, ".git")} {
			if ents, _ := os.ReadDir(d); len(ents) != 2 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("link to %s: %s holds %v, want only f.txt and g.txt", target, d, names)
			}
		}
	}
}
