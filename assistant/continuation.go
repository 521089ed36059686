package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// continuation is what a turn answers that the thread's last turn left
// waiting: a decision on a confirm card, or the results of client-side
// tool calls. (Form answers become the turn's text.)
type continuation struct {
	decision    *store.Proposal      // a decision turn: the proposal decided
	decided     store.ProposalStatus // applied or declined
	tool        offeredTool          // the tool an apply runs
	applied     bool                 // the applied tool succeeded
	clientCalls []blocks.Block       // a tool-results turn: the calls it answers
	replaces    *store.Message       // an edit or regeneration: the user message replaced
	retitle     bool                 // it is the first user message, and the title is automatic
	superseded  map[string]bool      // ids of the thread's superseded messages, this turn's included
	quiet       error                // a decision out of budget: no model call, this says why
}

// maxToolResults bounds the client results one request may carry.
const maxToolResults = 32

// validateRequest checks the shape of a request before anything is read.
func (e *Engine) validateRequest(req *Request) error {
	conts := 0
	for _, set := range []bool{req.Decision != nil, len(req.ToolResults) > 0, req.Form != nil} {
		if set {
			conts++
		}
	}
	invalid := func(what string) error { return invalidRequest("validate", what) }
	switch {
	case conts > 1:
		return invalid("send a decision, tool results or form answers, not several")
	case (req.Replaces != "" || req.Regenerate) && (conts > 0 || req.ThreadID == ""):
		return invalid("an edit or a regeneration needs the thread id and no decision, tool results or form answers")
	case req.CreateThread && (req.ThreadID == "" || conts > 0 || req.Replaces != "" || req.Regenerate):
		return invalid("create_thread needs the thread id of a first message")
	case req.CreateThread && !validID(req.ThreadID):
		return invalid("the thread id must be at most 128 bytes of UTF-8")
	case req.Replaces != "" && req.Regenerate:
		return invalid("send replaces or regenerate, not both")
	case req.Regenerate && req.Message != "":
		return invalid("a regeneration carries no message")
	case conts == 1 && req.ThreadID == "":
		return invalid("a continuation needs the thread id")
	case req.Decision != nil && req.Message != "":
		return invalid("a decision carries no message")
	case len(req.Entities) > MaxEntities:
		return invalid(fmt.Sprintf("at most %d entities", MaxEntities))
	case slices.ContainsFunc(req.Entities, func(r EntityRef) bool { return !validRef(r) }):
		return invalid(fmt.Sprintf("each entity needs a type and an id of at most %d bytes, without NUL", maxRefBytes))
	case len(req.ToolResults) > maxToolResults:
		return invalid(fmt.Sprintf("at most %d tool results", maxToolResults))
	case len(req.Message) > e.cfg.MaxMessageBytes:
		return wrap(CodeTooLarge, "validate", fmt.Errorf("message is %d bytes, limit %d", len(req.Message), e.cfg.MaxMessageBytes))
	case conts == 0 && !req.Regenerate && strings.TrimSpace(req.Message) == "":
		return invalid("message is empty")
	case !utf8.ValidString(req.Message):
		return invalid("message is not valid UTF-8")
	}
	size := 0
	for _, r := range req.ToolResults {
		size += len(r.Output)
	}
	if size > maxClientOutputFactor*e.cfg.MaxMessageBytes {
		// Measured before anything parses them.
		return wrap(CodeTooLarge, "validate", fmt.Errorf("tool results are %d bytes", size))
	}
	for _, r := range req.ToolResults {
		if r.ID == "" || !json.Valid(r.Output) {
			return invalid("each tool result needs an id and a JSON output")
		}
		if jsonDepth(r.Output) > maxOutputDepth {
			return invalid(fmt.Sprintf("tool results may nest at most %d levels", maxOutputDepth))
		}
		if jsonHasNUL(r.Output) {
			return invalid("tool result output contains a NUL character")
		}
	}
	if req.Form != nil && req.Form.ID == "" {
		return invalid("form answers need the form id")
	}
	// Oversized fields are cut or refused before anything scans them: the
	// page context is cut here, once, so the guard never sees more.
	req.PageContext = strings.ToValidUTF8(truncate(req.PageContext, e.cfg.MaxPageContextBytes), "\uFFFD")
	// No store can keep a NUL in every column, and no person types one: a
	// request field holding one is refused by name, never a failed write.
	fields := []struct{ name, value string }{
		{"thread_id", req.ThreadID}, {"message", req.Message}, {"page", req.Page}, {"page_context", req.PageContext},
		{"replaces", req.Replaces},
	}
	if req.Decision != nil {
		fields = append(fields, struct{ name, value string }{"decision token", req.Decision.Token})
	}
	for _, r := range req.ToolResults {
		fields = append(fields, struct{ name, value string }{"tool result id", r.ID})
	}
	if req.Form != nil {
		fields = append(fields, struct{ name, value string }{"form id", req.Form.ID})
		for id, v := range req.Form.Values {
			if strings.IndexByte(id, 0) >= 0 || jsonHasNUL(v) {
				return invalid("form values contain a NUL character")
			}
		}
	}
	for _, f := range fields {
		if strings.IndexByte(f.value, 0) >= 0 {
			return invalid(f.name + " contains a NUL character")
		}
	}
	return nil
}

