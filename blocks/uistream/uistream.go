package uistream

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parleyhq/parley/blocks"
)

// Headers are the response headers of a UI message stream.
var Headers = map[string]string{
	"Content-Type":                  "text/event-stream",
	"Cache-Control":                 "no-cache",
	"Connection":                    "keep-alive",
	"X-Vercel-Ai-Ui-Message-Stream": "v1",
	"X-Accel-Buffering":             "no",
}

// Options configure an Encoder.
type Options struct {
	// MessageID is the id of the assistant message the stream writes, as
	// the client knows it. "" uses the message id of the first meta block.
	// A continuation (an approval, client tool output) must pass the id of
	// the message it continues, or the client shows a second message. Its
	// stream opens no step of its own: the outputs of the calls it answers
	// belong to the step that made them, and what follows opens the next.
	MessageID string
	// Answered are the calls whose outputs the client itself supplied
	// (client-side tools, forms): their results are not sent back, which
	// would replace the client's output with the server's summary.
	Answered []string
}

// Encoder writes blocks as UI message stream chunks. It is not safe for
// concurrent use.
type Encoder struct {
	w    io.Writer
	opts Options

	started   bool   // start was written
	text      string // the id of the open text part; "" when none
	reasoning string // the id of the open reasoning part; "" when none
	parts     int    // reasoning parts so far, for ids
	texts     int    // text parts so far, for ids
	lastNL    bool   // the open text part ends with a newline
	stepDone  bool   // a tool result closed the step: the next output opens one
	steps     int    // steps this stream opened
	finish    string // the finish reason of the last meta block
	meta      map[string]any
	in, out   int64               // tokens of the turns so far
	cards     cardCalls[struct{}] // announced calls that may still get a confirm card
	ended     bool                // an error chunk or Close was written
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer, opts Options) *Encoder {
	return &Encoder{w: w, opts: opts}
}

// chunk is one UI message chunk. Optional fields are left out of the map;
// input, output and data are always set, null when there is nothing.
type chunk map[string]any

// Block writes the chunks for b. After an error block, or Close, it
// writes nothing.
func (e *Encoder) Block(b blocks.Block) error {
	if e.ended {
		return nil
	}
	switch b.Kind {
	case blocks.Meta, blocks.Error, blocks.Load, blocks.Form:
	default:
		if !e.started {
			if err := e.start(nil); err != nil {
				return err
			}
		}
	}
	if b.Kind != blocks.Reasoning && b.Kind != blocks.Load {
		if err := e.closeReasoning(); err != nil {
			return err
		}
	}
	switch b.Kind {
	case blocks.Reasoning:
		if b.Content == "" {
			return nil
		}
		if err := e.step(); err != nil {
			return err
		}
		if err := e.closeText(); err != nil {
			return err
		}
		if e.reasoning == "" {
			e.parts++
			e.reasoning = fmt.Sprintf("reasoning-%d", e.parts)
			if err := e.write(chunk{"type": "reasoning-start", "id": e.reasoning}); err != nil {
				return err
			}
		}
		return e.write(chunk{"type": "reasoning-delta", "id": e.reasoning, "delta": b.Content})
	case blocks.Meta:
		return e.metaBlock(b.Meta)
	case blocks.Markdown:
		if b.Content == "" {
			return nil
		}
		return e.textDelta(b.Content)
	case blocks.Code, blocks.Mermaid:
		return e.textDelta(codeText(b, e.text != "" && !e.lastNL))
	case blocks.ToolCall:
		if err := e.step(); err != nil {
			return err
		}
		if err := e.closeText(); err != nil {
			return err
		}
		if !b.ClientSide {
			e.cards.add(b.ID, b.Name, struct{}{})
		}
		return e.write(chunk{"type": "tool-input-available", "toolCallId": b.ID, "toolName": b.Name, "input": jsonValue(b.Data)})
	case blocks.ToolResult:
		if slices.Contains(e.opts.Answered, b.ID) {
			e.stepDone = true
			return nil
		}
		if err := e.closeText(); err != nil {
			return err
		}
		e.cards.answered(b.ID)
		e.stepDone = true
		state, key, value := toolOutcome(b)
		c := chunk{"type": "tool-" + state, "toolCallId": b.ID}
		if key != "" {
			c[key] = value
		}
		return e.write(c)
	case blocks.Confirm:
		c, ok := e.cards.take(b.CallID, b.Name)
		if !ok {
			return nil // its call was not announced in this stream, or is answered: nothing to attach it to
		}
		return e.write(chunk{"type": "tool-approval-request", "approvalId": b.ID, "toolCallId": c.id})
	case blocks.Component, blocks.Warning:
		typ, data, ok := dataPart(b)
		if !ok {
			return nil
		}
		if err := e.closeText(); err != nil {
			return err
		}
		return e.write(chunk{"type": typ, "data": data})
	case blocks.Error:
		if err := e.closeText(); err != nil {
			return err
		}
		e.ended = true
		return e.write(chunk{"type": "error", "errorText": b.Content})
	}
	return nil // load placeholders and form blocks: nothing of their own
}

