package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers"
)

// classify turns a client error into a *providers.Error. The server's own
// text stays in Err. resp, when the server answered, decides the category
// of an error status whose body the connection lost.
func classify(ctx context.Context, err error, resp *http.Response) *providers.Error {
	// The context wins: a canceled call surfaces as whatever the body read
	// happened to return.
	if ctx.Err() != nil {
		return providers.TransportError(ctx, err)
	}
	if apiErr, ok := errors.AsType[*ant.Error](err); ok {
		cause := fmt.Errorf("%w (type %q)", apiErr, apiErr.Type())
		if apiErr.StatusCode < 400 {
			// An error event inside an accepted stream: the HTTP status
			// says nothing, the error's type says what failed.
			return &providers.Error{Category: categoryForType(apiErr.Type()), Err: cause}
		}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		return providers.HTTPError(apiErr.StatusCode, h, cause)
	}
	if resp != nil && resp.StatusCode >= 400 {
		return providers.HTTPError(resp.StatusCode, resp.Header, err)
	}
	return providers.TransportError(ctx, err)
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
