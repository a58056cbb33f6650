// Package lsp is a minimal Language Server Protocol client: it starts a
// server (gopls, pyright-langserver, ...) as a child process speaking
// JSON-RPC over stdio, and asks it what a code-search agent needs:
// initialize, textDocument/didOpen, textDocument/definition,
// textDocument/references, shutdown.
//
// Positions are LSP's: 0-based lines and characters counted in UTF-16 code
// units, the encoding every server supports; [Column] converts a byte
// offset in a line. Requests the server makes of the client
// (workspace/configuration, client/registerCapability, progress) are
// answered with empty results, and its notifications (diagnostics, log
// messages) are dropped.
package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Position is a place in a text document: 0-based line, and character in
// UTF-16 code units.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of a document, End exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document named by its URI.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Path returns the local file path of l's URI ("" for a URI that is not a
// file).
func (l Location) Path() string {
	u, err := url.Parse(l.URI)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// URI returns the file URI of an absolute path.
func URI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// Column returns the LSP character of byte offset off in line.
func Column(line string, off int) int {
	n := 0
	for _, r := range line[:min(off, len(line))] {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

// Client talks to one language server. Its methods are safe for concurrent
// use. Close it to shut the server down.
type Client struct {
	cmd   *exec.Cmd
	root  string
	stdin io.WriteCloser

	writeMu sync.Mutex
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response
	readErr error
	done    chan struct{} // closed when the reader stops
	stderr  tail
}

type response struct {
	result json.RawMessage
	err    error
}

// message is any JSON-RPC message: request, notification or response.
type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start starts the server command (name and arguments) in dir, the root
// of the workspace, and initializes it. env, when not nil, adds to the
// process's environment. The server is killed if ctx ends before
// initialization is over; after that, ctx has no hold on it.
func Start(ctx context.Context, dir string, env []string, command ...string) (*Client, error) {
	if len(command) == 0 {
		return nil, errors.New("lsp: no server command")
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lsp: %w", err)
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	c := &Client{cmd: cmd, root: root, pending: map[int64]chan response{}, done: make(chan struct{})}
	cmd.Stderr = &c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("lsp: start %s: %w", command[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("lsp: start %s: %w", command[0], err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lsp: start %s: %w", command[0], err)
	}
	go c.read(bufio.NewReader(stdout))

	uri := URI(root)
	params := map[string]any{
		"processId": os.Getpid(),
		"rootUri":   uri,
		"rootPath":  root,
		"workspaceFolders": []any{map[string]any{
			"uri": uri, "name": filepath.Base(root),
		}},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []string{"utf-16"}},
			"textDocument": map[string]any{
				"definition":      map[string]any{"linkSupport": false},
				"references":      map[string]any{},
				"synchronization": map[string]any{"didSave": false},
			},
			"workspace": map[string]any{"workspaceFolders": true, "configuration": true},
		},
	}
	if err := c.Call(ctx, "initialize", params, nil); err != nil {
		c.kill()
		return nil, fmt.Errorf("lsp: %s: %w", command[0], err)
	}
	if err := c.Notify("initialized", map[string]any{}); err != nil {
		c.kill()
		return nil, fmt.Errorf("lsp: %s: %w", command[0], err)
	}
	return c, nil
}

// Root returns the absolute path of the workspace.
func (c *Client) Root() string { return c.root }

// Call sends a request and decodes its result into result (nil to drop
// it).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.readErr != nil {
		err := c.readErr
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	ch := make(chan response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil && len(r.result) > 0 {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("%s: result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		// Tell the server to stop working on it; its late answer is dropped.
		c.Notify("$/cancelRequest", map[string]any{"id": id})
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// DidOpen tells the server that the client has the file at path (absolute)
// open with text.
func (c *Client) DidOpen(path, languageID, text string) error {
	return c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": URI(path), "languageId": languageID, "version": 1, "text": text,
	}})
}

// DidChange tells the server that the open file at path (absolute) now
// holds text, as version (greater than the versions sent before).
func (c *Client) DidChange(path string, version int, text string) error {
	return c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": URI(path), "version": version},
		"contentChanges": []map[string]any{{"text": text}},
	})
}

// DidClose tells the server that the file at path (absolute) is no longer
// open: it reads the file from disk again.
func (c *Client) DidClose(path string) error {
	return c.Notify("textDocument/didClose", map[string]any{
		"textDocument": map[string]any{"uri": URI(path)},
	})
}

// Definition asks where the symbol at pos in the file at path (absolute) is
// defined.
func (c *Client) Definition(ctx context.Context, path string, pos Position) ([]Location, error) {
	var raw json.RawMessage
	err := c.Call(ctx, "textDocument/definition", map[string]any{
		"textDocument": map[string]any{"uri": URI(path)}, "position": pos,
	}, &raw)
	if err != nil {
		return nil, err
	}
	return decodeLocations(raw)
}

// References asks where the symbol at pos in the file at path (absolute) is
// used; decl includes its declaration.
func (c *Client) References(ctx context.Context, path string, pos Position, decl bool) ([]Location, error) {
	var raw json.RawMessage
	err := c.Call(ctx, "textDocument/references", map[string]any{
		"textDocument": map[string]any{"uri": URI(path)}, "position": pos,
		"context": map[string]any{"includeDeclaration": decl},
	}, &raw)
	if err != nil {
		return nil, err
	}
	return decodeLocations(raw)
}

// decodeLocations reads a definition or references result: null, a
// Location, or a list of Locations or LocationLinks.
func decodeLocations(raw json.RawMessage) ([]Location, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	type either struct {
		Location
		TargetURI            string `json:"targetUri"`
		TargetSelectionRange *Range `json:"targetSelectionRange"`
	}
	var list []either
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("locations: %w", err)
		}
	} else {
		var one either
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("location: %w", err)
		}
		list = []either{one}
	}
	out := make([]Location, 0, len(list))
	for _, e := range list {
		if e.TargetURI != "" {
			l := Location{URI: e.TargetURI}
			if e.TargetSelectionRange != nil {
				l.Range = *e.TargetSelectionRange
			}
			out = append(out, l)
			continue
		}
		out = append(out, e.Location)
	}
	return out, nil
}

