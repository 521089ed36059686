package assistant

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// propose turns a Mutate or Destructive call into a proposal: the tool's
// dry run (if it is a tools.Proposer), a stored proposal and a confirm
// block. It reports false, with the Result for the model, when the call
// cannot be proposed.
func (t *turn) propose(ctx context.Context, c providers.ToolCall, o offeredTool, emit func(blocks.Block)) (tools.Result, bool) {
	pctx, cancel := context.WithTimeout(ctx, t.e.cfg.ToolTimeout)
	defer cancel()
	start := time.Now()
	r, err := tools.Propose(pctx, o.tool, tools.Call{ID: c.ID, User: t.u, ThreadID: t.thread.ID, Args: c.Args})
	if err != nil {
		t.e.cfg.Logger.Warn("assistant: dry run failed", "tool", c.Name, "thread", t.thread.ID, "err", err)
	}
	if !r.OK {
		return r, false // answered and audited by runTools
	}
	args := compactJSON(c.Args)
	summary := plainLine(r.Summary, maxSummaryBytes)
	if summary == "" {
		summary = defaultSummary(o.spec, args)
	}
	token := newToken()
	now := t.e.cfg.Now()
	p := store.Proposal{
		Token: token, UserID: t.u.ID, ThreadID: t.thread.ID, MessageID: t.reply.ID, CallID: c.ID,
		Tool: c.Name, Args: args, ArgsHash: argsHash(args), Summary: summary, Status: store.ProposalPending,
		CreatedAt: now, ExpiresAt: now.Add(t.e.cfg.ApprovalTTL),
	}
	if err := t.e.cfg.Store.CreateProposal(context.WithoutCancel(ctx), &p); err != nil {
		t.e.cfg.Logger.Error("assistant: store proposal", "tool", c.Name, "thread", t.thread.ID, "err", err)
		return tools.Fail(tools.CodeInternal, "The approval could not be prepared."), false
	}
	if t.stopped() {
		// The user's stream has ended: they will never see this card, so it
		// must not stay decidable.
		if _, err := t.e.cfg.Store.DecideProposal(context.WithoutCancel(ctx), token, store.ProposalDeclined, t.e.cfg.Now()); err != nil {
			t.e.cfg.Logger.Error("assistant: withdraw unseen proposal", "thread", t.thread.ID, "err", err)
		}
		return tools.Fail(tools.CodeInternal, "The turn was stopped before the approval could be asked for."), false
	}
	data := args
	if r.Data != nil {
		if raw, err := json.Marshal(r.Data); err == nil {
			data = raw
		}
	}
	emit(blocks.Block{Kind: blocks.Confirm, ID: token, Name: c.Name, Content: summary, Tag: string(o.spec.Effect), Data: data})
	if r.UI != nil {
		emit(*r.UI)
	}
	t.auditToolCall(ctx, c, tools.Result{Error: &tools.ToolError{Code: tools.CodeNeedsApproval}}, time.Since(start), "chat", approvalPending)
	return r, true
}

// maxSummaryBytes bounds a proposal's one-line summary.
const maxSummaryBytes = 300

// defaultSummary describes a call of a tool that has no dry run.
func defaultSummary(spec tools.Spec, args json.RawMessage) string {
	s := spec.Name
	if string(args) != "{}" && len(args) > 0 {
		s += " " + string(args)
	}
	return plainLine(s, maxSummaryBytes)
}

// plainLine reduces s to one line of at most n bytes: control characters
// become spaces and runs of white space (line breaks included) one space.
// Unlike oneLine it keeps markup characters, so a card says exactly what
// will be stored ("a < b", "#3"); clients show it as text.
func plainLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return truncate(strings.Join(strings.Fields(s), " "), n)
}

// newToken returns 256 random bits, URL-safe. crypto/rand.Read never
// fails (it crashes the program if the system cannot supply randomness).
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// maxTokenBytes bounds a decision token before any lookup.
const maxTokenBytes = 128

// checkDecision validates a decision before anything is written: the
// proposal exists and is u's (else CodeNotFound, so tokens of other users
// are indistinguishable from made-up ones), belongs to this thread, is
// still pending and unexpired (else CodeConflict), and for an apply, u may
// still use the tool. It does not consume the token; consume does.
func (t *turn) checkDecision(ctx context.Context, d *Decision) error {
	e := t.e
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
	case p.UserID != t.u.ID:
		return notFound(fmt.Errorf("proposal of user %q", p.UserID))
	case p.ThreadID != t.thread.ID:
		return conflict("decide", "That approval belongs to another conversation.", errors.New("proposal of another thread"))
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
	t.cont.decision = &p
	t.cont.decided = store.ProposalDeclined
	if !d.Apply {
		return nil
	}
	t.cont.decided = store.ProposalApplied
	o, ok := e.lookupTool(ctx, t.u, p.Tool)
	if !ok {
		return &Error{Code: CodeForbidden, Op: "decide", Err: fmt.Errorf("tool %q no longer available to the user", p.Tool),
			Message: "You can no longer apply that action."}
	}
	t.cont.tool = o
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
func (t *turn) consume(ctx context.Context) error {
	p, err := t.e.cfg.Store.DecideProposal(ctx, t.cont.decision.Token, t.cont.decided, t.e.cfg.Now())
	switch {
	case errors.Is(err, store.ErrConflict):
		if derr := decidable(p, t.e.cfg.Now()); derr != nil {
			return derr
		}
		return conflict("decide", "That action was already decided.", err)
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeNotFound, Op: "decide", Err: err, Message: "That approval does not exist."}
	case err != nil:
		return wrap(CodeInternal, "decide", err)
	}
	*t.cont.decision = p
	return nil
}

