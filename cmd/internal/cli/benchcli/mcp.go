package benchcli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/mcpserver"
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
	f.StringVar(&o.lsp, "lsp-tools", mcpserver.LSPAuto, "serve a language server's definition and references tools: true, false or auto (when the server for DIR's language, gopls or pyright-langserver, is on PATH)")
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
	case mcpserver.LSPOn, mcpserver.LSPOff, mcpserver.LSPAuto:
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
	srv, stop, err := mcpserver.New(ctx, dir, o.lsp, o.callTimeout)
	if err != nil {
		return cli.Usage(err)
	}
	defer stop()
	if o.http == "" {
		if err := srv.Run(ctx, mcpserver.StdioTransport(sio.In, sio.Out)); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
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
	mux := mcpserver.HTTPHandler(srv, mcpserver.HTTPOptions{Token: token, SessionTimeout: o.sessionTimeout, MaxSessions: o.maxSessions})
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
