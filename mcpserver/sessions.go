package mcpserver

import (
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionHeader is the streamable HTTP transport's session id header.
const sessionHeader = "Mcp-Session-Id"

// sessionCap bounds the live sessions of a streamable HTTP handler. Every
// POST without a session id may open one (the SDK makes a session for it),
// so each takes a slot first: when all max slots are taken, the session
// idle the longest (no request of it in progress, the oldest last request)
// is closed, and its id is then answered 404 by the SDK, which is what the
// transport's specification says a client gets for a session the server
// ended ("The server MAY terminate the session at any time, after which it
// MUST respond to requests containing that session ID with HTTP 404 Not
// Found"), and after which the client starts a new one. Only when every
// session has a request in progress is a new one refused, with 503 and
// Retry-After: a session that is working is never cut off.
type sessionCap struct {
	next http.Handler
	srv  *mcp.Server
	max  int

	mu       sync.Mutex
	sessions map[string]*capped // the live sessions this handler made
	pending  int                // slots taken by posts not answered yet
	clock    uint64             // orders requests: last use, without a wall clock
}

type capped struct {
	busy int    // requests in progress
	last uint64 // clock at its last request's start or end
}

func newSessionCap(next http.Handler, srv *mcp.Server, max int) *sessionCap {
	return &sessionCap{next: next, srv: srv, max: max, sessions: map[string]*capped{}}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(sessionHeader); id != "" {
		c.mu.Lock()
		s := c.sessions[id]
		if s != nil {
			c.clock++
			s.busy, s.last = s.busy+1, c.clock
		}
		c.mu.Unlock()
		c.next.ServeHTTP(w, r)
		if s != nil {
			c.mu.Lock()
			c.clock++
			s.busy, s.last = s.busy-1, c.clock
			c.mu.Unlock()
		}
		return
	}
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r) // the SDK refuses it: no session id
		return
	}
	if !c.reserve() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many sessions, each with a request in progress: try again later", http.StatusServiceUnavailable)
		return
	}
	c.next.ServeHTTP(w, r)
	id := w.Header().Get(sessionHeader)
	c.mu.Lock()
	c.pending--
	if id != "" && c.sessions[id] == nil {
		c.clock++
		c.sessions[id] = &capped{last: c.clock}
	}
	c.mu.Unlock()
}

// reserve takes a slot for a session a post may open, closing the session
// idle the longest if every slot is taken; false if none can be freed.
func (c *sessionCap) reserve() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sessions)+c.pending >= c.max {
		c.forgetClosed()
	}
	for len(c.sessions)+c.pending >= c.max {
		victim := ""
		var oldest uint64
		for id, s := range c.sessions {
			if s.busy == 0 && (victim == "" || s.last < oldest) {
				victim, oldest = id, s.last
			}
		}
		if victim == "" {
			return false
		}
		delete(c.sessions, victim)
		c.close(victim)
	}
	c.pending++
	return true
}

// forgetClosed drops the sessions that ended by themselves (timed out,
// deleted by their client, failed to initialize).
func (c *sessionCap) forgetClosed() {
	live := map[string]bool{}
	for ss := range c.srv.Sessions() {
		live[ss.ID()] = true
	}
	for id, s := range c.sessions {
		if !live[id] && s.busy == 0 {
			delete(c.sessions, id)
		}
	}
}

// close ends the session id; the SDK then answers its id with 404.
func (c *sessionCap) close(id string) {
	for ss := range c.srv.Sessions() {
		if ss.ID() == id {
			ss.Close()
			return
		}
	}
}

// live counts the server's sessions, for tests.
func (c *sessionCap) live() int {
	n := 0
	for range c.srv.Sessions() {
		n++
	}
	return n
}
