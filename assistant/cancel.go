package assistant

import (
	"context"
	"errors"
	"slices"
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
// any other instance sharing the Store as soon as its watcher learns of it:
// at once when the Store pushes changes (store.ThreadWatcher; sqlstore on
// PostgreSQL), else within Config.CancelPollInterval. The
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

// stopCause says why a running turn that began with reply must stop, given
// its thread as read now (found false: deleted), or nil if it may go on.
func stopCause(th store.Thread, found bool, reply liveTurn) error {
	switch {
	case !found:
		// Deleted for good, here or on another instance: nothing more of
		// this turn may run, be charged or be written.
		return errThreadDeleted
	case th.CancelRequestedAt != nil && !th.CancelRequestedAt.Before(reply.since):
		// Only a cancel requested since this turn began is for it.
		return errCancelRequested
	case th.LastSeq > reply.seq:
		return errSuperseded
	}
	return nil
}

// watchSafetyNet is how often the watcher of a Store that pushes changes
// (store.ThreadWatcher) still reads all live turns' threads, in one
// batch, in case a notification was lost.
const watchSafetyNet = 5 * time.Second

// watchLive is the Engine's one watcher of its live turns' threads, for
// cancels, newer messages and deletions requested on other instances. It
// runs while the process has live turns (liveTurns starts and stops it).
// With a store.ThreadWatcher it wakes on each pushed change and checks the
// changed threads' live turns, plus all of them every watchSafetyNet;
// otherwise it checks all of them every CancelPollInterval. Each check is
// one read for all the threads it covers when the Store is a
// store.ThreadBatch.
func (e *Engine) watchLive(ctx context.Context, wake <-chan struct{}) {
	defer e.running.done()
	poll := e.cfg.CancelPollInterval
	var ended chan error // the push watch's result; nil when not pushing
	if w, ok := e.cfg.Store.(store.ThreadWatcher); ok {
		ended = make(chan error, 1)
		go func() { ended <- w.WatchThreads(ctx, e.live.mark) }()
		poll = max(poll, watchSafetyNet)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if ended != nil {
				<-ended
			}
			return
		case err := <-ended:
			// Not supported after all (SQLite): poll instead.
			ended = nil
			if !errors.Is(err, errors.ErrUnsupported) {
				e.cfg.Logger.WarnContext(ctx, "assistant: watch threads (polling instead)", "err", err)
			}
			tick.Reset(e.cfg.CancelPollInterval)
			e.live.mark("")
		case <-wake:
			e.checkLive(ctx, e.live.take(wake))
		case <-tick.C:
			e.checkLive(ctx, nil)
		}
	}
}

// checkLive reads the threads of the live turns in ids (nil: all) and
// stops each turn its thread says must stop.
func (e *Engine) checkLive(ctx context.Context, ids map[string]bool) {
	turns := e.live.snapshot(ids)
	if len(turns) == 0 {
		return
	}
	threads, err := e.readThreads(ctx, turns)
	if err != nil {
		if ctx.Err() == nil {
			e.cfg.Logger.WarnContext(ctx, "assistant: watch for cancel", "threads", len(turns), "err", err)
		}
		return
	}
	for id, live := range turns {
		th, found := threads[id]
		for _, t := range live {
			if cause := stopCause(th, found, t); cause != nil {
				t.s.cancel(cause)
			}
		}
	}
}

// readThreads reads the threads of turns: in one read when the Store is a
// store.ThreadBatch, else one by one. A deleted thread is absent.
func (e *Engine) readThreads(ctx context.Context, turns map[string][]liveTurn) (map[string]store.Thread, error) {
	ids := make([]string, 0, len(turns))
	for id := range turns {
		ids = append(ids, id)
	}
	if b, ok := e.cfg.Store.(store.ThreadBatch); ok {
		return b.GetThreads(ctx, ids)
	}
	out := make(map[string]store.Thread, len(ids))
	for _, id := range ids {
		th, err := e.cfg.Store.GetThread(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			out[id] = th
		}
	}
	return out, nil
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
// thread: the fast path of Cancel and supersession, and what the Engine's
// one watcher (watchLive) checks. The watcher runs while there is a live
// turn: add starts it with spawn, and the last remove stops it.
type liveTurns struct {
	mu    sync.Mutex
	turns map[string][]liveTurn                           // a thread has one live turn but for a moment
	spawn func(ctx context.Context, wake <-chan struct{}) // starts watchLive; nil: no watcher
	halt  context.CancelFunc                              // stops the running watcher; nil when none runs
	// What the running watcher should check next: the threads marked, or
	// all; wake (capacity 1) says something is marked.
	dirty map[string]bool
	all   bool
	wake  chan struct{}
}

// liveTurn is a live turn's stopper and what the watcher needs of its
// reply: a cancel requested at or after since, or a message after seq,
// stops it.
type liveTurn struct {
	s     *stopper
	since time.Time
	seq   int
}

func (l *liveTurns) add(threadID string, s *stopper, reply store.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.turns == nil {
		l.turns = make(map[string][]liveTurn)
	}
	l.turns[threadID] = append(l.turns[threadID], liveTurn{s: s, since: reply.CreatedAt, seq: reply.Seq})
	if l.halt == nil && l.spawn != nil {
		// Each watcher has its own wake channel, so one that is stopping
		// never takes what is marked for the next.
		var ctx context.Context
		ctx, l.halt = context.WithCancel(context.Background())
		l.wake, l.dirty, l.all = make(chan struct{}, 1), nil, false
		l.spawn(ctx, l.wake)
	}
	// A cancel or a newer message that came between the turn's first write
	// and now was notified before the turn was here to be found: check once.
	l.markLocked(threadID)
}

func (l *liveTurns) remove(threadID string, s *stopper) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if set := slices.DeleteFunc(l.turns[threadID], func(t liveTurn) bool { return t.s == s }); len(set) > 0 {
		l.turns[threadID] = set
	} else {
		delete(l.turns, threadID)
	}
	if len(l.turns) == 0 && l.halt != nil {
		l.halt()
		l.halt, l.wake, l.dirty, l.all = nil, nil, nil, false
	}
}

// mark asks the watcher to check the live turns of a thread ("": all).
func (l *liveTurns) mark(threadID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.markLocked(threadID)
}

func (l *liveTurns) markLocked(threadID string) {
	if l.halt == nil {
		return // no watcher runs
	}
	if threadID == "" {
		l.all = true
	} else if !l.all {
		if l.dirty == nil {
			l.dirty = make(map[string]bool)
		}
		l.dirty[threadID] = true
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns what was marked for the watcher woken on wake and clears
// it: nil means all. A watcher that was stopped gets nothing.
func (l *liveTurns) take(wake <-chan struct{}) map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if wake != l.wake {
		return map[string]bool{}
	}
	ids := l.dirty
	if l.all {
		ids = nil
	} else if ids == nil {
		ids = map[string]bool{} // woken with nothing left to check
	}
	l.dirty, l.all = nil, false
	return ids
}

// snapshot copies the live turns of the threads in ids (nil: all).
func (l *liveTurns) snapshot(ids map[string]bool) map[string][]liveTurn {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]liveTurn)
	for id, set := range l.turns {
		if ids == nil || ids[id] {
			out[id] = slices.Clone(set)
		}
	}
	return out
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
	for _, t := range l.turns[threadID] {
		t.s.cancel(cause)
		stored = append(stored, t.s.stored)
	}
	return stored
}
