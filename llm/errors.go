package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Error is a failed call to a model provider, classified for retrying.
// Its message never contains the API key the call was made with.
type Error struct {
	// Model is the full provider/model name of the call.
	Model string
	// StatusCode is the HTTP status of the response, 0 when none arrived.
	StatusCode int
	// RetryAfter is the wait the server asked for with Retry-After or
	// retry-after-ms, 0 when it did not ask.
	RetryAfter time.Duration
	// Temporary reports that the same request may succeed later: a 408,
	// 429 or 5xx status, a timeout, a broken connection, or a 2xx response
	// whose body was truncated or not valid JSON.
	Temporary bool
	// Err is the underlying error (for example *openai.Error or
	// *anthropic.Error, or a transport error).
	Err error

	msg string
}

// Error returns a lower-case message naming the provider, the operation and
// the model; any API key is redacted.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// IsTemporary reports whether err is, or wraps, an [*Error] that is worth
// retrying, and the wait the server asked for.
func IsTemporary(err error) (temporary bool, retryAfter time.Duration) {
	var e *Error
	if errors.As(err, &e) {
		return e.Temporary, e.RetryAfter
	}
	return false, 0
}

// callError builds the *Error of a provider call. ctx is the caller's
// context (not the per-attempt one), res the HTTP response if any arrived,
// and secret the API key to redact from the message.
func callError(ctx context.Context, prefix, model string, timeout time.Duration, res *http.Response, err error, secret string) *Error {
	e := &Error{Model: model, Err: err}
	var detail string
	switch {
	case ctx.Err() != nil:
		// The caller gave up: not temporary, whatever the transport said.
		detail = err.Error()
		if !errors.Is(err, ctx.Err()) {
			e.Err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
	case res != nil:
		e.StatusCode = res.StatusCode
		e.RetryAfter = parseRetryAfter(res.Header, time.Now())
		ok := res.StatusCode >= 200 && res.StatusCode < 300
		e.Temporary = ok || res.StatusCode == http.StatusRequestTimeout ||
			res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500
		if ok {
			detail = "invalid response body: " + err.Error()
		} else {
			detail = fmt.Sprintf("status %d: %v", res.StatusCode, err)
		}
	case errors.Is(err, context.DeadlineExceeded):
		e.Temporary = true
		detail = fmt.Sprintf("timed out after %v: %v", timeout, err)
	default:
		e.Temporary = isConnectionError(err)
		detail = err.Error()
	}
	e.msg = redact(fmt.Sprintf("%s for model %s: %s", prefix, model, detail), secret)
	return e
}

// isConnectionError reports transport failures worth retrying.
func isConnectionError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE)
}

// redact replaces every occurrence of secret in s.
func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// parseRetryAfter reads the wait a server asked for: retry-after-ms
// (milliseconds, as OpenAI and Anthropic send), else Retry-After in seconds
// or as an HTTP date. It returns 0 when neither is present or valid.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
