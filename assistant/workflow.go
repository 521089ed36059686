package assistant

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/tools"
)

// The workflow policy (B17), on with Config.Workflow, holds a turn to
// resolve -> read -> write -> verify, in Go, whatever the model is told:
//
//   - Resolve. A Mutate or Destructive call may name only objects the
//     thread has seen: each id at its tool's Spec.IDArgs must have come up
//     in what the user said (this turn or earlier in the thread) or in a
//     successful result of a Read tool (in the thread's replay or this
//     turn). Otherwise the gate answers UNRESOLVED_ID before any proposal,
//     card or run, and the model is told to find the id first. Nothing new
//     is stored for this: the ids are looked for, when a write asks, in the
//     stored model messages the turn replays anyway.
//   - Verify. After a change succeeds (in a round, or a card applied before
//     the turn), the next model call is the verify round: it is offered only
//     the host's server-side Read tools and told to check the change, and
//     any other call is answered VERIFY_FIRST. The call after it reports the
//     change with no tools, as pace does for every change. One verify round
//     a turn, and only while the turn's pace leaves room for a round with
//     tools; else the change is reported at once.
//
// With the policy off, nothing here changes a turn.

// workflowRule is added to the tool rules of the system prompt when the
// policy is on, so the model knows the rules the gate keeps.
const workflowRule = "\n- Before you change or delete an object, find it with a read or search tool (or take its id from the user's own words) " +
	"and use the exact id that came back: never guess an id. After a change, check it with a read tool before you report it."

// verifyNote ends the system prompt of the verify round.
const verifyNote = "\n\nThe change was carried out: its result is above. Check it now with a read tool, to confirm it took effect. " +
	"Only read tools are available in this step; make no other change."

// maxCheckedIDs bounds the ids of one call the policy looks for.
const maxCheckedIDs = 256

// verifyStep is where a turn is in the verify step of the policy.
type verifyStep int8

const (
	verifyNone verifyStep = iota // no change to check yet
	verifyNow                    // this round checks the change: Read tools only
	verifyDone                   // checked, or no room was left to: the change is reported
)

// workflow is a turn's workflow policy. Only its methods, in this file,
// write it; the round's gate consults check, pace consults verify, and the
// loop verifying.
type workflow struct {
	on       bool
	readOnly func(name string) bool // tells the registry's Read tools
	log      *slog.Logger
	past     []stretch // the admission's replay of the thread: read, never kept apart
	said     string    // what the user says this turn, as the model reads it
	step     verifyStep
}

// start readies the policy of a turn of e on the thread replayed as past,
// in which the user says said.
func (w *workflow) start(e *Engine, past []stretch, said string) {
	*w = workflow{on: e.cfg.Workflow, readOnly: e.readOnly, log: e.cfg.Logger, past: past, said: said}
}

// check is the policy's gate on call c of the tool spec, after the
// toolbox's gates: in the verify round only the host's server-side Read
// tools may be called, and a Mutate or Destructive call may name only ids
// the thread has seen (msgs: the turn's model messages so far). It returns
// the refusal, or nil.
func (w *workflow) check(spec tools.Spec, c providers.ToolCall, msgs []providers.Message) *tools.Result {
	switch {
	case !w.on:
		return nil
	case w.step == verifyNow && !verifier(spec):
		r := refusal(tools.CodeVerifyFirst, "The change you made must be checked first: only read tools can be called now.",
			"Call a read tool to confirm the change took effect, then tell the user what was done.")
		r.Error.Blocked = false
		return &r
	case !spec.NeedsApproval() || len(spec.IDArgs) == 0:
		return nil
	}
	return w.resolve(spec, c.Args, msgs)
}

// resolve refuses a call of spec with args that names an id the thread
// has not seen.
func (w *workflow) resolve(spec tools.Spec, args json.RawMessage, msgs []providers.Message) *tools.Result {
	var seen []string // built for the first id looked for
	n := 0
	for _, arg := range spec.IDArgs {
		ids, err := tools.IDsAt(args, arg)
		switch {
		case errors.Is(err, tools.ErrInvalidArgs):
			return nil // the tool's schema answers it, before any card or run
		case err != nil:
			// A Registry that does not check its specs (tools.Set does).
			w.log.Error("assistant: a tool's IDArgs cannot be read", "tool", spec.Name, "err", err)
			r := tools.Fail(tools.CodeInternal, "This tool cannot be used right now.")
			return &r
		}
		for _, id := range ids {
			if id = strings.TrimSpace(id); id == "" {
				continue
			}
			if n++; n > maxCheckedIDs {
				r := refusal(tools.CodeInvalidArgs, fmt.Sprintf("This call names more than %d objects.", maxCheckedIDs),
					"Split the change into smaller calls.")
				r.Error.Blocked, r.Error.Retryable = false, true
				return &r
			}
			if seen == nil {
				seen = w.seen(msgs)
			}
			if !slices.ContainsFunc(seen, func(text string) bool { return mentions(text, id) }) {
				return unresolved(spec.Name, arg)
			}
		}
	}
	return nil
}

