// Package openai is a providers.Provider for servers speaking OpenAI's
// chat-completions protocol: OpenAI, Azure OpenAI, vLLM, Ollama, OpenRouter,
// LM Studio and the many gateways that copy it. It uses
// github.com/openai/openai-go/v3 and always streams.
//
//	p := openai.New(openai.Config{
//		BaseURL: openai.OllamaBaseURL,
//		Model:   "llama3.2",
//	})
//
// # Requests
//
// Request.System becomes the leading system message; Messages map one to
// one (an assistant message's ToolCalls become its tool_calls, a tool
// message's ToolCallID its tool_call_id); Tools become function tools with
// their JSON Schema as parameters; MaxTokens is sent as
// max_completion_tokens (max_tokens with Config.LegacyMaxTokens).
// stream_options.include_usage is always set so the stream ends with usage.
//
// # Events
//
// Content deltas become TextDelta events. A reasoning_content or reasoning
// field in a delta, which OpenAI leaves out but DeepSeek, vLLM, Ollama and
// OpenRouter send, becomes ReasoningDelta. Tool-call deltas are assembled by
// index and each complete call is emitted as one ToolCallEvent, in index
// order, when the finish reason arrives; then one UsageEvent (when the
// server reported usage) and one FinishEvent, always last.
//
// # Errors
//
// Failures are *providers.Error values. An HTTP error status maps through
// providers.CategoryForStatus (401 is CategoryAuth, 404 CategoryNotFound,
// 429 CategoryRateLimit with RetryAfter from the Retry-After header, 5xx
// CategoryUnavailable); a dropped stream, a malformed chunk or a stream that
// ends without a finish reason is CategoryConnection; a canceled context is
// CategoryCanceled and an expired one CategoryTimeout. The server's message
// stays in Error.Err, for logs only.
//
// Retries are off unless Config.MaxRetries is set, and only ever repeat the
// opening request, before any token has been delivered.
//
// # Concurrency
//
// A Provider is safe for concurrent use. Each sequence from Stream makes
// its own request when iterated, and stopping the iteration early closes
// the response body, releasing the connection.
package openai
