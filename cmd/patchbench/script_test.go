package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/hfhub/hubtest"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
)

// TestMain lets testscript run the real command as "patchbench"
// (patchbench-full's command line) and "patchbench-lean" (patchbench's).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"patchbench": func() { os.Exit(run(os.Args[1:], cli.OSStdio())) },
		// The patchbench binary's own command line (package cmdline), which
		// hands benchmark commands over instead of linking them.
		"patchbench-lean": func() { os.Exit(cli.Run(os.Args[1:], cli.OSStdio())) },
	})
}

// TestScripts runs the CLI scripts under testdata/script: exit codes,
// output, and files left untouched on failure.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", Condition: scriptCondition, Cmds: map[string]func(*testscript.TestScript, bool, []string){
		"fakellm":      cmdFakeLLM,
		"llmrequests":  cmdLLMRequests,
		"fakehub":      cmdFakeHub,
		"exitcode":     cmdExitCode,
		"cmpruns":      cmdCmpRuns,
		"waitrequests": cmdWaitRequests,
		"manyhunks":    cmdManyHunks,
	}})
}

// scriptCondition knows [pytest]: /usr/bin/python3 imports pytest, and
// [overlay]: this process can mount an overlay (root).
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "pytest":
		return exec.Command("/usr/bin/python3", "-c", "import pytest").Run() == nil, nil
	case "overlay":
		ok, _ := envstore.OverlayAvailable(os.TempDir())
		return ok, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// cmdManyHunks: manyhunks N DIR writes testdata.ManyHunks(N) to DIR: old
// (8N lines), new (every eighth changed), p.diff (git's diff between
// them as a/f and b/f, N hunks) and off.diff (the same with hunk N/2+1's
// line numbers one line early, which only the engine places).
func cmdManyHunks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: manyhunks N DIR")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		ts.Fatalf("manyhunks: N %q", args[0])
	}
	old, neu, diff := testdata.ManyHunks(n)
	line := 8*(n/2) + 2 // the middle hunk's first line
	h := fmt.Sprintf("@@ -%d,7 +%d,7 @@", line, line)
	off := strings.Replace(diff, h, fmt.Sprintf("@@ -%d,7 +%d,7 @@", line-1, line-1), 1)
	if off == diff {
		ts.Fatalf("manyhunks: no hunk %q", h)
	}
	dir := ts.MkAbs(args[1])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ts.Fatalf("manyhunks: %v", err)
	}
	for name, text := range map[string]string{"old": old, "new": neu, "p.diff": diff, "off.diff": off} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			ts.Fatalf("manyhunks: %v", err)
		}
	}
}

// cmdExitCode: exitcode N COMMAND ARGS... runs COMMAND as exec does and
// checks that it exits with status N (exec only tells zero from non-zero,
// and 1 and 2 mean different things here).
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N COMMAND ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d; want %d", args[1], got, want)
	}
}

// fakeServers are the scripted model servers of running scripts, by
// script and name.
var fakeServers sync.Map // map[fakeKey]*llmtest.Server

type fakeKey struct {
	ts   *testscript.TestScript
	name string
}

// cmdFakeLLM: fakellm NAME SCRIPT.json [LATENCY] starts a fake model server
// (package llmtest) answering the tool-calling turns of SCRIPT.json (a JSON
// array of llmtest.Turn), or with "echo" for SCRIPT.json "echo: " and the
// last message, or with "sample FILE" for SCRIPT.json FILE's text with {n}
// replaced by the request's number (1, 2, ...), as a model that samples
// gives a new answer each time; each answer after LATENCY (a
// time.Duration; none by default). It sets $NAME_OPENAI and
// $NAME_ANTHROPIC to its base URLs.
func cmdFakeLLM(ts *testscript.TestScript, neg bool, args []string) {
	var sample string
	if len(args) >= 3 && args[1] == "sample" {
		sample, args = args[2], append([]string{args[0], "sample"}, args[3:]...)
	}
	if neg || len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: fakellm NAME SCRIPT.json|echo|sample FILE [LATENCY]")
	}
	var cfg llmtest.Config
	if len(args) == 3 {
		d, err := time.ParseDuration(args[2])
		if err != nil {
			ts.Fatalf("fakellm: %v", err)
		}
		cfg.Latency = d
	}
	switch {
	case sample != "":
		text := ts.ReadFile(sample)
		var mu sync.Mutex
		n := 0
		cfg.Reply = func(_, _ string, _ []llm.Message) string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return strings.ReplaceAll(text, "{n}", strconv.Itoa(n))
		}
	case args[1] != "echo":
		if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &cfg.Script); err != nil {
			ts.Fatalf("fakellm: %s: %v", args[1], err)
		}
	}
	srv := llmtest.NewServer(cfg)
	ts.Defer(srv.Close)
	fakeServers.Store(fakeKey{ts, args[0]}, srv)
	ts.Setenv(args[0]+"_OPENAI", srv.OpenAIBaseURL())
	ts.Setenv(args[0]+"_ANTHROPIC", srv.AnthropicBaseURL())
}

