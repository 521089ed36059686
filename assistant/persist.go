package assistant

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// The reply is written three ways, serialized by replyWrites.mu so a later
// write never lands before an earlier one:
//
//   - checkpoint: the heartbeat, and once at the first block, status
//     streaming, so a process killed mid-turn leaves what it streamed;
//   - stopWrite: when the turn is stopped (Cancel, a newer message,
//     TurnTimeout), at once, the partial reply with its final status, so a
//     reload right after Stop shows what the user saw;
//   - persist: at the end, always, with usage (a stopped turn's drained
//     usage included) and the model messages for replay. Transient store
//     errors are retried. The quota is settled after it, on a window of
//     its own.
//
// Each writes the reply as the transcript has it (transcript.reply).

// replyWrites writes a turn's reply after the first write: mu serializes
// the writes, done is set by persist, the last, and beat runs the
// checkpoints. Only its methods write it.
type replyWrites struct {
	e     *Engine
	reply *store.Message // the placeholder the first write stored: the turn's, never written again
	mu    sync.Mutex
	done  bool
	beat  heartbeat
}

// heartbeat runs a turn's checkpoints on a timer, every interval and once
// at the first block, each on the timer's own short-lived goroutine: no
// goroutine waits beside a parked turn. Only its methods write it.
type heartbeat struct {
	mu      sync.Mutex
	timer   *time.Timer
	every   time.Duration // 0: only the first block's checkpoint
	ended   bool
	running sync.WaitGroup // the checkpoints under way
}

// start readies the writes of the placeholder reply.
func (w *replyWrites) start(e *Engine, reply *store.Message) {
	w.e, w.reply = e, reply
}

// startBeat starts the heartbeat of the turn whose reply out holds; the
// turn calls endBeat before its final write.
func (w *replyWrites) startBeat(ctx context.Context, out *transcript, stop *stopper) {
	h := &w.beat
	h.every = w.e.cfg.HeartbeatInterval
	h.timer = time.AfterFunc(time.Duration(math.MaxInt64), func() {
		h.mu.Lock()
		if h.ended || stop.stopped() {
			h.mu.Unlock()
			return
		}
		h.running.Add(1) // before endBeat's Wait: ended is false under mu
		h.mu.Unlock()
		defer h.running.Done()
		w.checkpoint(ctx, out, stop)
		h.rearm(h.every)
	})
	h.rearm(h.every)
}

// rearm fires the heartbeat after d, unless it ended; d <= 0 never.
func (h *heartbeat) rearm(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ended && d > 0 {
		h.timer.Reset(d)
	}
}

// kept asks for a checkpoint now, at the first block kept: it holds that
// block. Only the worker goroutine calls it, once.
func (w *replyWrites) kept() { w.beat.rearm(time.Nanosecond) }

// endBeat stops the heartbeat and waits for a checkpoint under way.
func (w *replyWrites) endBeat() {
	h := &w.beat
	h.mu.Lock()
	h.ended = true
	h.timer.Stop()
	h.mu.Unlock()
	h.running.Wait()
}

// notSavedMessage is shown when the reply could not be written: the user
// saw it, and must not be surprised when a reload does not show it.
const notSavedMessage = "This answer could not be saved, so it will be missing when you reload the conversation. Please try again in a moment."

// persist writes the reply with everything the turn produced. It runs on a
// fresh context so a timed-out or cancelled turn still saves its partial
// output. It returns why the reply is not stored, for the turn to end with.
func (w *replyWrites) persist(ctx context.Context, out *transcript) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	cfg := &w.e.cfg
	m := out.reply(*w.reply, out.err)
	m.InputTokens, m.OutputTokens = out.usage.InputTokens, out.usage.OutputTokens
	m.ModelMessages = out.modelMessages(cfg.Logger.With("thread", m.ThreadID))
	err := retry(ctx, func() error {
		m.UpdatedAt = cfg.Now()
		return cfg.Store.UpdateMessage(ctx, &m)
	})
	w.done = true
	switch {
	case errors.Is(err, store.ErrNotFound):
		// The thread was deleted while the turn ran: nothing to keep.
		cfg.Logger.InfoContext(ctx, "assistant: reply not stored: its thread was deleted", "thread", m.ThreadID)
		return &Error{Code: CodeNotFound, Op: "persist reply", Err: err, Message: deletedMessage}
	case err != nil:
		cfg.Logger.ErrorContext(ctx, "assistant: persist reply: the user saw an answer that is not stored",
			"thread", m.ThreadID, "message", m.ID, "err", err)
		return &Error{Code: CodeInternal, Op: "persist reply", Err: err, Message: notSavedMessage}
	}
	return nil
}

// stopWrite stores the partial reply of a turn stopped with err, with its
// final status, as the user's stream ends: the worker may go on draining
// the model's stream for usage for up to DrainTimeout, and persist adds
// that.
func (w *replyWrites) stopWrite(out *transcript, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return // the turn finished first
	}
	ctx, cancel := context.WithTimeout(context.Background(), persistTimeout)
	defer cancel()
	m := out.reply(*w.reply, err)
	m.UpdatedAt = w.e.cfg.Now()
	if err := w.e.cfg.Store.UpdateMessage(ctx, &m); err != nil && !errors.Is(err, store.ErrNotFound) {
		w.e.cfg.Logger.WarnContext(ctx, "assistant: store a stopped reply (the final write follows)", "thread", m.ThreadID, "err", err)
	}
}

// checkpoint writes the reply so far, still streaming: the heartbeat. A
// stopped turn's reply is stopWrite's, never streaming again.
func (w *replyWrites) checkpoint(ctx context.Context, out *transcript, stop *stopper) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || stop.stopped() {
		return
	}
	m := out.reply(*w.reply, nil)
	m.Status, m.UpdatedAt = store.StatusStreaming, w.e.cfg.Now()
	if err := w.e.cfg.Store.UpdateMessage(ctx, &m); err != nil && ctx.Err() == nil {
		w.e.cfg.Logger.WarnContext(ctx, "assistant: heartbeat", "thread", m.ThreadID, "err", err)
	}
}

// retry runs op until it succeeds, fails for a reason another try cannot
// change (not found, a conflict, an invalid value, a closed hold), or ctx
// ends, backing off from 25 ms to 1 s. Store and ledger errors are the
// host's drivers' and carry no portable "transient" mark; a write that
// failed is tried again while there is time, which is what a pool that is
// briefly exhausted, a failover or a busy SQLite file need.
func retry(ctx context.Context, op func() error) error {
	wait := 25 * time.Millisecond
	for {
		err := op()
		if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInvalid) ||
			errors.Is(err, quota.ErrInvalid) || errors.Is(err, errHoldGone) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}
