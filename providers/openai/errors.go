package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
	if ctx.Err() != nil {
		return providers.TransportError(ctx, err)
	}
	if apiErr, ok := errors.AsType[*oai.Error](err); ok {
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		return providers.HTTPError(apiErr.StatusCode, h, fmt.Errorf("%w: %s (type %q, code %q)", apiErr, apiErr.Message, apiErr.Type, apiErr.Code))
	}
	if resp != nil && resp.StatusCode >= 400 {
		return providers.HTTPError(resp.StatusCode, resp.Header, err)
	}
	if _, ok := errors.AsType[*ssestream.StreamError](err); ok {
		// An error event inside an accepted stream: the server failed mid-way.
		return &providers.Error{Category: providers.CategoryUnavailable, Err: err}
	}
	return providers.TransportError(ctx, err)
}
