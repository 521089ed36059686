package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
)

// Edit and regenerate (E4). A request may replace one of the thread's user
// messages with a new text (Request.Replaces), or the last one with itself
// to get a new answer (Request.Regenerate). The replaced message and every
// later one stay stored, marked superseded, for audit; the new turn is
// appended after them and continues the branch that ends before the
// replaced message. Cards shown by superseded turns are withdrawn.

// edit is what an edit or a regeneration replaces: a value, read-only once
// admit has it.
type edit struct {
	replaces *store.Message // the user message replaced; nil: the turn edits nothing
	text     string         // the text that replaces it: the new message, or for a regeneration the same
	retitle  bool           // it is the first user message, and the title is automatic
	// superseded are the ids of the thread's superseded messages, those
	// this edit supersedes included.
	superseded map[string]bool
	changes    []change // made by turns an edit replaced, which still stand
}

// editOf reads what req replaces among prior, the messages of thread th.
func (e *Engine) editOf(ctx context.Context, th store.Thread, prior []store.Message, req Request) (edit, error) {
	var ed edit
	if req.Replaces != "" || req.Regenerate {
		target, text, err := replacing(prior, req)
		if err != nil {
			return edit{}, err
		}
		ed.replaces, ed.text = &target, text
		if first := !slices.ContainsFunc(prior, func(m store.Message) bool {
			return m.Role == store.RoleUser && m.SupersededAt == nil && m.Seq < target.Seq
		}); first && !req.Regenerate {
			// The title follows the new text unless the user set it: it was
			// taken from the old text, or written by the model from it.
			byUser, err := e.titledByUser(ctx, th.ID)
			if err != nil {
				return edit{}, err
			}
			ed.retitle = !byUser
		}
	}
	ed.superseded = supersededIDs(prior, ed.replaces)
	// A change made by a turn this one or an earlier edit replaced still
	// stands: the model is told, and what was known before it is stale.
	ed.changes = changesMade(prior, ed.superseded, e.readOnly)
	return ed, nil
}

// withdraws reports whether a card the thread shows is withdrawn by this
// edit: it is on a message the edit supersedes.
func (ed *edit) withdraws(p store.Proposal) bool { return ed.superseded[p.MessageID] }

// replacing finds the user message req replaces, among prior (the
// thread's messages), and the text that replaces it.
func replacing(prior []store.Message, req Request) (target store.Message, text string, err error) {
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

// withdrawCards declines the pending cards the edit withdraws, once the
// turn that makes it is written: the conversation they belonged to is
// gone. A failure is logged; a card left pending is refused when decided
// (see checkDecision).
func (e *Engine) withdrawCards(ctx context.Context, ed edit, pending []store.Proposal) {
	for _, p := range pending {
		if ed.withdraws(p) {
			e.withdraw(ctx, p)
		}
	}
}

// withdrawSuperseded declines, and marks declined in ps, the pending cards
// whose message msgs shows superseded: also a card a turn on another
// instance made after the edit, before its poll saw it.
func (e *Engine) withdrawSuperseded(ctx context.Context, ps []store.Proposal, msgs []store.Message) {
	gone := supersededIDs(msgs, nil)
	for i, p := range ps {
		if p.Status == store.ProposalPending && gone[p.MessageID] {
			e.withdraw(ctx, p)
			ps[i].Status = store.ProposalDeclined
		}
	}
}

func (e *Engine) withdraw(ctx context.Context, p store.Proposal) {
	if _, err := e.cfg.Store.DecideProposal(context.WithoutCancel(ctx), p.Token, store.ProposalDeclined, e.cfg.Now()); err != nil && !errors.Is(err, store.ErrConflict) {
		e.cfg.Logger.ErrorContext(ctx, "assistant: withdraw a superseded card", "thread", p.ThreadID, "err", err)
	}
}

// change is a Mutate or Destructive call that ran in a turn an edit later
// replaced: the conversation that asked for it is gone, the change is not.
type change struct {
	tool, summary string
	at            time.Time
}

// changesMade lists the changes made by the replies of prior whose ids are
// in superseded (this turn's edit included), oldest first: calls of tools
// that are not Read tools (readOnly), answered with success.
func changesMade(prior []store.Message, superseded map[string]bool, readOnly func(name string) bool) []change {
	var out []change
	for _, m := range prior {
		if !superseded[m.ID] || m.Role != store.RoleAssistant || len(m.ModelMessages) == 0 {
			continue
		}
		var turn []providers.Message
		if json.Unmarshal(m.ModelMessages, &turn) != nil {
			continue
		}
		calls := map[string]string{}
		for _, pm := range completeCalls(turn) {
			switch pm.Role {
			case providers.Assistant:
				for _, c := range pm.ToolCalls {
					calls[c.ID] = c.Name
				}
			case providers.Tool:
				name, ok := calls[pm.ToolCallID]
				if !ok || isMetaTool(name) || readOnly(name) || !resultOK(pm.Content) {
					continue
				}
				var r struct {
					Summary string `json:"summary"`
				}
				if _, s := screenedForm(pm.Content); s == screenPass {
					// A screened result's summary stays out of the system prompt.
					_ = json.Unmarshal([]byte(pm.Content), &r)
				}
				out = append(out, change{tool: name, summary: plainLine(r.Summary, maxSummaryBytes), at: m.UpdatedAt})
			}
		}
	}
	return out
}

// writeChanges tells the model about changes the edited-away part of the
// conversation made, so it does not think they never happened.
func writeChanges(b *strings.Builder, cs []change) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("\n\n## Changes already made\n")
	b.WriteString("The user edited the conversation, and the messages that asked for these changes are gone, but the changes were made and still stand:\n")
	for _, c := range cs[max(0, len(cs)-20):] {
		b.WriteString("- ")
		b.WriteString(c.tool)
		if c.summary != "" {
			b.WriteString(": ")
			b.WriteString(untrustedEscaper.Replace(c.summary))
		}
		b.WriteByte('\n')
	}
}
