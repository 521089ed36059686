package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// continuation is what a turn answers that the thread's last turn left
// waiting: a decision on a confirm card, or the results of client-side
// tool calls. (Form answers become the turn's text.) admit checks it;
// only its methods change it after that.
type continuation struct {
	decision    *store.Proposal      // a decision turn: the proposal decided
	decided     store.ProposalStatus // applied or declined
	reason      string               // why the user declines, as they sent it (unscreened)
	tool        offeredTool          // the tool an apply runs
	applied     bool                 // the applied tool succeeded
	changed     bool                 // the turn that left this waiting made a change: the model reports it first
	clientCalls []blocks.Block       // a tool-results turn: the calls it answers
	results     []ToolResult         // and what the client posted for them
	quiet       error                // a decision out of budget: no model call, this says why
}

// continuationOf checks what req answers of what the last turn of thread
// th, whose messages are prior, left waiting, and returns it; for form
// answers, the text they make as the user's message. superseded are the
// ids of the thread's superseded messages: a card on one can no longer be
// decided.
func (e *Engine) continuationOf(ctx context.Context, u parley.User, th store.Thread, prior []store.Message,
	req Request, superseded map[string]bool) (continuation, string, error) {
	var c continuation
	switch {
	case req.Decision != nil:
		err := c.checkDecision(ctx, e, u, th, superseded, req.Decision)
		return c, "", err
	case len(req.ToolResults) > 0:
		calls, err := pendingResults(prior, req.ToolResults)
		c.clientCalls, c.results = calls, req.ToolResults
		if last, ok := lastTurn(prior); ok && err == nil {
			c.changed = madeChange(last, e.readOnly)
		}
		return c, "", err
	case req.Form != nil:
		text, err := formAnswers(prior, req, e.cfg.MaxMessageBytes)
		return c, text, err
	}
	return c, "", nil
}

// lastTurn returns the thread's last assistant message if it ended
// normally: only such a turn can leave calls or a form waiting.
func lastTurn(prior []store.Message) (store.Message, bool) {
	if len(prior) == 0 {
		return store.Message{}, false
	}
	m := prior[len(prior)-1]
	return m, m.Role == store.RoleAssistant && m.Status == store.StatusComplete
}

// pendingClientCalls are the client-side calls m ended with: ClientSide
// tool_call blocks not answered in m. (A thread stored before ClientSide
// marked them with a tag; the blocks package reads that as ClientSide.)
func pendingClientCalls(m store.Message) []blocks.Block {
	var calls []blocks.Block
	for _, b := range m.Blocks {
		switch {
		case b.Kind == blocks.ToolCall && b.ClientSide:
			calls = append(calls, b)
		case b.Kind == blocks.ToolResult:
			calls = slices.DeleteFunc(calls, func(c blocks.Block) bool { return c.ID == b.ID })
		}
	}
	return calls
}

// conflict is the refusal of a continuation that answers nothing pending,
// or of a decision on a card that can no longer be decided.
func conflict(op, msg string, err error) error {
	return &Error{Code: CodeConflict, Op: op, Err: err, Message: msg}
}

// pendingResults matches posted client results with the calls the last
// turn left waiting, and returns those calls. Every ID must be pending and
// given once.
func pendingResults(prior []store.Message, results []ToolResult) ([]blocks.Block, error) {
	const msg = "Those tool results do not answer a pending tool call."
	last, ok := lastTurn(prior)
	if !ok {
		return nil, conflict("tool results", msg, errors.New("the thread's last turn left nothing pending"))
	}
	pending := pendingClientCalls(last)
	seen := map[string]bool{}
	for _, r := range results {
		if seen[r.ID] || !slices.ContainsFunc(pending, func(b blocks.Block) bool { return b.ID == r.ID }) {
			return nil, conflict("tool results", msg, fmt.Errorf("result %q is not pending", r.ID))
		}
		seen[r.ID] = true
	}
	return pending, nil
}

