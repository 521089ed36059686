package assistant

import (
	"context"
	"errors"
	"slices"

	"github.com/parleyhq/parley/store"
)

// Edit and regenerate (E4). A request may replace one of the thread's user
// messages with a new text (Request.Replaces), or the last one with itself
// to get a new answer (Request.Regenerate). The replaced message and every
// later one stay stored, marked superseded, for audit; the new turn is
// appended after them and continues the branch that ends before the
// replaced message. Cards shown by superseded turns are withdrawn.

// replacing finds the user message the turn replaces, among prior (the
// thread's messages), and for a regeneration the text to send again.
func (t *turn) replacing(prior []store.Message) (target store.Message, text string, err error) {
	req := t.req
	if req.Regenerate {
		// The last user message of the current branch that carried text.
		for _, m := range slices.Backward(prior) {
			if m.Role == store.RoleUser && m.SupersededAt == nil && m.Content != "" {
				return m, m.Content, nil
			}
		}
		return store.Message{}, "", conflict("regenerate", "There is no answer to regenerate.", errors.New("no user message"))
	}
	i := slices.IndexFunc(prior, func(m store.Message) bool { return m.ID == req.Replaces })
	if i < 0 || prior[i].Role != store.RoleUser {
		return store.Message{}, "", &Error{Code: CodeNotFound, Op: "replace", Err: errors.New("no such user message in the thread"),
			Message: "That message does not exist."}
	}
	if prior[i].SupersededAt != nil {
		return store.Message{}, "", conflict("replace", "That message was already replaced.", errors.New("superseded"))
	}
	return prior[i], req.Message, nil
}

// supersededIDs are the ids of prior's superseded messages, and of those a
// replacement of target supersedes (nil target: none).
func supersededIDs(prior []store.Message, target *store.Message) map[string]bool {
	ids := map[string]bool{}
	for _, m := range prior {
		if m.SupersededAt != nil || target != nil && m.Seq >= target.Seq {
			ids[m.ID] = true
		}
	}
	return ids
}

// withdrawSuperseded declines the cards still pending on messages the turn
// superseded: the conversation they belonged to is gone. A failure is
// logged; a card left pending is refused when decided (see checkDecision).
func (t *turn) withdrawSuperseded(ctx context.Context) {
	for _, p := range t.prompt.pending {
		if !t.cont.superseded[p.MessageID] {
			continue
		}
		if _, err := t.e.cfg.Store.DecideProposal(ctx, p.Token, store.ProposalDeclined, t.e.cfg.Now()); err != nil && !errors.Is(err, store.ErrConflict) {
			t.e.cfg.Logger.Error("assistant: withdraw a superseded card", "thread", t.thread.ID, "err", err)
		}
	}
	t.prompt.pending = slices.DeleteFunc(t.prompt.pending, func(p store.Proposal) bool { return t.cont.superseded[p.MessageID] })
}
