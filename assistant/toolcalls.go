package assistant

import (
	"bytes"
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
	"github.com/parleyhq/parley/tools"
)

// call is what a round decided for one tool call and what it got.
type call struct {
	target   offeredTool
	plan     plan
	approval string // approvalPending, approvalUser, ...; "" for none
	result   tools.Result
	took     time.Duration
}

// isPlan matches the calls of a round with plan p.
func isPlan(p plan) func(call) bool { return func(c call) bool { return c.plan == p } }

// answer is the one path of a tool outcome: the result block the user sees
// (and the tool's own UI block), the result the model reads, cut to the
// connection's budget and, when it is a tool's data (data: the tool ran,
// or a client or the knowledge gate answered for it), screened as a
// document, and the audit row. The model messages, and so the replay and
// the knowledge accumulator, keep the screened form.
func (t *turn) answer(ctx context.Context, c providers.ToolCall, r tools.Result, d time.Duration, transport, approval string, audit, data bool, emit func(blocks.Block)) {
	emit(resultBlock(c, r))
	if r.UI != nil {
		emit(*r.UI)
	}
	budget := t.conn.resultBudget()
	content := string(clampResult(tools.MarshalForModel(r), budget))
	if data {
		source := ""
		if transport == "client" {
			source = "client"
		}
		content = t.screenResult(ctx, c, content, source, budget)
	}
	t.out.answered(c.ID, content)
	switch {
	case transport == knownTransport || isMetaTool(c.Name):
	case t.readOnly(c.Name):
		t.know.learn(callKey(c.Name, c.Args), content, t.e.cfg.Now(), true)
	case r.OK || approval != "":
		t.know.forget() // a change ran, or may have
	}
	if audit {
		t.auditToolCall(ctx, c, r, d, transport, approval)
	}
}

// toolbox is the tools a turn offers the model and the state their calls
// build up over the turn's rounds.
type toolbox struct {
	offered    []offeredTool   // the host's tools this user may use on this page
	meta       []offeredTool   // the Engine's own tools offered this turn
	lazy       bool            // offered tools are loaded with search_tools
	loaded     map[string]bool // lazy turns: offered tools loaded so far
	repeats    map[string]int  // tool calls by name and canonical arguments
	autonomous bool            // Mutate and Destructive tools run without proposals
}

// offeredTool is a tool this turn may offer to the model.
type offeredTool struct {
	spec tools.Spec
	tool tools.BaseTool
}

// offeredTools is the gate on the model side: only tools the Authorizer
// allows for u, on page. The same gate is checked again when a call
// arrives (see precheck).
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
	if len(spec.Pages) > 0 && !slices.Contains(spec.Pages, page) {
		return false
	}
	return e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: UseTool, Tool: spec}) == nil
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// callable is what the model may call now: the Engine's own tools, then the
// offered tools, or in a lazy turn only those loaded so far.
func (t *turn) callable() []offeredTool {
	out := slices.Clone(t.tools.meta)
	for _, o := range t.tools.offered {
		if !t.tools.lazy || t.tools.loaded[o.spec.Name] {
			out = append(out, o)
		}
	}
	return out
}

func (t *turn) toolDefs() []providers.ToolDef {
	callable := t.callable()
	defs := make([]providers.ToolDef, 0, len(callable))
	for _, o := range callable {
		params := o.spec.InputSchema
		if len(params) == 0 {
			params = emptyObjectSchema
		}
		defs = append(defs, providers.ToolDef{Name: o.spec.Name, Description: o.spec.Description, Parameters: params})
	}
	return defs
}

// plan is what happens to one call of a round once it passed the gates.
type plan int

const (
	planRefused plan = iota // a gate answered it
	planRun                 // a Read tool, or an approved one: runs now
	planPropose             // needs approval: a proposal and a confirm card
	planClient              // client-side: the client runs it
	planForm                // ask_user: a form for the user
	planSearch              // search_tools: loads tools
	planKnown               // a Read call the knowledge gate answers
)

// clientTag marks the tool_call block of a client-side call: the client
// runs it and posts the result with its next request.
const clientTag = "client"

// knownTransport marks, in the audit, a call the knowledge gate answered
// without running the tool.
const knownTransport = "knowledge"