// formAnswers renders the answers to the form the last turn ended with as
// the user's message, with the message req carries besides, at most max
// bytes.
func formAnswers(prior []store.Message, req Request, max int) (string, error) {
	last, ok := lastTurn(prior)
	i := -1
	if ok {
		i = slices.IndexFunc(last.Blocks, func(b blocks.Block) bool { return b.Kind == blocks.Form && b.ID == req.Form.ID })
	}
	if i < 0 {
		return "", conflict("form", "That form is no longer waiting for answers.", errors.New("no such pending form"))
	}
	var f Form
	if err := json.Unmarshal(last.Blocks[i].Data, &f); err != nil {
		return "", wrap(CodeInternal, "form", fmt.Errorf("stored form: %w", err))
	}
	text, err := renderAnswers(f, req.Form.Values)
	if err != nil {
		return "", &Error{Code: CodeInvalidRequest, Op: "form", Err: err, Message: "The answers are not valid: " + err.Error() + "."}
	}
	if msg := strings.TrimSpace(req.Message); msg != "" {
		text += "\n\n" + msg
	}
	if len(text) > max {
		return "", wrap(CodeTooLarge, "form", fmt.Errorf("answers are %d bytes, limit %d", len(text), max))
	}
	return text, nil
}

// Waiting is what a thread's last turn left for the user to answer, apart
// from confirm cards (see Engine.Proposals).
type Waiting struct {
	Form      string   // the id of the ask_user form waiting for answers, if any
	ToolCalls []string // ids of client-side calls waiting for their results
}

// WaitingOn reports what a thread whose messages are msgs (in order, as
// Engine.Thread returns them) waits on: the same rules a continuation
// request is checked against.
func WaitingOn(msgs []store.Message) Waiting {
	var w Waiting
	last, ok := lastTurn(msgs)
	if !ok {
		return w
	}
	for _, b := range last.Blocks {
		if b.Kind == blocks.Form {
			w.Form = b.ID
		}
	}
	for _, b := range pendingClientCalls(last) {
		w.ToolCalls = append(w.ToolCalls, b.ID)
	}
	return w
}

// checkDecision validates a decision of u before anything is written: the
// proposal exists and is u's (else CodeNotFound, so tokens of other users
// are indistinguishable from made-up ones), belongs to thread th, is still
// pending, unexpired and not on a superseded message (else CodeConflict),
// and for an apply, u may still use the tool. It does not consume the
// token; consume does.
func (c *continuation) checkDecision(ctx context.Context, e *Engine, u parley.User, th store.Thread, superseded map[string]bool, d *Decision) error {
	notFound := func(err error) error {
		return &Error{Code: CodeNotFound, Op: "decide", Err: err, Message: "That approval does not exist."}
	}
	if d.Token == "" || len(d.Token) > maxTokenBytes {
		return notFound(errors.New("malformed token"))
	}
	p, err := e.cfg.Store.GetProposal(ctx, d.Token)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound(err)
	case err != nil:
		return wrap(CodeInternal, "decide", err)
	case p.UserID != u.ID:
		return notFound(fmt.Errorf("proposal of user %q", p.UserID))
	case p.ThreadID != th.ID:
		return conflict("decide", "That approval belongs to another conversation.", errors.New("proposal of another thread"))
	case superseded[p.MessageID]:
		return conflict("decide", "That approval was for a part of the conversation that has since been edited.", errors.New("proposal of a superseded message"))
	}
	if err := decidable(p, e.cfg.Now()); err != nil {
		if p.Status == store.ProposalPending {
			// Expired while pending: the store records that as it refuses.
			_, _ = e.cfg.Store.DecideProposal(ctx, p.Token, store.ProposalDeclined, e.cfg.Now())
		}
		return err
	}
	if argsHash(p.Args) != p.ArgsHash {
		return wrap(CodeInternal, "decide", errors.New("stored arguments do not match their hash"))
	}
	c.decision, c.decided = &p, store.ProposalDeclined
	if !d.Apply {
		c.reason = strings.TrimSpace(d.Reason)
		return nil
	}
	c.decided = store.ProposalApplied
	o, ok := e.lookupTool(ctx, u, p.Tool)
	if !ok {
		return &Error{Code: CodeForbidden, Op: "decide", Err: fmt.Errorf("tool %q no longer available to the user", p.Tool),
			Message: "You can no longer apply that action."}
	}
	c.tool = o
	return nil
}

