package ape

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/patchbench/patchbench/llm"
)

// Faults counts what a candidate's model calls went through below the
// retry layer, for its results row: HTTP attempts, the retries among them,
// and the attempts answered with an error status (429, 500, ...). A retry
// without an error status was a broken answer (truncated JSON), a dropped
// connection or a timeout.
type Faults struct {
	Attempts int            `json:"model_attempts,omitempty"`
	Retries  int            `json:"model_retries,omitempty"`
	Statuses map[string]int `json:"model_error_statuses,omitempty"`

	mu    sync.Mutex
	calls int
}

type faultsKey struct{}

// withFaults returns ctx carrying f, which the counting transport fills.
func withFaults(ctx context.Context, f *Faults) context.Context {
	return context.WithValue(ctx, faultsKey{}, f)
}

// call records one model call (its first attempt is not a retry).
func (f *Faults) call() {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
}

func (f *Faults) attempt(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Attempts++
	f.Retries = max(f.Attempts-f.calls, 0)
	if status >= 400 || status == 0 {
		if f.Statuses == nil {
			f.Statuses = map[string]int{}
		}
		name := strconv.Itoa(status)
		if status == 0 {
			name = "no answer"
		}
		f.Statuses[name]++
	}
}

// countingTransport counts every HTTP attempt into the Faults of its
// request's context: the retries happen in llm's client, below the
// benchmark, and only the transport sees each of them.
type countingTransport struct{ next http.RoundTripper }

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if f, ok := req.Context().Value(faultsKey{}).(*Faults); ok {
		status := 0
		if err == nil {
			status = resp.StatusCode
		}
		f.attempt(status)
	}
	return resp, err
}

// countingClient is llm's default HTTP client with the counting transport.
func countingClient() *http.Client {
	c := llm.NewHTTPClient(256)
	c.Transport = countingTransport{c.Transport}
	return c
}
