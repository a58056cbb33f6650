package benchcli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/codesearch"
)

type mcpOptions struct {
	root           string
	http           string
	allowRemote    bool
	lsp            string
	tokenFile      string
	callTimeout    time.Duration
	sessionTimeout time.Duration
	maxSessions    int
}

func newMCPCommand(sio cli.Stdio) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp [--root DIR] [--http ADDR [--token-file FILE]]",
		Short: cli.FullShort("mcp"),
		Long: `Serve patchbench's tools over the Model Context Protocol, on standard input
and output (the default) or, with --http, over the streamable HTTP transport
at http://ADDR/mcp. ADDR without a host, or with an empty one, listens on
127.0.0.1; a host that is not a loopback address needs --allow-remote, and
then every request needs the bearer token of --token-file, or, without
that flag, one generated at start and printed on standard error. Over
HTTP, requests from a browser page of another origin and requests to
loopback naming another host (DNS rebinding) are refused; idle sessions
end after --session-timeout, and past --max-sessions a new session closes
the one idle the longest (its id is then answered 404). See docs/mcp.md.

Tools: apply_patch (tolerant by default, strict and dry_run options; the
answer is the per-hunk report of apply --json), repair, diff, convert, and
the code search tools view_file, view_directory, grep_search and
find_symbol, and (--lsp-tools) definition and references from gopls or
pyright-langserver, started on the first call. Every path stays inside DIR: absolute paths,
"..", symbolic links, .git in any letter case at any depth, and files that
are not regular files are refused, for reads as for writes. Each call has
--call-timeout; an apply_patch that runs out of it writes nothing.

Register with an MCP client:
  {"mcpServers": {"patchbench": {"command": "patchbench", "args": ["mcp", "--root", "."]}}}`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", ".", "serve the files under `DIR`")
	f.StringVar(&o.http, "http", "", "serve streamable HTTP on `ADDR` (host:port; the host defaults to 127.0.0.1) instead of stdio")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "let --http listen on an address that is not loopback")
	f.StringVar(&o.tokenFile, "token-file", "", "with --http, require the bearer token in `FILE` (its first line) on every request")
	f.DurationVar(&o.callTimeout, "call-timeout", 2*time.Minute, "give up a tool call after `DURATION`")
	f.DurationVar(&o.sessionTimeout, "session-timeout", 30*time.Minute, "with --http, end a session idle for `DURATION` (0: never)")
	f.IntVar(&o.maxSessions, "max-sessions", 256, "with --http, keep at most `N` sessions: a new one closes the one idle the longest")
	f.StringVar(&o.lsp, "lsp-tools", loc.LSPAuto, "serve a language server's definition and references tools: true, false or auto (when the server for DIR's language, gopls or pyright-langserver, is on PATH)")
	return cmd
}

func runMCP(ctx context.Context, o mcpOptions, sio cli.Stdio) error {
	dir, err := filepath.Abs(o.root)
	if err != nil {
		return cli.Usage(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return cli.Usage(fmt.Errorf("--root %s: not a directory", o.root))
	}
	switch o.lsp {
	case loc.LSPOn, loc.LSPOff, loc.LSPAuto:
	default:
		return cli.Usage(fmt.Errorf("--lsp-tools %q: want true, false or auto", o.lsp))
	}
	if o.maxSessions < 1 {
		return cli.Usage(fmt.Errorf("--max-sessions %d: want at least 1", o.maxSessions))
	}
	if o.callTimeout <= 0 {
		return cli.Usage(fmt.Errorf("--call-timeout %s: want a positive duration", o.callTimeout))
	}
	if o.http == "" && o.tokenFile != "" {
		return cli.Usage(errors.New("--token-file needs --http"))
	}
	srv, stop, err := newMCPServer(ctx, dir, o.lsp, o.callTimeout)
	if err != nil {
		return cli.Usage(err)
	}
	defer stop()
	if o.http == "" {
		if err := srv.Run(ctx, &lineTransport{in: sio.In, out: sio.Out, max: maxFrameBytes}); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return cli.Failed(fmt.Errorf("mcp: %w", err))
		}
		return nil
	}
	addr, remote, err := mcpAddr(o.http, o.allowRemote)
	if err != nil {
		return cli.Usage(err)
	}
	token, generated, err := mcpToken(o.tokenFile, remote)
	if err != nil {
		return cli.Usage(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.Usage(fmt.Errorf("mcp: %w", err))
	}
	h := idChecked(newSessionCap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: o.sessionTimeout}), srv, o.maxSessions))
	if token != "" {
		h = bearer(token, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(h))
	// Request contexts derive from base: cancelling it ends the open
	// event streams, which Shutdown would otherwise wait for.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return base }}
	// Tests and scripts read the address from this line (the port may be 0).
	fmt.Fprintf(sio.Err, "%s mcp: serving %s on http://%s/mcp\n", cli.ProgramName, dir, ln.Addr())
	if generated {
		fmt.Fprintf(sio.Err, "%s mcp: bearer token (send \"Authorization: Bearer TOKEN\"): %s\n", cli.ProgramName, token)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return cli.Failed(fmt.Errorf("mcp: %w", err))
	case <-ctx.Done():
		cancelBase()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		return nil
	}
}

