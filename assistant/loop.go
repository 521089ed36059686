package assistant

import (
	"context"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

// persistTimeout bounds each of a turn's writes that must outlive its
// context: the reply's, the quota's settle and renewals. A variable only so
// that this package's tests wait out a failing store in less time
// (export_test.go).
var persistTimeout = 10 * time.Second

// Notes the turn's pace appends to a call's system prompt (see pace).
const (
	finalRoundNote = "\n\nYou have used every tool call available for this message. Do not call tools. " +
		"Answer the user now from the information you already have, and say plainly what you could not find out."
	budgetNote = "\n\nThis message has used the time and tokens it may. Do not call tools. " +
		"Answer the user now from the information you already have, and say plainly what you could not find out."
	changedNote = "\n\nThe change was carried out: its result is above. Do not call tools. " +
		"Tell the user briefly what was done, from the result, and what, if anything, is left for them to ask."
	wrapUpNote = "\n\nYou have made many tool calls for this message. Wrap up: call a tool again only if the answer " +
		"cannot do without it, then answer the user."
)

// noAnswer is shown when the model ends a turn without any text.
const noAnswer = "I could not produce an answer to that. Please try rephrasing your question."

// forgotNote tells the user the model sees none of the conversation
// before their message: its context window has no room for it.
const forgotNote = "This model's context window is too small to include the earlier messages of this conversation: " +
	"the assistant sees only your latest message. Start a new conversation, or use a model with a larger context window."

// cutOffNote tells the user the answer hit the turn's output cap.
const cutOffNote = "The answer reached its length limit and was cut off."

// loop is the agentic loop: up to MaxToolRounds model calls that may use
// tools, then, if the model is still calling tools, one call with no tools
// that must answer.
func (t *turn) loop(ctx context.Context, emit func(blocks.Block)) {
	switch {
	case t.in.blocked() && t.e.cfg.GuardRejection != "":
		emit(blocks.Block{Kind: blocks.Markdown, Content: t.e.cfg.GuardRejection})
		t.out.end(FinishBlocked)
		return
	case t.stop.stopped():
		// Stopped while a decision or the client's results were carried
		// out: no model call to pay for.
		t.out.fail(t.stop.err())
		return
	case t.cont.quiet != nil:
		warning, text := t.cont.report()
		emit(blocks.Block{Kind: blocks.Warning, Content: warning})
		emit(blocks.Block{Kind: blocks.Markdown, Content: text})
		t.out.say(text)
		t.out.end(FinishQuota)
		return
	case t.e.offTopic(t.stop.ctx, t.conn, t.topic, &t.out):
		t.e.refuseOffTopic(ctx, t.u, t.thread.ID, t.conn, &t.out, emit)
		return
	}
	history, forgot, ok := t.history(ctx)
	if !ok {
		return
	}
	if forgot {
		emit(blocks.Block{Kind: blocks.Warning, Content: forgotNote})
	}
	base := history
	if in := t.in.forModel(); in != "" {
		// A turn that only carries client tool results has no user text.
		base = append(history, providers.Message{Role: providers.User, Content: in})
	}
	for round := 0; ; round++ {
		final, note := pace(&t.e.cfg, round, &t.tools, &t.flow, t.out.usage, time.Since(t.started))
		var defs []providers.ToolDef
		if t.flow.verifying() {
			defs = toolDefs(t.tools.verifiers())
		} else {
			defs = t.tools.defs() // search_tools may have loaded more
		}
		// Joined each round, not held: a parked turn keeps the prompt's
		// sections, not a second copy of the whole.
		sys, stable := t.prompt.system()
		offer := defs
		switch {
		case len(defs) == 0:
			final = true
		case final:
			sys, offer = sys+note, nil
		default:
			sys += note
		}
		t.out.checkClaims(!t.e.cfg.DisableClaimCheck && !t.tools.wrote)
		req := t.conn.request(turnCall, sys, stable, append(base[:len(base):len(base)], t.out.msgs...), offer)
		text, calls, err := t.conn.stream(ctx, modelCall{req: req, out: &t.out, emit: emit, stop: &t.stop,
			waiting: blocks.MetaInfo{ThreadID: t.thread.ID, MessageID: t.reply.ID}})
		if ends(&t.out, &t.stop, text, calls, err, final, emit) {
			return
		}
		calls = t.out.uniqueIDs(calls, round)
		t.out.called(text, calls)
		end, reason := t.runTools(t.stop.ctx, calls, emit)
		switch {
		case t.stop.stopped():
			t.out.fail(t.stop.err())
			return
		case end:
			t.out.end(reason)
			return
		}
	}
}

// history plans what the turn replays, compacted to the room the first
// call leaves, and completes the system prompt with the running summary
// and the time. forgot reports that none of the thread's history fits.
// A blocked message's rejection is written from the categories alone: no
// history. It reports false when the turn was stopped meanwhile.
func (t *turn) history(ctx context.Context) (history []providers.Message, forgot, ok bool) {
	if t.in.blocked() {
		t.prompt.finish(t.thread.Summary, t.e.cfg.Now().In(userLocation(t.u)))
		return nil, false, true
	}
	f := firstCall{system: tokensIn(t.prompt.size()), input: inputTokens(t.in.forModel()), defs: t.tools.defs()}
	c := t.e.compact(t.stop.ctx, t.conn, &t.stop, t.thread, t.past, historyBudget(t.conn, f))
	t.out.chargeSide(c.usage)
	if t.stop.stopped() {
		t.out.fail(t.stop.err())
		return nil, false, false
	}
	t.prompt.finish(c.summary, t.e.cfg.Now().In(userLocation(t.u)))
	return c.history, c.forgot, true
}

// ends takes the outcome of a model call that made calls (or, final, was
// the last the turn may make) into out, and reports whether it ends the
// turn: the output cap was reached, the turn was stopped, the call failed,
// or it made no calls that will run.
func ends(out *transcript, stop *stopper, text string, calls []providers.ToolCall, err error, final bool, emit func(blocks.Block)) bool {
	if len(calls) > 0 && !stop.stopped() {
		// The reported usage may reach the cap only at the end of the call:
		// then no tools run for it and the model is called no more.
		out.spent()
	}
	switch {
	case out.capped && !stop.stopped():
		// The turn wrote all it may: keep the text, drop calls that would
		// run on a cut-off answer, say so, and end here.
		out.say(text)
		emit(blocks.Block{Kind: blocks.Warning, Content: cutOffNote})
		out.end(FinishLength)
	case stop.stopped():
		out.say(text)
		out.fail(stop.err())
	case err != nil:
		out.say(text)
		out.fail(providerErr(err))
	case final || len(calls) == 0:
		// A forced final answer that still calls tools keeps only its text:
		// calls without results must never reach the replayed history.
		out.say(text)
		if len(calls) > 0 {
			out.end(FinishStop) // the calls were dropped; nothing waits on them
		}
		if !out.textSeen {
			// The model said nothing the user can read; a turn always ends with text.
			emit(blocks.Block{Kind: blocks.Markdown, Content: noAnswer})
			out.end(FinishEmpty)
		}
	default:
		return false
	}
	return true
}

// pace decides a turn's next model call from what the turn has spent
// (A7): whether it must answer with no tools, and the note its system
// prompt ends with. After a change it reports the change, but with the
// workflow policy on (flow) it first checks it, in one round, if the turn
// has room for one; past the rounds, the tool calls, the tokens or the
// time the turn may take, it answers; past WrapUpAfterToolCalls tool calls
// it is told to wrap up.
func pace(cfg *Config, round int, tb *toolbox, flow *workflow, used providers.Usage, elapsed time.Duration) (final bool, note string) {
	spent := round >= cfg.MaxToolRounds || cfg.MaxTurnToolCalls >= 0 && tb.made >= cfg.MaxTurnToolCalls
	late := cfg.AnswerAfterTokens > 0 && used.Total() >= cfg.AnswerAfterTokens || cfg.AnswerAfter > 0 && elapsed >= cfg.AnswerAfter
	switch {
	case tb.wrote && flow.on && flow.verify(!spent && !late && len(tb.verifiers()) > 0):
		return false, verifyNote
	case tb.wrote:
		return true, changedNote
	case spent:
		return true, finalRoundNote
	case late:
		return true, budgetNote
	case cfg.WrapUpAfterToolCalls >= 0 && tb.made >= cfg.WrapUpAfterToolCalls:
		return false, wrapUpNote
	}
	return false, ""
}
