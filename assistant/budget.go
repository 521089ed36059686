package assistant

import (
	"slices"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
)

// The one token estimator. A turn sizes what it sends the model before a
// server can say: for the quota's reservation, for the history's budget,
// and for the usage of a call the server reports none for. Each is an
// estimate at about four bytes a token, rounded up, with messageOverhead
// tokens for each message and each tool definition beyond its text.

const messageOverhead = 4 // tokens a message costs beyond its text

// resultEnvelope is about what a tool result's JSON adds to the data it
// holds ({"ok":true,"summary":"…","data":…}).
const resultEnvelope = 96

// defaultOutputEstimate is the output a turn is assumed to need when the
// connection leaves the provider's default in force.
const defaultOutputEstimate = 1024

func tokensOf(s string) int { return tokensIn(len(s)) }

// tokensIn estimates the tokens of n bytes of text.
func tokensIn(n int) int { return (n + 3) / 4 }

// messageTokens estimates the tokens of model messages.
func messageTokens(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageOverhead + tokensOf(m.Content)
		for _, c := range m.ToolCalls {
			n += tokensOf(c.Name) + tokensIn(len(c.Args)) + messageOverhead
		}
	}
	return n
}

// toolDefTokens estimates what the tool definitions add to a request.
func toolDefTokens(defs []providers.ToolDef) int {
	n := 0
	for _, d := range defs {
		n += tokensOf(d.Name) + tokensOf(d.Description) + tokensIn(len(d.Parameters)) + messageOverhead
	}
	return n
}

// stretchTokens estimates the tokens of the stretches' messages.
func stretchTokens(ss []stretch) int {
	n := 0
	for _, s := range ss {
		n += messageTokens(s.msgs)
	}
	return n
}

// summaryCost is what the summary adds to the system prompt, in tokens.
func summaryCost(summary string) int { return tokensOf(summarySection(summary)) }

// requestTokens estimates the input of a model call.
func requestTokens(req *providers.Request) int {
	return tokensOf(req.System) + messageTokens(req.Messages) + toolDefTokens(req.Tools)
}

// callTokens is the most a model call of the Engine's own may use, by
// estimate: its input and its output limit.
func callTokens(req *providers.Request) int64 {
	return int64(requestTokens(req) + req.MaxTokens)
}

// estimatedUsage stands in for a model call whose server reported no
// usage, so quotas still count it: its request's input tokens (see
// requestTokens), and the text and calls it wrote.
func estimatedUsage(input int, text string, calls []providers.ToolCall) providers.Usage {
	out := tokensOf(text)
	for _, c := range calls {
		out += tokensOf(c.Name) + tokensIn(len(c.Args))
	}
	return providers.Usage{InputTokens: int64(input), OutputTokens: int64(out)}
}

// firstCall is what a turn's first model call sends besides the replayed
// history, in tokens: the system prompt without the summary, the user's
// input and the tool definitions.
type firstCall struct {
	system, input int // tokens
	defs          []providers.ToolDef
}

// tokens is the call's size without the history.
func (f firstCall) tokens() int { return f.system + f.input + toolDefTokens(f.defs) }

// historyBudget is how many tokens the replayed history (and the summary)
// may take in the turn's first model call on c: the window less f, the
// reply, room for this turn's own tool rounds (a quarter of the window,
// an eighth of a small one: under 8K tokens the history is scarcer than
// the room a round's results may want) and a margin for the estimate (a
// twentieth).
func historyBudget(c *conn, f firstCall) int {
	w := c.window
	rounds := w / 4
	if w < 8192 {
		rounds = w / 8
	}
	return w - f.tokens() - c.replyReserve() - rounds - w/20
}

// replyReserve is the room kept for the model's answer.
func (c *conn) replyReserve() int {
	if c.maxOutput > 0 {
		return c.maxOutput
	}
	return min(c.window/8, 4096)
}

// summaryTokens bounds the running summary.
func (c *conn) summaryTokens() int { return max(256, min(c.window/16, 2048)) }

// reservation is what the quota holds for a turn on c, before the guard
// has read anything: its first model call, as admission knows it, plus
// the output allowance. The call is f (what the user says, as admitted:
// their message, form answers, a regenerated message or a decision note),
// with the page context and entities still unscreened, sized by the room
// they may take (contextRoom bytes); the summary and the history of the
// thread's branch after it, before compaction, which may shrink it; and
// the client calls the turn answers, with their outputs as the model will
// read them, each cut to the connection's result budget, or the decided
// call with room for its result. The call is at
// most the window: compaction keeps it within. Later tool rounds re-send
// the prompt, so a turn may use more than it reserved; Settle charges
// what was used (see quota.Ledger on bounded overshoot).
func reservation(c *conn, f firstCall, contextRoom int, adm *admission) int64 {
	in := f.tokens() + tokensIn(contextRoom)
	in += summaryCost(adm.thread.Summary) + stretchTokens(after(adm.past, adm.thread.SummaryThrough))
	for _, b := range adm.cont.clientCalls {
		// The call as the last turn made it, and its result as the model
		// reads it: the output in the result's envelope, cut to budget.
		out := resultEnvelope
		if i := slices.IndexFunc(adm.req.ToolResults, func(r ToolResult) bool { return r.ID == b.ID }); i >= 0 {
			out += len(adm.req.ToolResults[i].Output)
		}
		in += 2*messageOverhead + tokensOf(b.Name) + tokensIn(len(b.Data)) + tokensIn(min(out, c.resultBudget()))
	}
	if d := adm.cont.decision; d != nil {
		// The proposed call and its answer: a decline's is short; an
		// applied tool's result is not known yet, and may take the whole
		// result budget.
		out := resultEnvelope + 256
		if adm.cont.decided == store.ProposalApplied {
			out = c.resultBudget()
		}
		in += 2*messageOverhead + tokensOf(d.Tool) + tokensIn(len(d.Args)) + tokensIn(out)
	}
	out := c.maxOutput
	if out == 0 {
		out = defaultOutputEstimate
	}
	return int64(min(in, c.window) + out)
}

// inputTokens estimates the user's message of text: none without text (a
// turn that only carries client tool results).
func inputTokens(text string) int {
	if text == "" {
		return 0
	}
	return messageOverhead + tokensOf(text)
}