// decisionNote is the user's side of a decision turn, written by the
// server from the stored proposal: no client text reaches the model.
func decisionNote(p *store.Proposal, status store.ProposalStatus) string {
	if status == store.ProposalApplied {
		return "I approve: " + p.Summary
	}
	return "I decline: " + p.Summary + ". Do not do it."
}

// runDecision carries out a consumed decision at the start of the turn:
// an apply runs the tool once, with the stored arguments; a decline runs
// nothing. Either way the model sees its proposed call answered, so it can
// acknowledge the outcome, never claim one that did not happen.
func (t *turn) runDecision(ctx context.Context, emit func(blocks.Block)) {
	p := t.cont.decision
	c := providers.ToolCall{ID: p.CallID, Name: p.Tool, Args: p.Args}
	if c.ID == "" {
		c.ID = "call_" + truncate(p.Token, 8)
	}
	var r tools.Result
	var d time.Duration
	approval := approvalDeclined
	if t.cont.decided == store.ProposalApplied {
		approval = approvalUser
		r, d = t.invoke(ctx, t.cont.tool, c, true)
		t.cont.applied = r.OK
	} else {
		r = tools.Fail(tools.CodeDeclined, "The user declined this action. Nothing was changed.")
		r.Error.Hint = "Acknowledge the decision briefly; do not propose the same action again unless the user asks."
	}
	t.answerCall(ctx, c, r, d, "chat", approval, emit)
}

// answerCall records a call that an earlier turn left waiting and its
// result: blocks for the user, both halves for the model, an audit row.
func (t *turn) answerCall(ctx context.Context, c providers.ToolCall, r tools.Result, d time.Duration, transport, approval string, emit func(blocks.Block)) {
	t.out.callIDs[c.ID] = true
	t.out.msgs = append(t.out.msgs, providers.Message{Role: providers.Assistant, ToolCalls: []providers.ToolCall{c}})
	t.answer(ctx, c, r, d, transport, approval, true, emit)
}

// lookupTool finds a tool u may use, on any page, that the server runs.
func (e *Engine) lookupTool(ctx context.Context, u parley.User, name string) (offeredTool, bool) {
	if e.cfg.Tools == nil {
		return offeredTool{}, false
	}
	tool, ok := e.cfg.Tools.Lookup(name)
	if !ok {
		return offeredTool{}, false
	}
	spec := tool.Spec()
	if spec.ClientSide || e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: &spec}) != nil {
		return offeredTool{}, false
	}
	return offeredTool{spec: spec, tool: tool}, true
}

// reportDecision ends a decision turn that may not call the model (the user
// is out of budget): the server states the outcome, and a warning says why
// the assistant does not answer.
func (t *turn) reportDecision(emit func(blocks.Block)) {
	text := "Declined: " + t.cont.decision.Summary + "."
	switch {
	case t.cont.decided == store.ProposalApplied && t.cont.applied:
		text = "Done: " + t.cont.decision.Summary + "."
	case t.cont.decided == store.ProposalApplied:
		text = "This did not work: " + t.cont.decision.Summary + "."
	}
	emit(blocks.Block{Kind: blocks.Warning, Content: userMessage(t.cont.quiet)})
	emit(blocks.Block{Kind: blocks.Markdown, Content: text})
	t.out.say(text)
	t.out.textSeen, t.out.finish = true, FinishQuota
}

// pendingProposals are the cards of a thread whose messages are prior that
// still wait for a decision. A thread that never showed a card costs no
// query. A failure only costs the prompt its reminder, so it is logged.
func (e *Engine) pendingProposals(ctx context.Context, threadID string, prior []store.Message) []store.Proposal {
	if !slices.ContainsFunc(prior, func(m store.Message) bool {
		return slices.ContainsFunc(m.Blocks, func(b blocks.Block) bool { return b.Kind == blocks.Confirm })
	}) {
		return nil
	}
	ps, err := e.cfg.Store.ListProposals(ctx, threadID)
	if err != nil {
		e.cfg.Logger.Warn("assistant: list proposals", "thread", threadID, "err", err)
		return nil
	}
	now := e.cfg.Now()
	return slices.DeleteFunc(ps, func(p store.Proposal) bool {
		return p.Status != store.ProposalPending || !now.Before(p.ExpiresAt)
	})
}
