package assistant

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// actor is who acts and where: the Engine, the user and the thread. It is
// the one tool-call site: the steps every tool call takes whoever makes it
// (the argument guard, the rate limit, the invocation or the proposal, the
// screening of the result and the audit rows) are its methods, shared by a
// turn's rounds, the continuation that carries out a decision or a
// client's results (both embed it through the turn) and
// Engine.ExecuteTool. A tool's Execute and Propose are called here and
// nowhere else.
type actor struct {
	e      *Engine
	u      parley.User
	thread store.Thread // zero until the thread exists (a turn's begin sets it)
}

// invoke runs one approved or Read call under the per-call timeout. An
// approved call is not cut short when the turn is stopped (a cancel, a newer
// message): a change the user approved runs to its end or its timeout,
// never to an unknown half-done state.
func (a *actor) invoke(ctx context.Context, o offeredTool, c providers.ToolCall, approved bool) (tools.Result, time.Duration) {
	if approved {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, span := a.e.tel.startTool(ctx, a.e.guard, c, false)
	tctx, cancel := context.WithTimeout(ctx, a.e.cfg.ToolTimeout)
	defer cancel()
	start := time.Now()
	res, err := tools.Invoke(tctx, o.tool, tools.Call{ID: c.ID, User: a.u, ThreadID: a.thread.ID, Args: c.Args, Approved: approved})
	took := time.Since(start)
	if err != nil {
		a.e.cfg.Logger.WarnContext(ctx, "assistant: tool failed", "tool", c.Name, "thread", a.thread.ID, "err", err)
	}
	span.end(ctx, a.e.guard, res, err)
	return res, took
}

// auditToolCall records one tool call: never the arguments, only their
// hash. transport is "chat" (the model called it), "client" (a client-side
// tool's posted result) or "http" (a host UI). approval says how a Mutate
// or Destructive call was approved; "" for Read tools.
// Every tool call's outcome passes here: it is counted (parley.tool.calls).
func (a *actor) auditToolCall(ctx context.Context, c providers.ToolCall, r tools.Result, d time.Duration, transport, approval string) {
	a.e.tel.toolCall(ctx, c.Name, transport, r)
	// A struct, its fields in the order a map's keys are written, encodes
	// as a map did at a fraction of the allocations.
	fields := struct {
		Approval   string `json:"approval,omitempty"`
		ArgsSHA256 string `json:"args_sha256"`
		CallID     string `json:"call_id"`
		Code       string `json:"code"`
		DurationMS int64  `json:"duration_ms"`
		Effect     string `json:"effect,omitempty"`
		OK         bool   `json:"ok"`
		Tool       string `json:"tool"`
		Transport  string `json:"transport"`
	}{approval, argsHash(c.Args), c.ID, errCode(r), d.Milliseconds(), "", r.OK, c.Name, transport}
	if reg := a.e.cfg.Tools; reg != nil {
		if tool, ok := reg.Lookup(c.Name); ok {
			fields.Effect = string(cmp.Or(tool.Spec().Effect, tools.Read))
		}
	}
	data, _ := json.Marshal(fields)
	ev := store.AuditEvent{Kind: AuditToolCall, ActorID: a.u.ID, ThreadID: a.thread.ID, Data: data, CreatedAt: a.e.cfg.Now()}
	if err := a.e.cfg.Store.AppendAudit(context.WithoutCancel(ctx), &ev); err != nil {
		a.e.cfg.Logger.ErrorContext(ctx, "assistant: audit tool call", "tool", c.Name, "thread", a.thread.ID, "err", err)
	}
}

// takeToolCall counts one tool call against the user's rate. A refusal is a
// recoverable error for the model, never a failed turn.
func (a *actor) takeToolCall(ctx context.Context) *tools.Result {
	cfg := &a.e.cfg
	if cfg.RateLimiter == nil || !cfg.ToolRate.Enabled() {
		return nil
	}
	err := cfg.RateLimiter.Take(ctx, "tool:"+a.u.ID, cfg.ToolRate, cfg.Now())
	if err == nil {
		return nil
	}
	if rle, ok := errors.AsType[*quota.RateLimitError](err); ok {
		a.e.tel.toolRateRefused(ctx)
		wait := max(rle.RetryAt.Sub(cfg.Now()).Round(time.Second), time.Second)
		return &tools.Result{Error: &tools.ToolError{
			Code: tools.CodeRateLimited, Retryable: true,
			Message: fmt.Sprintf("Too many tool calls: %d per %v are allowed. Try again in %v.", cfg.ToolRate.Calls, cfg.ToolRate.Per, wait),
			Hint:    "Answer from the results you already have, or tell the user to try again shortly.",
		}}
	}
	cfg.Logger.ErrorContext(ctx, "assistant: tool rate limiter", "user", a.u.ID, "err", err)
	r := tools.Fail(tools.CodeInternal, "The tool could not be run right now.")
	return &r
}

// auditGuard records a High or Critical guard result: categories, severity
// and action, never the matched text. Every finding, of any severity, is
// counted (parley.guard.findings).
func (a *actor) auditGuard(ctx context.Context, kind string, r guard.Result, extra map[string]string) {
	a.e.tel.guardFindings(ctx, kind, r)
	if r.Severity < guard.High {
		return
	}
	data := map[string]any{"severity": r.Severity, "action": r.Action, "categories": r.Categories()}
	for k, v := range extra {
		data[k] = v
	}
	raw, _ := json.Marshal(data)
	ev := store.AuditEvent{Kind: kind, ActorID: a.u.ID, ThreadID: a.thread.ID, Data: raw}
	if err := a.e.cfg.Store.AppendAudit(context.WithoutCancel(ctx), &ev); err != nil {
		a.e.cfg.Logger.ErrorContext(ctx, "assistant: audit guard finding", "kind", kind, "thread", a.thread.ID, "err", err)
	}
}

// checkArgs is the guard on the execution side: arguments that block never
// reach the tool, and the model gets an error it can act on. It returns the
// arguments as they may be shown and stored: shown is nil when nothing of
// them may be shown, and withheld reports that the stored model messages
// must not keep the original either.
func (a *actor) checkArgs(ctx context.Context, c providers.ToolCall) (shown json.RawMessage, withheld bool, refusal *tools.Result) {
	if a.e.guard == nil || len(c.Args) == 0 {
		return jsonOrNil(c.Args), false, nil
	}
	var r guard.Result
	if json.Valid(c.Args) {
		r = a.e.guard.CheckArgs(ctx, c.Args)
	} else {
		// Broken JSON is still text the model wrote: scan it as such (the
		// tool answers INVALID_ARGS unless the guard refuses first).
		r = a.e.guard.Check(ctx, string(c.Args))
	}
	if r.Cause != nil {
		a.e.cfg.Logger.ErrorContext(ctx, "assistant: argument guard failed closed", "tool", c.Name, "thread", a.thread.ID, "err", r.Cause)
	}
	a.auditGuard(ctx, AuditGuardToolArgs, r, map[string]string{"tool": c.Name, "args_sha256": argsHash(c.Args)})
	shown = jsonOrNil(c.Args)
	switch {
	case r.Action >= guard.Redact && (r.Cause != nil || !json.Valid([]byte(r.Redacted)) || r.Redacted == string(c.Args) && r.Action >= guard.Block && r.Injection() == guard.None):
		// Failed closed, too large, or nothing usable to show: show nothing.
		shown, withheld = nil, true
	case r.Redacted != string(c.Args):
		shown, withheld = json.RawMessage(r.Redacted), true
	}
	if r.Action >= guard.Block {
		res := tools.Fail(tools.CodeBlocked, "A security check refused these arguments ("+strings.Join(humanCategories(r), ", ")+").")
		res.Error.Hint = "Do not retry with the same content. Tell the user the request could not be carried out."
		return shown, withheld, &res
	}
	return shown, withheld, nil
}

// withheldArgs stands in, in the stored model messages, for arguments the
// guard redacted and that cannot be shown.
var withheldArgs = json.RawMessage(`{"_withheld":"the arguments were removed by the security filter"}`)

// screenResult is a tool message as the model may read it: content (the
// result's JSON, already cut to budget) as it is, fenced, or withheld, and
// how much of it was withheld: the number of records, or -1 for all of it.
// A result that holds a list of records is screened record by record when
// the whole would be withheld, so one poisoned record does not hide the
// others (see screenRecords). What is withheld is audited. source is
// "client" for a client-side tool's output, "" otherwise.
//
// The scan is not cut short when the turn is stopped: the result is stored
// for later turns either way, and a result withheld only because the scan
// was cancelled would hide a change that did happen.
func (a *actor) screenResult(ctx context.Context, c providers.ToolCall, content, source string, budget int) (string, int) {
	ctx = context.WithoutCancel(ctx)
	r, s := a.e.scanDocument(ctx, documentText(content))
	audit := func(r guard.Result, records int) {
		extra := map[string]string{"tool": c.Name, "call_id": c.ID}
		if source != "" {
			extra["source"] = source
		}
		if records > 0 {
			extra["records"] = strconv.Itoa(records)
		}
		a.auditGuard(ctx, AuditGuardToolResult, r, extra)
		a.e.cfg.Logger.InfoContext(ctx, "assistant: tool result withheld by the guard", "tool", c.Name, "thread", a.thread.ID, "records", records, "categories", r.Categories())
	}
	switch s {
	case screenWithhold:
		if out, fence, worst, n, ok := a.e.screenRecords(ctx, content); ok {
			audit(worst, n)
			if fence {
				out = fenceResult(c.Name, out, budget)
			}
			return out, n
		}
		audit(r, 0)
		return withheldResult(c.Name, resultOK(content), r), -1
	case screenFence:
		return fenceResult(c.Name, content, budget), 0
	}
	return content, 0
}

// propose turns a Mutate or Destructive call into a proposal: the tool's
// dry run (if it is a tools.Proposer), a stored proposal on the reply
// messageID and a confirm block. It reports false, with the Result for the
// model, when the call cannot be proposed, or the turn was stopped (then
// the user never sees the card, which is withdrawn).
func (a *actor) propose(ctx context.Context, c providers.ToolCall, o offeredTool, messageID string, stop *stopper, emit func(blocks.Block)) (tools.Result, bool) {
	sctx, span := a.e.tel.startTool(ctx, a.e.guard, c, true)
	pctx, cancel := context.WithTimeout(sctx, a.e.cfg.ToolTimeout)
	defer cancel()
	start := time.Now()
	r, err := tools.Propose(pctx, o.tool, tools.Call{ID: c.ID, User: a.u, ThreadID: a.thread.ID, Args: c.Args})
	if err != nil {
		a.e.cfg.Logger.WarnContext(sctx, "assistant: dry run failed", "tool", c.Name, "thread", a.thread.ID, "err", err)
	}
	span.end(sctx, a.e.guard, r, err)
	if !r.OK {
		return r, false // answered and audited by runTools
	}
	args := compactJSON(c.Args)
	// The card, and the proposal stored with it, show no credential the
	// dry run read (C9); the arguments themselves passed the guard.
	r = scrubResult(r) // before the cut below, which could leave half a key
	summary := plainLine(r.Summary, maxSummaryBytes)
	if summary == "" {
		summary = defaultSummary(o.spec, args)
	}
	token := newToken()
	now := a.e.cfg.Now()
	p := store.Proposal{
		Token: token, UserID: a.u.ID, ThreadID: a.thread.ID, MessageID: messageID, CallID: c.ID,
		Tool: c.Name, Args: args, ArgsHash: argsHash(args), Summary: summary, Status: store.ProposalPending,
		CreatedAt: now, ExpiresAt: now.Add(a.e.cfg.ApprovalTTL),
	}
	if err := a.e.cfg.Store.CreateProposal(context.WithoutCancel(ctx), &p); err != nil {
		a.e.cfg.Logger.ErrorContext(ctx, "assistant: store proposal", "tool", c.Name, "thread", a.thread.ID, "err", err)
		return tools.Fail(tools.CodeInternal, "The approval could not be prepared."), false
	}
	if stop.stopped() {
		// The user's stream has ended: they will never see this card, so it
		// must not stay decidable.
		if _, err := a.e.cfg.Store.DecideProposal(context.WithoutCancel(ctx), token, store.ProposalDeclined, a.e.cfg.Now()); err != nil {
			a.e.cfg.Logger.ErrorContext(ctx, "assistant: withdraw unseen proposal", "thread", a.thread.ID, "err", err)
		}
		return tools.Fail(tools.CodeInternal, "The turn was stopped before the approval could be asked for."), false
	}
	data := args
	if r.Data != nil {
		if raw, err := json.Marshal(r.Data); err == nil {
			data = raw
		}
	}
	emit(blocks.Block{Kind: blocks.Confirm, ID: token, Name: c.Name, Content: summary, CallID: c.ID, Effect: string(o.spec.Effect), Data: data})
	if r.UI != nil {
		emit(*r.UI)
	}
	a.auditToolCall(ctx, c, tools.Result{Error: &tools.ToolError{Code: tools.CodeNeedsApproval}}, time.Since(start), "chat", approvalPending)
	return r, true
}

// clientResult wraps a client's output as a tool result, after the guard:
// CheckArgs here for personal data and injection, as for arguments; answer
// then scans the result as a document, like a server-side tool's.
func (a *actor) clientResult(ctx context.Context, c providers.ToolCall, out json.RawMessage) tools.Result {
	if a.e.guard != nil {
		g := a.e.guard.CheckArgs(ctx, out)
		a.auditGuard(ctx, AuditGuardToolArgs, g, map[string]string{"tool": c.Name, "source": "client_result"})
		switch {
		case g.Action >= guard.Block:
			return tools.Fail(tools.CodeBlocked, "A security check refused this result ("+strings.Join(humanCategories(g), ", ")+").")
		case g.Action >= guard.Redact && json.Valid([]byte(g.Redacted)):
			out = json.RawMessage(g.Redacted)
		case g.Action >= guard.Redact:
			return tools.Fail(tools.CodeBlocked, "A security check withheld this result.")
		}
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return tools.Fail(tools.CodeInternal, "The user's application returned an unreadable result.")
	}
	return tools.OK("Result from the user's application.", v)
}

// auditContext audits the page context and entity texts of in that were
// withheld (those with a High or Critical finding: see auditGuard). It
// runs once the thread exists.
func (a *actor) auditContext(ctx context.Context, in *input) {
	if in.page == screenWithhold {
		a.auditGuard(ctx, AuditGuardContext, in.pageScan, map[string]string{"source": "page_context"})
	}
	for _, g := range in.entities {
		if g.screen == screenWithhold {
			a.auditGuard(ctx, AuditGuardContext, g.scan, map[string]string{"source": "entity", "type": g.ref.Type, "id": g.ref.ID})
		}
	}
}