// decidable reports why p can no longer be decided, if it cannot.
func decidable(p store.Proposal, now time.Time) error {
	var msg string
	switch {
	case p.Status == store.ProposalApplied:
		msg = "That action was already applied."
	case p.Status == store.ProposalDeclined:
		msg = "That action was already declined."
	case p.Status == store.ProposalExpired || !now.Before(p.ExpiresAt):
		msg = "That approval has expired. Ask the assistant again."
	case p.Status != store.ProposalPending:
		msg = "That approval is no longer valid."
	default:
		return nil
	}
	return conflict("decide", msg, fmt.Errorf("proposal is %s", p.Status))
}

// consume decides the proposal in the store, atomically: of concurrent
// decisions on one token, one wins and the others get CodeConflict.
func (c *continuation) consume(ctx context.Context, e *Engine) error {
	p, err := e.cfg.Store.DecideProposal(ctx, c.decision.Token, c.decided, e.cfg.Now())
	switch {
	case errors.Is(err, store.ErrConflict):
		if derr := decidable(p, e.cfg.Now()); derr != nil {
			return derr
		}
		return conflict("decide", "That action was already decided.", err)
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeNotFound, Op: "decide", Err: err, Message: "That approval does not exist."}
	case err != nil:
		return wrap(CodeInternal, "decide", err)
	}
	*c.decision = p
	return nil
}

// reopen gives a decided card back when nothing ran: the turn could not be
// written, and the user may decide again once the store recovers.
func (c *continuation) reopen(ctx context.Context, e *Engine, threadID string, cause error) {
	if c.decision == nil || c.decision.DecidedAt == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if err := e.cfg.Store.ReopenProposal(rctx, c.decision.Token, *c.decision.DecidedAt); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: a decided proposal's turn could not be written and the proposal could not be reopened; its tool did not run",
			"thread", threadID, "tool", c.decision.Tool, "err", cause, "reopen_err", err)
	}
}

// quietly reports whether the turn may go on although the quota refused it
// (err): a decision is still carried out and reported, without a model
// call, and err says why.
func (c *continuation) quietly(err error) bool {
	if c.decision == nil || !errors.Is(err, ErrQuotaExceeded) && !errors.Is(err, ErrSpendCapExceeded) {
		return false
	}
	c.quiet = err
	return true
}

// decisionNote is the user's side of a decision turn, written by the
// server from the stored proposal: no client text reaches the model.
func decisionNote(p *store.Proposal, status store.ProposalStatus) string {
	if status == store.ProposalApplied {
		return "I approve: " + p.Summary
	}
	return "I decline: " + p.Summary + ". Do not do it."
}

// resume carries out, at the start of the turn, what the last turn left
// waiting: a consumed decision, or the client's results. Each call is
// recorded with its answer, so the model sees its proposed call answered
// and can acknowledge the outcome, never claim one that did not happen.
func (t *turn) resume(ctx context.Context, emit func(blocks.Block)) {
	answer := func(o outcome) {
		t.out.called("", []providers.ToolCall{o.call})
		t.answer(ctx, o, emit)
	}
	if t.cont.decision != nil {
		answer(t.cont.decide(ctx, &t.actor))
	}
	for _, b := range t.cont.clientCalls {
		answer(t.cont.clientAnswer(ctx, &t.actor, b))
	}
}

