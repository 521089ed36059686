package assistant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// offeredTool is a tool this turn may offer to the model.
type offeredTool struct {
	spec tools.Spec
	tool tools.BaseTool
}

// offeredTools is the gate on the model side: only tools the Authorizer
// allows for u, on page, that the server can execute. The same gate is
// checked again when a call arrives (see precheck).
func (e *Engine) offeredTools(ctx context.Context, u parley.User, page string) []offeredTool {
	if e.cfg.Tools == nil {
		return nil
	}
	var out []offeredTool
	for _, t := range e.cfg.Tools.All() {
		spec := t.Spec()
		if !e.mayUse(ctx, u, &spec, page) {
			continue
		}
		out = append(out, offeredTool{spec: spec, tool: t})
	}
	return out
}

func (e *Engine) mayUse(ctx context.Context, u parley.User, spec *tools.Spec, page string) bool {
	if spec.ClientSide { // client-side execution arrives with the approvals work
		return false
	}
	if len(spec.Pages) > 0 && !slices.Contains(spec.Pages, page) {
		return false
	}
	return e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: spec}) == nil
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (t *turn) toolDefs() []providers.ToolDef {
	defs := make([]providers.ToolDef, 0, len(t.offered))
	for _, o := range t.offered {
		params := o.spec.InputSchema
		if len(params) == 0 {
			params = emptyObjectSchema
		}
		defs = append(defs, providers.ToolDef{Name: o.spec.Name, Description: o.spec.Description, Parameters: params})
	}
	return defs
}

// uniqueCallIDs gives every call of the turn a distinct, non-empty id: some
// OpenAI-compatible servers send none, or number calls per response so ids
// repeat across rounds, and clients match results to calls by id.
func (t *turn) uniqueCallIDs(calls []providers.ToolCall, round int) []providers.ToolCall {
	if t.callIDs == nil {
		t.callIDs = make(map[string]bool)
	}
	for i := range calls {
		if calls[i].ID == "" || t.callIDs[calls[i].ID] {
			calls[i].ID = fmt.Sprintf("call_r%d_%d", round, i)
		}
		t.callIDs[calls[i].ID] = true
	}
	return calls
}