// Close asks the server to shut down and exit, and kills it if it has not
// within a few seconds or ctx ends first.
func (c *Client) Close(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := c.Call(sctx, "shutdown", nil, nil)
	if err == nil {
		err = c.Notify("exit", nil)
	}
	c.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case <-exited:
	case <-sctx.Done():
		c.cmd.Process.Kill()
		<-exited
	}
	if err != nil {
		return fmt.Errorf("lsp: shutdown %s: %w", filepath.Base(c.cmd.Path), err)
	}
	return nil
}

func (c *Client) kill() {
	c.stdin.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

func (c *Client) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := fmt.Fprintf(c.stdin, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return c.failure(err)
	}
	if _, err := c.stdin.Write(body); err != nil {
		return c.failure(err)
	}
	return nil
}

// failure adds the end of the server's stderr to an I/O error.
func (c *Client) failure(err error) error {
	if s := c.stderr.String(); s != "" {
		return fmt.Errorf("%w (server's stderr: %s)", err, s)
	}
	return err
}

// read dispatches the server's messages until its stdout closes.
func (c *Client) read(r *bufio.Reader) {
	err := c.readLoop(r)
	c.mu.Lock()
	c.readErr = c.failure(fmt.Errorf("server gone: %w", err))
	for id, ch := range c.pending {
		ch <- response{err: c.readErr}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

func (c *Client) readLoop(r *bufio.Reader) error {
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return fmt.Errorf("bad Content-Length %q", v)
				}
				length = n
			}
		}
		if length < 0 {
			return errors.New("message without Content-Length")
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("bad message: %w", err)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			c.answer(m)
		case m.Method != "":
			// A notification: diagnostics, logs, progress. Not needed.
		case m.ID != nil:
			id, err := strconv.ParseInt(string(*m.ID), 10, 64)
			if err != nil {
				continue // not one of ours
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			if m.Error != nil {
				ch <- response{err: fmt.Errorf("server error %d: %s", m.Error.Code, m.Error.Message)}
			} else {
				ch <- response{result: m.Result}
			}
		}
	}
}

// answer replies to a request the server made: empty configuration for
// each item asked, null for the rest (capability registration, progress
// tokens, ...), which servers take as "nothing to change".
func (c *Client) answer(m message) {
	var result any
	if m.Method == "workspace/configuration" {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(m.Params, &p)
		result = make([]any, len(p.Items))
	}
	go c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// tail keeps the last 2 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	for len(s) > 0 && !utf8.ValidString(s[:1]) {
		s = s[1:]
	}
	return s
}
