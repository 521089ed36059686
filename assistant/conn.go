package assistant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

// conn is the model connection a turn talks to, and the limits that come
// with it: the one place a turn reads provider settings from.
type conn struct {
	name          string // the connection's name in spend keys
	provider      providers.Provider
	model         string
	maxOutput     int // per model call; 0: the provider's default
	temperature   *float64
	topP          *float64
	effort        string // reasoning effort; "": the provider's default
	window        int    // the context window in tokens
	drain         time.Duration
	maxTurnTokens int // the turn's output cap
	maxTurnBytes  int
	retries       int           // tries again of a call that failed before its first event
	retryWait     time.Duration // the most all of one call's waits may add up to
}

// request is a model call of this connection. The system prompt's stable
// part, the same for every user and turn, ends with the scope boundary: a
// provider with prompt caching puts its breakpoint there.
func (c *conn) request(system string, msgs []providers.Message) *providers.Request {
	stable := 0
	if i := strings.Index(system, scopeBoundary); i >= 0 {
		stable = i + len(scopeBoundary)
	}
	return &providers.Request{Model: c.model, System: system, SystemStable: stable, Messages: msgs, MaxTokens: c.maxOutput,
		Temperature: c.temperature, TopP: c.topP, ReasoningEffort: c.effort}
}

// resultBudget is how many bytes of one tool result the model reads: an
// eighth of the context window, at about four bytes a token.
func (c *conn) resultBudget() int { return c.window * 4 / 8 }

// backoff is how long to wait before trying a failed call again, and
// whether to: only for a busy or unreachable model, at most c.retries
// times, within c.retryWait in all. The wait doubles from half a second,
// with jitter, unless the server said how long (Retry-After).
func (c *conn) backoff(err error, attempt int, waited time.Duration) (time.Duration, bool) {
	switch providers.CategoryOf(err) {
	case providers.CategoryRateLimit, providers.CategoryUnavailable, providers.CategoryConnection:
	default:
		return 0, false
	}
	if attempt >= c.retries {
		return 0, false
	}
	base := 500 * time.Millisecond << attempt
	d := base/2 + rand.N(base/2+1)
	if pe, ok := errors.AsType[*providers.Error](err); ok && pe.RetryAfter > 0 {
		d = pe.RetryAfter
	}
	if waited+d > c.retryWait {
		return 0, false
	}
	return d, true
}

// waitingNote is what the user reads while the turn waits to try again.
func waitingNote(err error, d time.Duration) string {
	why := "The model is busy."
	if providers.CategoryOf(err) == providers.CategoryConnection {
		why = "The model cannot be reached."
	}
	return fmt.Sprintf("%s Trying again in %v.", why, max(d.Round(time.Second), time.Second))
}

// complete makes a model call nobody watches (a summary, a title) and
// returns its text, cleaned of inline reasoning and tool markup, and its
// usage (estimated when the server reports none).
func (c *conn) complete(ctx context.Context, req *providers.Request) (string, providers.Usage, error) {
	var text strings.Builder
	var clean providers.Cleaner
	var usage providers.Usage
	reported := false
	var err error
stream:
	for ev, e := range c.provider.Stream(ctx, req) {
		switch {
		case e != nil:
			err = e
			break stream
		case ev.Kind == providers.TextDelta:
			if text.Len()+len(ev.Text) > c.maxTurnBytes {
				err = errors.New("over the output cap")
				break stream
			}
			s, _ := clean.Write(ev.Text)
			text.WriteString(s)
		case ev.Kind == providers.UsageEvent:
			usage, reported = usage.Add(ev.Usage), true
		}
	}
	s, _ := clean.Flush()
	text.WriteString(s)
	if !reported {
		usage = estimatedUsage(req, text.String(), nil)
	}
	return text.String(), usage, err
}