// unresolved is the refusal of a call of tool whose argument arg names an
// id the thread has not seen. It does not repeat the id: the arguments
// may hold what the guard kept from the transcript.
func unresolved(tool, arg string) *tools.Result {
	r := refusal(tools.CodeUnresolvedID,
		fmt.Sprintf("The id in %q has not come up in this conversation, so %s cannot use it: ids must come from the user or from a tool's result.", arg, tool),
		fmt.Sprintf("Find the object first: call a read or search tool that lists it (or ask the user), then call %s again with the exact id it returned.", tool))
	r.Error.Blocked, r.Error.Retryable = false, true
	return &r
}

// seen is every text an id may have come up in: what the user said, this
// turn and earlier, and the successful results of Read tools, in the
// thread's replay and in this turn's messages msgs; a result's JSON gives
// each of its keys and values on its own.
func (w *workflow) seen(msgs []providers.Message) []string {
	out := []string{w.said}
	for _, s := range w.past {
		out = w.texts(out, s.msgs)
	}
	return w.texts(out, msgs)
}

// texts appends the texts of msgs an id may come from: the user's, and
// the successful results of Read tools. The model's own words are not.
func (w *workflow) texts(out []string, msgs []providers.Message) []string {
	names := map[string]string{} // call id -> tool
	for _, m := range msgs {
		switch m.Role {
		case providers.User:
			out = append(out, m.Content)
		case providers.Assistant:
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
		case providers.Tool:
			if name, ok := names[m.ToolCallID]; ok && !isMetaTool(name) && w.readOnly(name) && resultOK(m.Content) {
				out = resultTexts(out, m.Content)
			}
		}
	}
	return out
}

// resultTexts appends the keys and values of a tool message's result (the
// result inside a fence), or, when it is not JSON (a fence cut to
// budget), its text.
func resultTexts(out []string, content string) []string {
	inner, _ := screenedForm(content)
	d := json.NewDecoder(strings.NewReader(inner))
	d.UseNumber()
	start := len(out)
	for {
		tok, err := d.Token()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return append(out[:start], inner)
			}
			return out
		}
		switch v := tok.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			out = append(out, v.String())
		}
	}
}

// verify decides, before a model call of a turn that made a change,
// whether the call is the verify round: the first after the change, when
// room says the turn may still make a round with tools. It reports true at
// most once a turn; the call after the verify round, or one with no room,
// reports the change.
func (w *workflow) verify(room bool) bool {
	if !w.on {
		return false
	}
	switch w.step {
	case verifyNone:
		if room {
			w.step = verifyNow
			return true
		}
		w.step = verifyDone
	case verifyNow:
		w.step = verifyDone
	}
	return false
}

// verifying reports whether this round is the verify round.
func (w *workflow) verifying() bool { return w.step == verifyNow }

// verifier reports whether a verify round may call the tool spec: one of
// the host's Read tools that the server runs.
func verifier(spec tools.Spec) bool {
	return isRead(spec) && !spec.ClientSide && !isMetaTool(spec.Name)
}

// mentions reports whether id occurs in text as a whole: not inside a
// longer word (letters, digits, '_' and '-' join words; so does a '.'
// between word characters, as in "4.2" or "v1.2"). "n-42" is in "note
// n-42." and "/notes/n-42", not in "n-420" or "an-42".
func mentions(text, id string) bool {
	if id == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], id)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(id)
		if !joined(text[:start], true) && !joined(text[end:], false) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[start:])
		i = start + size
	}
}

// joined reports whether the text on one side of a match continues the
// word: before is the text ending at the match (left side), else the text
// starting after it.
func joined(s string, before bool) bool {
	next := func(s string) (rune, string) {
		if before {
			r, n := utf8.DecodeLastRuneInString(s)
			return r, s[:len(s)-n]
		}
		r, n := utf8.DecodeRuneInString(s)
		return r, s[n:]
	}
	if s == "" {
		return false
	}
	r, rest := next(s)
	if r == '.' && rest != "" {
		r, _ = next(rest)
	}
	return wordRune(r)
}

// wordRune reports whether r is part of an id-like word.
func wordRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
