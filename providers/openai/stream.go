package openai

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/parleyhq/parley/providers"
)

// reasoningFields are the non-standard delta fields servers use for visible
// reasoning: reasoning_content (DeepSeek, LM Studio, older vLLM) and
// reasoning (vLLM, Ollama, OpenRouter).
var reasoningFields = [...]string{"reasoning_content", "reasoning"}

// streamState turns chunks into events.
type streamState struct {
	calls    []*callBuilder
	byIndex  map[int64]*callBuilder
	flushed  bool // tool calls emitted
	finished bool // a finish_reason arrived
	reason   providers.FinishReason
	usage    *providers.Usage
	argBytes int // tool call names and arguments buffered so far
}

// maxArgBytes bounds the tool call text one stream may buffer. A complete
// call is handed on only at the finish; the Engine's turn output cap is far
// below this, so it only stops a server that never finishes.
const maxArgBytes = 4 << 20

// callBuilder assembles one tool call from its deltas.
type callBuilder struct {
	index, order int
	id, name     string
	args         strings.Builder
}

// chunk handles one chunk and reports whether the consumer wants more.
func (st *streamState) chunk(c oai.ChatCompletionChunk, yield func(providers.Event, error) bool) bool {
	if c.JSON.Usage.Valid() {
		// Some servers repeat cumulative usage on every chunk; keep the last.
		st.usage = &providers.Usage{
			InputTokens:       c.Usage.PromptTokens,
			OutputTokens:      c.Usage.CompletionTokens,
			CachedInputTokens: c.Usage.PromptTokensDetails.CachedTokens,
		}
	}
	for _, ch := range c.Choices {
		// Parley never asks for n > 1, and nothing may follow the finish
		// reason: tool calls were already emitted then.
		if ch.Index != 0 || st.finished {
			continue
		}
		d := ch.Delta
		for _, f := range reasoningFields {
			if text := rawString(d.JSON.ExtraFields[f].Raw()); text != "" {
				if !yield(providers.Event{Kind: providers.ReasoningDelta, Text: text}, nil) {
					return false
				}
				break
			}
		}
		if d.Content != "" {
			if !yield(providers.Event{Kind: providers.TextDelta, Text: d.Content}, nil) {
				return false
			}
		}
		if d.Refusal != "" {
			// A refusal is the model's answer to the user.
			if !yield(providers.Event{Kind: providers.TextDelta, Text: d.Refusal}, nil) {
				return false
			}
		}
		for _, tc := range d.ToolCalls {
			st.toolDelta(tc)
			if st.argBytes += len(tc.Function.Arguments) + len(tc.Function.Name); st.argBytes > maxArgBytes {
				// Arguments are buffered until the call completes: a server
				// that streams them without end must not take the process's
				// memory with it.
				yield(providers.Event{}, &providers.Error{Category: providers.CategoryConnection,
					Err: fmt.Errorf("openai: tool call arguments passed %d bytes without completing", maxArgBytes)})
				return false
			}
		}
		if ch.FinishReason != "" {
			st.finished = true
			st.reason = finishReason(ch.FinishReason)
			if !st.flush(yield) {
				return false
			}
		}
	}
	return true
}

func (st *streamState) toolDelta(tc oai.ChatCompletionChunkChoiceDeltaToolCall) {
	b := st.byIndex[tc.Index]
	// A new id at a used index starts a new call: some servers send every
	// complete call at index 0.
	if b == nil || (tc.ID != "" && b.id != "" && tc.ID != b.id) {
		if st.byIndex == nil {
			st.byIndex = make(map[int64]*callBuilder)
		}
		b = &callBuilder{index: int(tc.Index), order: len(st.calls)}
		st.byIndex[tc.Index] = b
		st.calls = append(st.calls, b)
	}
	if tc.ID != "" {
		b.id = tc.ID
	}
	if tc.Function.Name != "" {
		b.name += tc.Function.Name
	}
	b.args.WriteString(tc.Function.Arguments)
}

// flush emits the assembled tool calls once, in index order.
func (st *streamState) flush(yield func(providers.Event, error) bool) bool {
	if st.flushed {
		return true
	}
	st.flushed = true
	slices.SortStableFunc(st.calls, func(a, b *callBuilder) int {
		return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(a.order, b.order))
	})
	for _, b := range st.calls {
		args := b.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		ev := providers.Event{Kind: providers.ToolCallEvent, ToolCall: providers.ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(args)}}
		if !yield(ev, nil) {
			return false
		}
	}
	return true
}

// finish ends a stream the server completed.
func (st *streamState) finish(yield func(providers.Event, error) bool) {
	if !st.finished {
		// Without a finish reason the stream was cut short, even if the
		// connection closed cleanly.
		if st.usage != nil && !yield(providers.Event{Kind: providers.UsageEvent, Usage: *st.usage}, nil) {
			return
		}
		yield(providers.Event{}, &providers.Error{Category: providers.CategoryConnection, Err: errTruncated})
		return
	}
	if st.usage != nil && !yield(providers.Event{Kind: providers.UsageEvent, Usage: *st.usage}, nil) {
		return
	}
	reason := st.reason
	if len(st.calls) > 0 && reason == providers.FinishStop {
		// Some servers report "stop" after tool calls; the Engine acts on
		// the calls either way, so say what happened.
		reason = providers.FinishToolCalls
	}
	yield(providers.Event{Kind: providers.FinishEvent, Finish: reason}, nil)
}

var errTruncated = errors.New("openai: stream ended without a finish_reason")

func finishReason(s string) providers.FinishReason {
	switch s {
	case "stop":
		return providers.FinishStop
	case "length":
		return providers.FinishLength
	case "tool_calls", "function_call":
		return providers.FinishToolCalls
	case "content_filter":
		return providers.FinishContentFilter
	}
	return providers.FinishReason(s)
}

// rawString decodes a raw JSON string value; anything else is "".
func rawString(raw string) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}
