package assistant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/tools"
)

// A round is one model call's tool calls, carried out in three steps:
// gate decides what happens to each call (the toolbox's gates, the guard,
// the approval, the knowledge gate), execute runs the permitted Read and
// approved calls in parallel, and settle answers every call in order,
// through answer, the one path of a tool outcome.

// call is what a round decided for one tool call and what it got.
type call struct {
	sent     providers.ToolCall // as the model made it: what a tool runs with
	target   offeredTool
	plan     plan
	approval string // approvalPending, approvalUser, ...; "" for none
	result   tools.Result
	took     time.Duration
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

// isPlan matches the calls of a round with plan p.
func isPlan(p plan) func(call) bool { return func(c call) bool { return c.plan == p } }

// knownTransport marks, in the audit, a call the knowledge gate answered
// without running the tool.
const knownTransport = "knowledge"

// How a Mutate or Destructive call was approved, in audit rows.
const (
	approvalPending    = "pending"    // a proposal was made
	approvalUser       = "user"       // the user applied the proposal
	approvalDeclined   = "declined"   // the user declined it
	approvalAuto       = "auto"       // Config.AutoApprove allowed it
	approvalAutonomous = "autonomous" // an autonomous turn
)

// runTools carries out one round's calls, which the transcript recorded:
// the gates first, then the permitted Read calls in parallel (at most
// ParallelTools at once), then, in call order, results, proposals, forms
// and client calls. It reports whether the turn ends, and why: it waits
// for the user (a confirm card, a form, a client call), or every call was
// a successful Terminal tool.
func (t *turn) runTools(ctx context.Context, calls []providers.ToolCall, emit func(blocks.Block)) (end bool, finish string) {
	round := t.gate(ctx, calls, emit)
	t.execute(ctx, round)
	return t.settle(ctx, calls, round, emit)
}

// gate decides each call's plan and shows the call. Arguments the guard
// changed are changed in calls and the transcript: nothing of the round
// keeps what it removed.
func (t *turn) gate(ctx context.Context, calls []providers.ToolCall, emit func(blocks.Block)) []call {
	round := make([]call, len(calls))
	for i, c := range calls {
		round[i].sent = c
		shown, withheld, argsRefusal := t.checkArgs(ctx, c)
		if withheld {
			calls[i].Args = shown
			if shown == nil {
				calls[i].Args = withheldArgs
			}
			t.out.withhold(c.ID, calls[i].Args)
		}
		o, refused := t.tools.gate(ctx, &t.actor, c, argsRefusal)
		if refused == nil {
			refused = t.flow.check(o.spec, c, t.out.msgs) // before any card or run
		}
		b := blocks.Block{Kind: blocks.ToolCall, ID: c.ID, Name: c.Name, Data: shown}
		b.ClientSide = refused == nil && o.spec.ClientSide
		emit(b)
		if refused == nil {
			round[i].approval = t.tools.approvalFor(ctx, &t.actor, o.spec)
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
		round[i].plan, round[i].result = planFor(o, c, round[i].approval)
		if round[i].plan == planRun {
			if r, ok := t.know.known(ctx, t.e, t.u, o, c); ok {
				round[i].plan, round[i].result = planKnown, r
			}
		}
	}
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
	return round
}

// planFor is the plan of a call of o that passed the gates. A client-side
// call whose arguments its schema refuses is refused here, with the
// schema's answer, since the server never runs it.
func planFor(o offeredTool, c providers.ToolCall, approval string) (plan, tools.Result) {
	switch {
	case o.spec.Name == AskUserName:
		return planForm, tools.Result{}
	case o.spec.Name == SearchToolsName:
		return planSearch, tools.Result{}
	case o.spec.ClientSide:
		if r, _ := tools.Validate(o.tool, c.Args); !r.OK {
			return planRefused, r
		}
		return planClient, tools.Result{}
	case approval == approvalPending:
		return planPropose, tools.Result{}
	}
	return planRun, tools.Result{}
}

// execute runs the round's planRun calls, at most ParallelTools at once.
func (t *turn) execute(ctx context.Context, round []call) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.e.cfg.ParallelTools)
	for i := range round {
		if round[i].plan != planRun {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			round[i].result, round[i].took = t.invoke(ctx, round[i].target, round[i].sent, round[i].approval != "")
		})
	}
	wg.Wait()
}

