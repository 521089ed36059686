package providers

import (
	"context"
	"encoding/json"
	"iter"
)

// Provider streams one model completion.
//
// Stream returns a single-use sequence of events. The sequence yields each
// event with a nil error; on failure it yields a zero Event and a non-nil
// error (an *Error classifying the cause) and then ends. Events come in this
// order: text and reasoning deltas; then each complete tool call; then at
// most one Usage (absent when the server reports none); then one Finish,
// last. When the consumer
// stops early the provider must release the connection before returning.
// Implementations must be safe for concurrent use; req is read-only.
type Provider interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// The completion settings of a Request, by the names a SettingsProvider
// reports them.
const (
	SettingTemperature     = "temperature"      // Request.Temperature
	SettingTopP            = "top_p"            // Request.TopP
	SettingMaxTokens       = "max_tokens"       // Request.MaxTokens
	SettingReasoningEffort = "reasoning_effort" // Request.ReasoningEffort
)

// SettingsProvider is a Provider that honours only some of a Request's
// completion settings. Settings names those it sends on (the Setting
// constants); it ignores the others. Its answer must not change over the
// Provider's life. A Provider without this method is taken to honour
// them all. An assistant.Engine lets a request set, and advertises, only
// the settings its provider honours.
type SettingsProvider interface {
	Provider
	Settings() []string
}

// NamedProvider is a Provider that names the service it talks to, as the
// OpenTelemetry GenAI conventions name it in gen_ai.provider.name
// ("openai", "anthropic"). An assistant.Engine puts the name on its model
// call spans and metrics; a Provider without this method is reported as
// "_OTHER". Its answer must not change over the Provider's life.
type NamedProvider interface {
	Provider
	ProviderName() string
}

// ProviderFunc adapts a function to a Provider.
type ProviderFunc func(ctx context.Context, req *Request) iter.Seq2[Event, error]

// Stream calls f(ctx, req).
func (f ProviderFunc) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return f(ctx, req)
}

// Role is the author of a Message.
type Role string

// Message roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Message is one entry of the conversation sent to the model. Stored
// assistant messages keep these for exact replay of tool calls and results.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant messages
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool messages
}

// ToolCall is a complete tool call proposed by the model.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"` // as the model sent it; may be invalid JSON
}

// ToolDef describes a tool offered to the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments object
}

// Request is one completion request. The System prompt is sent first,
// followed by Messages.
type Request struct {
	Model  string // empty: the provider's default
	System string // system prompt; empty: none
	// SystemStable is how many leading bytes of System are the same across
	// turns and users (persona, rules, operator instructions), ahead of the
	// volatile sections (the user's tools, page context, time). Providers
	// with explicit prompt caching put their cache breakpoint there. 0
	// means unknown: System is treated as one piece.
	SystemStable int
	Messages     []Message //
	Tools        []ToolDef // empty: no tools offered
	MaxTokens    int       // 0: provider default
	Temperature  *float64  // nil: provider default
	TopP         *float64  // nucleus sampling; nil: provider default
	// ReasoningEffort asks a reasoning model to think less or more: none,
	// minimal, low, medium, high, xhigh or max; "": the provider's
	// default. A provider without such a setting ignores it.
	ReasoningEffort string
}

// EventKind discriminates Event.
type EventKind uint8

// Event kinds.
const (
	TextDelta      EventKind = iota + 1 // Text holds the next piece of the answer
	ReasoningDelta                      // Text holds the next piece of visible reasoning
	ToolCallEvent                       // ToolCall holds a complete call (arguments assembled)
	UsageEvent                          // Usage holds token counts for the whole call
	FinishEvent                         // Finish holds why the model stopped
)

// FinishReason says why the model stopped.
type FinishReason string

// Finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
)

// Event is one element of a provider stream. It is a plain struct rather than
// an interface so the per-token path does not allocate.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall ToolCall
	Usage    Usage
	Finish   FinishReason
	// Model, on a FinishEvent, is the model that answered as the server
	// named it ("gpt-4o-2024-08-06" for "gpt-4o"); empty when it did not.
	Model string
}

// Usage counts the tokens of one model call. InputTokens counts the whole
// prompt; the cache fields say how much of it the provider's prompt cache
// served or stored.
type Usage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"` // of InputTokens, read from the cache
	// CacheWriteInputTokens, of InputTokens, were written to the cache
	// (Anthropic bills them at a premium); 0 where a provider caches
	// implicitly.
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:           u.InputTokens + v.InputTokens,
		OutputTokens:          u.OutputTokens + v.OutputTokens,
		CachedInputTokens:     u.CachedInputTokens + v.CachedInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens + v.CacheWriteInputTokens,
	}
}

// Total is input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }
