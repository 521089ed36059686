package assistant

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// ExecuteRequest is a direct tool call from the host's own UI, outside a
// chat turn.
type ExecuteRequest struct {
	Tool     string          // the tool's name
	Args     json.RawMessage // its arguments; empty means {}
	ThreadID string          // optional: the user's thread the call belongs to
	Page     string          // the page the UI is on; page-tagged tools need it
	// Transport names the wire in the audit row ("mcp"); "" is "http".
	Transport string
	// Confirm, when set, says the call was made for the user by a program
	// (an MCP client, an agent), not by the user pressing a button: a
	// Mutate or Destructive tool then runs only if Confirm returns
	// Approved, and an unanswered call waits for the user's decision in
	// the app (see Consent). nil: the user asked for it themselves.
	Confirm ConfirmFunc
}

// ExecuteTool runs a tool for u directly, as a host UI does when the user
// presses a button. It passes the same gate as a model's call: the tool
// must be one Tools(u, page) lists and not client-side, else CodeNotFound, whether it does not
// exist or u may not use it. The arguments go through the guard and the
// schema, the call counts against ToolRate, and it is audited with
// req.Transport; the tokens a model-backed guard judge spends on the
// arguments are charged to u (see ChargeGuardUsage). Arguments longer than
// Config.MaxMessageBytes are refused with CodeTooLarge before anything
// reads them, and arguments holding a NUL with CodeInvalidRequest. Because
// the user asked for it themselves, Mutate and Destructive tools run
// without a proposal, unless req.Confirm says a program asked: then they
// run only on the user's approval (see Consent), and a call of a tool u
// may not use is audited too. The Result comes back scrubbed of
// credentials, as a chat turn would show it. Tool failures are in the
// Result; the error is for the
// gate and infrastructure.
func (e *Engine) ExecuteTool(ctx context.Context, u parley.User, req ExecuteRequest) (tools.Result, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return tools.Result{}, err
	}
	transport := cmp.Or(req.Transport, "http")
	if len(req.Args) > e.cfg.MaxMessageBytes {
		// Refused before the guard or the schema reads a byte of it.
		return tools.Result{}, &Error{Code: CodeTooLarge, Op: "execute tool", Message: "The tool arguments are too long.",
			Err: fmt.Errorf("arguments are %d bytes, limit %d", len(req.Args), e.cfg.MaxMessageBytes)}
	}
	if jsonHasNUL(req.Args) {
		return tools.Result{}, invalidRequest("execute tool", "the tool arguments contain a NUL character")
	}
	offered := e.offeredTools(ctx, u, req.Page)
	i := slices.IndexFunc(offered, func(o offeredTool) bool { return o.spec.Name == req.Tool })
	if i < 0 || offered[i].spec.ClientSide {
		if a := (&actor{e: e, u: u}); req.Confirm != nil && a.takeToolCall(ctx) == nil {
			// A program's call of a tool it may not use is audited: it
			// probes, where a host's button does not. It counts against
			// the tool rate, which bounds the rows a prober writes.
			a.auditToolCall(ctx, providers.ToolCall{ID: transport + "_refused", Name: auditName(req.Tool), Args: req.Args},
				tools.Result{Error: &tools.ToolError{Code: tools.CodeUnknownTool}}, 0, transport, "")
		}
		return tools.Result{}, &Error{Code: CodeNotFound, Op: "execute tool", Err: errors.New("tool not offered to the user"), Message: "There is no such tool."}
	}
	o := offered[i]
	var th store.Thread
	if req.ThreadID != "" {
		var err error
		if th, err = e.thread(ctx, u, req.ThreadID, WriteThread); err != nil {
			return tools.Result{}, err
		}
	}
	a := &actor{e: e, u: u, thread: th}
	call := providers.ToolCall{ID: transport + "_" + req.Tool, Name: req.Tool, Args: req.Args}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage(`{}`)
	}
	var r tools.Result
	var took time.Duration
	approval := ""
	if o.spec.NeedsApproval() && req.Confirm == nil {
		approval = approvalUser
	}
	if refusal, refused, err := e.admitExecute(ctx, a, call, transport, approval); refused || err != nil {
		return refusal, err
	}
	// A model-backed judge's tokens are u's, as in a turn: the arguments'
	// scan, and the tool span's redaction of recorded content.
	var judged judgeSpend
	ctx = withJudgeSpend(ctx, &judged)
	defer e.chargeJudged(context.WithoutCancel(ctx), u, &judged)
	_, withheld, argsRefusal := a.checkArgs(ctx, call)
	switch {
	case argsRefusal != nil:
		r = *argsRefusal
	case withheld && o.spec.NeedsApproval() && req.Confirm != nil:
		// What the user is asked to approve must be what the guard saw.
		r = refusal(tools.CodeBlocked, "These arguments contain data that cannot be sent for approval.",
			"Do not retry with the same content.")
	default:
		if o.spec.NeedsApproval() && req.Confirm != nil {
			r, took, approval = a.confirmed(ctx, o, &call, transport, req.Confirm)
		} else {
			// The user asked for it: it runs as approved, to its end or its
			// timeout even if the caller leaves.
			r, took = a.invoke(ctx, o, call, true)
		}
	}
	a.auditToolCall(ctx, call, r, took, transport, approval)
	return scrubResult(r), nil
}

// admitExecute takes the tool rate before the guard reads a call's
// arguments, and with a model-backed judge checks the quota too, as a turn
// reserves before its scan: a caller over either gets no scan, and the
// audit rows a caller writes are bounded by the rate whatever the guard
// says. It returns the refusal (audited), or the quota's error.
func (e *Engine) admitExecute(ctx context.Context, a *actor, call providers.ToolCall, transport, approval string) (tools.Result, bool, error) {
	if r := a.takeToolCall(ctx); r != nil {
		a.auditToolCall(ctx, call, *r, 0, transport, approval)
		return scrubResult(*r), true, nil
	}
	if e.guard.HasJudge() {
		h, err := e.reserve(ctx, a.u, e.defaultSpendKey(a.u), 1)
		if err != nil {
			return tools.Result{}, false, err
		}
		e.release(context.WithoutCancel(ctx), a.u, h)
	}
	return tools.Result{}, false, nil
}

// ScreenForModel is the text another model may read of r, the result of
// tool that ExecuteTool ran for u: where a result goes to a model that is
// not this Engine's (an MCP client's), it is screened as a chat turn
// screens a tool result for its own. That is r's envelope
// (tools.MarshalForModel, scrubbed of credentials), or, when the guard
// finds instructions planted in it, the envelope with the records that
// hold them withheld, the whole fenced as data, or a notice that it was
// withheld; withheld is the number of records withheld, or -1 for all of
// it. What is withheld is audited (AuditGuardToolResult, source
// "direct"). The tokens a model-backed guard judge spends are charged to
// u, as ExecuteTool's are.
func (e *Engine) ScreenForModel(ctx context.Context, u parley.User, tool string, r tools.Result) (text string, withheld int) {
	content := string(tools.MarshalForModel(scrubResult(r)))
	var judged judgeSpend
	a := &actor{e: e, u: u}
	// No budget cuts it: the caller asked for the whole result, and the
	// fence adds a bounded head.
	text, withheld = a.screenResult(withJudgeSpend(ctx, &judged), providers.ToolCall{ID: "direct_" + tool, Name: tool}, content, "direct", len(content)+1024)
	e.chargeJudged(ctx, u, &judged)
	return text, withheld
}