// settle answers the round's calls in call order: loads tools, shows forms,
// makes proposals, and hands every other result to answer. Forms, proposals
// and client calls wait for the user, unanswered; the finish reason names
// the most pressing wait. A round of successful Terminal tools alone ends
// the turn with FinishTerminalTool; any other round ends nothing, and its
// finish is "".
func (t *turn) settle(ctx context.Context, calls []providers.ToolCall, round []call, emit func(blocks.Block)) (end bool, finish string) {
	var formShown, proposed, clientCalled bool
	allTerminal, ran := true, false
	for i, c := range calls {
		switch round[i].plan {
		case planSearch:
			round[i].result = t.tools.searchTools(c.Args)
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
			if t.stop.stopped() {
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
		if r := round[i].result; r.Error != nil && slices.Contains(invalidCodes, r.Error.Code) {
			t.out.invalidCall(c.ID)
		}
		t.answer(ctx, round[i].outcome(c), emit)
		if round[i].plan == planRun {
			ran = true
			allTerminal = allTerminal && round[i].target.spec.Terminal && round[i].result.OK
		} else {
			allTerminal = false
		}
	}
	switch {
	case formShown:
		return true, FinishAskUser
	case proposed:
		return true, FinishApproval
	case clientCalled:
		return true, FinishClientTool
	}
	if ran && allTerminal {
		return true, FinishTerminalTool
	}
	return false, "" // the model is called again with the results
}

// outcome is a settled call's outcome for answer.
func (cl *call) outcome(c providers.ToolCall) outcome {
	o := outcome{call: c, result: cl.result, took: cl.took, via: "chat", audit: !isMetaTool(c.Name)}
	if cl.plan == planRun {
		o.approval = cl.approval // else refused, or a dry run that failed: nothing was approved
	}
	if cl.plan == planKnown {
		o.via = knownTransport
	}
	// What a tool produced (a run, a failed dry run, the gate's earlier
	// answer) is data; the Engine's own refusals and meta-tools are not.
	o.data = cl.plan == planRun || cl.plan == planKnown || cl.plan == planPropose
	return o
}

// outcome is what became of one tool call.
type outcome struct {
	call     providers.ToolCall
	result   tools.Result
	took     time.Duration
	via      string // the audit's transport: "chat", "client" or knownTransport
	approval string // how a change was approved; "" for none
	audit    bool   // write the audit row (the Engine's own tools have none)
	// data: the result is a tool's (it ran, or a client or the knowledge
	// gate answered for it), so the model reads it screened as a document.
	data bool
	// reason is a declined call's reason, screened: its result block
	// keeps it in Data, for the card after a reload.
	reason string
}

// answer is the one path of a tool outcome: the result the model reads,
// scrubbed of credentials, cut to the connection's budget and, when it is
// a tool's data, screened as a document; the result block the user sees
// (and the tool's own UI block), which says what the screen withheld, so
// the card and the model agree; and the audit row. The model messages,
// and so the replay and the knowledge accumulator, keep the screened form.
func (t *turn) answer(ctx context.Context, o outcome, emit func(blocks.Block)) {
	// The model, the store, the replay and the knowledge gate all keep
	// the scrubbed form.
	c, r := o.call, scrubResult(o.result)
	budget := t.conn.resultBudget()
	content, withheld := string(clampResult(tools.MarshalForModel(r), budget)), 0
	if o.data {
		source := ""
		if o.via == "client" {
			source = "client"
		}
		content, withheld = t.screenResult(ctx, c, content, source, budget)
	}
	b := resultBlock(c, r)
	if o.reason != "" {
		reason, _ := guard.Scrub(o.reason) // as the result's data the model reads
		b.Data, _ = json.Marshal(map[string]string{"reason": reason})
	}
	switch {
	case withheld < 0:
		b.Content += " (withheld from the assistant by a security check)"
	case withheld == 1:
		b.Content += " (1 record withheld from the assistant by a security check)"
	case withheld > 1:
		b.Content += fmt.Sprintf(" (%d records withheld from the assistant by a security check)", withheld)
	}
	emit(b)
	if r.UI != nil {
		emit(*r.UI)
	}
	t.out.answered(c.ID, content)
	switch {
	case o.via == knownTransport || isMetaTool(c.Name):
	case t.e.readOnly(c.Name):
		t.know.learn(callKey(c.Name, c.Args), content, t.e.cfg.Now(), true)
	case r.OK || o.approval != "":
		t.know.forget() // a change ran, or may have
		if r.OK {
			t.tools.changed()
		}
	}
	if o.audit {
		t.auditToolCall(ctx, c, r, o.took, o.via, o.approval)
	}
}

// invalidCodes are the answers to calls that never validly reached a tool.
// Such calls are kept out of the stored model messages (B12), so later
// turns do not replay, and learn from, the mistake.
var invalidCodes = []tools.ErrorCode{tools.CodeInvalidArgs, tools.CodeUnknownTool, tools.CodeNotLoaded}

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

// scrubResult is a tool's result with the credentials it holds scrubbed
// (C9), before anyone reads it: the model, the user's blocks, the store, a
// card, the host's UI. Its summary, its error's message and hint, its
// block, and its data, which becomes the scrubbed JSON (a json.RawMessage)
// only when it held one.
func scrubResult(r tools.Result) tools.Result {
	r.Summary, _ = guard.Scrub(r.Summary)
	if r.Error != nil {
		e := *r.Error
		e.Message, _ = guard.Scrub(e.Message)
		e.Hint, _ = guard.Scrub(e.Hint)
		r.Error = &e
	}
	if r.UI != nil {
		ui := scrubBlock(*r.UI)
		r.UI = &ui
	}
	if r.Data != nil {
		if raw, err := json.Marshal(r.Data); err == nil {
			if scrubbed, n := guard.ScrubJSON(raw); n > 0 {
				r.Data = json.RawMessage(scrubbed)
			}
		}
	}
	return r
}

// scrubBlock is a tool's own block (Result.UI, a dry run's) scrubbed of
// credentials: its text and its data.
func scrubBlock(b blocks.Block) blocks.Block {
	b.Content, _ = guard.Scrub(b.Content)
	if len(b.Data) > 0 {
		data, _ := guard.ScrubJSON(b.Data)
		b.Data = data
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
