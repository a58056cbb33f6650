package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrameBytes bounds one message of the stdio transport, as the SDK's
// own stdio transport does (mcp.DefaultMaxLineLength).
const maxFrameBytes = mcp.DefaultMaxLineLength

// lineTransport is the MCP stdio transport (one JSON-RPC message per line)
// that survives a bad line. The SDK's transport ends the session at the
// first line it cannot decode, and with it every tool of the agent; here a
// line that is not JSON, nests deeper than the JSON decoder allows, or is
// longer than maxFrameBytes is answered with a JSON-RPC error (-32700
// parse error, or -32600 for JSON that is no JSON-RPC message) and the
// session goes on with the next line. Batches (JSON arrays), which the
// protocol dropped in 2025-06-18, are refused the same way.
type lineTransport struct {
	in  io.Reader
	out io.Writer
	max int
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.out, msgs: make(chan jsonrpc.Message), done: make(chan struct{}), readErr: make(chan error, 1), flight: map[string]int{}}
	c.flightCond = sync.NewCond(&c.flightMu)
	go c.readLoop(bufio.NewReaderSize(t.in, 64<<10), t.max)
	return c, nil
}

// Requests in flight (read, not yet answered) on one stdio session: past
// either bound the transport reads no more until an answer is written, so
// that a client sending calls without waiting for their answers cannot
// make the server hold all of them (each up to maxFrameBytes).
const (
	maxInFlight      = 64
	maxInFlightBytes = 64 << 20
)

type lineConn struct {
	// flight counts the requests read and not yet answered, by id.
	flightMu    sync.Mutex
	flightCond  *sync.Cond
	flight      map[string]int
	flightBytes int
	closed      bool

	wmu  sync.Mutex
	out  io.Writer
	msgs chan jsonrpc.Message
	// readErr holds the error that ended the input (io.EOF at its end).
	readErr   chan error
	done      chan struct{}
	closeOnce sync.Once
}

// readLoop reads lines until the input ends or the connection closes.
func (c *lineConn) readLoop(r *bufio.Reader, max int) {
	for {
		line, tooLong, err := readLine(r, max)
		if tooLong {
			c.refuse(nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: message longer than %d bytes; skipped", max))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if m, ok := c.decode(msg); ok {
				if !c.takeOff(m, len(msg)) {
					return
				}
				select {
				case c.msgs <- m:
				case <-c.done:
					return
				}
			}
		}
		if err != nil {
			c.readErr <- err
			close(c.msgs)
			return
		}
	}
}

// readLine reads up to the next newline and returns the line without its
// \n or \r\n, keeping at most max bytes: a longer line is read to its end
// and dropped (tooLong). err is the reader's error (io.EOF after the last
// line).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // +2: room for the \r\n
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > max {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

// decode reads one message, or answers why it cannot.
func (c *lineConn) decode(data []byte) (jsonrpc.Message, bool) {
	if !json.Valid(data) {
		// json.Valid also refuses nesting deeper than encoding/json's
		// limit; say why the decoder would have refused it.
		var v any
		err := json.Unmarshal(data, &v)
		msg := "parse error: not JSON"
		if err != nil {
			msg = "parse error: " + err.Error()
		}
		c.refuse(nil, jsonrpc.CodeParseError, msg)
		return nil, false
	}
	if data[0] == '[' {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported")
		return nil, false
	}
	if err := checkID(data); err != nil {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		// Answer with the request's id when it has a usable one.
		var probe struct {
			ID any `json:"id"`
		}
		json.Unmarshal(data, &probe)
		id, _ := jsonrpc.MakeID(probe.ID)
		c.refuse(&id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	return m, true
}

// refuse writes an error response; id nil or invalid is written as null,
// as JSON-RPC wants when the request's id could not be read.
func (c *lineConn) refuse(id *jsonrpc.ID, code int64, msg string) {
	var rawID any
	if id != nil && id.IsValid() {
		rawID = id.Raw()
	}
	b, err := json.Marshal(struct {
		Version string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Version: "2.0", ID: rawID, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		return
	}
	c.write(append(b, '\n'))
}

func (c *lineConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(b)
	return err
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	case m, ok := <-c.msgs:
		if !ok {
			err := <-c.readErr
			c.readErr <- err // for a later Read
			c.landAll(ctx)
			return nil, err
		}
		return m, nil
	}
}

// landAll waits until every request read has been answered, or the
// connection closes, or ctx ends. The end of the input is reported only
// then: the SDK cancels the requests in flight and refuses those queued
// once Read fails, so a client that writes its requests and closes its
// end at once (printf ... | patchbench mcp) lost answers. Each tool call
// has a deadline (--call-timeout), so the wait is bounded.
func (c *lineConn) landAll(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		c.flightMu.Lock()
		c.flightCond.Broadcast()
		c.flightMu.Unlock()
	})
	defer stop()
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	for !c.closed && len(c.flight) > 0 && ctx.Err() == nil {
		c.flightCond.Wait()
	}
}

// flightKey names a request id.
func flightKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// takeOff waits until a request m of n bytes may be handed on within
// maxInFlight and maxInFlightBytes and counts it; false when the
// connection closed meanwhile. Notifications and responses pass.
func (c *lineConn) takeOff(m jsonrpc.Message, n int) bool {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return true
	}
	key := flightKey(req.ID)
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	if _, dup := c.flight[key]; dup {
		return true // the SDK refuses an id in use; nothing to count
	}
	for !c.closed && len(c.flight) > 0 && (len(c.flight) >= maxInFlight || c.flightBytes+n > maxInFlightBytes) {
		c.flightCond.Wait()
	}
	if c.closed {
		return false
	}
	c.flight[key] = n
	c.flightBytes += n
	return true
}

// land uncounts the request an answer is for.
func (c *lineConn) land(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return
	}
	key := flightKey(resp.ID)
	c.flightMu.Lock()
	if n, ok := c.flight[key]; ok {
		delete(c.flight, key)
		c.flightBytes -= n
		c.flightCond.Broadcast()
	}
	c.flightMu.Unlock()
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	err = c.write(append(b, '\n'))
	c.land(msg)
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.flightMu.Lock()
		c.closed = true
		c.flightCond.Broadcast()
		c.flightMu.Unlock()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }

// maxExactID is the largest integer id given back exactly: the SDK decodes
// ids as float64 numbers.
const maxExactID = 1 << 53

// checkID refuses a message whose id could not be given back as it came:
// null (MCP: "the ID MUST NOT be null"; the SDK took it for a
// notification and never answered), a number that is not an integer (the
// SDK truncated 1.5 to 1, and answered as if to the request with id 1),
// or an integer past 2^53 in size (rounded, or turned into the smallest
// int64). Strings and the other integers pass; so does a message without
// an id (a notification) and one whose id is of another type, which the
// SDK refuses itself. Keys are matched exactly, as the SDK's decoder does,
// and every "id" key of the object is checked, whichever one a decoder
// keeps.
func checkID(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil // not an object: for the SDK to refuse
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil
		}
		if key, _ := tok.(string); key == "id" {
			if err := checkIDValue(val); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkIDValue(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return errors.New("the id is null; want a string or an integer")
	case len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')):
		return nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return fmt.Errorf("the id %s is not an integer of at most 2^53 in size; want a string or such an integer", Clip(string(raw), 100))
	}
	return nil
}
