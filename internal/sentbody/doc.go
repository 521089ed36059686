// Package sentbody lets go of a model call's request body once it is sent.
//
// The providers' SDKs (openai-go, anthropic-sdk-go) send a request from a
// buffer a retry can send again: the request's Body and GetBody hold it.
// http.Transport keeps the request it sent until the response body is
// closed, so a streaming call held its whole request (the system prompt,
// the tool definitions, the thread) for as long as the model talked: 3.4
// KB of each parked turn in the bench's parked mode, the largest thing a
// parked turn held beyond the raw client's buffers.
//
// [Middleware] sends the same bytes from a copy of its own, which the sent
// body lets go of once read to its end, and GetBody once the response has
// come. The SDK keeps its buffer for its own retries, and lets it go when
// the call returns.
package sentbody
