package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Limits are rate limits for one client. A zero field means no limit.
type Limits struct {
	// RequestsPerMinute bounds the number of requests sent.
	RequestsPerMinute int
	// TokensPerMinute bounds input plus output tokens. A request is charged
	// an estimate before it is sent (about four characters a token, plus
	// MaxTokens) and corrected with the usage the provider reports.
	TokensPerMinute int
}

// Limiter enforces [Limits] with two token buckets. Each bucket refills at
// its per-minute rate and holds at most a sixth of a minute's allowance, so
// bursts stay short. A request larger than a bucket still goes through: it
// waits as long as the bucket needs to pay it off. A Limiter is safe for
// concurrent use; waiters are served in the order they arrive.
//
// A Limiter also holds back every request while a server's Retry-After
// runs (see [Limiter.Pause]), so that one 429 slows all workers down
// instead of each of them finding out for itself.
type Limiter struct {
	mu       sync.Mutex
	requests bucket
	tokens   bucket
	pause    time.Time // no request starts before this
}

// bucket is a token bucket whose level may go negative: a reservation is
// taken at once and the caller waits until the debt is repaid.
type bucket struct {
	perSecond float64 // refill rate; 0 means unlimited
	capacity  float64
	level     float64
	last      time.Time
}

func newBucket(perMinute int) bucket {
	if perMinute <= 0 {
		return bucket{}
	}
	c := max(1, float64(perMinute)/6)
	return bucket{perSecond: float64(perMinute) / 60, capacity: c, level: c}
}

func (b *bucket) refill(now time.Time) {
	if b.last.IsZero() {
		b.last = now
		return
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.level = min(b.capacity, b.level+dt.Seconds()*b.perSecond)
		b.last = now
	}
}

// take reserves n units at now and returns how long the caller must wait.
func (b *bucket) take(now time.Time, n float64) time.Duration {
	if b.perSecond == 0 {
		return 0
	}
	b.refill(now)
	b.level -= n
	if b.level >= 0 {
		return 0
	}
	return time.Duration(-b.level / b.perSecond * float64(time.Second))
}

// give returns n units (a cancelled reservation, or an overestimate).
func (b *bucket) give(now time.Time, n float64) {
	if b.perSecond == 0 {
		return
	}
	b.refill(now)
	b.level = min(b.capacity, b.level+n)
}

// NewLimiter returns a Limiter for l.
func NewLimiter(l Limits) *Limiter {
	return &Limiter{requests: newBucket(l.RequestsPerMinute), tokens: newBucket(l.TokensPerMinute)}
}

// reserve takes one request and the given tokens at now and returns the
// wait before the request may be sent.
func (l *Limiter) reserve(now time.Time, tokens int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(l.requests.take(now, 1), l.tokens.take(now, float64(tokens)), l.pause.Sub(now))
}

// Pause holds back all requests until the given time; an earlier pause
// than the current one changes nothing.
func (l *Limiter) Pause(until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until.After(l.pause) {
		l.pause = until
	}
}

func (l *Limiter) cancel(now time.Time, tokens int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests.give(now, 1)
	l.tokens.give(now, float64(tokens))
}

// Wait blocks until one request of the given estimated token count may be
// sent, or ctx is done; then it takes back the reservation and returns the
// context's error.
func (l *Limiter) Wait(ctx context.Context, tokens int) error {
	d := l.reserve(time.Now(), tokens)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		l.cancel(time.Now(), tokens)
		return fmt.Errorf("rate limit: %w", ctx.Err())
	}
}

// Adjust corrects a request's token charge once its real usage is known.
func (l *Limiter) Adjust(estimated, actual int) {
	if l.tokens.perSecond == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.tokens.refill(now)
	l.tokens.level = min(l.tokens.capacity, l.tokens.level+float64(estimated-actual))
}

// WithRateLimit returns a Client that waits for l before every call to c,
// corrects l with the usage each call reports, and pauses l for as long as
// a 429 response's Retry-After asks.
func WithRateLimit(c Client, l *Limiter) Client {
	return ClientFunc(func(ctx context.Context, req Request) (Response, error) {
		est := estimateTokens(req)
		if err := l.Wait(ctx, est); err != nil {
			return Response{}, fmt.Errorf("%s: %w", req.Model, err)
		}
		resp, err := c.Complete(ctx, req)
		if err == nil && resp.InputTokens+resp.OutputTokens > 0 {
			l.Adjust(est, resp.InputTokens+resp.OutputTokens)
		}
		var e *Error
		if errors.As(err, &e) && e.StatusCode == http.StatusTooManyRequests && e.RetryAfter > 0 {
			l.Pause(time.Now().Add(e.RetryAfter))
		}
		return resp, err
	})
}
