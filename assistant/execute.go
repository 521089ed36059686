package assistant

import (
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
}

// ExecuteTool runs a tool for u directly, as a host UI does when the user
// presses a button. It passes the same gate as a model's call: the tool
// must be one Tools(u, page) lists and not client-side, else CodeNotFound, whether it does not
// exist or u may not use it. The arguments go through the guard and the
// schema, the call counts against ToolRate, and it is audited with
// transport "http"; the tokens a model-backed guard judge spends on the
// arguments are charged to u (see ChargeGuardUsage). Arguments longer
// than Config.MaxMessageBytes are refused with CodeTooLarge before
// anything reads them. Because the user asked for it themselves, Mutate
// and Destructive tools run without a proposal. The Result comes back scrubbed of credentials, as a chat turn
// would show it. Tool failures are in the Result; the error is for the
// gate and infrastructure.
func (e *Engine) ExecuteTool(ctx context.Context, u parley.User, req ExecuteRequest) (tools.Result, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return tools.Result{}, err
	}
	if len(req.Args) > e.cfg.MaxMessageBytes {
		// Refused before the guard or the schema reads a byte of it.
		return tools.Result{}, &Error{Code: CodeTooLarge, Op: "execute tool", Message: "The tool arguments are too long.",
			Err: fmt.Errorf("arguments are %d bytes, limit %d", len(req.Args), e.cfg.MaxMessageBytes)}
	}
	offered := e.offeredTools(ctx, u, req.Page)
	i := slices.IndexFunc(offered, func(o offeredTool) bool { return o.spec.Name == req.Tool })
	if i < 0 || offered[i].spec.ClientSide {
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
	call := providers.ToolCall{ID: "http_" + req.Tool, Name: req.Tool, Args: req.Args}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage(`{}`)
	}
	var r tools.Result
	var took time.Duration
	// A model-backed judge the guard asks about the arguments spends
	// tokens on u's behalf: they are u's, as in a turn.
	var judged judgeSpend
	_, _, refusal := a.checkArgs(withJudgeSpend(ctx, &judged), call)
	e.chargeJudged(ctx, u, &judged)
	if refusal != nil {
		r = *refusal
	} else if refusal := a.takeToolCall(ctx); refusal != nil {
		r = *refusal
	} else {
		// The user asked for it: it runs as approved, to its end or its
		// timeout even if the caller leaves.
		r, took = a.invoke(ctx, o, call, true)
	}
	approval := ""
	if o.spec.NeedsApproval() {
		approval = approvalUser
	}
	a.auditToolCall(ctx, call, r, took, "http", approval)
	return scrubResult(r), nil
}
