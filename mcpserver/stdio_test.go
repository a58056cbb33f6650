package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// drain reads every message of input through a lineTransport with the
// given bound, and returns them with the error answers it wrote.
func drain(t testing.TB, input string, max int) (msgs []jsonrpc.Message, answers []map[string]any) {
	t.Helper()
	var out bytes.Buffer
	c, err := (&lineTransport{in: strings.NewReader(input), out: &out, max: max}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := c.Read(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		msgs = append(msgs, m)
		// The server answers each request; the transport reports the end
		// of the input only once it has.
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.(*lineConn).land(&jsonrpc.Response{ID: req.ID})
		}
	}
	// The reader writes its answers before it reports the end.
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		var a map[string]any
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		answers = append(answers, a)
	}
	return msgs, answers
}

func TestLineTransport(t *testing.T) {
	ping := func(id int) string { return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"ping"}` }
	for _, c := range []struct {
		name, input string
		max         int
		msgs        int
		codes       []float64
		ids         []any
	}{
		{"good lines, CRLF and blank lines", ping(1) + "\r\n\n  \n" + ping(2) + "\n" + ping(3), 1 << 20, 3, nil, nil},
		{"not JSON", "{\"jsonrpc\":\n" + ping(1) + "\n", 1 << 20, 1, []float64{-32700}, []any{nil}},
		{"too deep", strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n" + ping(1) + "\n", 1 << 20, 1, []float64{-32700}, []any{nil}},
		{"over the bound", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 100) + `"}}` + "\n" + ping(2) + "\n", 64, 1, []float64{-32700}, []any{nil}},
		{"at the bound with CRLF", ping(1) + "\r\n", len(ping(1)), 1, nil, nil},
		{"one over the bound", ping(1) + "\n", len(ping(1)) - 1, 0, []float64{-32700}, []any{nil}},
		{"JSON but not JSON-RPC", `{"hello":1}` + "\n", 1 << 20, 0, []float64{-32600}, []any{nil}},
		{"wrong version, id kept", `{"jsonrpc":"1.0","id":7,"method":"ping"}` + "\n", 1 << 20, 0, []float64{-32600}, []any{float64(7)}},
		{"batch", "[" + ping(1) + "]\n", 1 << 20, 0, []float64{-32600}, []any{nil}},
		{"last line without newline", ping(1), 1 << 20, 1, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			msgs, answers := drain(t, c.input, c.max)
			if len(msgs) != c.msgs || len(answers) != len(c.codes) {
				t.Fatalf("%d messages and answers %v; want %d and %d answers", len(msgs), answers, c.msgs, len(c.codes))
			}
			for i, a := range answers {
				e, _ := a["error"].(map[string]any)
				if a["jsonrpc"] != "2.0" || e == nil || e["code"] != c.codes[i] || a["id"] != c.ids[i] {
					t.Errorf("answer %d: %v; want code %v, id %v", i, a, c.codes[i], c.ids[i])
				}
				if _, ok := a["id"]; !ok {
					t.Errorf("answer %d has no id member (JSON-RPC wants null): %v", i, a)
				}
			}
		})
	}
}

// FuzzLineTransport: whatever comes in, each non-blank line (and each line
// over the bound, blank or not) gives exactly one message or one error
// answer, and the transport does not stop early.
func FuzzLineTransport(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n{\n[[]]\n\r\n")
	f.Add(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":"a","result":{}}`)
	f.Add(strings.Repeat("x", 100) + "\n")
	f.Fuzz(func(t *testing.T, input string) {
		msgs, answers := drain(t, input, 64)
		lines := 0
		for _, l := range strings.Split(input, "\n") {
			if len(bytes.TrimSpace([]byte(l))) > 0 || len(strings.TrimSuffix(l, "\r")) > 64 {
				lines++
			}
		}
		if len(msgs)+len(answers) != lines {
			t.Errorf("%d non-blank lines gave %d messages and %d answers", lines, len(msgs), len(answers))
		}
	})
}

// TestLineTransportEndWaitsForAnswers: at the end of the input, Read
// reports it only once every request read has been answered (the SDK
// cancels what is in flight when Read fails, and answers went missing),
// or the connection is closed, or Read's context ends.
func TestLineTransportEndWaitsForAnswers(t *testing.T) {
	for _, end := range []string{"answer", "close", "cancel"} {
		t.Run(end, func(t *testing.T) {
			var out bytes.Buffer
			c, err := (&lineTransport{in: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), out: &out, max: 1 << 20}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			m, err := c.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := c.Read(ctx)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("Read returned %v with request 1 unanswered", err)
			case <-time.After(100 * time.Millisecond):
			}
			switch end {
			case "answer":
				if err := c.Write(context.Background(), &jsonrpc.Response{ID: m.(*jsonrpc.Request).ID, Result: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			case "close":
				c.Close()
			case "cancel":
				cancel()
			}
			select {
			case err := <-done:
				if end == "answer" && err != io.EOF {
					t.Errorf("Read after the answer: %v, want io.EOF", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("Read did not return after %s", end)
			}
			if end == "answer" && !strings.Contains(out.String(), `"id":1`) {
				t.Errorf("answer not written: %q", out.String())
			}
		})
	}
}
