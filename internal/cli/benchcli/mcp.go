package benchcli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/codesearch"
	"github.com/patchbench/patchbench/internal/cli"
)

type mcpOptions struct {
	root        string
	http        string
	allowRemote bool
	lsp         string
}

func newMCPCommand(sio cli.Stdio) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp [--root DIR] [--http ADDR]",
		Short: "Serve the patch engine and code search to agents over the Model Context Protocol",
		Long: `Serve patchbench's tools over the Model Context Protocol, on standard input
and output (the default) or, with --http, over the streamable HTTP transport
at http://ADDR/mcp. ADDR without a host, or with an empty one, listens on
127.0.0.1; a host that is not a loopback address needs --allow-remote, as
anyone who reaches the server can write files under DIR.

Tools: apply_patch (tolerant by default, strict and dry_run options; the
answer is the per-hunk report of apply --json), repair, diff, convert, and
the code search tools view_file, view_directory, grep_search and
find_symbol, and (--lsp-tools) definition and references from gopls or
pyright-langserver, started on the first call. Every path stays inside DIR: absolute paths,
"..", symbolic links and .git are refused, for reads as for writes.

Register with an MCP client:
  {"mcpServers": {"patchbench": {"command": "patchbench", "args": ["mcp", "--root", "."]}}}`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", ".", "serve the files under `DIR`")
	f.StringVar(&o.http, "http", "", "serve streamable HTTP on `ADDR` (host:port; the host defaults to 127.0.0.1) instead of stdio")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "let --http listen on an address that is not loopback")
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
	srv, stop, err := newMCPServer(ctx, dir, o.lsp)
	if err != nil {
		return cli.Usage(err)
	}
	defer stop()
	if o.http == "" {
		if err := srv.Run(ctx, &mcp.IOTransport{Reader: readCloser{sio.In}, Writer: writeCloser{sio.Out}}); err != nil && ctx.Err() == nil {
			return cli.Failed(fmt.Errorf("mcp: %w", err))
		}
		return nil
	}
	addr, err := mcpAddr(o.http, o.allowRemote)
	if err != nil {
		return cli.Usage(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.Usage(fmt.Errorf("mcp: %w", err))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// Tests and scripts read the address from this line (the port may be 0).
	fmt.Fprintf(sio.Err, "%s mcp: serving %s on http://%s/mcp\n", cli.ProgramName, dir, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return cli.Failed(fmt.Errorf("mcp: %w", err))
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	}
}

// mcpAddr puts a missing host on loopback and refuses other hosts unless
// allowed.
func mcpAddr(addr string, allowRemote bool) (string, error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--http %s: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !allowRemote {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "", fmt.Errorf("--http %s: not a loopback address; give --allow-remote to serve it", addr)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// readCloser and writeCloser let Stdio serve as the stdio transport
// without closing the process's own files.
type readCloser struct {
	r interface{ Read([]byte) (int, error) }
}

func (r readCloser) Read(p []byte) (int, error) { return r.r.Read(p) }
func (readCloser) Close() error                 { return nil }

type writeCloser struct {
	w interface{ Write([]byte) (int, error) }
}

func (w writeCloser) Write(p []byte) (int, error) { return w.w.Write(p) }
func (writeCloser) Close() error                  { return nil }

// searchTools are the codesearch tools served, when the package has them.
var searchTools = []string{codesearch.ViewFile, codesearch.ViewDirectory, codesearch.GrepSearch, codesearch.FindSymbol}

// newMCPServer serves the engine's tools and the code search tools on dir,
// an absolute directory, and with lspMode (loc.LSPOff, LSPOn, LSPAuto) the
// language server's definition and references tools. stop ends the
// language server.
func newMCPServer(ctx context.Context, dir, lspMode string) (srv *mcp.Server, stop func(), err error) {
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
		tools = append(tools, cli.AgentTool{Name: name, Description: ts[0].Description + " Reads the working tree under the server's root.",
			Schema: ts[0].Parameters, Run: search(dir, name)})
	}
	lspTools, stop, err := mcpLSPTools(ctx, dir, lspMode)
	if err != nil {
		return nil, nil, err
	}
	tools = append(tools, lspTools...)
	srv = mcp.NewServer(&mcp.Implementation{Name: cli.ProgramName, Version: "1"}, &mcp.ServerOptions{
		Instructions: "patchbench edits and searches the files under one directory. Read with view_directory, grep_search and view_file; " +
			"edit with apply_patch (any diff format or search/replace blocks; tolerant of malformed hunks; refuses an ambiguous place " +
			"and lists the candidate lines, writing nothing). Paths are relative to the root.",
	})
	for _, t := range tools {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text, failed := t.Run(ctx, req.Params.Arguments)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: failed}, nil
			})
	}
	return srv, stop, nil
}

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
		tools = append(tools, cli.AgentTool{Name: d.Name, Schema: d.Parameters,
			Description: d.Description + " Uses " + server.Command[0] + " on the working tree under the server's root.",
			Run: func(ctx context.Context, raw json.RawMessage) (string, bool) {
				if _, err := snap.StartLSP(ctx, true); err != nil {
					return err.Error(), true
				}
				out, err := snap.Call(ctx, d.Name, raw)
				if err != nil {
					return err.Error(), true
				}
				return out, false
			}})
	}
	return tools, func() { snap.Close() }, nil
}

// search runs a codesearch tool on the directory as it is now: a snapshot
// per call, since apply_patch changes the files between calls.
func search(dir, name string) func(ctx context.Context, raw json.RawMessage) (string, bool) {
	return func(ctx context.Context, raw json.RawMessage) (string, bool) {
		snap, err := codesearch.OpenDir(dir)
		if err != nil {
			return err.Error(), true
		}
		defer snap.Close()
		out, err := snap.Call(ctx, name, raw)
		if err != nil {
			return err.Error(), true
		}
		return out, false
	}
}