// mcpToken returns the bearer token the HTTP server requires: the first
// line of file when given, else, off loopback, a new random one
// (generated). On loopback without a file, none.
func mcpToken(file string, remote bool) (token string, generated bool, err error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", false, fmt.Errorf("--token-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		token = strings.TrimSpace(line)
		if len(token) < 16 {
			return "", false, fmt.Errorf("--token-file %s: the token is %d characters; want at least 16", file, len(token))
		}
		return token, false, nil
	}
	if !remote {
		return "", false, nil
	}
	return rand.Text(), true, nil
}

// bearer refuses requests without "Authorization: Bearer token".
func bearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="patchbench mcp"`)
			http.Error(w, "a bearer token is required (the one given with --token-file or printed at start)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// idChecked refuses a POST whose message (or any message of a batch) has
// an id the SDK would not give back exactly (see checkID), with 400 and a
// JSON-RPC error, as the stdio transport does.
func idChecked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
		if err != nil {
			http.Error(w, fmt.Sprintf("reading the request: %v", err), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		msgs := []json.RawMessage{body}
		if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
			json.Unmarshal(b, &msgs) // not JSON: for the SDK to refuse
		}
		for _, m := range msgs {
			if err := checkID(m); err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
					"error": map[string]any{"code": jsonrpc.CodeInvalidRequest, "message": "invalid request: " + err.Error()}})
				w.Write(b)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// mcpAddr puts a missing host on loopback and refuses other hosts unless
// allowed; remote says the host is not loopback.
func mcpAddr(addr string, allowRemote bool) (_ string, remote bool, _ error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("--http %s: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	remote = host != "localhost" && (ip == nil || !ip.IsLoopback())
	if remote && !allowRemote {
		return "", false, fmt.Errorf("--http %s: not a loopback address; give --allow-remote to serve it (with a bearer token)", addr)
	}
	return net.JoinHostPort(host, port), remote, nil
}

// searchTools are the codesearch tools served, when the package has them.
var searchTools = []string{codesearch.ViewFile, codesearch.ViewDirectory, codesearch.GrepSearch, codesearch.FindSymbol}

// newMCPServer serves the engine's tools and the code search tools on dir,
// an absolute directory, and with lspMode (loc.LSPOff, LSPOn, LSPAuto) the
// language server's definition and references tools. Each call ends after
// callTimeout. stop ends the language server.
func newMCPServer(ctx context.Context, dir, lspMode string, callTimeout time.Duration) (srv *mcp.Server, stop func(), err error) {
	tools := cli.EngineTools(dir)
	snap, err := codesearch.OpenDir(dir)
	if err != nil {
		return nil, nil, err
	}
	defer snap.Close()
	have := codesearch.ToolNames()
	for _, name := range searchTools {
		if !slices.Contains(have, name) {
			continue
		}
		ts, err := snap.Tools(name)
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, cli.AgentTool{Name: name, Title: searchTitles[name],
			Description: ts[0].Description + " Reads the working tree under the server's root; writes nothing. " + readRules,
			Schema:      ts[0].Parameters, ReadOnly: true, Idempotent: true, Run: search(dir, name)})
	}
	lspTools, stop, err := mcpLSPTools(ctx, dir, lspMode)
	if err != nil {
		return nil, nil, err
	}
	tools = append(tools, lspTools...)
	srv = mcp.NewServer(&mcp.Implementation{Name: cli.ProgramName, Title: "patchbench patch engine and code search", Version: "1"}, &mcp.ServerOptions{
		Instructions: "patchbench edits and searches the files under one directory. Read with view_directory, grep_search and view_file; " +
			"edit with apply_patch (any diff format or search/replace blocks; tolerant of malformed hunks; refuses an ambiguous place " +
			"and lists the candidate lines, writing nothing). " + cli.PathRules,
	})
	closed := false
	slots := make(chan struct{}, maxToolRuns())
	for _, t := range tools {
		tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.Schema,
			Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, IdempotentHint: t.Idempotent,
				DestructiveHint: &t.Destructive, OpenWorldHint: &closed}}
		if t.OutputSchema != nil {
			tool.OutputSchema = t.OutputSchema
		}
		srv.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, cancel := context.WithTimeoutCause(ctx, callTimeout, fmt.Errorf("--call-timeout %s", callTimeout))
			defer cancel()
			ans := callTool(ctx, t, req.Params.Arguments, slots)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ans.Text}}, IsError: ans.Failed}
			if ans.Structured != nil {
				res.StructuredContent = ans.Structured
			}
			return res, nil
		})
	}
	return srv, stop, nil
}

// searchTitles are the code search tools' titles.
var searchTitles = map[string]string{
	codesearch.ViewFile:      "View lines of a file",
	codesearch.ViewDirectory: "List a directory",
	codesearch.GrepSearch:    "Search file contents",
	codesearch.FindSymbol:    "Find a symbol's definition",
	codesearch.Definition:    "Go to definition",
	codesearch.References:    "Find references",
}

// readRules says, for read tools' descriptions, which paths are read.
const readRules = "Paths are relative to the root. Not read: absolute paths, paths leaving the root with '..', anything in a " +
	".git directory (any letter case, any depth), symbolic links (not followed) and files that are not regular files."

// callTool checks a call's argument names strictly and runs it. The
// tools that change files watch the deadline themselves (apply_patch
// must not answer "timed out" while its writes go on); for the others
// the answer is given up at the deadline, and a read that never returns
// is left behind.
//
// The read tools run at most cap(slots) at a time: a client sending
// a thousand calls at once (each reading files of up to
// codesearch.MaxFileBytes) would hold memory and descriptors for all of
// them. A run keeps its slot until it returns, past its call's deadline,
// so that runs left behind are bounded too; a call waiting for a slot
// gives up at its deadline. (apply_patch runs one at a time anyway.)
func callTool(ctx context.Context, t cli.AgentTool, args json.RawMessage, slots chan struct{}) cli.ToolAnswer {
	if err := cli.CheckArgs(args, t.Schema); err != nil {
		return cli.TextAnswer(err.Error(), true)
	}
	if !t.ReadOnly {
		return t.Run(ctx, args)
	}
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return cli.TextAnswer(fmt.Sprintf("%s: waited for the calls before it until the call's deadline (%v); the server runs %d at a time", t.Name, context.Cause(ctx), cap(slots)), true)
	}
	done := make(chan cli.ToolAnswer, 1)
	go func() {
		defer func() { <-slots }()
		done <- t.Run(ctx, args)
	}()
	select {
	case ans := <-done:
		return ans
	case <-ctx.Done():
		return cli.TextAnswer(fmt.Sprintf("%s: no answer within the call's deadline (%v)", t.Name, context.Cause(ctx)), true)
	}
}

// maxToolRuns is how many read tool calls run at once: two per processor,
// at least four.
func maxToolRuns() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// mcpLSPTools returns the definition and references tools when lspMode
// asks for them and the language server of dir's language is installed
// (LSPOn: or an error). The server starts on the first call, not with the
// MCP server, and reads the files as they are then; files it has open are
// sent again when they changed (see codesearch).
func mcpLSPTools(ctx context.Context, dir, lspMode string) ([]cli.AgentTool, func(), error) {
	nop := func() {}
	if lspMode == loc.LSPOff {
		return nil, nop, nil
	}
	snap, err := codesearch.OpenDir(dir)
	if err != nil {
		return nil, nil, err
	}
	server, ok, err := snap.Language(ctx)
	if err == nil && ok {
		_, err = exec.LookPath(server.Command[0])
	}
	if err != nil || !ok {
		snap.Close()
		if lspMode == loc.LSPOn {
			if err == nil {
				err = fmt.Errorf("no language server knows the files of %s", dir)
			}
			return nil, nil, fmt.Errorf("--lsp-tools true: %w", err)
		}
		return nil, nop, nil
	}
	defs, err := snap.Tools(codesearch.Definition, codesearch.References)
	if err != nil {
		snap.Close()
		return nil, nil, err
	}
	var tools []cli.AgentTool
	for _, d := range defs {
		tools = append(tools, cli.AgentTool{Name: d.Name, Title: searchTitles[d.Name], Schema: d.Parameters,
			Description: d.Description + " Uses " + server.Command[0] + " on the working tree under the server's root; writes nothing. " + readRules,
			ReadOnly:    true, Idempotent: true,
			Run: func(ctx context.Context, raw json.RawMessage) cli.ToolAnswer {
				if _, err := snap.StartLSP(ctx, true); err != nil {
					return cli.TextAnswer(err.Error(), true)
				}
				out, err := snap.Call(ctx, d.Name, raw)
				if err != nil {
					return cli.TextAnswer(err.Error(), true)
				}
				return cli.TextAnswer(out, false)
			}})
	}
	return tools, func() { snap.Close() }, nil
}

// search runs a codesearch tool on the directory as it is now: a snapshot
// per call, since apply_patch changes the files between calls.
func search(dir, name string) func(ctx context.Context, raw json.RawMessage) cli.ToolAnswer {
	return func(ctx context.Context, raw json.RawMessage) cli.ToolAnswer {
		snap, err := codesearch.OpenDir(dir)
		if err != nil {
			return cli.TextAnswer(err.Error(), true)
		}
		defer snap.Close()
		out, err := snap.Call(ctx, name, raw)
		if err != nil {
			return cli.TextAnswer(err.Error(), true)
		}
		return cli.TextAnswer(out, false)
	}
}
