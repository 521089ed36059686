package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/parleyhq/parley/providers"
)

// classify turns a client error into a *providers.Error. The server's own
// text stays in Err. resp, when the server answered, decides the category
// of an error status whose body openai-go could not decode.
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
	if apiErr, ok := errors.AsType[*oai.Error](err); ok {
		e := &providers.Error{
			Category:   providers.CategoryForStatus(apiErr.StatusCode),
			StatusCode: apiErr.StatusCode,
			Err:        fmt.Errorf("%w: %s (type %q, code %q)", apiErr, apiErr.Message, apiErr.Type, apiErr.Code),
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
	if _, ok := errors.AsType[*ssestream.StreamError](err); ok {
		// An error event inside an accepted stream: the server failed mid-way.
		return &providers.Error{Category: providers.CategoryUnavailable, Err: err}
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
	// Dropped connections, malformed chunks, refused dials.
	return &providers.Error{Category: providers.CategoryConnection, Err: err}
}
