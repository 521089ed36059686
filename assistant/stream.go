package assistant

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

// stream is the one place the Engine calls a model: a turn's rounds, the
// summary, the title and the topic filter's call all come through it. It
// has no access to the turn: what the model writes goes into out, within
// its output cap, and out to the user through emit.

// modelCall is one call of the model and where its output goes.
type modelCall struct {
	req  *providers.Request
	out  *transcript        // takes the text, reasoning, calls and usage
	emit func(blocks.Block) // the blocks the user sees
	// stop, when it ends, hides what the call still streams, which is then
	// read on for at most the connection's drain, unseen, for its usage.
	// nil: nobody stops the call.
	stop *stopper
	// waiting is the meta block shown while a failed call waits to be made
	// again; its Waiting is filled in.
	waiting blocks.MetaInfo
	once    bool // never made again: a call that may fail open (a summary, a title, a topic verdict)
}

// stream makes the call. It returns the call's text and complete tool
// calls; on error, the text received before it. A call that failed before
// its first event is made again while the connection's backoff allows;
// one that streamed anything never is. Once stop ends nothing more is
// shown, and the call returns without error.
//
// The call is a `chat` span (telemetry.go), ended with the usage the call
// added to mc.out, estimated or reported.
func (c *conn) stream(ctx context.Context, call modelCall) (_ string, _ []providers.ToolCall, err error) {
	// The call is s.mc from here on, whose request is dropped once the
	// stream has begun (see step): nothing here may hold it longer.
	s := &callState{mc: call, limit: call.out.callLimit(), input: requestTokens(call.req)}
	mc := &s.mc
	ctx = s.span.begin(ctx, c, mc.req, mc.out)
	defer func() { s.span.end(ctx, mc.out, err) }()
	defer mc.out.flush(mc.emit)
	defer s.estimate()
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		capped, err := s.read(ctx, c)
		switch {
		case capped:
			return s.text.String(), nil, nil
		case err == nil:
		case mc.stop.stopped():
			s.started = true                 // stopped while the model worked on the prompt
			return s.text.String(), nil, nil // a drain cut short is no provider failure
		default:
			d, ok := c.backoff(err, attempt, waited)
			if !ok || s.started || mc.once {
				return s.text.String(), nil, err
			}
			// Nothing streamed yet: the call can be made again.
			waited += d
			if again, err := s.wait(ctx, err, d); !again {
				return s.text.String(), nil, err
			}
			continue
		}
		break
	}
	if !mc.stop.stopped() && s.take(s.clean.Flush()) {
		return s.text.String(), nil, nil
	}
	if mc.stop.stopped() {
		return s.text.String(), nil, nil
	}
	if err := ctx.Err(); err != nil {
		return s.text.String(), nil, err
	}
	return s.text.String(), s.calls, nil
}

// callState is what one model call collected so far.
type callState struct {
	mc       modelCall
	limit    int64 // bytes the call may write (transcript.callLimit)
	text     strings.Builder
	calls    []providers.ToolCall
	clean    providers.Cleaner // inline reasoning out, leaked tool markup dropped
	input    int               // the request's tokens, by estimate (budget.go)
	started  bool              // the request reached the provider's stream
	reported bool              // the server reported usage
	drained  int               // bytes read unseen after the stop
	span     chatSpan          // the call's span
}

// read streams one attempt of the call on c. It reports whether the output
// cap ended it, or the provider's error.
func (s *callState) read(ctx context.Context, c *conn) (bool, error) {
	ctx, w := watch(ctx, c.idle, c.drain, s.mc.stop)
	defer w.end()
	for ev, err := range c.provider.Stream(ctx, s.mc.req) {
		w.alive()
		if capped, done, err := s.step(ctx, ev, err); done {
			return capped, err
		}
	}
	return false, stalled(ctx)
}

// watchdog ends one attempt's stream: with errStalled once it is silent
// for idle (a stalled server must not hold the user until TurnTimeout),
// and once the turn is stopped, at the drain's end at the latest, whatever
// it streams (what still comes is read unseen, for its usage). One timer
// serves both bounds.
type watchdog struct {
	mu      sync.Mutex
	timer   *time.Timer // nil while neither bound is set
	idle    time.Duration
	idleAt  time.Time // when the silence bound ends; zero without one
	drainAt time.Time // when the drain ends; zero until the turn is stopped
	ended   bool      // the attempt is over: a late stop sets no timer
	cancel  context.CancelCauseFunc
	unwatch func() bool
}

// watch returns the context of an attempt under parent, and its watchdog;
// stop may be nil, and idle <= 0 sets no silence bound.
func watch(parent context.Context, idle, drain time.Duration, stop *stopper) (context.Context, *watchdog) {
	w := &watchdog{idle: idle}
	if idle <= 0 && stop == nil {
		return parent, w
	}
	ctx, cancel := context.WithCancelCause(parent)
	w.cancel = cancel
	if idle > 0 {
		w.idleAt = time.Now().Add(idle)
		w.timer = time.AfterFunc(idle, w.fire)
	}
	if stop != nil {
		w.unwatch = context.AfterFunc(stop.ctx, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.drainAt = time.Now().Add(drain)
			switch {
			case w.ended:
			case w.timer == nil:
				w.timer = time.AfterFunc(drain, w.fire)
			case w.drainAt.Before(w.idleAt):
				w.timer.Reset(drain)
			}
			// Else the silence bound, which ends first, stands.
		})
	}
	return ctx, w
}

