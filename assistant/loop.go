package assistant

import (
	"context"
	"strings"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

const persistTimeout = 10 * time.Second

// relayBuffer is how many blocks the worker may run ahead of the consumer.
const relayBuffer = 64

// finalRoundNote is appended to the system prompt of the forced last call.
const finalRoundNote = "\n\nYou have used every tool call available for this message. Do not call tools. " +
	"Answer the user now from the information you already have, and say plainly what you could not find out."

// noAnswer is shown when the model ends a turn without any text.
const noAnswer = "I could not produce an answer to that. Please try rephrasing your question."

// cutOffNote tells the user the answer hit the turn's output cap.
const cutOffNote = "The answer reached its length limit and was cut off."

// loop is the agentic loop: up to MaxToolRounds model calls that may use
// tools, then, if the model is still calling tools, one call with no tools
// that must answer.
func (t *turn) loop(ctx context.Context, emit func(blocks.Block)) {
	if t.blocked() && t.e.cfg.GuardRejection != "" {
		emit(blocks.Block{Kind: blocks.Markdown, Content: t.e.cfg.GuardRejection})
		t.out.end(FinishBlocked)
		return
	}
	if t.stopped() {
		// Stopped while a decision or the client's results were carried
		// out: no model call to pay for.
		t.out.fail(t.stopErr())
		return
	}
	if t.cont.quiet != nil {
		t.reportDecision(emit)
		return
	}
	if !t.blocked() {
		t.compact(t.stop.ctx)
		if t.stopped() {
			t.out.fail(t.stopErr())
			return
		}
		t.prompt.system = t.systemPrompt()
	}
	system := t.prompt.system
	history := t.prompt.history
	if t.blocked() {
		history = nil // the rejection is written from the categories alone
	}
	base := history
	if in := t.modelInput(); in != "" {
		// A turn that only carries client tool results has no user text.
		base = append(history, providers.Message{Role: providers.User, Content: in})
	}
	stable := 0
	if i := strings.Index(system, scopeBoundary); i >= 0 {
		stable = i + len(scopeBoundary)
	}
	for round := 0; ; round++ {
		defs := t.tools.defs() // search_tools may have loaded more
		final := round == t.e.cfg.MaxToolRounds || len(defs) == 0
		msgs := append(base[:len(base):len(base)], t.out.msgs...)
		var req *providers.Request
		switch {
		case final && len(defs) > 0:
			req = t.conn.request(turnCall, system+finalRoundNote, stable, msgs, nil)
		case final:
			req = t.conn.request(turnCall, system, stable, msgs, nil)
		default:
			req = t.conn.request(turnCall, system, stable, msgs, defs)
		}
		text, calls, err := t.conn.stream(ctx, modelCall{req: req, out: &t.out, emit: emit, stop: &t.stop,
			waiting: blocks.MetaInfo{ThreadID: t.thread.ID, MessageID: t.reply.ID}})
		if len(calls) > 0 && !t.stopped() {
			// The reported usage may reach the cap only at the end of the
			// call: then no tools run for it and the model is called no more.
			t.out.spent()
		}
		if t.out.capped && !t.stopped() {
			// The turn wrote all it may: keep the text, drop calls that
			// would run on a cut-off answer, say so, and end here.
			t.out.say(text)
			emit(blocks.Block{Kind: blocks.Warning, Content: cutOffNote})
			t.out.end(FinishLength)
			return
		}
		if t.stopped() {
			t.out.say(text)
			t.out.fail(t.stopErr())
			return
		}
		if err != nil {
			t.out.say(text)
			t.out.fail(providerErr(err))
			return
		}
		if final || len(calls) == 0 {
			// A forced final answer that still calls tools keeps only its text:
			// calls without results must never reach the replayed history.
			t.out.say(text)
			if len(calls) > 0 {
				t.out.end(FinishStop) // the calls were dropped; nothing waits on them
			}
			if !t.out.textSeen {
				// The model said nothing the user can read; a turn always ends with text.
				emit(blocks.Block{Kind: blocks.Markdown, Content: noAnswer})
				t.out.end(FinishEmpty)
			}
			return
		}
		calls = t.out.uniqueIDs(calls, round)
		t.out.called(text, calls)
		end, reason := t.runTools(t.stop.ctx, calls, emit)
		if t.stopped() {
			t.out.fail(t.stopErr())
			return
		}
		if end {
			t.out.end(reason)
			return
		}
	}
}
