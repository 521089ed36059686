package assistant

import (
	"context"
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
		t.out.finish = FinishBlocked
		return
	}
	if t.stopped() {
		// Stopped while a decision or the client's results were carried
		// out: no model call to pay for.
		t.out.err = t.stopErr()
		return
	}
	if t.cont.quiet != nil {
		t.reportDecision(emit)
		return
	}
	if !t.blocked() {
		t.compact(t.stop.ctx)
		if t.stopped() {
			t.out.err = t.stopErr()
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
	for round := 0; ; round++ {
		defs := t.toolDefs() // search_tools may have loaded more
		final := round == t.e.cfg.MaxToolRounds || len(defs) == 0
		req := t.conn.request(system, append(base[:len(base):len(base)], t.out.msgs...))
		if final && len(defs) > 0 {
			req.System += finalRoundNote
		} else if !final {
			req.Tools = defs
		}
		text, calls, err := t.callModel(ctx, req, emit)
		if len(calls) > 0 && t.out.usage.OutputTokens >= int64(t.conn.maxTurnTokens) && !t.stopped() {
			// The reported usage reached the cap only at the end of the
			// call: run no tools for it and call the model no more.
			t.out.capped = true
		}
		if t.out.capped && !t.stopped() {
			// The turn wrote all it may: keep the text, drop calls that
			// would run on a cut-off answer, say so, and end here.
			t.out.say(text)
			emit(blocks.Block{Kind: blocks.Warning, Content: cutOffNote})
			t.out.finish = FinishLength
			return
		}
		if t.stopped() {
			t.out.say(text)
			t.out.err = t.stopErr()
			return
		}
		if err != nil {
			t.out.say(text)
			t.out.err = providerErr(err)
			return
		}
		if final || len(calls) == 0 {
			// A forced final answer that still calls tools keeps only its text:
			// calls without results must never reach the replayed history.
			t.out.say(text)
			if len(calls) > 0 {
				t.out.finish = FinishStop // the calls were dropped; nothing waits on them
			}
			if !t.out.textSeen {
				// The model said nothing the user can read; a turn always ends with text.
				emit(blocks.Block{Kind: blocks.Markdown, Content: noAnswer})
				t.out.finish = FinishEmpty
			}
			return
		}
		calls = t.uniqueCallIDs(calls, round)
		t.out.called(text, calls)
		end, reason := t.runTools(t.stop.ctx, calls, emit)
		if t.stopped() {
			t.out.err = t.stopErr()
			return
		}
		if end {
			t.out.finish = reason
			return
		}
	}
}
