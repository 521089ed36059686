package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Consent is the user's answer when a Mutate or Destructive call made for
// them by a program (an MCP client, an agent) asks for their approval: see
// ExecuteRequest.Confirm.
type Consent int

// Answers to a ConfirmFunc.
const (
	// NoAnswer: the user could not be asked (the client cannot show a
	// prompt), or gave no answer. Nothing runs; the call waits for the
	// user's decision in the app, on a confirm card.
	NoAnswer Consent = iota
	// Approved: the user approved this exact call. It runs once.
	Approved
	// Declined: the user refused it. Nothing runs.
	Declined
)

// Confirmation is what the user is asked to approve.
type Confirmation struct {
	Tool    string          // the tool's name
	Effect  tools.Effect    // Mutate or Destructive
	Summary string          // one line: what the call will do (the tool's dry run, else its name and arguments)
	Args    json.RawMessage // the validated arguments it runs with
}

// ConfirmFunc asks the user to approve one call. It returns Approved only
// when the user, not the program that made the call, approved it (an MCP
// client's elicitation is answered by its user). It is called at most once
// per call, after the gate, the guard, the rate limit and the schema passed.
type ConfirmFunc func(ctx context.Context, c Confirmation) Consent

// How a call made for the user by a program was approved, in audit rows
// (besides approvalUser, approvalDeclined and approvalPending).
const approvalConfirmed = "confirmed" // the user approved it when asked (ExecuteRequest.Confirm)

// confirmed carries out a Mutate or Destructive call that a program made
// for a.u: its arguments are validated and dry run, the user is asked
// (confirm), and the call runs only on their approval. Unanswered, it
// waits for their decision in the app (awaitDecision). It returns the
// result and how the call was approved, for the audit row.
func (a *actor) confirmed(ctx context.Context, o offeredTool, c *providers.ToolCall, transport string, confirm ConfirmFunc) (tools.Result, time.Duration, string) {
	// The dry run is a tool call of its own, traced as a turn's is.
	sctx, span := a.e.tel.startTool(ctx, a.e.guard, *c, true)
	pctx, cancel := context.WithTimeout(sctx, a.e.cfg.ToolTimeout)
	dry, err := tools.Propose(pctx, o.tool, tools.Call{ID: c.ID, User: a.u, ThreadID: a.thread.ID, Args: c.Args})
	cancel()
	if err != nil {
		a.e.cfg.Logger.WarnContext(sctx, "assistant: dry run failed", "tool", c.Name, "err", err)
	}
	span.end(sctx, a.e.guard, dry, err)
	if !dry.OK {
		return dry, 0, "" // invalid arguments, or the dry run refused: nothing to approve
	}
	args := compactJSON(c.Args)
	dry = scrubResult(dry)
	summary := plainLine(dry.Summary, maxSummaryBytes)
	if summary == "" {
		summary = defaultSummary(o.spec, args)
	}
	switch confirm(ctx, Confirmation{Tool: c.Name, Effect: o.spec.Effect, Summary: summary, Args: args}) {
	case Approved:
		r, took := a.invoke(ctx, o, *c, true)
		return r, took, approvalConfirmed
	case Declined:
		r := tools.Fail(tools.CodeDeclined, "The user declined this action. Nothing was changed.")
		r.Error.Blocked = true
		return r, 0, approvalDeclined
	}
	return a.awaitDecision(ctx, o, c, args, summary, transport, dry), 0, approvalPending
}

// awaitDecision leaves call c as a confirm card the user decides in the
// app: on a.thread, or a new thread, a turn whose user message is the
// server's note of the request and whose reply shows the card, and behind
// it a proposal bound to the user, that thread, the tool and the
// arguments, exactly like a card of a chat turn. Deciding it is a decision
// turn (Request.Decision): the same checks, and an apply runs the tool
// once. c's ID is made unique to the card. The result tells the caller
// where the card waits; it never carries the token.
func (a *actor) awaitDecision(ctx context.Context, o offeredTool, c *providers.ToolCall, args json.RawMessage, summary, transport string, dry tools.Result) tools.Result {
	ctx = context.WithoutCancel(ctx) // half a card is worse than none
	st := a.e.cfg.Store
	fail := func(op string, err error) tools.Result {
		a.e.cfg.Logger.Error("assistant: "+op, "tool", c.Name, "thread", a.thread.ID, "err", err)
		return tools.Fail(tools.CodeInternal, "The approval could not be prepared.")
	}
	token := newToken()
	c.ID = transport + "_" + newToken()[:16] // not the token's: the call id is seen where the token must not be
	th := a.thread
	if th.ID == "" {
		th = store.Thread{OwnerID: a.u.ID, Title: heuristicTitle("Approve: " + summary)}
		if err := st.CreateThread(ctx, &th); err != nil {
			return fail("create approval thread", err)
		}
	}
	now := a.e.cfg.Now()
	reply := store.Message{ID: uuid.NewString(), ThreadID: th.ID, Role: store.RoleAssistant, Status: store.StatusComplete}
	p := store.Proposal{
		Token: token, UserID: a.u.ID, ThreadID: th.ID, MessageID: reply.ID, CallID: c.ID,
		Tool: c.Name, Args: args, ArgsHash: argsHash(args), Summary: summary, Status: store.ProposalPending,
		CreatedAt: now, ExpiresAt: now.Add(a.e.cfg.ApprovalTTL),
	}
	if err := st.CreateProposal(ctx, &p); err != nil {
		return fail("store proposal", err)
	}
	data := args
	if dry.Data != nil {
		if raw, err := json.Marshal(dry.Data); err == nil {
			data = raw
		}
	}
	reply.Blocks = []blocks.Block{
		{Kind: blocks.ToolCall, ID: c.ID, Name: c.Name, Data: args},
		{Kind: blocks.Confirm, ID: token, Name: c.Name, Content: summary, CallID: c.ID, Effect: string(o.spec.Effect), Data: data},
	}
	if dry.UI != nil {
		reply.Blocks = append(reply.Blocks, *dry.UI)
	}
	// The model of a later decision turn sees its own call, answered by
	// the decision, as after a card of a chat turn.
	reply.ModelMessages, _ = json.Marshal([]providers.Message{{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: c.ID, Name: c.Name, Args: args}}}})
	user := store.Message{ThreadID: th.ID, Role: store.RoleUser, Status: store.StatusComplete,
		Content: "Requested over " + transport + ": " + summary}
	if err := st.AppendTurn(ctx, &user, &reply); err != nil {
		if _, derr := st.DecideProposal(ctx, token, store.ProposalDeclined, a.e.cfg.Now()); derr != nil && !errors.Is(derr, store.ErrNotFound) {
			a.e.cfg.Logger.Error("assistant: withdraw unseen proposal", "thread", th.ID, "err", derr)
		}
		return fail("store approval turn", err)
	}
	r := tools.Fail(tools.CodeNeedsApproval, "This action waits for the user's approval in the app: "+summary)
	r.Error.Hint = "Tell the user to open the conversation in the app and approve or decline it there. Do not call it again."
	r.Data = map[string]any{"status": "pending", "thread_id": th.ID, "expires_at": p.ExpiresAt.UTC().Format(time.RFC3339)}
	return r
}

// auditName is a tool name as an audit row may keep it: a name a program
// sent for a tool it may not use is kept only if it could name a tool.
func auditName(name string) string {
	if len(name) == 0 || len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		return "(invalid name)"
	}
	return name
}
