// Package mcpserver serves patchbench's tools over the Model Context
// Protocol: the patch engine's tools (apply_patch, repair, diff, convert),
// the code search tools of package codesearch and, when asked, a language
// server's definition and references; on standard input and output (a
// line transport that survives bad lines) or streamable HTTP (bearer
// token, cross-origin and session bounds). Every path goes through
// patch.Root. The command (patchbench mcp) parses flags and prints.
package mcpserver

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/patchbench/patchbench/codesearch"
)

// Language server modes of [New]: whether the definition and references
// tools are served (auto: when the server for the directory's language
// is on PATH).
const (
	LSPOff  = codesearch.LSPOff
	LSPOn   = codesearch.LSPOn
	LSPAuto = codesearch.LSPAuto
)

// HTTPOptions controls [HTTPHandler].
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry.
	Token string
	// SessionTimeout ends a session idle for that long (0: never);
	// MaxSessions bounds the live sessions: a new one closes the one idle
	// the longest.
	SessionTimeout time.Duration
	MaxSessions    int
}

// HTTPHandler serves srv over the streamable HTTP transport at /mcp:
// requests from a browser page of another origin are refused, a message
// whose id the SDK would not give back exactly is answered 400, and
// sessions are bounded (see HTTPOptions).
func HTTPHandler(srv *mcp.Server, o HTTPOptions) http.Handler {
	h := idChecked(newSessionCap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout}), srv, o.MaxSessions))
	if o.Token != "" {
		h = bearer(o.Token, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(h))
	return mux
}

// StdioTransport is the transport on standard input and output: one
// JSON-RPC message per line, a bad line answered with an error and
// skipped (see lineTransport).
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	return &lineTransport{in: in, out: out, max: maxFrameBytes}
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

// searchTools are the codesearch tools served, when the package has them.
var searchTools = []string{codesearch.ViewFile, codesearch.ViewDirectory, codesearch.GrepSearch, codesearch.FindSymbol}

// New serves the engine's tools and the code search tools on dir, an
// absolute directory, and with lspMode (LSPOff, LSPOn, LSPAuto) the
// language server's definition and references tools. Each call ends after
// callTimeout. stop ends the language server.
func New(ctx context.Context, dir, lspMode string, callTimeout time.Duration) (srv *mcp.Server, stop func(), err error) {
	tools := EngineTools(dir)
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
		tools = append(tools, Tool{Name: name, Title: searchTitles[name],
			Description: ts[0].Description + " Reads the working tree under the server's root; writes nothing. " + readRules,
			Schema:      ts[0].Parameters, ReadOnly: true, Idempotent: true, Run: search(dir, name)})
	}
	lspTools, stop, err := mcpLSPTools(ctx, dir, lspMode)
	if err != nil {
		return nil, nil, err
	}
	tools = append(tools, lspTools...)
	srv = mcp.NewServer(&mcp.Implementation{Name: "patchbench", Title: "patchbench patch engine and code search", Version: "1"}, &mcp.ServerOptions{
		Instructions: "patchbench edits and searches the files under one directory. Read with view_directory, grep_search and view_file; " +
			"edit with apply_patch (any diff format or search/replace blocks; tolerant of malformed hunks; refuses an ambiguous place " +
			"and lists the candidate lines, writing nothing). " + PathRules,
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
func callTool(ctx context.Context, t Tool, args json.RawMessage, slots chan struct{}) Answer {
	if err := CheckArgs(args, t.Schema); err != nil {
		return TextAnswer(err.Error(), true)
	}
	if !t.ReadOnly {
		return t.Run(ctx, args)
	}
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return TextAnswer(fmt.Sprintf("%s: waited for the calls before it until the call's deadline (%v); the server runs %d at a time", t.Name, context.Cause(ctx), cap(slots)), true)
	}
	done := make(chan Answer, 1)
	go func() {
		defer func() { <-slots }()
		done <- t.Run(ctx, args)
	}()
	select {
	case ans := <-done:
		return ans
	case <-ctx.Done():
		return TextAnswer(fmt.Sprintf("%s: no answer within the call's deadline (%v)", t.Name, context.Cause(ctx)), true)
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
func mcpLSPTools(ctx context.Context, dir, lspMode string) ([]Tool, func(), error) {
	nop := func() {}
	if lspMode == LSPOff {
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
		if lspMode == LSPOn {
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
	var tools []Tool
	for _, d := range defs {
		tools = append(tools, Tool{Name: d.Name, Title: searchTitles[d.Name], Schema: d.Parameters,
			Description: d.Description + " Uses " + server.Command[0] + " on the working tree under the server's root; writes nothing. " + readRules,
			ReadOnly:    true, Idempotent: true,
			Run: func(ctx context.Context, raw json.RawMessage) Answer {
				if _, err := snap.StartLSP(ctx, true); err != nil {
					return TextAnswer(err.Error(), true)
				}
				out, err := snap.Call(ctx, d.Name, raw)
				if err != nil {
					return TextAnswer(err.Error(), true)
				}
				return TextAnswer(out, false)
			}})
	}
	return tools, func() { snap.Close() }, nil
}

// search runs a codesearch tool on the directory as it is now: a snapshot
// per call, since apply_patch changes the files between calls.
func search(dir, name string) func(ctx context.Context, raw json.RawMessage) Answer {
	return func(ctx context.Context, raw json.RawMessage) Answer {
		snap, err := codesearch.OpenDir(dir)
		if err != nil {
			return TextAnswer(err.Error(), true)
		}
		defer snap.Close()
		out, err := snap.Call(ctx, name, raw)
		if err != nil {
			return TextAnswer(err.Error(), true)
		}
		return TextAnswer(out, false)
	}
}