// runTools executes one round's calls: gates first, then the permitted Read
// calls in parallel (at most ParallelTools at once), results in call order.
// It appends the tool messages for the model and reports whether the turn
// should end (every call was a successful Terminal tool).
func (t *turn) runTools(ctx context.Context, calls []providers.ToolCall, emit func(blocks.Block)) (end bool) {
	results := make([]tools.Result, len(calls))
	durations := make([]time.Duration, len(calls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.e.cfg.ParallelTools)
	end = true
	for i, c := range calls {
		shown, withheld, argsRefusal := t.checkArgs(ctx, c)
		if withheld {
			// calls is the slice stored in the assistant's model message:
			// neither the store nor later rounds keep what the guard removed.
			calls[i].Args = shown
			if shown == nil {
				calls[i].Args = withheldArgs
			}
		}
		emit(blocks.Block{Kind: blocks.ToolCall, ID: c.ID, Name: c.Name, Data: shown})
		o, refusal := t.precheck(ctx, c, argsRefusal)
		if refusal != nil {
			results[i] = *refusal
			end = false
			continue
		}
		end = end && o.spec.Terminal
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tctx, cancel := context.WithTimeout(ctx, t.e.cfg.ToolTimeout)
			defer cancel()
			start := time.Now()
			res, err := tools.Invoke(tctx, o.tool, tools.Call{ID: c.ID, User: t.u, ThreadID: t.thread.ID, Args: c.Args})
			durations[i] = time.Since(start)
			if err != nil {
				t.e.cfg.Logger.Warn("assistant: tool failed", "tool", c.Name, "thread", t.thread.ID, "err", err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	for i, c := range calls {
		r := results[i]
		end = end && r.OK
		emit(resultBlock(c, r))
		if r.UI != nil {
			emit(*r.UI)
		}
		content := clampResult(tools.MarshalForModel(r), t.e.cfg.ContextWindow*4/8)
		t.msgs = append(t.msgs, providers.Message{Role: providers.Tool, ToolCallID: c.ID, Content: string(content)})
		t.auditToolCall(ctx, c, r, durations[i])
	}
	return end
}

// precheck is the gate on the execution side. The model is an untrusted
// proposer: a call to a tool that was not offered is refused and never runs,
// whatever the model claims.
func (t *turn) precheck(ctx context.Context, c providers.ToolCall, argsRefusal *tools.Result) (offeredTool, *tools.Result) {
	i := slices.IndexFunc(t.offered, func(o offeredTool) bool { return o.spec.Name == c.Name })
	if i < 0 {
		// A tool this user may not use answers exactly like one that does
		// not exist, so refusals do not reveal hidden tools.
		r := refusal(tools.CodeUnknownTool, fmt.Sprintf("There is no tool named %q.", c.Name),
			"Use one of: "+t.toolNames()+".")
		r.Error.Blocked = false
		r.Error.Retryable = len(t.offered) > 0
		return offeredTool{}, &r
	}
	o := t.offered[i]
	// Authorize again at execution: the offered set was computed at the start
	// of the turn, and the decision must hold for the call itself.
	if err := t.e.cfg.Authorizer.Authorize(ctx, t.u, Action{Kind: UseTool, Tool: &o.spec}); err != nil {
		r := refusal(tools.CodeNotAuthorized, fmt.Sprintf("You may no longer use the tool %q for this user.", c.Name),
			"Tell the user this is not something you can do for them.")
		return offeredTool{}, &r
	}
	if argsRefusal != nil { // counted neither as a repeat nor against the rate
		return offeredTool{}, argsRefusal
	}
	if r := t.loopCheck(c); r != nil {
		return offeredTool{}, r
	}
	if r := t.takeToolCall(ctx); r != nil {
		return offeredTool{}, r
	}
	if o.spec.NeedsApproval() {
		r := refusal(tools.CodeNeedsApproval,
			fmt.Sprintf("The tool %q changes data and needs the user's approval, which cannot be requested in this conversation.", c.Name),
			"Do not claim the action was done. Tell the user what you would change so they can do it themselves.")
		return offeredTool{}, &r
	}
	return o, nil
}

func refusal(code tools.ErrorCode, msg, hint string) tools.Result {
	return tools.Result{Error: &tools.ToolError{Code: code, Message: msg, Blocked: true, Hint: hint}}
}

func (t *turn) toolNames() string {
	if len(t.offered) == 0 {
		return "(no tools are available)"
	}
	names := make([]string, len(t.offered))
	for i, o := range t.offered {
		names[i] = o.spec.Name
	}
	return strings.Join(names, ", ")
}

// resultBlock is what the user sees of a result: the summary, or the error
// message unless the error is internal.
func resultBlock(c providers.ToolCall, r tools.Result) blocks.Block {
	b := blocks.Block{Kind: blocks.ToolResult, ID: c.ID, Name: c.Name, OK: r.OK, Content: r.Summary}
	if !r.OK && r.Error != nil {
		b.Content = r.Error.Message
		b.ErrorCode = string(r.Error.Code)
		if r.Error.Code == tools.CodeInternal {
			b.Content = "The tool failed."
		}
	}
	return b
}

func errCode(r tools.Result) string {
	if r.Error == nil {
		return ""
	}
	return string(r.Error.Code)
}

func argsHash(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

func jsonOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) > 0 && json.Valid(raw) {
		return raw
	}
	return nil
}

// maxRepeats is how often one exact call may run in a turn; the next
// identical call is refused, so a model stuck in a loop must change course.
const maxRepeats = 3

// loopCheck counts calls by name and canonical arguments.
func (t *turn) loopCheck(c providers.ToolCall) *tools.Result {
	key := c.Name + "\x00" + canonicalJSON(c.Args)
	if t.repeats == nil {
		t.repeats = make(map[string]int)
	}
	t.repeats[key]++
	if t.repeats[key] <= maxRepeats {
		return nil
	}
	r := refusal(tools.CodeLoopDetected,
		fmt.Sprintf("You already called %q with these arguments %d times in this turn.", c.Name, maxRepeats),
		"Use the results you already have, try different arguments, or answer the user.")
	return &r
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spacing, so
// equal arguments compare equal however the model wrote them.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// auditToolCall records one tool call of a chat turn.
func (t *turn) auditToolCall(ctx context.Context, c providers.ToolCall, r tools.Result, d time.Duration) {
	t.auditToolCallVia(ctx, c, r, d, "chat")
}

// auditToolCallVia records one tool call: never the arguments, only their
// hash. transport is "chat" (the model called it) or "http" (a host UI).
func (t *turn) auditToolCallVia(ctx context.Context, c providers.ToolCall, r tools.Result, d time.Duration, transport string) {
	data, _ := json.Marshal(map[string]any{
		"tool": c.Name, "call_id": c.ID, "args_sha256": argsHash(c.Args), "ok": r.OK, "code": errCode(r),
		"duration_ms": d.Milliseconds(), "transport": transport,
	})
	ev := store.AuditEvent{Kind: AuditToolCall, ActorID: t.u.ID, ThreadID: t.thread.ID, Data: data}
	if err := t.e.cfg.Store.AppendAudit(context.WithoutCancel(ctx), &ev); err != nil {
		t.e.cfg.Logger.Error("assistant: audit tool call", "tool", c.Name, "thread", t.thread.ID, "err", err)
	}
}
