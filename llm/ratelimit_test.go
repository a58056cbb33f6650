package llm

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLimiterRequests(t *testing.T) {
	l := NewLimiter(Limits{RequestsPerMinute: 60}) // 1/s, burst 10
	t0 := time.Unix(1000, 0)
	for i := range 10 {
		if d := l.reserve(t0, 0); d != 0 {
			t.Fatalf("request %d of the burst waits %v", i+1, d)
		}
	}
	// The next ones queue up a second apart.
	for i := 1; i <= 3; i++ {
		if d := l.reserve(t0, 0); d != time.Duration(i)*time.Second {
			t.Errorf("queued request %d waits %v, want %ds", i, d, i)
		}
	}
	// After a long pause the bucket is full again, but no fuller.
	t1 := t0.Add(time.Hour)
	for i := range 10 {
		if d := l.reserve(t1, 0); d != 0 {
			t.Fatalf("after the pause, request %d waits %v", i+1, d)
		}
	}
	if d := l.reserve(t1, 0); d != time.Second {
		t.Errorf("request past the burst waits %v, want 1s", d)
	}
}

func TestLimiterTokens(t *testing.T) {
	l := NewLimiter(Limits{TokensPerMinute: 6000}) // 100/s, burst 1000
	t0 := time.Unix(1000, 0)
	if d := l.reserve(t0, 800); d != 0 {
		t.Fatalf("first request waits %v", d)
	}
	// 200 left; 500 more need 300 tokens of debt paid at 100/s.
	if d := l.reserve(t0, 500); d != 3*time.Second {
		t.Errorf("second request waits %v, want 3s", d)
	}
	// A request bigger than the bucket still passes, after its debt.
	l2 := NewLimiter(Limits{TokensPerMinute: 6000})
	if d := l2.reserve(t0, 1500); d != 5*time.Second {
		t.Errorf("oversized request waits %v, want 5s", d)
	}
}

func TestLimiterBothBuckets(t *testing.T) {
	l := NewLimiter(Limits{RequestsPerMinute: 6, TokensPerMinute: 6000}) // burst 1 request
	t0 := time.Unix(1000, 0)
	if d := l.reserve(t0, 10); d != 0 {
		t.Fatalf("first waits %v", d)
	}
	// The request bucket (1 per 10s) is the one that binds.
	if d := l.reserve(t0, 10); d != 10*time.Second {
		t.Errorf("second waits %v, want 10s", d)
	}
}

func TestLimiterAdjust(t *testing.T) {
	l := NewLimiter(Limits{TokensPerMinute: 6000})
	t0 := time.Now()
	l.reserve(t0, 1000) // empty
	l.Adjust(1000, 400) // it really used 400
	l.mu.Lock()
	level := l.tokens.level
	l.mu.Unlock()
	if level < 599 || level > 601 {
		t.Errorf("level after refund = %v, want about 600", level)
	}
	l.Adjust(0, 2000) // usage beyond the estimate becomes debt
	l.mu.Lock()
	level = l.tokens.level
	l.mu.Unlock()
	if level > -1399 {
		t.Errorf("level after overrun = %v, want about -1400", level)
	}
}

func TestLimiterWaitCancel(t *testing.T) {
	l := NewLimiter(Limits{RequestsPerMinute: 1}) // burst 1, then one a minute
	ctx := context.Background()
	if err := l.Wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := l.Wait(cctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want deadline exceeded", err)
	}
	// The cancelled reservation was given back: the next waiter is not
	// pushed behind it.
	l.mu.Lock()
	level := l.requests.level
	l.mu.Unlock()
	if level < -0.01 {
		t.Errorf("level after cancel = %v, want about 0", level)
	}
}

func TestLimiterConcurrent(t *testing.T) {
	// Small window: 6000 requests a minute is 100/s with a burst of 1000.
	l := NewLimiter(Limits{RequestsPerMinute: 6000, TokensPerMinute: 6_000_000})
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 10 {
				if err := l.Wait(context.Background(), 10); err != nil {
					t.Error(err)
				}
				l.Adjust(10, 12)
			}
		})
	}
	wg.Wait()
}

func TestUnlimitedLimiter(t *testing.T) {
	l := NewLimiter(Limits{})
	t0 := time.Unix(1000, 0)
	for range 1000 {
		if d := l.reserve(t0, 1e9); d != 0 {
			t.Fatalf("unlimited limiter waits %v", d)
		}
	}
}

func TestLimiterPause(t *testing.T) {
	l := NewLimiter(Limits{})
	t0 := time.Unix(1000, 0)
	l.Pause(t0.Add(2 * time.Second))
	l.Pause(t0.Add(time.Second)) // shorter: no effect
	if d := l.reserve(t0, 1); d != 2*time.Second {
		t.Errorf("wait during pause = %v, want 2s", d)
	}
	if d := l.reserve(t0.Add(3*time.Second), 1); d != 0 {
		t.Errorf("wait after pause = %v, want 0", d)
	}
}

func TestRateLimitPausesOn429(t *testing.T) {
	l := NewLimiter(Limits{})
	c := WithRateLimit(ClientFunc(func(context.Context, Request) (Response, error) {
		return Response{}, &Error{StatusCode: 429, RetryAfter: time.Hour, Temporary: true, msg: "429"}
	}), l)
	before := time.Now()
	if _, err := c.Complete(context.Background(), Request{}); err == nil {
		t.Fatal("no error")
	}
	if d := l.reserve(before, 0); d < 59*time.Minute {
		t.Errorf("limiter not paused by Retry-After: wait %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Complete(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}