// Close ends the stream: the open text part, the step, finish and [DONE].
// After an error chunk it writes only [DONE].
func (e *Encoder) Close() error {
	if !e.ended {
		e.ended = true
		if err := e.closeText(); err != nil {
			return err
		}
		if err := e.closeReasoning(); err != nil {
			return err
		}
		if !e.started {
			if err := e.start(nil); err != nil {
				return err
			}
		}
		c := chunk{"type": "finish"}
		if r := FinishReason(e.finish); r != "" {
			c["finishReason"] = r
		}
		if len(e.meta) > 0 {
			c["messageMetadata"] = e.meta
		}
		if e.steps > 0 {
			if err := e.write(chunk{"type": "finish-step"}); err != nil {
				return err
			}
		}
		if err := e.write(c); err != nil {
			return err
		}
	}
	_, err := io.WriteString(e.w, "data: [DONE]\n\n")
	return err
}

// FinishReason maps a turn's finish (blocks.Finish*) to the protocol's
// finishReason; "" for none. A reason it does not know, such as one only
// the model's provider reports, is "other".
func FinishReason(finish string) string {
	switch finish {
	case "":
		return ""
	case blocks.FinishStop, blocks.FinishEmpty:
		return "stop"
	case blocks.FinishLength:
		return "length"
	case blocks.FinishTerminalTool, blocks.FinishToolCalls, blocks.FinishApproval, blocks.FinishClientTool, blocks.FinishAskUser:
		return "tool-calls"
	case blocks.FinishBlocked, blocks.FinishOffTopic:
		return "content-filter"
	case "error": // not the Engine's (a failed turn ends with an error block), but a provider's: OpenRouter reports it
		return "error"
	default:
		return "other"
	}
}

func (e *Encoder) metaBlock(m *blocks.MetaInfo) error {
	if m == nil {
		return nil
	}
	if m.Waiting != "" {
		// The model is busy and the turn waits: a status the client shows
		// and does not keep.
		if !e.started {
			if err := e.start(nil); err != nil {
				return err
			}
		}
		return e.write(chunk{"type": "data-status", "data": map[string]string{"waiting": m.Waiting}, "transient": true})
	}
	if m.Finish != "" || m.InputTokens != 0 || m.OutputTokens != 0 {
		// The last meta block of a turn: usage and why it ended.
		e.finish = m.Finish
		if e.meta == nil {
			e.meta = map[string]any{}
		}
		// Several turns in one response (decisions) add up.
		e.in, e.out = e.in+m.InputTokens, e.out+m.OutputTokens
		e.meta["inputTokens"] = e.in
		e.meta["outputTokens"] = e.out
		e.meta["finish"] = m.Finish
		return e.closeText()
	}
	md := map[string]any{}
	for k, v := range map[string]string{"threadId": m.ThreadID, "messageId": m.MessageID, "userMessageId": m.UserMessageID, "title": m.Title,
		"connection": m.Connection, "model": m.Model} {
		if v != "" {
			md[k] = v
		}
	}
	if e.started {
		// A second turn in one response (several decisions): the same
		// message goes on, with its ids; its output opens the next step.
		if err := e.closeText(); err != nil {
			return err
		}
		e.stepDone = true
		return e.write(chunk{"type": "message-metadata", "messageMetadata": md})
	}
	id := e.opts.MessageID
	if id == "" {
		id = m.MessageID
	}
	return e.start(md, id)
}

func (e *Encoder) start(md map[string]any, id ...string) error {
	e.started = true
	c := chunk{"type": "start"}
	if len(id) > 0 && id[0] != "" {
		c["messageId"] = id[0]
	} else if e.opts.MessageID != "" {
		c["messageId"] = e.opts.MessageID
	}
	if len(md) > 0 {
		c["messageMetadata"] = md
	}
	if err := e.write(c); err != nil {
		return err
	}
	if e.opts.MessageID != "" {
		e.stepDone = true // a continuation: the next output opens a step
		return nil
	}
	e.steps++
	return e.write(chunk{"type": "start-step"})
}

// step opens a new step if a tool result closed the last one.
func (e *Encoder) step() error {
	if !e.stepDone {
		return nil
	}
	e.stepDone = false
	if err := e.closeText(); err != nil {
		return err
	}
	if e.steps > 0 {
		if err := e.write(chunk{"type": "finish-step"}); err != nil {
			return err
		}
	}
	e.steps++
	return e.write(chunk{"type": "start-step"})
}

func (e *Encoder) textDelta(s string) error {
	if err := e.step(); err != nil {
		return err
	}
	if e.text == "" {
		e.texts++
		e.text = fmt.Sprintf("text-%d", e.texts)
		if err := e.write(chunk{"type": "text-start", "id": e.text}); err != nil {
			return err
		}
	}
	e.lastNL = strings.HasSuffix(s, "\n")
	return e.write(chunk{"type": "text-delta", "id": e.text, "delta": s})
}

func (e *Encoder) closeReasoning() error {
	if e.reasoning == "" {
		return nil
	}
	id := e.reasoning
	e.reasoning = ""
	return e.write(chunk{"type": "reasoning-end", "id": id})
}

func (e *Encoder) closeText() error {
	if e.text == "" {
		return nil
	}
	id := e.text
	e.text, e.lastNL = "", false
	return e.write(chunk{"type": "text-end", "id": id})
}

func (e *Encoder) write(c chunk) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.w, "data: %s\n\n", b)
	return err
}