// providerErr classifies a provider failure; its text stays in the cause.
func providerErr(err error) error {
	switch providers.CategoryOf(err) {
	case providers.CategoryRateLimit:
		return wrap(CodeModelBusy, "model call", err)
	case providers.CategoryTimeout:
		return wrap(CodeModelTimeout, "model call", err)
	case providers.CategoryCanceled:
		return wrap(CodeCancelled, "model call", err)
	default:
		return wrap(CodeModelUnavailable, "model call", err)
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
	unwatch := context.AfterFunc(t.stop.ctx, func() {
		drainMu.Lock()
		defer drainMu.Unlock()
		drain = time.AfterFunc(t.conn.drain, pcancel)
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
	// Both come down to one byte limit for this call: tokens left after the
	// reported usage, at four bytes each (+3: a token counts once whole).
	tokensLeft := int64(t.conn.maxTurnTokens) - t.out.usage.OutputTokens
	limit := int64(t.out.outBytes) + 4*tokensLeft + 3
	limit = min(limit, int64(t.conn.maxTurnBytes))
	over := func(n int) bool {
		t.out.outBytes += n
		return int64(t.out.outBytes) > limit
	}
	// onText and onReasoning take the model's words as the user sees them;
	// they report whether the output cap ended the call.
	onText := func(s string) bool {
		capped := over(len(s))
		if capped {
			// Keep the rune-aligned part within the byte cap, then stop
			// reading: a model that never stops costs no more than that.
			room := len(s) - (t.out.outBytes - t.conn.maxTurnBytes)
			s = truncate(s, max(0, min(room, len(s))))
		}
		text.WriteString(s)
		t.out.parser.Write(s, emit)
		if capped {
			t.out.capped = true
			return true
		}
		if !t.out.textSeen {
			// The first words reach the user at once; later prose is
			// buffered by the parser to reduce jitter.
			t.out.textSeen = true
			t.out.parser.FlushProse(emit)
		}
		return false
	}
	onReasoning := func(s string) bool {
		if over(len(s)) {
			t.out.capped = true
			return true
		}
		// Shown and stored apart from the answer, never replayed to the
		// model: prose waiting in the parser goes first.
		t.out.parser.FlushProse(emit)
		emit(blocks.Block{Kind: blocks.Reasoning, Content: s})
		return false
	}
	// Reasoning a model writes inline (<think>…) is reasoning, and tool-call
	// markup it leaks into its text is dropped, whatever the provider.
	var clean providers.Cleaner
	take := func(s, r string) bool {
		return r != "" && onReasoning(r) || s != "" && onText(s)
	}
	var waited time.Duration
retry:
	for attempt := 0; ; attempt++ {
		for ev, err := range t.conn.provider.Stream(pctx, req) {
			if err != nil {
				if t.stopped() {
					started = true                 // stopped while the model worked on the prompt
					return text.String(), nil, nil // a drain cut short is no provider failure
				}
				if d, ok := t.conn.backoff(err, attempt, waited); ok && !started {
					// Nothing streamed yet: the call can be made again.
					waited += d
					emit(blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{ThreadID: t.thread.ID, MessageID: t.reply.ID, Waiting: waitingNote(err, d)}})
					timer := time.NewTimer(d)
					select {
					case <-timer.C:
						continue retry
					case <-t.stop.ctx.Done():
						timer.Stop()
						return text.String(), nil, nil
					case <-pctx.Done():
						timer.Stop()
						return text.String(), nil, err
					}
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
				if take(clean.Write(ev.Text)) {
					return text.String(), nil, nil
				}
			case providers.ReasoningDelta:
				if t.stopped() {
					drained += len(ev.Text)
					continue
				}
				if onReasoning(ev.Text) {
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
		break
	}
	if !t.stopped() && take(clean.Flush()) {
		return text.String(), nil, nil
	}
	if t.stopped() {
		return text.String(), nil, nil
	}
	if err := ctx.Err(); err != nil {
		return text.String(), nil, err
	}
	return text.String(), calls, nil
}
