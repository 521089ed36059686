package anthropic

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers"
)

// streamState turns Messages API stream events into events.
type streamState struct {
	calls    []*callBuilder
	byIndex  map[int64]*callBuilder // open tool_use blocks by content index
	finished bool                   // a stop_reason arrived
	reason   providers.FinishReason
	usage    *providers.Usage
	argBytes int // tool call names and arguments buffered so far
}

// maxArgBytes bounds the tool call text one stream may buffer. A complete
// call is handed on only at the stop reason; the Engine's turn output cap
// is far below this, so it only stops a server that never finishes.
const maxArgBytes = 4 << 20

// callBuilder assembles one tool call from its tool_use block.
type callBuilder struct {
	index    int64
	order    int
	id, name string
	start    json.RawMessage // the input the block opened with, used when no delta follows
	args     strings.Builder // input_json_delta pieces
}

// event handles one stream event and reports whether the consumer wants
// more.
func (st *streamState) event(ev ant.MessageStreamEventUnion, yield func(providers.Event, error) bool) bool {
	if st.finished {
		// Nothing may follow the stop reason: the tool calls went out then.
		return true
	}
	switch ev.Type {
	case "message_start":
		if ev.Message.JSON.Usage.Valid() {
			u := ev.Message.Usage
			st.usage = &providers.Usage{}
			st.setInput(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
			st.usage.OutputTokens = u.OutputTokens
		}
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			return emit(providers.TextDelta, cb.Text, yield)
		case "thinking":
			return emit(providers.ReasoningDelta, cb.Thinking, yield)
		case "tool_use":
			b := &callBuilder{index: ev.Index, order: len(st.calls), id: cb.ID, name: cb.Name}
			if raw := cb.JSON.Input.Raw(); raw != "" && raw != "null" && raw != "{}" {
				b.start = json.RawMessage(raw)
			}
			if st.byIndex == nil {
				st.byIndex = make(map[int64]*callBuilder)
			}
			st.byIndex[ev.Index] = b
			st.calls = append(st.calls, b)
			return st.grow(len(cb.ID)+len(cb.Name)+len(b.start), yield)
		}
		// redacted_thinking and server-side blocks carry nothing to show.
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			return emit(providers.TextDelta, d.Text, yield)
		case "thinking_delta":
			return emit(providers.ReasoningDelta, d.Thinking, yield)
		case "input_json_delta":
			if b := st.byIndex[ev.Index]; b != nil {
				b.args.WriteString(d.PartialJSON)
				return st.grow(len(d.PartialJSON), yield)
			}
		}
		// signature_delta and citations_delta are not shown.
	case "message_delta":
		if ev.JSON.Usage.Valid() {
			// message_delta counts are whole-message totals: output always,
			// the input counts when present.
			u := ev.Usage
			if st.usage == nil {
				st.usage = &providers.Usage{}
			}
			st.usage.OutputTokens = u.OutputTokens
			if u.JSON.InputTokens.Valid() || u.JSON.CacheReadInputTokens.Valid() || u.JSON.CacheCreationInputTokens.Valid() {
				in := st.usage.InputTokens - st.usage.CachedInputTokens - st.usage.CacheWriteInputTokens
				read, write := st.usage.CachedInputTokens, st.usage.CacheWriteInputTokens
				if u.JSON.InputTokens.Valid() {
					in = u.InputTokens
				}
				if u.JSON.CacheReadInputTokens.Valid() {
					read = u.CacheReadInputTokens
				}
				if u.JSON.CacheCreationInputTokens.Valid() {
					write = u.CacheCreationInputTokens
				}
				st.setInput(in, read, write)
			}
		}
		if ev.Delta.StopReason != "" {
			st.finished = true
			st.reason = finishReason(ev.Delta.StopReason)
			return st.flush(yield)
		}
	}
	// ping is consumed by the SDK; message_stop, content_block_stop and
	// event types added later need nothing.
	return true
}

// setInput records the input counts. Anthropic's input_tokens leaves out
// the cached tokens; providers.Usage.InputTokens is the whole prompt.
func (st *streamState) setInput(uncached, read, write int64) {
	st.usage.InputTokens = uncached + read + write
	st.usage.CachedInputTokens = read
	st.usage.CacheWriteInputTokens = write
}

func emit(kind providers.EventKind, text string, yield func(providers.Event, error) bool) bool {
	if text == "" {
		return true
	}
	return yield(providers.Event{Kind: kind, Text: text}, nil)
}

// grow counts n more buffered bytes of tool calls and fails the stream
// past maxArgBytes: a server that streams arguments without end must not
// take the process's memory with it.
func (st *streamState) grow(n int, yield func(providers.Event, error) bool) bool {
	if st.argBytes += n; st.argBytes > maxArgBytes {
		yield(providers.Event{}, &providers.Error{Category: providers.CategoryConnection,
			Err: fmt.Errorf("anthropic: tool calls passed %d bytes without completing", maxArgBytes)})
		return false
	}
	return true
}

// flush emits the assembled tool calls, in block order.
func (st *streamState) flush(yield func(providers.Event, error) bool) bool {
	slices.SortStableFunc(st.calls, func(a, b *callBuilder) int {
		return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(a.order, b.order))
	})
	for _, b := range st.calls {
		args := b.args.String()
		if strings.TrimSpace(args) == "" {
			args = string(b.start)
		}
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

// finish ends a stream the server closed cleanly.
func (st *streamState) finish(yield func(providers.Event, error) bool) {
	if st.usage != nil && !yield(providers.Event{Kind: providers.UsageEvent, Usage: *st.usage}, nil) {
		return
	}
	if !st.finished {
		// Without a stop reason the stream was cut short, even if the
		// connection closed cleanly.
		yield(providers.Event{}, &providers.Error{Category: providers.CategoryConnection, Err: errTruncated})
		return
	}
	reason := st.reason
	if len(st.calls) > 0 && reason == providers.FinishStop {
		// The Engine acts on the calls whatever the stop reason said.
		reason = providers.FinishToolCalls
	}
	yield(providers.Event{Kind: providers.FinishEvent, Finish: reason}, nil)
}

var errTruncated = errors.New("anthropic: stream ended without a stop_reason")

// finishReason maps a stop_reason. pause_turn (a server-side tool paused a
// long turn) and model_context_window_exceeded are a turn cut short:
// FinishLength. A refusal is the classifier stopping the answer.
func finishReason(r ant.StopReason) providers.FinishReason {
	switch r {
	case ant.StopReasonEndTurn, ant.StopReasonStopSequence:
		return providers.FinishStop
	case ant.StopReasonMaxTokens, ant.StopReasonPauseTurn, ant.StopReasonModelContextWindowExceeded:
		return providers.FinishLength
	case ant.StopReasonToolUse:
		return providers.FinishToolCalls
	case ant.StopReasonRefusal:
		return providers.FinishContentFilter
	}
	return providers.FinishReason(r)
}
