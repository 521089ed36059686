package assistant

import (
	"context"
	"strings"
	"sync"
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
		t.out.textSeen, t.out.finish = true, FinishBlocked
		return
	}
	if t.stopped() {
		// Stopped while a decision or the client's results were carried
		// out: no model call to pay for.
		t.out.err = t.stopErr()
		return
	}
	if t.quiet != nil {
		t.reportDecision(emit)
		return
	}
	system := t.system
	history := t.history
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
		req := &providers.Request{
			Model:     t.e.cfg.Model,
			System:    system,
			Messages:  append(base[:len(base):len(base)], t.out.msgs...),
			MaxTokens: t.e.cfg.MaxOutputTokens,
		}
		if final && len(defs) > 0 {
			req.System += finalRoundNote
		} else if !final {
			req.Tools = defs
		}
		text, calls, err := t.callModel(ctx, req, emit)
		if len(calls) > 0 && t.out.usage.OutputTokens >= int64(t.e.cfg.MaxTurnOutputTokens) && !t.stopped() {
			// The reported usage reached the cap only at the end of the
			// call: run no tools for it and call the model no more.
			t.out.capped = true
		}
		if t.out.capped && !t.stopped() {
			// The turn wrote all it may: keep the text, drop calls that
			// would run on a cut-off answer, say so, and end here.
			if text != "" {
				t.out.msgs = append(t.out.msgs, providers.Message{Role: providers.Assistant, Content: text})
			}
			emit(blocks.Block{Kind: blocks.Warning, Content: cutOffNote})
			t.out.textSeen, t.out.finish = true, FinishLength
			return
		}
		if t.stopped() {
			if text != "" {
				t.out.msgs = append(t.out.msgs, providers.Message{Role: providers.Assistant, Content: text})
			}
			t.out.err = t.stopErr()
			return
		}
		if err != nil {
			if text != "" {
				t.out.msgs = append(t.out.msgs, providers.Message{Role: providers.Assistant, Content: text})
			}
			t.out.err = providerErr(err)
			return
		}
		if final || len(calls) == 0 {
			// A forced final answer that still calls tools keeps only its text:
			// calls without results must never reach the replayed history.
			if text != "" {
				t.out.msgs = append(t.out.msgs, providers.Message{Role: providers.Assistant, Content: text})
			}
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
		t.out.msgs = append(t.out.msgs, providers.Message{Role: providers.Assistant, Content: text, ToolCalls: calls})
		end, reason := t.runTools(t.stopCtx, calls, emit)
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

// callModel streams one model call into blocks. It returns the call's text
// and complete tool calls; on error, the text received before it. Once the
// turn is stopped nothing more is shown, but the stream is read on, for at
// most DrainTimeout, so the model's final usage is still charged.
func (t *turn) callModel(ctx context.Context, req *providers.Request, emit func(blocks.Block)) (string, []providers.ToolCall, error) {
	var text strings.Builder
	var calls []providers.ToolCall
	reported, drained := false, 0
	pctx, pcancel := context.WithCancel(ctx)
	var drainMu sync.Mutex
	var drain *time.Timer // bounds the drain, set once the turn stops
	unwatch := context.AfterFunc(t.stopCtx, func() {
		drainMu.Lock()
		defer drainMu.Unlock()
		drain = time.AfterFunc(t.e.cfg.DrainTimeout, pcancel)
	})
	defer func() {
		unwatch()
		drainMu.Lock()
		if drain != nil {
			drain.Stop()
		}
		drainMu.Unlock()
		pcancel()
	}()
	defer t.out.parser.Flush(emit)
	started := false // the request reached the provider's stream
	defer func() {
		// A call the server reports no usage for is charged by estimate:
		// its input as soon as the stream began, so a prompt cancelled
		// before the first token is not free, and whatever output came.
		if !reported && (started || text.Len() > 0 || drained > 0 || len(calls) > 0) {
			u := estimatedUsage(req, text.String(), calls)
			u.OutputTokens += int64(drained / 4)
			t.out.usage = t.out.usage.Add(u)
		}
	}()
	// The turn's output cap: bytes the model wrote over every round, and
	// tokens, reported or at four bytes a token while this call streams.
	reportedOut := t.out.usage.OutputTokens
	over := func(n int) bool {
		t.out.outBytes += n
		return t.out.outBytes > t.e.cfg.MaxTurnOutputBytes ||
			reportedOut+int64(t.out.outBytes-t.out.outBytesAtCall)/4 > int64(t.e.cfg.MaxTurnOutputTokens)
	}
	t.out.outBytesAtCall = t.out.outBytes
	for ev, err := range t.e.cfg.Provider.Stream(pctx, req) {
		if err != nil {
			if t.stopped() {
				started = true                 // stopped while the model worked on the prompt
				return text.String(), nil, nil // a drain cut short is no provider failure
			}
			return text.String(), nil, err
		}
		started = true
		switch ev.Kind {
		case providers.TextDelta:
			if t.stopped() {
				drained += len(ev.Text)
				continue
			}
			if over(len(ev.Text)) {
				// Keep the rune-aligned part that fits, then stop reading:
				// a model that never stops costs no more than the cap.
				room := len(ev.Text) - (t.out.outBytes - t.e.cfg.MaxTurnOutputBytes)
				ev.Text = truncate(ev.Text, max(0, min(room, len(ev.Text))))
				text.WriteString(ev.Text)
				t.out.parser.Write(ev.Text, emit)
				t.out.capped, t.out.textSeen = true, t.out.textSeen || text.Len() > 0
				return text.String(), nil, nil
			}
			text.WriteString(ev.Text)
			t.out.parser.Write(ev.Text, emit)
			if !t.out.textSeen {
				// The first words reach the user at once; later prose is
				// buffered by the parser to reduce jitter.
				t.out.textSeen = true
				t.out.parser.FlushProse(emit)
			}
		case providers.ReasoningDelta:
			if t.stopped() {
				drained += len(ev.Text)
				continue
			}
			if over(len(ev.Text)) {
				t.out.capped = true
				return text.String(), nil, nil
			}
		case providers.ToolCallEvent:
			if t.stopped() {
				continue
			}
			if over(len(ev.ToolCall.Name) + len(ev.ToolCall.Args)) {
				t.out.capped = true
				return text.String(), nil, nil
			}
			calls = append(calls, ev.ToolCall)
		case providers.UsageEvent:
			t.out.usage = t.out.usage.Add(ev.Usage)
			reported = true
		case providers.FinishEvent:
			t.out.finish = string(ev.Finish)
		}
	}
	if t.stopped() {
		return text.String(), nil, nil
	}
	if err := ctx.Err(); err != nil {
		return text.String(), nil, err
	}
	return text.String(), calls, nil
}
