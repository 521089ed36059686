package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/blocks/uistream"
	"github.com/parleyhq/parley/store"
)

// uiMessagesOf converts a stored thread to the AI SDK's UIMessage list, the
// shape useChat takes as its initial messages, so a page restores a thread
// after a reload with the same parts that streamed. A user message is a
// text part (a decision's note, form answers and client results, which the
// server wrote, are left out: their outcome shows on the tool parts). An
// answer's blocks become parts as the stream made them: text (fenced code
// included), tool-<name> parts in their last state, data-<component> and
// data-warning parts. A card still pending is approval-requested; a
// decided one shows the decision.
func uiMessagesOf(msgs []store.Message, ps []store.Proposal) []map[string]any {
	decided := map[string]store.ProposalStatus{}
	for _, p := range ps {
		decided[p.Token] = p.Status
	}
	out := []map[string]any{}
	c := &uiConverter{decided: decided, tools: map[string]map[string]any{}, waiting: map[string][]map[string]any{}}
	for _, m := range msgs {
		switch m.Role {
		case store.RoleUser:
			if m.Source != store.SourceTyped {
				continue
			}
			out = append(out, map[string]any{"id": m.ID, "role": "user",
				"parts": []any{map[string]any{"type": "text", "text": m.Content}}})
		case store.RoleAssistant:
			parts := c.parts(m.Blocks)
			if len(parts) == 0 {
				continue
			}
			// A continuation's answer is part of the message the client
			// continued: the stream kept one message id.
			if n := len(out); n > 0 && out[n-1]["role"] == "assistant" {
				out[n-1]["parts"] = append(out[n-1]["parts"].([]any), parts...)
				continue
			}
			out = append(out, map[string]any{"id": m.ID, "role": "assistant", "parts": parts,
				"metadata": map[string]any{"messageId": m.ID, "threadId": m.ThreadID}})
		}
	}
	return out
}

// uiConverter turns answers into parts. Its tool parts outlive one answer:
// a continuation's answer holds the results of calls an earlier one made.
type uiConverter struct {
	decided map[string]store.ProposalStatus // card token -> status
	tools   map[string]map[string]any       // call id -> its part
	waiting map[string][]map[string]any     // tool name -> parts waiting for a card, in order
}

// parts are the UI parts of an answer's stored blocks.
func (c *uiConverter) parts(bs []blocks.Block) []any {
	decided, tools, lastByName := c.decided, c.tools, c.waiting
	parts := []any{}
	var text *strings.Builder
	flush := func() {
		if text != nil && text.Len() > 0 {
			parts = append(parts, map[string]any{"type": "text", "text": text.String(), "state": "done"})
		}
		text = nil
	}
	write := func(s string) {
		if text == nil {
			text = &strings.Builder{}
		}
		text.WriteString(s)
	}
	for _, b := range bs {
		switch b.Kind {
		case blocks.Markdown:
			write(b.Content)
		case blocks.Reasoning:
			flush()
			if n := len(parts); n > 0 {
				if p, ok := parts[n-1].(map[string]any); ok && p["type"] == "reasoning" {
					p["text"] = p["text"].(string) + b.Content
					continue
				}
			}
			parts = append(parts, map[string]any{"type": "reasoning", "text": b.Content, "state": "done"})
		case blocks.Code, blocks.Mermaid:
			if text != nil && text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
				write("\n")
			}
			write(uistream.Fenced(b))
		case blocks.ToolCall:
			flush()
			p := map[string]any{"type": "tool-" + b.Name, "toolCallId": b.ID, "state": "input-available", "input": rawOrNull(b.Data)}
			tools[b.ID] = p
			lastByName[b.Name] = append(lastByName[b.Name], p)
			parts = append(parts, p)
		case blocks.ToolResult:
			p := tools[b.ID]
			if p == nil {
				flush()
				p = map[string]any{"type": "tool-" + b.Name, "toolCallId": b.ID, "input": nil}
				tools[b.ID] = p
				parts = append(parts, p)
			}
			switch {
			case b.OK:
				p["state"], p["output"] = "output-available", map[string]string{"summary": b.Content}
			case b.ErrorCode == blocks.CodeDeclined:
				p["state"] = "output-denied"
			default:
				p["state"], p["errorText"] = "output-error", b.Content
			}
		case blocks.Confirm:
			waiting := lastByName[b.Name]
			if len(waiting) == 0 {
				continue
			}
			p := waiting[0]
			lastByName[b.Name] = waiting[1:]
			switch decided[b.ID] {
			case store.ProposalPending:
				p["state"], p["approval"] = "approval-requested", map[string]any{"id": b.ID}
			case store.ProposalApplied:
				p["approval"] = map[string]any{"id": b.ID, "approved": true}
			default: // declined or expired
				p["approval"] = map[string]any{"id": b.ID, "approved": false}
				if p["state"] == "input-available" {
					p["state"] = "output-denied"
				}
			}
		case blocks.Component:
			if b.Tag != "" {
				flush()
				parts = append(parts, map[string]any{"type": "data-" + b.Tag, "data": rawOrNull(b.Data)})
			}
		case blocks.Warning:
			flush()
			parts = append(parts, map[string]any{"type": "data-warning", "data": map[string]string{"text": b.Content}})
		}
	}
	flush()
	return parts
}

func rawOrNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage("null")
	}
	return raw
}

// uiMessages serves GET /api/chat/ui/{id}: the thread as useChat's initial
// messages, {"messages": [...]}.
func (h *Handler) uiMessages(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	_, msgs, err := h.eng.Thread(r.Context(), u, id, assistant.ThreadOptions{})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ps, err := h.eng.Proposals(r.Context(), u, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"messages": uiMessagesOf(msgs, ps)})
}
