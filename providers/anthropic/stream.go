package anthropic

import (
	"encoding/json"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers"
)

// event handles one stream event and reports whether the consumer wants
// more.
// maxModelName bounds the model name a server reports that is kept.
const maxModelName = 256

func event(a *providers.Assembler, ev ant.MessageStreamEventUnion, yield func(providers.Event, error) bool) bool {
	if a.Finished() {
		// Nothing may follow the stop reason: the tool calls went out then.
		return true
	}
	switch ev.Type {
	case "message_start":
		if m := string(ev.Message.Model); m != "" && len(m) <= maxModelName {
			a.Model = m
		}
		if ev.Message.JSON.Usage.Valid() {
			u := ev.Message.Usage
			a.Usage = &providers.Usage{OutputTokens: u.OutputTokens}
			setInput(a.Usage, u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
		}
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			return emit(providers.TextDelta, cb.Text, yield)
		case "thinking":
			return emit(providers.ReasoningDelta, cb.Thinking, yield)
		case "tool_use":
			// The block opens with an input that stands only when no
			// input_json_delta follows; {} and null are placeholders.
			var input json.RawMessage
			if raw := cb.JSON.Input.Raw(); raw != "" && raw != "null" && raw != "{}" {
				input = json.RawMessage(raw)
			}
			return a.Start(ev.Index, cb.ID, cb.Name, input, yield)
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
			// Only tool_use blocks are opened: server tool blocks
			// (server_tool_use) stream their input too, and are not calls.
			if a.Open(ev.Index) {
				return a.Append(ev.Index, "", "", d.PartialJSON, yield)
			}
		}
		// signature_delta and citations_delta are not shown.
	case "message_delta":
		if ev.JSON.Usage.Valid() {
			// message_delta counts are whole-message totals: output always,
			// the input counts when present.
			u := ev.Usage
			if a.Usage == nil {
				a.Usage = &providers.Usage{}
			}
			a.Usage.OutputTokens = u.OutputTokens
			if u.JSON.InputTokens.Valid() || u.JSON.CacheReadInputTokens.Valid() || u.JSON.CacheCreationInputTokens.Valid() {
				in := a.Usage.InputTokens - a.Usage.CachedInputTokens - a.Usage.CacheWriteInputTokens
				read, write := a.Usage.CachedInputTokens, a.Usage.CacheWriteInputTokens
				if u.JSON.InputTokens.Valid() {
					in = u.InputTokens
				}
				if u.JSON.CacheReadInputTokens.Valid() {
					read = u.CacheReadInputTokens
				}
				if u.JSON.CacheCreationInputTokens.Valid() {
					write = u.CacheCreationInputTokens
				}
				setInput(a.Usage, in, read, write)
			}
		}
		if ev.Delta.StopReason != "" {
			return a.Finish(finishReason(ev.Delta.StopReason), yield)
		}
	}
	// ping is consumed by the SDK; message_stop, content_block_stop and
	// event types added later need nothing.
	return true
}

// setInput records the input counts in u. Anthropic's input_tokens leaves
// out the cached tokens; providers.Usage.InputTokens is the whole prompt.
func setInput(u *providers.Usage, uncached, read, write int64) {
	u.InputTokens = uncached + read + write
	u.CachedInputTokens = read
	u.CacheWriteInputTokens = write
}

func emit(kind providers.EventKind, text string, yield func(providers.Event, error) bool) bool {
	if text == "" {
		return true
	}
	return yield(providers.Event{Kind: kind, Text: text}, nil)
}

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