// fire ends the attempt: a stall, unless the turn was stopped meanwhile.
func (w *watchdog) fire() {
	w.mu.Lock()
	draining := !w.drainAt.IsZero()
	w.mu.Unlock()
	if draining {
		w.cancel(context.Canceled)
	} else {
		w.cancel(errStalled)
	}
}

// alive says the stream sent something: the silence bound starts again,
// within the drain's once the turn is stopped.
func (w *watchdog) alive() {
	if w.idle <= 0 {
		return
	}
	w.mu.Lock()
	now := time.Now()
	w.idleAt = now.Add(w.idle)
	d := w.idle
	if !w.drainAt.IsZero() {
		d = min(d, w.drainAt.Sub(now))
	}
	w.timer.Reset(d)
	w.mu.Unlock()
}

// end releases the attempt's context and timer.
func (w *watchdog) end() {
	if w.cancel == nil {
		return
	}
	if w.unwatch != nil {
		w.unwatch()
	}
	w.mu.Lock()
	w.ended = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.cancel(nil)
}

// errStalled is the cause of a call ended for a silent stream.
var errStalled = errors.New("the model's stream was silent for too long")

// stalled returns, for a call whose context ended with errStalled, the
// timeout the user is told of; otherwise nil.
func stalled(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errStalled) {
		return &providers.Error{Category: providers.CategoryTimeout, Err: errStalled}
	}
	return nil
}

// step takes one item of the stream: it reports done when the call ends
// here, with whether the output cap ended it, or the error.
func (s *callState) step(ctx context.Context, ev providers.Event, err error) (capped, done bool, _ error) {
	if err != nil {
		if st := stalled(ctx); st != nil {
			return false, true, st
		}
		return false, true, err
	}
	if !s.started {
		// The call is never made again once it streamed: a parked turn
		// need not hold the request (its system prompt, its messages)
		// while the answer streams.
		s.started, s.mc.req = true, nil
	}
	s.span.event(ev)
	if s.event(ev) {
		return true, true, nil
	}
	return false, false, nil
}

// event takes one event of the stream, and reports whether the output cap
// ended the call. Once the turn is stopped, text and reasoning are only
// counted, for the usage estimate, and calls dropped.
func (s *callState) event(ev providers.Event) bool {
	out, stopped := s.mc.out, s.mc.stop.stopped()
	switch ev.Kind {
	case providers.TextDelta:
		if stopped {
			s.drained += len(ev.Text)
			return false
		}
		// Reasoning a model writes inline (<think>…) is reasoning, and
		// tool-call markup it leaks into its text is dropped, whatever
		// the provider.
		return s.take(s.clean.Write(ev.Text))
	case providers.ReasoningDelta:
		if stopped {
			s.drained += len(ev.Text)
			return false
		}
		return out.reasoning(ev.Text, s.limit, s.mc.emit)
	case providers.ToolCallEvent:
		if stopped {
			return false
		}
		if out.wrote(len(ev.ToolCall.Name)+len(ev.ToolCall.Args), s.limit) {
			return true
		}
		s.calls = append(s.calls, ev.ToolCall)
	case providers.UsageEvent:
		out.charge(ev.Usage)
		s.reported = true
	case providers.FinishEvent:
		out.end(string(ev.Finish))
	}
	return false
}

// take passes cleaned text and reasoning on, and reports whether the
// output cap ended the call.
func (s *callState) take(text, reasoning string) bool {
	if reasoning != "" && s.mc.out.reasoning(reasoning, s.limit, s.mc.emit) {
		return true
	}
	if text == "" {
		return false
	}
	kept, capped := s.mc.out.text(text, s.limit, s.mc.emit)
	s.text.WriteString(kept)
	return capped
}

// wait shows the waiting notice and waits d before the call is made again.
// It reports false when the wait ended otherwise: the turn was stopped
// (no error), or ctx ended (err).
func (s *callState) wait(ctx context.Context, err error, d time.Duration) (bool, error) {
	m := s.mc.waiting
	m.Waiting = waitingNote(err, d)
	s.mc.emit(blocks.Block{Kind: blocks.Meta, Meta: &m})
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true, nil
	case <-s.mc.stop.done():
		return false, nil
	case <-ctx.Done():
		return false, err
	}
}

// estimate charges a call the server reports no usage for by estimate:
// its input as soon as the stream began, so a prompt cancelled before the
// first token is not free, and whatever output came.
func (s *callState) estimate() {
	if s.reported || !s.started && s.text.Len() == 0 && s.drained == 0 && len(s.calls) == 0 {
		return
	}
	u := estimatedUsage(s.input, s.text.String(), s.calls)
	u.OutputTokens += int64(s.drained / 4)
	s.mc.out.charge(u)
}