// decide carries out the decision: an apply runs the tool once, with the
// stored arguments, as a; a decline runs nothing.
func (c *continuation) decide(ctx context.Context, a *actor) outcome {
	p := c.decision
	call := providers.ToolCall{ID: p.CallID, Name: p.Tool, Args: p.Args}
	if call.ID == "" {
		call.ID = "call_" + truncate(p.Token, 8)
	}
	if c.decided != store.ProposalApplied {
		r := tools.Fail(tools.CodeDeclined, "The user declined this action. Nothing was changed.")
		r.Error.Hint = "Acknowledge the decision briefly; do not propose the same action again unless the user asks."
		reason := c.screenedReason(ctx, a.e)
		if reason != "" {
			r.Data = map[string]string{"reason": reason}
			r.Error.Hint = "Acknowledge the decision and the user's reason (data.reason) briefly; do not propose the same action again unless the user asks."
		}
		return outcome{call: call, result: r, via: "chat", approval: approvalDeclined, audit: true, reason: reason}
	}
	r, took := a.invoke(ctx, c.tool, call, true)
	c.applied = r.OK
	return outcome{call: call, result: r, took: took, via: "chat", approval: approvalUser, audit: true, data: true}
}

// screenedReason is the decline's reason as the model and the store may
// have it: the input guard screens it as it screens a message. A reason it
// blocks is dropped (the decline stands); one it redacts is kept redacted.
func (c *continuation) screenedReason(ctx context.Context, e *Engine) string {
	if c.reason == "" {
		return ""
	}
	v := e.checkInput(ctx, c.reason)
	if v.Action >= guard.Block {
		e.cfg.Logger.InfoContext(ctx, "assistant: a decline's reason was withheld by the input guard", "categories", v.Categories())
		return ""
	}
	return v.Redacted
}

// clientAnswer answers the pending client call b with what the client
// posted; a call the client left out is answered with an error. Outputs
// pass the guard like tool arguments (a.clientResult), and answer scans
// them as documents, like any tool's data.
func (c *continuation) clientAnswer(ctx context.Context, a *actor, b blocks.Block) outcome {
	call := providers.ToolCall{ID: b.ID, Name: b.Name, Args: b.Data}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage(`{}`)
	}
	i := slices.IndexFunc(c.results, func(r ToolResult) bool { return r.ID == b.ID })
	if i < 0 {
		r := tools.Fail(tools.CodeInternal, "The user's application returned no result for this call.")
		return outcome{call: call, result: r, via: "client", audit: true}
	}
	r := a.clientResult(ctx, call, c.results[i].Output)
	return outcome{call: call, result: r, via: "client", audit: true, data: true}
}

// report is how a decision turn that may not call the model ends (the
// user is out of budget): the server states the outcome in text, and
// warning says why the assistant does not answer.
func (c *continuation) report() (warning, text string) {
	text = "Declined: " + c.decision.Summary + "."
	switch {
	case c.decided == store.ProposalApplied && c.applied:
		text = "Done: " + c.decision.Summary + "."
	case c.decided == store.ProposalApplied:
		text = "This did not work: " + c.decision.Summary + "."
	}
	return userMessage(c.quiet), text
}

// madeChange reports whether reply m ran a Mutate or Destructive call that
// succeeded (readOnly tells Read tools): the turn it ended paused in the
// middle of its pace (see pace), which the next turn takes up.
func madeChange(m store.Message, readOnly func(name string) bool) bool {
	var msgs []providers.Message
	if len(m.ModelMessages) == 0 || json.Unmarshal(m.ModelMessages, &msgs) != nil {
		return false
	}
	names := map[string]string{}
	for _, pm := range msgs {
		for _, c := range pm.ToolCalls {
			names[c.ID] = c.Name
		}
		if name, ok := names[pm.ToolCallID]; ok && pm.Role == providers.Tool && !isMetaTool(name) && !readOnly(name) && resultOK(pm.Content) {
			return true
		}
	}
	return false
}