// cmdFakeHub: fakehub OWNER/NAME PATH=FILE... starts a fake Hugging Face
// Hub (package hubtest) serving one dataset whose files are the script's
// FILEs at PATH (a .jsonl FILE at a .parquet PATH is written as Parquet),
// and points HF_ENDPOINT at it and HF_HOME into the work directory.
func cmdFakeHub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fakehub OWNER/NAME PATH=FILE...")
	}
	rp := &hubtest.Repo{Name: args[0], Commit: "8f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b"}
	for _, a := range args[1:] {
		path, file, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("fakehub: %q is not PATH=FILE", a)
		}
		data := []byte(ts.ReadFile(file))
		if strings.HasSuffix(file, ".jsonl") && strings.HasSuffix(path, ".parquet") {
			var err error
			if data, err = hubtest.ParquetOfJSONL(data); err != nil {
				ts.Fatalf("fakehub: %s: %v", file, err)
			}
		}
		rp.Files = append(rp.Files, hubtest.File{Path: path, Data: data, LFS: strings.HasSuffix(path, ".parquet")})
	}
	srv := hubtest.NewServer(rp)
	ts.Defer(srv.Close)
	ts.Setenv("HF_ENDPOINT", srv.URL)
	ts.Setenv("HF_HOME", ts.MkAbs("hfhome"))
}

// cmdLLMRequests: llmrequests NAME N checks that the fake server NAME has
// had N requests.
func cmdLLMRequests(ts *testscript.TestScript, neg bool, args []string) {
	srv, want := serverAndCount(ts, "llmrequests", args)
	got := srv.Requests()
	if (got == want) == neg {
		ts.Fatalf("fake server %s has had %d requests; want %s%d", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// serverAndCount reads the arguments NAME N of command cmd: the script's
// fake model server NAME and the count N.
func serverAndCount(ts *testscript.TestScript, cmd string, args []string) (*llmtest.Server, int) {
	if len(args) != 2 {
		ts.Fatalf("usage: %s NAME N", cmd)
	}
	v, ok := fakeServers.Load(fakeKey{ts, args[0]})
	if !ok {
		ts.Fatalf("%s: no fake server %s", cmd, args[0])
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("%s: %v", cmd, err)
	}
	return v.(*llmtest.Server), n
}

// timingFields are the fields of results rows and reports that hold times
// (or whether an answer came from the cache): cmpruns leaves them out.
var timingFields = map[string]bool{"elapsed_ms": true, "latency_ms": true, "search_ms": true, "avg_latency_ms": true, "cached": true}

// cmdCmpRuns: cmpruns DIR1 DIR2 checks that two run directories hold the
// same run: each case once in each results.jsonl (by key), the same rows
// and the same report.json, times left out (see timingFields).
func cmdCmpRuns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpruns DIR1 DIR2")
	}
	rows := func(dir string) map[string]any {
		out := map[string]any{}
		for i, line := range strings.Split(strings.TrimSpace(ts.ReadFile(dir+"/results.jsonl")), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				ts.Fatalf("%s/results.jsonl:%d: %v", dir, i+1, err)
			}
			k, _ := r["key"].(string)
			if _, dup := out[k]; dup {
				ts.Fatalf("%s/results.jsonl:%d: case %q a second time", dir, i+1, k)
			}
			out[k] = dropTiming(r)
		}
		return out
	}
	a, b := rows(args[0]), rows(args[1])
	for k, ra := range a {
		rb, ok := b[k]
		if !ok {
			ts.Fatalf("case %q in %s, not in %s", k, args[0], args[1])
		}
		ja, _ := json.Marshal(ra)
		jb, _ := json.Marshal(rb)
		if string(ja) != string(jb) {
			ts.Fatalf("case %q differs:\n%s: %s\n%s: %s", k, args[0], ja, args[1], jb)
		}
	}
	if len(a) != len(b) {
		ts.Fatalf("%s has %d cases, %s %d", args[0], len(a), args[1], len(b))
	}
	var ra, rb any
	for _, x := range []struct {
		dir string
		v   *any
	}{{args[0], &ra}, {args[1], &rb}} {
		if err := json.Unmarshal([]byte(ts.ReadFile(x.dir+"/report.json")), x.v); err != nil {
			ts.Fatalf("%s/report.json: %v", x.dir, err)
		}
	}
	ja, _ := json.Marshal(dropTiming(ra))
	jb, _ := json.Marshal(dropTiming(rb))
	if string(ja) != string(jb) {
		ts.Fatalf("report.json differs:\n%s: %s\n%s: %s", args[0], ja, args[1], jb)
	}
}

// dropTiming removes timingFields from v at every depth, and the tables'
// latency columns (report rows holding "latency" in a column name).
func dropTiming(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if timingFields[k] || strings.Contains(k, "latency") {
				delete(v, k)
				continue
			}
			v[k] = dropTiming(x)
		}
	case []any:
		for i, x := range v {
			v[i] = dropTiming(x)
		}
	}
	return v
}

// cmdWaitRequests: waitrequests NAME N waits until fake server NAME has
// received N requests (two minutes at most), so that a script acts at a
// known point of a run, whatever the machine's load, rather than after a
// fixed time.
func cmdWaitRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: waitrequests NAME N")
	}
	srv, want := serverAndCount(ts, "waitrequests", args)
	for deadline := time.Now().Add(2 * time.Minute); srv.Requests() < want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			ts.Fatalf("waitrequests: fake server %s has had %d requests after two minutes; want %d", args[0], srv.Requests(), want)
		}
	}
}
