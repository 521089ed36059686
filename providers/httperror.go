package providers

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter returns how long h asks a client to wait, as of now: the
// retry-after-ms header (OpenAI's and Anthropic's), else Retry-After in
// seconds or as an HTTP date. It returns 0 when neither is present or
// valid. Providers put it in Error.RetryAfter.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < math.MaxInt64/float64(time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < math.MaxInt64/float64(time.Second) {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// HTTPError is the Error of an HTTP error status: the status's category,
// the status, and the wait its header asks for (h may be nil). err keeps
// the server's text, for logs only.
func HTTPError(status int, h http.Header, err error) *Error {
	e := &Error{Category: CategoryForStatus(status), StatusCode: status, Err: err}
	if h != nil {
		e.RetryAfter = RetryAfter(h, time.Now())
	}
	return e
}

// TransportError classifies a failure that has no HTTP status: a done ctx
// (canceled or timed out) wins, then a cancellation or deadline inside err,
// then a network timeout; anything else (a dropped connection, a
// malformed event, a refused dial) is CategoryConnection.
func TransportError(ctx context.Context, err error) *Error {
	cat := CategoryConnection
	if cerr := ctx.Err(); cerr != nil {
		cat = CategoryCanceled
		if errors.Is(cerr, context.DeadlineExceeded) {
			cat = CategoryTimeout
		}
		return &Error{Category: cat, Err: err}
	}
	switch {
	case errors.Is(err, context.Canceled):
		cat = CategoryCanceled
	case errors.Is(err, context.DeadlineExceeded):
		cat = CategoryTimeout
	default:
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			cat = CategoryTimeout
		}
	}
	return &Error{Category: cat, Err: err}
}
