package assistant

import (
	"context"
	"errors"
	"slices"

	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/store"
)

// admit reads what the turn builds on, with nothing written: the autonomy
// grant, the tools offered, the thread with its history and waiting cards,
// and what the user says, checked against what the last turn left waiting
// (a decision, client results, form answers). It returns the thread's
// messages, and whether the text is the user's own and must be scanned.
func (t *turn) admit(ctx context.Context) (prior []store.Message, scan bool, err error) {
	e, u, req := t.e, t.u, t.req
	if req.Autonomous {
		if err := e.authorize(ctx, u, Action{Kind: RunAutonomous}); err != nil {
			return nil, false, err
		}
	}
	if t.prompt.instructions, err = e.instructions(ctx); err != nil {
		return nil, false, err
	}
	// Computed before any write: it consults the host's Registry and
	// Authorizer, and a failure there must leave nothing behind.
	t.fresh = req.ThreadID == ""
	if req.ThreadID != "" {
		th, err := e.thread(ctx, u, req.ThreadID, WriteThread)
		switch {
		case req.CreateThread && errors.Is(err, ErrNotFound):
			t.fresh = true // the write creates it with this id
		case err != nil:
			return nil, false, err
		default:
			if prior, err = e.cfg.Store.ListMessages(ctx, th.ID); err != nil {
				return nil, false, e.storeErr("load history", err)
			}
			t.thread = th
		}
	}
	// What the user says this turn: their message, their form answers, or
	// for a decision a note the server writes from the stored proposal.
	text, scan := req.Message, true
	branch := prior // what the turn continues
	if req.Replaces != "" || req.Regenerate {
		target, again, err := t.replacing(prior)
		if err != nil {
			return nil, false, err
		}
		t.cont.replaces, text = &target, again
		if first := !slices.ContainsFunc(prior, func(m store.Message) bool {
			return m.Role == store.RoleUser && m.SupersededAt == nil && m.Seq < target.Seq
		}); first && !req.Regenerate {
			// The title follows the new text unless the user set it: it was
			// taken from the old text, or written by the model from it.
			byUser, err := e.titledByUser(ctx, t.thread.ID)
			if err != nil {
				return nil, false, err
			}
			t.cont.retitle = !byUser
		}
		branch = slices.DeleteFunc(slices.Clone(prior), func(m store.Message) bool { return m.Seq >= target.Seq })
		if target.Seq <= t.thread.SummaryThrough {
			// The summary covers what is replaced; the write clears it.
			t.thread.Summary, t.thread.SummaryThrough = "", 0
		}
	}
	t.cont.superseded = supersededIDs(prior, t.cont.replaces)
	if !t.fresh {
		t.prompt.past = stretches(branch)
		t.prompt.summary = t.thread.Summary // compact plans the history itself
		t.know.rebuild(t.prompt.past, e.readOnly)
		t.prompt.pending = e.pendingProposals(ctx, t.thread.ID, prior)
		// A change made by a turn this one or an earlier edit replaced
		// still stands: the model is told, and what was known before it is
		// stale.
		t.prompt.changes = t.changesMade(prior, t.cont.superseded)
		if n := len(t.prompt.changes); n > 0 {
			t.know.forgetBefore(t.prompt.changes[n-1].at)
		}
	}
	switch {
	case req.Decision != nil:
		if err := t.checkDecision(ctx, req.Decision); err != nil {
			return nil, false, err
		}
		text, scan = decisionNote(t.cont.decision, t.cont.decided), false
	case len(req.ToolResults) > 0:
		err = t.checkToolResults(prior)
	case req.Form != nil:
		text, err = t.checkForm(prior)
	}
	if err != nil {
		return nil, false, err
	}
	// Unscanned until screen: the quota is reserved first.
	t.in = input{text: text, verdict: guard.Result{Redacted: text}, pageContext: req.PageContext}
	return prior, scan, nil
}

// screen runs the guard on the user's text and the page context. Nothing of
// a blocked message reaches the model, not even through tools: the model
// only writes a rejection. Client results sent with it are the
// application's data and are still answered. The system prompt is built
// again from what passed.
func (t *turn) screen(ctx context.Context, scan bool, prior []store.Message) {
	if scan {
		t.in.verdict = t.e.checkInput(ctx, t.in.text)
	}
	t.in.pageContext, t.in.pageScan, t.in.page = t.e.checkContext(ctx, t.req.PageContext)
	if !t.blocked() {
		t.ground(ctx)
	}
	if t.blocked() {
		t.tools.empty(t.e)
	}
	t.prompt.system = t.systemPrompt()
}
