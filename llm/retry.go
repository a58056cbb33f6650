package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how long to retry temporary failures
// (see [Error]). The zero value means the defaults.
type RetryPolicy struct {
	// MaxAttempts is the number of calls including the first; 0 means 6,
	// 1 disables retrying.
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; it doubles with
	// every attempt up to MaxDelay. 0 means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff; 0 means 30s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After the policy waits for; a
	// server that asks for more ends the retries at once. 0 means 5m.
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 6
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 5 * time.Minute
	}
	return p
}

// backoff returns the wait before attempt n+1 after n failed attempts
// (n >= 1): full jitter, uniform in [0, min(MaxDelay, BaseDelay*2^(n-1))],
// but never less than the server's retryAfter.
func (p RetryPolicy) backoff(n int, retryAfter time.Duration, rnd func(int64) int64) time.Duration {
	ceil := p.BaseDelay
	for i := 1; i < n && ceil < p.MaxDelay; i++ {
		ceil *= 2
	}
	ceil = min(ceil, p.MaxDelay)
	d := time.Duration(rnd(int64(ceil) + 1))
	return max(d, retryAfter)
}

// WithRetry returns a Client that retries c's temporary failures (see
// [IsTemporary]) with exponential backoff and full jitter, honouring the
// server's Retry-After. It stops at once when ctx is done.
func WithRetry(c Client, p RetryPolicy) Client {
	return &retrier{next: c, policy: p.withDefaults(), rnd: rand.Int64N}
}

type retrier struct {
	next   Client
	policy RetryPolicy
	rnd    func(int64) int64
}

func (r *retrier) Complete(ctx context.Context, req Request) (Response, error) {
	var resp Response
	err := r.policy.do(ctx, r.rnd, func() error {
		var err error
		resp, err = r.next.Complete(ctx, req)
		return err
	})
	if err != nil {
		return Response{}, err
	}
	return resp, nil
}

// do calls call until it succeeds, fails for good, or the policy gives
// up: the retry loop of every network call (completions and embeddings).
func (p RetryPolicy) do(ctx context.Context, rnd func(int64) int64, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		temp, after := IsTemporary(err)
		if !temp {
			return err
		}
		if attempt >= p.MaxAttempts {
			if attempt == 1 {
				return err
			}
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if after > p.MaxRetryAfter {
			return fmt.Errorf("%w (not retrying: server asked to wait %v)", err, after)
		}
		t := time.NewTimer(p.backoff(attempt, after, rnd))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (waiting to retry: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}
