// Package anthropic is a providers.Provider for Anthropic's Messages API,
// spoken natively through github.com/anthropics/anthropic-sdk-go. It always
// streams.
//
//	key, err := anthropic.KeyFromFile("/run/secrets/anthropic") // mode 0600 or 0400
//	if err != nil {
//		return err
//	}
//	p := anthropic.New(anthropic.Config{APIKey: key, Model: "claude-sonnet-4-5"})
//
// # Requests
//
// Request.System becomes the system blocks. The first Request.SystemStable
// bytes (the part that is the same across turns and users) are one block
// carrying an ephemeral cache_control breakpoint, the rest a second block,
// so Anthropic's prompt cache serves the stable prefix; with SystemStable
// 0 the whole prompt is one cached block. The last tool definition carries
// a breakpoint too. System messages in the conversation, which the API
// has no role for, follow as further system blocks.
//
// Messages map onto alternating user and assistant messages: an assistant
// message's ToolCalls become tool_use blocks, tool messages become
// tool_result blocks of a user message (placed first in it, as the API
// requires), and consecutive messages of one role merge. Tool call
// arguments that are not a JSON object (a call the model once garbled) are
// replayed as {"invalid_arguments": "<the text>"} rather than failing the
// request; ids outside [a-zA-Z0-9_-] have those bytes replaced by '_'.
// Blank text, which the API refuses, is left out. Tools are sent with
// their JSON Schema as input_schema; MaxTokens becomes max_tokens
// (Config.MaxTokens or DefaultMaxTokens when 0, since the API requires it).
//
// # Thinking
//
// Config.ThinkingBudget or Config.AdaptiveThinking turns on extended
// thinking; its text streams as ReasoningDelta events, and redacted
// thinking is skipped. The budget is added to max_tokens, and Temperature
// is not sent, since the API refuses it with thinking. A providers.Message
// does not keep the signed thinking blocks the API wants replayed within a
// tool loop, so a request continuing one (its last assistant message made
// tool calls) is sent without thinking, as the API allows.
// Request.ReasoningEffort and Request.TopP are ignored: thinking is set by
// Config, and top_p is not sent. Provider.Settings says so
// (providers.SettingsProvider), so an assistant.Engine neither offers
// them on an Anthropic connection nor advertises them.
//
// # Events
//
// Text deltas become TextDelta events and thinking deltas ReasoningDelta.
// Each tool_use block is assembled from its input_json_delta pieces and
// emitted as one ToolCallEvent, in block order, when the stop reason
// arrives; then one UsageEvent and one FinishEvent, always last. Usage
// InputTokens is the whole prompt (Anthropic's input_tokens plus the
// cache reads and writes), CachedInputTokens the cache reads and
// CacheWriteInputTokens the cache writes. Stop reasons map as end_turn and
// stop_sequence: FinishStop; max_tokens, pause_turn and
// model_context_window_exceeded: FinishLength; tool_use: FinishToolCalls;
// refusal: FinishContentFilter.
//
// # Errors
//
// Failures are *providers.Error values. An HTTP error status maps through
// providers.CategoryForStatus (401 and 403 are CategoryAuth, 400
// CategoryBadRequest, 429 CategoryRateLimit with RetryAfter from the
// Retry-After header, 500, 502, 503 and 529 overloaded
// CategoryUnavailable). An error event inside the stream is classified by
// its type as the same error would be by its status (overloaded_error is
// CategoryUnavailable). A dropped stream, a malformed event or a stream
// that ends without a stop reason is CategoryConnection; a canceled
// context is CategoryCanceled and an expired one CategoryTimeout. The
// server's message stays in Error.Err, for logs only.
//
// Retries are off unless Config.MaxRetries is set, and only ever repeat the
// opening request, before any token has been delivered.
// Under an assistant.Engine leave them off: the Engine retries a failed call
// itself (Config.ModelRetries, within ModelRetryWait, telling the user it
// waits), and retries in both layers multiply the calls.
//
// # Concurrency
//
// A Provider is safe for concurrent use. Each sequence from Stream makes
// its own request when iterated, and stopping the iteration early closes
// the response body, releasing the connection.
package anthropic
