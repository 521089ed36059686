package assistant

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// The reply is written three ways, serialized by turn.writes.mu so a later
// write never lands before an earlier one:
//
//   - checkpoint: the heartbeat, and once at the first block, status
//     streaming, so a process killed mid-turn leaves what it streamed;
//   - stopWrite: when the turn is stopped (Cancel, a newer message,
//     TurnTimeout), at once, the partial reply with its final status, so a
//     reload right after Stop shows what the user saw;
//   - persist: at the end, always, with usage (a stopped turn's drained
//     usage included) and the model messages for replay. Transient store
//     errors are retried. The quota is settled after it (settle), on a
//     window of its own.

// replyWrites orders the reply's writes: mu serializes them, done is set by
// persist, the last, and first asks the heartbeat for a checkpoint at the
// turn's first block.
type replyWrites struct {
	mu    sync.Mutex
	done  bool
	first chan struct{} // signalled once, at the first block kept
}

// notSavedMessage is shown when the reply could not be written: the user
// saw it, and must not be surprised when a reload does not show it.
const notSavedMessage = "This answer could not be saved, so it will be missing when you reload the conversation. Please try again in a moment."

// persist writes the assistant message with everything the turn produced.
// It runs on a fresh context so a timed-out or cancelled turn still saves
// its partial output.
func (t *turn) persist(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	t.writes.mu.Lock()
	defer t.writes.mu.Unlock()
	m := t.out.reply(t.reply, t.out.err)
	m.InputTokens, m.OutputTokens = t.out.usage.InputTokens, t.out.usage.OutputTokens
	m.ModelMessages = t.out.modelMessages(t.e.cfg.Logger.With("thread", t.thread.ID))
	err := retry(ctx, func() error {
		m.UpdatedAt = t.e.cfg.Now()
		return t.e.cfg.Store.UpdateMessage(ctx, &m)
	})
	t.writes.done = true
	switch {
	case errors.Is(err, store.ErrNotFound):
		// The thread was deleted while the turn ran: nothing to keep.
		t.e.cfg.Logger.Info("assistant: reply not stored: its thread was deleted", "thread", t.thread.ID)
		t.out.fail(&Error{Code: CodeNotFound, Op: "persist reply", Err: err, Message: deletedMessage})
	case err != nil:
		t.e.cfg.Logger.Error("assistant: persist reply: the user saw an answer that is not stored",
			"thread", t.thread.ID, "message", m.ID, "err", err)
		t.out.fail(&Error{Code: CodeInternal, Op: "persist reply", Err: err, Message: notSavedMessage})
	}
}

// stopWrite stores the partial reply of a stopped turn with its final
// status, as the user's stream ends: the worker may go on draining the
// model's stream for usage for up to DrainTimeout, and persist adds that.
func (t *turn) stopWrite() {
	t.writes.mu.Lock()
	defer t.writes.mu.Unlock()
	if t.writes.done {
		return // the turn finished first
	}
	ctx, cancel := context.WithTimeout(context.Background(), persistTimeout)
	defer cancel()
	m := t.out.reply(t.reply, t.stopErr())
	m.UpdatedAt = t.e.cfg.Now()
	if err := t.e.cfg.Store.UpdateMessage(ctx, &m); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.e.cfg.Logger.Warn("assistant: store a stopped reply (the final write follows)", "thread", t.thread.ID, "err", err)
	}
}

// checkpoint writes the reply so far, still streaming: the heartbeat.
func (t *turn) checkpoint(ctx context.Context) {
	t.writes.mu.Lock()
	defer t.writes.mu.Unlock()
	if t.writes.done || t.stopped() {
		return // a stopped turn's reply is stopWrite's, never streaming again
	}
	m := t.out.reply(t.reply, nil)
	m.Status, m.UpdatedAt = store.StatusStreaming, t.e.cfg.Now()
	if err := t.e.cfg.Store.UpdateMessage(ctx, &m); err != nil && ctx.Err() == nil {
		t.e.cfg.Logger.Warn("assistant: heartbeat", "thread", t.thread.ID, "err", err)
	}
}

// settleQuota charges what the turn used: the hold is replaced by actual usage,
// and the spend is recorded on the connection. It runs after persist,
// whatever ended the turn, on a fresh persistTimeout, retrying transient
// failures, so a hold is never left open to be swept without its usage.
func (t *turn) settleQuota(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	cfg := &t.e.cfg
	used := t.out.usage.Total()
	if t.hold != nil {
		failed := false // an earlier try failed, and may have settled all the same
		err := retry(ctx, func() error {
			err := cfg.Ledger.Settle(ctx, *t.hold, used)
			if errors.Is(err, quota.ErrHoldNotFound) {
				return errHoldGone
			}
			failed = failed || err != nil
			return err
		})
		if errors.Is(err, errHoldGone) {
			err = nil
			if !failed {
				// The hold expired and was swept while the turn ran. The
				// tokens were still used: charge them through a hold of
				// nothing. (After a failed try the hold may be gone because
				// that try settled it: never charge twice.)
				var h quota.Hold
				if h, err = cfg.Ledger.Reserve(ctx, t.u.ID, 0, cfg.Now()); err == nil {
					err = cfg.Ledger.Settle(ctx, h, used)
				}
			}
		}
		if err != nil {
			cfg.Logger.Error("assistant: settle quota", "user", t.u.ID, "hold", t.hold.ID, "tokens", used, "err", err)
		}
		t.hold = nil
	}
	if cfg.SpendLedger != nil && used > 0 {
		// Not retried: Record adds to a total, and a try that failed after
		// its commit would count the spend twice.
		if err := cfg.SpendLedger.Record(ctx, t.spendKey(), used, cfg.Now()); err != nil {
			cfg.Logger.Error("assistant: record spend", "user", t.u.ID, "tokens", used, "err", err)
		}
	}
}

// errHoldGone: Settle found the hold no longer open.
var errHoldGone = errors.New("hold not open")

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