// runTools carries out one round's calls: gates first, then the permitted
// Read calls in parallel (at most ParallelTools at once), then, in call
// order, results, proposals, forms and client calls. It appends the tool
// messages for the model and reports whether the turn ends, and why: it
// waits for the user (a confirm card, a form, a client call), or every
// call was a successful Terminal tool.
func (t *turn) runTools(ctx context.Context, calls []providers.ToolCall, emit func(blocks.Block)) (end bool, finish string) {
	round := make([]call, len(calls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.e.cfg.ParallelTools)
	for i, c := range calls {
		shown, withheld, argsRefusal := t.checkArgs(ctx, c)
		if withheld {
			// Neither the store nor the rest of the round keeps what the
			// guard removed.
			calls[i].Args = shown
			if shown == nil {
				calls[i].Args = withheldArgs
			}
			t.out.withhold(c.ID, calls[i].Args)
		}
		o, refused := t.precheck(ctx, c, argsRefusal)
		b := blocks.Block{Kind: blocks.ToolCall, ID: c.ID, Name: c.Name, Data: shown}
		if refused == nil && o.spec.ClientSide {
			b.Tag = clientTag
		}
		emit(b)
		if refused == nil {
			round[i].approval = t.approvalFor(ctx, o.spec)
			if withheld && (o.spec.ClientSide || round[i].approval == approvalPending) {
				// What leaves the server (to the client, or into a stored
				// proposal) must be what the guard saw, unredacted.
				r := refusal(tools.CodeBlocked, "These arguments contain data that cannot be sent for approval or to the user's application.",
					"Do not retry with the same content. Tell the user what you wanted to do so they can do it themselves.")
				refused = &r
			}
		}
		if refused != nil {
			round[i].result = *refused
			continue
		}
		round[i].target = o
		switch {
		case o.spec.Name == AskUserName:
			round[i].plan = planForm
		case o.spec.Name == SearchToolsName:
			round[i].plan = planSearch
		case o.spec.ClientSide:
			round[i].plan = planClient
			if r, _ := tools.Validate(o.tool, c.Args); !r.OK {
				round[i].plan, round[i].result = planRefused, r
			}
		case round[i].approval == approvalPending:
			round[i].plan = planPropose
		default:
			if r, ok := t.known(ctx, o, c); ok {
				round[i].plan, round[i].result = planKnown, r
				continue
			}
			round[i].plan = planRun
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				round[i].result, round[i].took = t.invoke(ctx, o, c, round[i].approval != "")
			}()
		}
	}
	wg.Wait()
	if slices.ContainsFunc(round, isPlan(planForm)) && slices.ContainsFunc(round, isPlan(planClient)) {
		// One request answers the last turn: a form and a client call in
		// the same step could never both be answered.
		for i := range round {
			if round[i].plan == planForm {
				round[i].plan, round[i].result = planRefused, refusal(tools.CodeConflict,
					"A form cannot be shown in the same step as a tool that runs in the user's application.",
					"Wait for the application's result, then ask with ask_user if you still need to.")
				round[i].result.Error.Blocked = false
			}
		}
	}
	// What the turn ends waiting on, if anything.
	var formShown, proposed, clientCalled bool
	allTerminal, ran := true, false
	for i, c := range calls {
		switch round[i].plan {
		case planSearch:
			round[i].result = t.searchTools(c.Args)
		case planForm:
			f, refused := askUserForm(c.Args)
			if refused == nil && formShown {
				r := refusal(tools.CodeConflict, "Only one form can be shown at a time.", "Put every question in one ask_user call.")
				refused = &r
			}
			if refused != nil {
				round[i].plan, round[i].result = planRefused, *refused
				break
			}
			emit(formBlock(c.ID, f))
			formShown = true
			continue
		case planClient:
			clientCalled = true
			continue
		case planPropose:
			if t.stopped() {
				round[i].result = tools.Fail(tools.CodeInternal, "The turn was stopped before the approval could be asked for.")
				break
			}
			r, ok := t.propose(ctx, c, round[i].target, t.reply.ID, &t.stop, emit)
			if ok {
				proposed = true
				continue
			}
			round[i].result = r
		}
		r := round[i].result
		t.noteInvalid(c, r)
		approval := round[i].approval
		if round[i].plan != planRun {
			approval = "" // refused, or a dry run that failed: nothing was approved
		}
		transport := "chat"
		if round[i].plan == planKnown {
			transport = knownTransport
		}
		// What a tool produced (a run, a failed dry run, the gate's earlier
		// answer) is data; the Engine's own refusals and meta-tools are not.
		data := round[i].plan == planRun || round[i].plan == planKnown || round[i].plan == planPropose
		t.answer(ctx, c, r, round[i].took, transport, approval, !isMetaTool(c.Name), data, emit)
		if round[i].plan == planRun {
			ran = true
			allTerminal = allTerminal && round[i].target.spec.Terminal && r.OK
		} else {
			allTerminal = false
		}
	}
	switch { // the finish reason names the most pressing wait
	case formShown:
		return true, FinishAskUser
	case proposed:
		return true, FinishApproval
	case clientCalled:
		return true, FinishClientTool
	}
	return ran && allTerminal, "tool"
}

