package uistream

import (
	"strings"

	"github.com/parleyhq/parley/blocks"
)

// Part is one part of a UIMessage as JSON: its "type" and that type's
// fields. A message's parts are what useChat takes as its initial
// messages.
type Part map[string]any

// Card is how a confirm card stands when its thread is read back.
type Card uint8

// How a card stands. The zero value, CardClosed, is also what a card that
// History has no record of reads as.
const (
	CardClosed  Card = iota // declined or expired: the call was not approved
	CardPending             // waiting for the user's decision
	CardApplied             // approved, and the call carried out
)

// History turns a stored thread's answers into UIMessage parts: the parts
// the Encoder's chunks added up to when the answers streamed, so a page
// that reloads a thread shows what streamed. An answer's blocks become
// text parts (fenced code included), reasoning parts, tool-<name> parts in
// their last state, and data-<component> and data-warning parts. A
// confirm card puts its approval on its call's part: approval-requested
// while pending, approved true or false once decided; a call whose card
// closed with no result is output-denied.
//
// One answer's blocks may change the parts of an earlier one: an answer
// that continues a turn holds the results of calls the earlier answer
// made. So convert a thread's answers in order, with one History. Its zero
// value is ready to use. A History is not safe for concurrent use.
type History struct {
	// Cards says how each confirm card stands, by token. A card it does
	// not name is closed.
	Cards map[string]Card

	calls   map[string]Part   // call id -> its part
	waiting map[string][]Part // tool name -> parts waiting for a card, in order
}

// Parts returns the parts of one stored answer's blocks, none for an
// answer that shows nothing. Parts of earlier answers it updates are not
// returned again.
func (h *History) Parts(bs []blocks.Block) []Part {
	if h.calls == nil {
		h.calls, h.waiting = map[string]Part{}, map[string][]Part{}
	}
	var parts []Part
	var text strings.Builder // the open text part
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, Part{"type": "text", "text": text.String(), "state": "done"})
			text.Reset()
		}
	}
	for _, b := range bs {
		switch b.Kind {
		case blocks.Markdown:
			text.WriteString(b.Content)
		case blocks.Code, blocks.Mermaid:
			text.WriteString(codeText(b, text.Len() > 0 && !strings.HasSuffix(text.String(), "\n")))
		case blocks.Reasoning:
			flush()
			if n := len(parts); n > 0 && parts[n-1]["type"] == "reasoning" {
				parts[n-1]["text"] = parts[n-1]["text"].(string) + b.Content
				continue
			}
			parts = append(parts, Part{"type": "reasoning", "text": b.Content, "state": "done"})
		case blocks.ToolCall:
			flush()
			p := Part{"type": "tool-" + b.Name, "toolCallId": b.ID, "state": "input-available", "input": jsonValue(b.Data)}
			h.calls[b.ID] = p
			h.waiting[b.Name] = append(h.waiting[b.Name], p)
			parts = append(parts, p)
		case blocks.ToolResult:
			p := h.calls[b.ID]
			if p == nil {
				// A result whose call is not in the thread: a part of its own.
				flush()
				p = Part{"type": "tool-" + b.Name, "toolCallId": b.ID, "input": nil}
				h.calls[b.ID] = p
				parts = append(parts, p)
			}
			state, key, value := toolOutcome(b)
			p["state"] = state
			if key != "" {
				p[key] = value
			}
		case blocks.Confirm:
			waiting := h.waiting[b.Name]
			if len(waiting) == 0 {
				continue // no call to attach it to
			}
			p := waiting[0]
			h.waiting[b.Name] = waiting[1:]
			h.approval(p, b.ID)
		case blocks.Component, blocks.Warning:
			if typ, data, ok := dataPart(b); ok {
				flush()
				parts = append(parts, Part{"type": typ, "data": data})
			}
		}
	}
	flush()
	return parts
}

// approval puts the approval of card token on its call's part p.
func (h *History) approval(p Part, token string) {
	switch h.Cards[token] {
	case CardPending:
		p["state"], p["approval"] = "approval-requested", map[string]any{"id": token}
	case CardApplied:
		p["approval"] = map[string]any{"id": token, "approved": true}
	default:
		p["approval"] = map[string]any{"id": token, "approved": false}
		if p["state"] == "input-available" {
			p["state"] = "output-denied"
		}
	}
}