// jsonHasNUL reports whether valid JSON holds a U+0000 in a string: the
// escape \u0000, or a raw NUL byte (which is not valid JSON, but costs
// nothing to catch).
func jsonHasNUL(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case 0:
			return true
		case '\\':
			if i+5 < len(raw) && raw[i+1] == 'u' && string(raw[i+2:i+6]) == "0000" {
				return true
			}
			i++ // skip the escaped character, so \\u0000 is not read as an escape
		}
	}
	return false
}

// maxOutputDepth bounds how deeply a client's output may nest.
const maxOutputDepth = 64

// jsonDepth returns the deepest nesting of arrays and objects in valid JSON.
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// maxClientOutputFactor: client tool outputs may together be this many
// times MaxMessageBytes; the model sees each clamped like any result.
const maxClientOutputFactor = 8

// lastTurn returns the thread's last assistant message if it ended
// normally: only such a turn can leave calls or a form waiting.
func lastTurn(prior []store.Message) (store.Message, bool) {
	if len(prior) == 0 {
		return store.Message{}, false
	}
	m := prior[len(prior)-1]
	return m, m.Role == store.RoleAssistant && m.Status == store.StatusComplete
}

// pendingClientCalls are the client-side calls m ended with: tool_call
// blocks tagged for the client and not answered in m.
func pendingClientCalls(m store.Message) []blocks.Block {
	var calls []blocks.Block
	for _, b := range m.Blocks {
		switch {
		case b.Kind == blocks.ToolCall && b.Tag == clientTag:
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

// checkToolResults matches posted client results with the calls the last
// turn left waiting. Every ID must be pending and given once.
func (t *turn) checkToolResults(prior []store.Message) error {
	const msg = "Those tool results do not answer a pending tool call."
	last, ok := lastTurn(prior)
	if !ok {
		return conflict("tool results", msg, errors.New("the thread's last turn left nothing pending"))
	}
	pending := pendingClientCalls(last)
	seen := map[string]bool{}
	for _, r := range t.req.ToolResults {
		if seen[r.ID] || !slices.ContainsFunc(pending, func(b blocks.Block) bool { return b.ID == r.ID }) {
			return conflict("tool results", msg, fmt.Errorf("result %q is not pending", r.ID))
		}
		seen[r.ID] = true
	}
	t.cont.clientCalls = pending
	return nil
}

// runToolResults answers the pending client calls at the start of the
// turn with what the client posted; a call the client left out is answered
// with an error. Outputs pass the guard like tool arguments.
func (t *turn) runToolResults(ctx context.Context, emit func(blocks.Block)) {
	for _, b := range t.cont.clientCalls {
		c := providers.ToolCall{ID: b.ID, Name: b.Name, Args: b.Data}
		if len(c.Args) == 0 {
			c.Args = json.RawMessage(`{}`)
		}
		i := slices.IndexFunc(t.req.ToolResults, func(r ToolResult) bool { return r.ID == b.ID })
		var r tools.Result
		if i < 0 {
			r = tools.Fail(tools.CodeInternal, "The user's application returned no result for this call.")
		} else {
			r = t.clientResult(ctx, c, t.req.ToolResults[i].Output)
		}
		// A client's output is data too: answer scans it as a document.
		t.answerCall(ctx, outcome{call: c, result: r, via: "client", audit: true, data: i >= 0}, emit)
	}
}

// checkForm renders the answers to the form the last turn ended with as
// the user's message.
func (t *turn) checkForm(prior []store.Message) (string, error) {
	last, ok := lastTurn(prior)
	i := -1
	if ok {
		i = slices.IndexFunc(last.Blocks, func(b blocks.Block) bool { return b.Kind == blocks.Form && b.ID == t.req.Form.ID })
	}
	if i < 0 {
		return "", conflict("form", "That form is no longer waiting for answers.", errors.New("no such pending form"))
	}
	var f Form
	if err := json.Unmarshal(last.Blocks[i].Data, &f); err != nil {
		return "", wrap(CodeInternal, "form", fmt.Errorf("stored form: %w", err))
	}
	text, err := renderAnswers(f, t.req.Form.Values)
	if err != nil {
		return "", &Error{Code: CodeInvalidRequest, Op: "form", Err: err, Message: "The answers are not valid: " + err.Error() + "."}
	}
	if msg := strings.TrimSpace(t.req.Message); msg != "" {
		text += "\n\n" + msg
	}
	if len(text) > t.e.cfg.MaxMessageBytes {
		return "", wrap(CodeTooLarge, "form", fmt.Errorf("answers are %d bytes, limit %d", len(text), t.e.cfg.MaxMessageBytes))
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
	case t.cont.superseded[p.MessageID]:
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
	t.answerCall(ctx, outcome{call: c, result: r, took: d, via: "chat", approval: approval, audit: true, data: approval == approvalUser}, emit)
}

// answerCall records a call that an earlier turn left waiting and its
// result: blocks for the user, both halves for the model, an audit row.
func (t *turn) answerCall(ctx context.Context, o outcome, emit func(blocks.Block)) {
	t.out.called("", []providers.ToolCall{o.call})
	t.answer(ctx, o, emit)
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
	t.out.end(FinishQuota)
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
	e.withdrawSuperseded(ctx, ps, prior)
	return slices.DeleteFunc(ps, func(p store.Proposal) bool {
		return p.Status != store.ProposalPending || !now.Before(p.ExpiresAt)
	})
}
