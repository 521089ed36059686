package assistant

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

const persistTimeout = 10 * time.Second

// finalRoundNote is appended to the system prompt of the forced last call.
const finalRoundNote = "\n\nYou have used every tool call available for this message. Do not call tools. " +
	"Answer the user now from the information you already have, and say plainly what you could not find out."

// noAnswer is shown when the model ends a turn without any text.
const noAnswer = "I could not produce an answer to that. Please try rephrasing your question."

// loop is the agentic loop: up to MaxToolRounds model calls that may use
// tools, then, if the model is still calling tools, one call with no tools
// that must answer.
func (t *turn) loop(ctx context.Context, emit func(blocks.Block)) {
	system := t.system
	defs := t.toolDefs()
	base := append(t.history, providers.Message{Role: providers.User, Content: t.modelInput()})
	for round := 0; ; round++ {
		final := round == t.e.cfg.MaxToolRounds || len(defs) == 0
		req := &providers.Request{
			Model:     t.e.cfg.Model,
			System:    system,
			Messages:  append(base[:len(base):len(base)], t.msgs...),
			MaxTokens: t.e.cfg.MaxOutputTokens,
		}
		if final && len(defs) > 0 {
			req.System += finalRoundNote
		} else if !final {
			req.Tools = defs
		}
		text, calls, err := t.callModel(ctx, req, emit)
		if err != nil {
			if text != "" {
				t.msgs = append(t.msgs, providers.Message{Role: providers.Assistant, Content: text})
			}
			t.err = providerErr(err)
			return
		}
		if final || len(calls) == 0 {
			// A forced final answer that still calls tools keeps only its text:
			// calls without results must never reach the replayed history.
			if text != "" {
				t.msgs = append(t.msgs, providers.Message{Role: providers.Assistant, Content: text})
			}
			if !t.textSeen {
				// The model said nothing the user can read; a turn always ends with text.
				emit(blocks.Block{Kind: blocks.Markdown, Content: noAnswer})
				t.finish = "empty"
			}
			return
		}
		calls = t.uniqueCallIDs(calls, round)
		t.msgs = append(t.msgs, providers.Message{Role: providers.Assistant, Content: text, ToolCalls: calls})
		end := t.runTools(ctx, calls, emit)
		if err := ctx.Err(); err != nil {
			t.err = contextErr(err)
			return
		}
		if end {
			t.finish = "tool"
			return
		}
	}
}

// callModel streams one model call into blocks. It returns the call's text
// and complete tool calls; on error, the text received before it.
func (t *turn) callModel(ctx context.Context, req *providers.Request, emit func(blocks.Block)) (string, []providers.ToolCall, error) {
	var text strings.Builder
	var calls []providers.ToolCall
	reported := false
	defer t.parser.Flush(emit)
	defer func() {
		// A server that reports no usage is still charged, by estimate, for
		// any call that produced output.
		if !reported && (text.Len() > 0 || len(calls) > 0) {
			t.usage = t.usage.Add(estimatedUsage(req, text.String(), calls))
		}
	}()
	for ev, err := range t.e.cfg.Provider.Stream(ctx, req) {
		if err != nil {
			return text.String(), nil, err
		}
		switch ev.Kind {
		case providers.TextDelta:
			text.WriteString(ev.Text)
			t.parser.Write(ev.Text, emit)
			if !t.textSeen {
				// The first words reach the user at once; later prose is
				// buffered by the parser to reduce jitter.
				t.textSeen = true
				t.parser.FlushProse(emit)
			}
		case providers.ToolCallEvent:
			calls = append(calls, ev.ToolCall)
		case providers.UsageEvent:
			t.usage = t.usage.Add(ev.Usage)
			reported = true
		case providers.FinishEvent:
			t.finish = string(ev.Finish)
		}
	}
	if err := ctx.Err(); err != nil {
		return text.String(), nil, err
	}
	return text.String(), calls, nil
}

// contextErr classifies the end of the turn's context: a cancel (the caller
// left with CancelOnDetach) or the turn's deadline.
func contextErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return wrap(CodeModelTimeout, "turn", err)
	}
	return wrap(CodeCancelled, "turn", err)
}
