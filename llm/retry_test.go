package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", map[string]string{"Retry-After": "3", "retry-after-ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"Retry-After": "2", "retry-after-ms": "soon"}, 2 * time.Second},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.headers {
			h.Set(k, v)
		}
		if got := parseRetryAfter(h, now); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackoffFullJitter(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	top := func(n int64) int64 { return n - 1 } // the largest value rand may return
	bottom := func(int64) int64 { return 0 }
	for _, tt := range []struct {
		attempt int
		want    time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond}, {4, 800 * time.Millisecond}, {5, time.Second}, {30, time.Second}} {
		if got := p.backoff(tt.attempt, 0, top); got != tt.want {
			t.Errorf("attempt %d: ceiling %v, want %v", tt.attempt, got, tt.want)
		}
		if got := p.backoff(tt.attempt, 0, bottom); got != 0 {
			t.Errorf("attempt %d: floor %v, want 0", tt.attempt, got)
		}
	}
	if got := p.backoff(1, 5*time.Second, top); got != 5*time.Second {
		t.Errorf("retry-after 5s gave %v", got)
	}
}

func TestRetrierStopsOnPermanentError(t *testing.T) {
	var calls atomic.Int32
	perm := errors.New("bad request")
	c := WithRetry(ClientFunc(func(ctx context.Context, req Request) (Response, error) {
		calls.Add(1)
		return Response{}, perm
	}), RetryPolicy{MaxAttempts: 5, BaseDelay: time.Millisecond})
	if _, err := c.Complete(context.Background(), Request{}); !errors.Is(err, perm) {
		t.Fatalf("error = %v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1", calls.Load())
	}
}

func TestRetrierRetriesTemporary(t *testing.T) {
	var calls atomic.Int32
	c := WithRetry(ClientFunc(func(ctx context.Context, req Request) (Response, error) {
		if calls.Add(1) < 4 {
			return Response{}, &Error{Temporary: true, StatusCode: 503, msg: "test: 503"}
		}
		return Response{Text: "ok"}, nil
	}), RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
	resp, err := c.Complete(context.Background(), Request{})
	if err != nil || resp.Text != "ok" {
		t.Fatalf("got %q, %v", resp.Text, err)
	}
	if calls.Load() != 4 {
		t.Errorf("%d calls, want 4", calls.Load())
	}
}

func TestRetrierRefusesLongRetryAfter(t *testing.T) {
	var calls atomic.Int32
	c := WithRetry(ClientFunc(func(ctx context.Context, req Request) (Response, error) {
		calls.Add(1)
		return Response{}, &Error{Temporary: true, StatusCode: 429, RetryAfter: time.Hour, msg: "test: 429"}
	}), RetryPolicy{MaxAttempts: 3, MaxRetryAfter: time.Minute})
	_, err := c.Complete(context.Background(), Request{})
	if err == nil || !strings.Contains(err.Error(), "not retrying: server asked to wait 1h0m0s") {
		t.Fatalf("error = %v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1", calls.Load())
	}
}

func TestIsTemporaryWrapped(t *testing.T) {
	err := &Error{Temporary: true, RetryAfter: time.Second, msg: "x"}
	temp, after := IsTemporary(errors.Join(errors.New("outer"), err))
	if !temp || after != time.Second {
		t.Errorf("got %v, %v", temp, after)
	}
	if temp, _ := IsTemporary(errors.New("plain")); temp {
		t.Error("plain error reported temporary")
	}
}

func TestRedact(t *testing.T) {
	if got := redact("key sk-1 and sk-1 again", "sk-1"); got != "key [redacted] and [redacted] again" {
		t.Errorf("got %q", got)
	}
	if got := redact("nothing", ""); got != "nothing" {
		t.Errorf("got %q", got)
	}
}

func TestOptionsHideKey(t *testing.T) {
	o := Options{APIKey: "sk-hidden-1234", BaseURL: "http://x"}
	for _, s := range []string{fmt.Sprint(o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), fmt.Sprintf("%v", &o)} {
		if strings.Contains(s, "sk-hidden") {
			t.Errorf("options print the key: %s", s)
		}
	}
}
