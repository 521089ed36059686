package anthropic

import (
	"encoding/json"
	"unicode/utf8"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers"
)

// maxModelName bounds the model name a server reports that is kept.
const maxModelName = 256

// wireEvent is the part of a stream event this package reads. A pointer
// is a field whose presence counts: nil when it is missing or null.
//
// anthropic-sdk-go decodes an event into its union type through its own
// reflection decoder, which keeps the raw JSON of every field: about 5 µs
// and 23 allocations for a text delta, 14 µs and 54 for message_start,
// where this type takes about 2 µs and 13, and 6 µs and 16. An event this
// type cannot hold (a field of an unexpected JSON type: a string index, a
// float token count) or that is not valid UTF-8 is decoded by
// anthropic-sdk-go instead, as before,
// so a server's quirks read as they did; FuzzWireEvent holds the two
// decodings equal. Two differences remain, in events no server sends: a
// key repeated within one object reads as its last (anthropic-sdk-go
// read the first), and a key in other case ("Text") matches as
// encoding/json matches it.
type wireEvent struct {
	Type         string           `json:"type"`
	Index        int64            `json:"index"`
	Message      wireMessage      `json:"message"`
	ContentBlock wireContentBlock `json:"content_block"`
	Delta        wireDelta        `json:"delta"`
	Usage        *wireDeltaUsage  `json:"usage"`
}

// wireMessage is message_start's message.
type wireMessage struct {
	Model string     `json:"model"`
	Usage *wireUsage `json:"usage"`
}

type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// wireContentBlock is content_block_start's block. Input is the raw JSON
// of the tool_use block's input, nil when it is missing.
type wireContentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

// wireDelta is content_block_delta's delta and message_delta's.
type wireDelta struct {
	Type        string         `json:"type"`
	Text        string         `json:"text"`
	Thinking    string         `json:"thinking"`
	PartialJSON string         `json:"partial_json"`
	StopReason  ant.StopReason `json:"stop_reason"`
}

// wireDeltaUsage is message_delta's usage, whose input counts may be
// missing.
type wireDeltaUsage struct {
	OutputTokens             int64  `json:"output_tokens"`
	InputTokens              *int64 `json:"input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

// UnmarshalJSON decodes data as a plain struct, and through
// anthropic-sdk-go's type when that fails; the error is anthropic-sdk-go's.
func (e *wireEvent) UnmarshalJSON(data []byte) error {
	type plain wireEvent
	// encoding/json makes each invalid UTF-8 byte U+FFFD, where the SDK's
	// decoder keeps the bytes: a character a server splits across two
	// chunks must join again in the assembled text or arguments.
	if utf8.Valid(data) && json.Unmarshal(data, (*plain)(e)) == nil {
		return nil
	}
	var sdk ant.MessageStreamEventUnion
	if err := json.Unmarshal(data, &sdk); err != nil {
		return err
	}
	*e = fromSDK(&sdk)
	return nil
}

// fromSDK is the part of ev this package reads.
func fromSDK(ev *ant.MessageStreamEventUnion) wireEvent {
	w := wireEvent{
		Type:  ev.Type,
		Index: ev.Index,
		Message: wireMessage{
			Model: string(ev.Message.Model),
		},
		ContentBlock: wireContentBlock{
			Type:     ev.ContentBlock.Type,
			Text:     ev.ContentBlock.Text,
			Thinking: ev.ContentBlock.Thinking,
			ID:       ev.ContentBlock.ID,
			Name:     ev.ContentBlock.Name,
		},
		Delta: wireDelta{
			Type:        ev.Delta.Type,
			Text:        ev.Delta.Text,
			Thinking:    ev.Delta.Thinking,
			PartialJSON: ev.Delta.PartialJSON,
			StopReason:  ev.Delta.StopReason,
		},
	}
	if raw := ev.ContentBlock.JSON.Input.Raw(); raw != "" {
		w.ContentBlock.Input = json.RawMessage(raw)
	}
	if ev.Message.JSON.Usage.Valid() {
		u := ev.Message.Usage
		w.Message.Usage = &wireUsage{
			InputTokens:              u.InputTokens,
			OutputTokens:             u.OutputTokens,
			CacheReadInputTokens:     u.CacheReadInputTokens,
			CacheCreationInputTokens: u.CacheCreationInputTokens,
		}
	}
	if ev.JSON.Usage.Valid() {
		u := ev.Usage
		w.Usage = &wireDeltaUsage{OutputTokens: u.OutputTokens}
		if u.JSON.InputTokens.Valid() {
			w.Usage.InputTokens = &u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			w.Usage.CacheReadInputTokens = &u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			w.Usage.CacheCreationInputTokens = &u.CacheCreationInputTokens
		}
	}
	return w
}

// event handles one stream event and reports whether the consumer wants
// more.
func event(a *providers.Assembler, ev wireEvent, yield func(providers.Event, error) bool) bool {
	if a.Finished() {
		// Nothing may follow the stop reason: the tool calls went out then.
		return true
	}
	switch ev.Type {
	case "message_start":
		if m := string(ev.Message.Model); m != "" && len(m) <= maxModelName {
			a.Model = m
		}
		if u := ev.Message.Usage; u != nil {
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
			if raw := string(cb.Input); raw != "" && raw != "null" && raw != "{}" {
				input = cb.Input
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
		if u := ev.Usage; u != nil {
			// message_delta counts are whole-message totals: output always,
			// the input counts when present.
			if a.Usage == nil {
				a.Usage = &providers.Usage{}
			}
			a.Usage.OutputTokens = u.OutputTokens
			if u.InputTokens != nil || u.CacheReadInputTokens != nil || u.CacheCreationInputTokens != nil {
				in := a.Usage.InputTokens - a.Usage.CachedInputTokens - a.Usage.CacheWriteInputTokens
				read, write := a.Usage.CachedInputTokens, a.Usage.CacheWriteInputTokens
				if u.InputTokens != nil {
					in = *u.InputTokens
				}
				if u.CacheReadInputTokens != nil {
					read = *u.CacheReadInputTokens
				}
				if u.CacheCreationInputTokens != nil {
					write = *u.CacheCreationInputTokens
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
