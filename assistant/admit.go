package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
)

// admission is what a turn builds on, read and checked before anything is
// written: a value, never changed once begin has it, and begin's alone. The
// worker keeps only the replay (past) and the topic filter's text, so a
// parked turn does not hold the thread's messages. The request's Message is
// read here and nowhere else; what the user says this turn is text.
type admission struct {
	req    Request         // validated, its page context cut
	thread store.Thread    // zero for a thread the turn creates
	fresh  bool            // the turn creates its thread
	prior  []store.Message // the thread's messages
	past   []stretch       // the replay of the branch the turn continues
	// text is what the user says: their message, their form answers, the
	// message a regeneration sends again, or for a decision a note the
	// server writes from the stored proposal. scan: it is the user's own
	// and the guard reads it.
	text         string
	scan         bool
	instructions string           // the operator's: the active stored prompt, else Config.CustomInstructions
	edit         edit             // what an edit or a regeneration replaces
	cont         continuation     // what the turn answers that the last one left waiting
	pending      []store.Proposal // the thread's cards still waiting for a decision
}

// admit reads what a turn of u builds on, with nothing written: the
// autonomy grant, the operator's instructions, the thread with its history
// and waiting cards, and what the user says, checked against what the last
// turn left waiting (a decision, client results, form answers).
func (e *Engine) admit(ctx context.Context, u parley.User, req Request) (admission, error) {
	adm := admission{req: req, text: req.Message, scan: true, fresh: req.ThreadID == ""}
	if req.Autonomous {
		if err := e.authorize(ctx, u, Action{Kind: RunAutonomous}); err != nil {
			return admission{}, err
		}
	}
	var err error
	if adm.instructions, err = e.instructions(ctx); err != nil {
		return admission{}, err
	}
	if req.ThreadID != "" {
		th, fresh, err := e.threadToWrite(ctx, u, &adm.req)
		switch {
		case err != nil:
			return admission{}, err
		case fresh:
			adm.fresh = true // a new chat: the write creates it under adm.req.ThreadID
		default:
			if adm.prior, err = e.cfg.Store.ListMessages(ctx, th.ID); err != nil {
				return admission{}, e.storeErr("load history", err)
			}
			adm.thread = th
		}
	}
	branch := adm.prior // what the turn continues
	if adm.edit, err = e.editOf(ctx, adm.thread, adm.prior, req); err != nil {
		return admission{}, err
	}
	if target := adm.edit.replaces; target != nil {
		adm.text = adm.edit.text
		branch = slices.DeleteFunc(slices.Clone(adm.prior), func(m store.Message) bool { return m.Seq >= target.Seq })
		if target.Seq <= adm.thread.SummaryThrough {
			// The summary covers what is replaced; the write clears it.
			adm.thread.Summary, adm.thread.SummaryThrough = "", 0
		}
	}
	if !adm.fresh {
		adm.past = stretches(branch)
		adm.pending = e.pendingProposals(ctx, adm.thread.ID, adm.prior)
	}
	var answers string
	adm.cont, answers, err = e.continuationOf(ctx, u, adm.thread, adm.prior, req, adm.edit.superseded)
	switch {
	case err != nil:
		return admission{}, err
	case adm.cont.decision != nil:
		adm.text, adm.scan = decisionNote(adm.cont.decision, adm.cont.decided), false
	case req.Form != nil:
		adm.text = answers
	}
	return adm, nil
}

// typed reports whether what the user says this turn is a message they
// typed (a new one, an edit or a regeneration), not a decision, form
// answers or client results.
func (a *admission) typed() bool {
	return a.scan && a.text != "" && a.req.Form == nil && len(a.req.ToolResults) == 0
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
	case req.CreateThread && !validChatID(req.ThreadID):
		return errChatID("validate")
	case req.Replaces != "" && req.Regenerate:
		return invalid("send replaces or regenerate, not both")
	case req.Regenerate && req.Message != "":
		return invalid("a regeneration carries no message")
	case conts == 1 && req.ThreadID == "":
		return invalid("a continuation needs the thread id")
	case req.Decision != nil && req.Message != "":
		return invalid("a decision carries no message")
	case req.Decision != nil && len(req.Decision.Reason) > MaxDecisionReasonBytes:
		return &Error{Code: CodeTooLarge, Op: "validate", Err: fmt.Errorf("decision reason is %d bytes", len(req.Decision.Reason)),
			Message: fmt.Sprintf("The reason is too long: at most %d bytes.", MaxDecisionReasonBytes)}
	case req.Decision != nil && !utf8.ValidString(req.Decision.Reason):
		return invalid("the decision reason is not valid UTF-8")
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
	if err := e.validToolResults(req.ToolResults); err != nil {
		return err
	}
	if req.Form != nil && req.Form.ID == "" {
		return invalid("form answers need the form id")
	}
	if err := validGrants(req.AutoApprove); err != nil {
		return invalid(err.Error())
	}
	// Oversized fields are cut or refused before anything scans them: the
	// page context is cut here, once, so the guard never sees more.
	req.PageContext = strings.ToValidUTF8(truncate(req.PageContext, e.cfg.MaxPageContextBytes), "\uFFFD")
	return nulField(req)
}

// nulField refuses a request with a NUL in any of its fields. No store can
// keep a NUL in every column, and no person types one: a field holding one
// is refused by name, never a failed write.
func nulField(req *Request) error {
	invalid := func(what string) error { return invalidRequest("validate", what) }
	fields := []struct{ name, value string }{
		{"thread_id", req.ThreadID}, {"message", req.Message}, {"page", req.Page}, {"page_context", req.PageContext},
		{"replaces", req.Replaces},
	}
	if req.Decision != nil {
		fields = append(fields, struct{ name, value string }{"decision token", req.Decision.Token},
			struct{ name, value string }{"decision reason", req.Decision.Reason})
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

// validToolResults checks the client results of a request, their size
// before anything parses them.
func (e *Engine) validToolResults(results []ToolResult) error {
	invalid := func(what string) error { return invalidRequest("validate", what) }
	size := 0
	for _, r := range results {
		size += len(r.Output)
	}
	if size > maxClientOutputFactor*e.cfg.MaxMessageBytes {
		// Measured before anything parses them.
		return wrap(CodeTooLarge, "validate", fmt.Errorf("tool results are %d bytes", size))
	}
	for _, r := range results {
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
