package httpapi

import (
	"net/http"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks/uistream"
	"github.com/parleyhq/parley/store"
)

// uiMessagesOf converts a stored thread to the AI SDK's UIMessage list, the
// shape useChat takes as its initial messages, so a page restores a thread
// after a reload with the same parts that streamed. A user message is a
// text part (a decision's note, form answers and client results, which the
// server wrote, are left out: their outcome shows on the tool parts). An
// answer's parts are uistream.History's, with each card as its proposal
// stands (and, for a card stored without its call id, the proposal's).
func uiMessagesOf(msgs []store.Message, ps []store.Proposal) []map[string]any {
	h := uistream.History{Cards: make(map[string]uistream.Card, len(ps))}
	for _, p := range ps {
		h.Cards[p.Token] = uistream.Card{State: cardState(p.Status), CallID: p.CallID}
	}
	out := []map[string]any{}
	for _, m := range msgs {
		switch m.Role {
		case store.RoleUser:
			if m.Source != store.SourceTyped {
				continue
			}
			out = append(out, map[string]any{"id": m.ID, "role": "user",
				"parts": []uistream.Part{{"type": "text", "text": m.Content}}})
		case store.RoleAssistant:
			parts := h.Parts(m.Blocks)
			if len(parts) == 0 {
				continue
			}
			// A continuation's answer is part of the message the client
			// continued: the stream kept one message id.
			if n := len(out); n > 0 && out[n-1]["role"] == "assistant" {
				out[n-1]["parts"] = append(out[n-1]["parts"].([]uistream.Part), parts...)
				continue
			}
			out = append(out, map[string]any{"id": m.ID, "role": "assistant", "parts": parts,
				"metadata": map[string]any{"messageId": m.ID, "threadId": m.ThreadID}})
		}
	}
	return out
}

// cardState is how a card whose proposal has status s stands.
func cardState(s store.ProposalStatus) uistream.CardState {
	switch s {
	case store.ProposalPending:
		return uistream.CardPending
	case store.ProposalApplied:
		return uistream.CardApplied
	}
	return uistream.CardClosed // declined or expired
}

// uiMessages serves GET /api/chat/ui/{id}: the thread as useChat's initial
// messages, {"messages": [...]}. id is the chat id (or the thread's), as
// the Engine resolves it: another user's chat is 404 like an unknown one.
func (h *Handler) uiMessages(w http.ResponseWriter, r *http.Request, u parley.User) {
	id, ok := h.pathValue(w, r, "id")
	if !ok {
		return
	}
	th, msgs, err := h.eng.Thread(r.Context(), u, id, assistant.ThreadOptions{})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ps, err := h.eng.Proposals(r.Context(), u, th.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"messages": uiMessagesOf(msgs, ps)})
}
