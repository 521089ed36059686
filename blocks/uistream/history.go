package uistream

import (
	"strings"

	"github.com/parleyhq/parley/blocks"
)

// Part is one part of a UIMessage as JSON: its "type" and that type's
// fields. A message's parts are what useChat takes as its initial
// messages.
type Part map[string]any

// Card is what the store knows of a confirm card, which its block does
// not say: how it stands, and the call it decides.
type Card struct {
	State CardState
	// CallID is the id of the call the card decides. History needs it only
	// for a card whose block was stored before blocks carried it
	// (blocks.Block.CallID); without either, the card goes to the oldest
	// waiting call of its tool.
	CallID string
}

// CardState is how a confirm card stands when its thread is read back.
type CardState uint8

// How a card stands. The zero value, CardClosed, is also how a card that
// History has no record of reads.
const (
	CardClosed  CardState = iota // declined or expired: the call was not approved
	CardPending                  // waiting for the user's decision
	CardApplied                  // approved, and the call carried out
)

// History turns a stored thread's answers into UIMessage parts: the parts
// the Encoder's chunks added up to when the answers streamed, so a page
// that reloads a thread shows what streamed. An answer's blocks become
// text parts (fenced code included), reasoning parts, tool-<name> parts in
// their last state, and data-<component> and data-warning parts. A
// confirm card puts its approval on the part of the call it decides (its
// CallID, or Cards' for a card stored without one): approval-requested
// while pending, approved true or false once decided, with the reason the
// user gave for a decline (kept on the declined call's result); a call
// whose card closed with no result is output-denied.
//
// One answer's blocks may change the parts of an earlier one: an answer
// that continues a turn holds the results of calls the earlier answer
// made. So convert a thread's answers in order, with one History. Its zero
// value is ready to use. A History is not safe for concurrent use.
type History struct {
	// Cards says how each confirm card stands, by token. A card it does
	// not name is closed.
	Cards map[string]Card

	calls map[string]Part // call id -> its part
	cards cardCalls[Part] // the parts of calls that may still get a card
}

// Parts returns the parts of one stored answer's blocks, none for an
// answer that shows nothing. Parts of earlier answers it updates are not
// returned again.
func (h *History) Parts(bs []blocks.Block) []Part {
	if h.calls == nil {
		h.calls = map[string]Part{}
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
			if !b.ClientSide {
				h.cards.add(b.ID, b.Name, p)
			}
			parts = append(parts, p)
		case blocks.ToolResult:
			h.cards.answered(b.ID)
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
			if ap, ok := p["approval"].(map[string]any); ok {
				if r := declineReason(b); r != "" {
					ap["reason"] = r // as useChat's addToolApprovalResponse keeps it
				}
			}
		case blocks.Confirm:
			card := h.Cards[b.ID]
			if b.CallID != "" {
				card.CallID = b.CallID
			}
			if c, ok := h.cards.take(card.CallID, b.Name); ok {
				approve(c.v, b.ID, card.State)
			} // else no call to attach it to
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

// approve puts the approval of card token, which stands as s, on its
// call's part p.
func approve(p Part, token string, s CardState) {
	switch s {
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
