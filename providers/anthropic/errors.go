package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers"
)

// classify turns a client error into a *providers.Error. The server's own
// text stays in Err. resp, when the server answered, decides the category
// of an error status whose body the connection lost.
func classify(ctx context.Context, err error, resp *http.Response) *providers.Error {
	// The context wins: a canceled call surfaces as whatever the body read
	// happened to return.
	if cerr := ctx.Err(); cerr != nil {
		cat := providers.CategoryCanceled
		if errors.Is(cerr, context.DeadlineExceeded) {
			cat = providers.CategoryTimeout
		}
		return &providers.Error{Category: cat, Err: err}
	}
	if apiErr, ok := errors.AsType[*ant.Error](err); ok {
		cause := fmt.Errorf("%w (type %q)", apiErr, apiErr.Type())
		if apiErr.StatusCode < 400 {
			// An error event inside an accepted stream: the HTTP status
			// says nothing, the error's type says what failed.
			return &providers.Error{Category: categoryForType(apiErr.Type()), Err: cause}
		}
		e := &providers.Error{
			Category:   providers.CategoryForStatus(apiErr.StatusCode),
			StatusCode: apiErr.StatusCode,
			Err:        cause,
		}
		if apiErr.Response != nil {
			e.RetryAfter = providers.RetryAfter(apiErr.Response.Header, time.Now())
		}
		return e
	}
	if resp != nil && resp.StatusCode >= 400 {
		return &providers.Error{Category: providers.CategoryForStatus(resp.StatusCode), StatusCode: resp.StatusCode,
			RetryAfter: providers.RetryAfter(resp.Header, time.Now()), Err: err}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &providers.Error{Category: providers.CategoryCanceled, Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &providers.Error{Category: providers.CategoryTimeout, Err: err}
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return &providers.Error{Category: providers.CategoryTimeout, Err: err}
	}
	// Dropped connections, malformed events, refused dials.
	return &providers.Error{Category: providers.CategoryConnection, Err: err}
}

// typeStatus is the HTTP status Anthropic documents for each error type,
// so an error event mid-stream is classified like the same error before
// the stream began. 529 is overloaded_error.
var typeStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// categoryForType classifies a mid-stream error event; an unknown or
// missing type is the server failing mid-way.
func categoryForType[T ~string](t T) providers.Category {
	if s, ok := typeStatus[string(t)]; ok {
		return providers.CategoryForStatus(s)
	}
	return providers.CategoryUnavailable
}
