package assistant

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
)

// deletedMessage ends the stream of a turn whose thread was deleted.
const deletedMessage = "This conversation was deleted."

// Causes of a stopped turn.
var (
	errCancelRequested = errors.New("a cancel was requested for the thread")
	errSuperseded      = errors.New("a newer message on the thread superseded the turn")
	errThreadDeleted   = errors.New("the thread was deleted")
)

// Cancel stops the running turn of a thread, on this instance at once and on
// any other instance sharing the Store within Config.CancelPollInterval. The
// turn keeps what it streamed so far, persisted with status cancelled. It
// needs the right to write the thread (its owner); a thread with no running
// turn is cancelled harmlessly, and the next message clears the request.
func (e *Engine) Cancel(ctx context.Context, u parley.User, threadID string) error {
	t, err := e.thread(ctx, u, threadID, WriteThread)
	if err != nil {
		return err
	}
	if err := e.cfg.Store.RequestCancel(ctx, t.ID, e.cfg.Now()); err != nil {
		return e.storeErr("request cancel", err)
	}
	// A turn running here has stored its partial reply, cancelled, by the
	// time Cancel returns, so a reload right after Stop shows it. If ctx
	// ends first, the cancel itself is still recorded.
	_ = e.live.stopWait(ctx, t.ID, errCancelRequested)
	return nil
}

// stopper is how a turn is told to stop: ctx ends when it is cancelled,
// superseded or times out (cancel ends it, with the cause), and stored
// closes once a stopped turn's partial reply is written. Only its methods
// write it; a nil stopper is never told to stop.
type stopper struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	stored chan struct{}
	once   sync.Once // closes stored
}

// start makes the stopper of a turn whose worker runs under parent.
func (s *stopper) start(parent context.Context) {
	s.ctx, s.cancel = context.WithCancelCause(parent)
	s.stored = make(chan struct{})
}

// stopped reports whether s was told to stop.
func (s *stopper) stopped() bool { return s != nil && s.ctx.Err() != nil }

// done is closed once s is told to stop; nil for a nil stopper.
func (s *stopper) done() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.ctx.Done()
}

// markStored says the stopped turn's reply is written (or the turn ended).
func (s *stopper) markStored() { s.once.Do(func() { close(s.stored) }) }

// err is the error a stopped turn ends with.
func (s *stopper) err() error {
	cause := context.Cause(s.ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return wrap(CodeModelTimeout, "turn", cause) // Config.TurnTimeout
	}
	e := wrap(CodeCancelled, "turn", cause)
	switch {
	case errors.Is(cause, errSuperseded):
		e.Message = "This answer was replaced by a newer message."
	case errors.Is(cause, errThreadDeleted):
		e.Message = deletedMessage
	}
	return e
}

// watch runs beside the turn whose reply is reply until done closes. It
// polls the thread, stopping the turn when a cancel is requested or a
// newer message arrives from any instance, and checkpoints the partial
// reply as a heartbeat (and once at the first block, signalled on first),
// so a turn whose process dies is found by SweepInterrupted with what it
// had.
func (s *stopper) watch(ctx context.Context, e *Engine, reply store.Message, first <-chan struct{}, checkpoint func(), done <-chan struct{}) {
	poll, beat := e.cfg.CancelPollInterval, e.cfg.HeartbeatInterval
	every := beat
	if poll > 0 && (every <= 0 || poll < every) {
		every = poll
	}
	if every <= 0 {
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	lastBeat := time.Now()
	for {
		select {
		case <-done:
			return
		case <-s.ctx.Done():
			return
		case <-first:
			// A process killed before the first heartbeat still leaves the
			// start of the answer, not an empty reply.
			checkpoint()
			lastBeat = time.Now()
		case now := <-tick.C:
			if beat > 0 && now.Sub(lastBeat) >= beat {
				checkpoint()
				lastBeat = now
			}
			if poll > 0 && s.poll(ctx, e, reply) {
				return
			}
		}
	}
}

// poll reads the thread of reply and stops the turn if it was deleted, a
// cancel was requested since the turn began, or a newer message arrived.
// It reports whether it stopped the turn.
func (s *stopper) poll(ctx context.Context, e *Engine, reply store.Message) bool {
	th, err := e.cfg.Store.GetThread(ctx, reply.ThreadID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Deleted for good, here or on another instance: nothing more of
		// this turn may run, be charged or be written.
		s.cancel(errThreadDeleted)
	case err != nil:
		if ctx.Err() == nil {
			e.cfg.Logger.WarnContext(ctx, "assistant: poll for cancel", "thread", reply.ThreadID, "err", err)
		}
		return false
	case th.CancelRequestedAt != nil && !th.CancelRequestedAt.Before(reply.CreatedAt):
		// Only a cancel requested since this turn began is for it.
		s.cancel(errCancelRequested)
	case th.LastSeq > reply.Seq:
		s.cancel(errSuperseded)
	default:
		return false
	}
	return true
}

// SweepInterrupted marks the replies of turns whose worker died — no
// heartbeat for three HeartbeatIntervals — as interrupted, keeping their
// partial blocks, and returns how many. With a Ledger it then sweeps the
// Ledger's expired holds: a dead turn's hold, on a lease its heartbeat no
// longer renews (a quota.Renewer's; see keep), has lapsed by then or
// within a heartbeat, so the user's allowance comes back with this sweep
// or the next. Run it periodically (every minute or so) from one or more
// instances; it is idempotent.
func (e *Engine) SweepInterrupted(ctx context.Context) (int, error) {
	now := e.cfg.Now()
	n, err := e.cfg.Store.InterruptStale(ctx, now.Add(-leaseBeats*e.cfg.HeartbeatInterval))
	if err != nil {
		return 0, wrap(CodeInternal, "sweep interrupted", err)
	}
	if e.cfg.Ledger != nil {
		if _, err := e.cfg.Ledger.Sweep(ctx, now); err != nil {
			return n, wrap(CodeInternal, "sweep quota holds", err)
		}
	}
	return n, nil
}

// liveTurns indexes the stoppers of this process's running turns by
// thread: the fast path of Cancel and supersession.
type liveTurns struct {
	mu    sync.Mutex
	turns map[string]map[*stopper]struct{}
}

func (l *liveTurns) add(threadID string, s *stopper) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.turns == nil {
		l.turns = make(map[string]map[*stopper]struct{})
	}
	set := l.turns[threadID]
	if set == nil {
		set = make(map[*stopper]struct{})
		l.turns[threadID] = set
	}
	set[s] = struct{}{}
}

func (l *liveTurns) remove(threadID string, s *stopper) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.turns[threadID], s)
	if len(l.turns[threadID]) == 0 {
		delete(l.turns, threadID)
	}
}

// stopWait stops every running turn of the thread and waits until each
// has stored its stopped reply, or ctx ends.
func (l *liveTurns) stopWait(ctx context.Context, threadID string, cause error) error {
	for _, stored := range l.stop(threadID, cause) {
		select {
		case <-stored:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stop stops every running turn of the thread and returns, for each, a
// channel closed once its stopped reply is stored.
func (l *liveTurns) stop(threadID string, cause error) []<-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	var stored []<-chan struct{}
	for s := range l.turns[threadID] {
		s.cancel(cause)
		stored = append(stored, s.stored)
	}
	return stored
}
