package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// capServer serves the MCP tools over HTTP on loopback with at most max
// sessions.
func capServer(t *testing.T, max int) (*httptest.Server, *sessionCap) {
	t.Helper()
	srv, stop, err := New(context.Background(), t.TempDir(), "false", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	c := newSessionCap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: time.Hour}), srv, max)
	hs := httptest.NewServer(c)
	t.Cleanup(hs.Close)
	return hs, c
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends body (with session id when not empty) and returns the status,
// the session id of the answer and the body.
func post(t *testing.T, url, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(sessionHeader), string(b)
}

const pingBody = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

// TestSessionCap posts 25 times the cap of initializes, in turn and 8 at a
// time: the live sessions never outnumber the cap; the session idle the
// longest is the one closed, and its id is then answered 404 (the
// transport's answer for a session the server ended), while a session in
// use keeps working; when every session has a request in progress a new
// one is refused with 503.
func TestSessionCap(t *testing.T) {
	const max = 8
	hs, c := capServer(t, max)
	check := func() {
		if n := c.live(); n > max {
			t.Errorf("%d live sessions, cap %d", n, max)
		}
	}

	// In turn: the first session is kept in use, the second is not.
	_, keep, _ := post(t, hs.URL, "", initBody)
	_, idle, _ := post(t, hs.URL, "", initBody)
	if keep == "" || idle == "" {
		t.Fatal("initialize gave no session id")
	}
	for i := range 100 {
		if i%(max/2) == 0 {
			if st, _, body := post(t, hs.URL, keep, pingBody); st != http.StatusOK {
				t.Fatalf("ping of a session in use: %d %s", st, body)
			}
		}
		if st, id, _ := post(t, hs.URL, "", initBody); st != http.StatusOK || id == "" {
			t.Fatalf("initialize %d: status %d, session %q", i, st, id)
		}
		check()
	}
	if n := c.live(); n != max {
		t.Errorf("%d live sessions after 102 initializes, want the cap, %d", n, max)
	}
	if st, _, _ := post(t, hs.URL, idle, pingBody); st != http.StatusNotFound {
		t.Errorf("the session idle the longest: status %d, want 404", st)
	}
	if st, _, _ := post(t, hs.URL, keep, pingBody); st != http.StatusOK {
		t.Errorf("the session in use: status %d, want 200", st)
	}

	// 8 at a time, while the count is watched.
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
				check()
			}
		}
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 12 {
				if st, _, body := post(t, hs.URL, "", initBody); st != http.StatusOK {
					t.Errorf("initialize: %d %s", st, body)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watched
	check()
}

// TestSessionCapAllBusy: with every session holding an open event stream
// (a request in progress), a new session is refused with 503 and
// Retry-After, and no working session is closed.
func TestSessionCapAllBusy(t *testing.T) {
	const max = 2
	hs, c := capServer(t, max)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	for range max {
		_, id, _ := post(t, hs.URL, "", initBody)
		post(t, hs.URL, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(sessionHeader, id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("event stream: %v %v", resp, err)
		}
		defer resp.Body.Close()
		ids = append(ids, id)
	}
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a new session with every session busy: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := c.live(); n != max {
		t.Errorf("%d live sessions, want %d", n, max)
	}
	for _, id := range ids {
		if st, _, _ := post(t, hs.URL, id, pingBody); st != http.StatusOK {
			t.Errorf("busy session %s: ping status %d", id, st)
		}
	}
}