// approvalFor says how a call of spec is approved: "" for a tool that
// changes nothing; approvalAutonomous or approvalAuto when it may run at
// once (an autonomous turn, or the host's AutoApprove); approvalPending
// when it needs a proposal and the user's decision.
func (t *turn) approvalFor(ctx context.Context, spec tools.Spec) string {
	switch {
	case !spec.NeedsApproval():
		return ""
	case t.tools.autonomous:
		return approvalAutonomous
	case t.e.cfg.AutoApprove != nil && t.e.cfg.AutoApprove(ctx, t.u, spec):
		return approvalAuto
	}
	return approvalPending
}

// How a Mutate or Destructive call was approved, in audit rows.
const (
	approvalPending    = "pending"    // a proposal was made
	approvalUser       = "user"       // the user applied the proposal
	approvalDeclined   = "declined"   // the user declined it
	approvalAuto       = "auto"       // Config.AutoApprove allowed it
	approvalAutonomous = "autonomous" // an autonomous turn
)

// invalidCodes are the answers to calls that never validly reached a tool.
// Such calls are kept out of the stored model messages (B12), so later
// turns do not replay, and learn from, the mistake.
var invalidCodes = []tools.ErrorCode{tools.CodeInvalidArgs, tools.CodeUnknownTool, tools.CodeNotLoaded}

func (t *turn) noteInvalid(c providers.ToolCall, r tools.Result) {
	if r.Error != nil && slices.Contains(invalidCodes, r.Error.Code) {
		t.out.invalidCall(c.ID)
	}
}

// precheck is the gate on the execution side. The model is an untrusted
// proposer: a call to a tool that was not offered is refused and never runs,
// whatever the model claims.
func (t *turn) precheck(ctx context.Context, c providers.ToolCall, argsRefusal *tools.Result) (offeredTool, *tools.Result) {
	if i := slices.IndexFunc(t.tools.meta, func(o offeredTool) bool { return o.spec.Name == c.Name }); i >= 0 {
		if argsRefusal != nil {
			return offeredTool{}, argsRefusal
		}
		if r := t.loopCheck(c); r != nil {
			return offeredTool{}, r
		}
		return t.tools.meta[i], nil
	}
	i := slices.IndexFunc(t.tools.offered, func(o offeredTool) bool { return o.spec.Name == c.Name })
	if i < 0 {
		// A tool this user may not use answers exactly like one that does
		// not exist, so refusals do not reveal hidden tools.
		r := refusal(tools.CodeUnknownTool, fmt.Sprintf("There is no tool named %q.", c.Name),
			"Use one of: "+t.toolNames()+".")
		r.Error.Blocked = false
		r.Error.Retryable = len(t.tools.offered) > 0
		return offeredTool{}, &r
	}
	o := t.tools.offered[i]
	if t.tools.lazy && !t.tools.loaded[o.spec.Name] {
		call, _ := json.Marshal(map[string][]string{"categories": {category(o.spec)}})
		r := refusal(tools.CodeNotLoaded, fmt.Sprintf("The tool %q is not loaded yet.", c.Name),
			fmt.Sprintf("Call %s with %s first, then call %s again.", SearchToolsName, call, c.Name))
		r.Error.Blocked, r.Error.Retryable = false, true
		return offeredTool{}, &r
	}
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
	return o, nil
}

func refusal(code tools.ErrorCode, msg, hint string) tools.Result {
	return tools.Result{Error: &tools.ToolError{Code: code, Message: msg, Blocked: true, Hint: hint}}
}

func (t *turn) toolNames() string {
	var names []string
	for _, o := range t.callable() {
		names = append(names, o.spec.Name)
	}
	if len(names) == 0 {
		return "(no tools are available)"
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
	key := callKey(c.Name, c.Args)
	if t.tools.repeats == nil {
		t.tools.repeats = make(map[string]int)
	}
	t.tools.repeats[key]++
	if t.tools.repeats[key] <= maxRepeats {
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
	// Numbers stay as written: as float64, two large ids would compare equal.
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}
