// Package openaimock is an OpenAI-compatible chat-completions server for
// tests and benchmarks. It streams scripted Server-Sent Events exactly as
// OpenAI does (chat.completion.chunk objects, a usage chunk when the request
// asked for stream_options.include_usage, then "data: [DONE]"), so the real
// openai-go client can be exercised without a network.
//
// # Scripting
//
// A Server answers each request with the next scripted Response; once the
// script is exhausted it answers with the fallback set by SetFallback, or
// with HTTP 500. A Response carries content and reasoning deltas, tool calls
// whose arguments arrive in pieces (several calls make a parallel call), a
// finish reason and usage, or a fault: an HTTP error status with an
// OpenAI-style JSON error body, a connection dropped mid-stream, a malformed
// chunk, or a stream that stalls until the client goes away.
//
// The SSE bytes of a Response are computed once, when it is scripted, so a
// benchmark measures the client rather than the mock.
//
// # Assertions
//
// Requests returns every request received so far, decoded, including the
// headers and the raw body.
//
// # Concurrency
//
// A Server is safe for concurrent use; responses are handed out in arrival
// order.
package openaimock
