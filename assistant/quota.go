package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// hold is a turn's open reservation and the lease that keeps it (see
// keep). Only release and charge close it, and they end the lease first.
type hold struct {
	quota.Hold
	lease *lease // nil when the Ledger is not a quota.Renewer
}

// reserve checks u's spend cap on key and holds estimate tokens of u's
// quota, before anything is persisted or sent to the model: a refused turn
// costs nothing and leaves no trace. It returns nil without a Ledger. The
// hold is kept on a lease from here until release or charge closes it.
func (e *Engine) reserve(ctx context.Context, u parley.User, key quota.SpendKey, estimate int64) (*hold, error) {
	cfg := &e.cfg
	now := cfg.Now()
	if cfg.SpendLedger != nil && cfg.SpendCap.Enabled() {
		if err := cfg.SpendLedger.Allow(ctx, key, cfg.SpendCap, now); err != nil {
			if errors.Is(err, quota.ErrSpendCapExceeded) {
				return nil, wrap(CodeSpendCapExceeded, "spend cap", err)
			}
			return nil, wrap(CodeInternal, "spend cap", err)
		}
	}
	if cfg.Ledger == nil {
		return nil, nil
	}
	h, err := cfg.Ledger.Reserve(ctx, u.ID, estimate, now)
	if err != nil {
		if ee, ok := errors.AsType[*quota.ExceededError](err); ok {
			return nil, &Error{Code: CodeQuotaExceeded, Op: "reserve quota", Err: err, Message: e.quotaMessage(u, ee)}
		}
		return nil, wrap(CodeInternal, "reserve quota", err)
	}
	return &hold{Hold: h, lease: e.keep(u, h)}, nil
}

// leaseBeats is how many HeartbeatIntervals a turn's hold outlives its last
// renewal: as many as SweepInterrupted waits before it calls a turn dead.
const leaseBeats = 3

// lease renews a hold until end is called. Its goroutine lives at most as
// long as the hold would have without it (its TTL), and no less than a
// turn can run (TurnTimeout, the drain and the final write), so a live
// turn is renewed to its end and a lost one is not renewed forever.
type lease struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// keep puts h on a lease of leaseBeats heartbeats, renewed every
// HeartbeatInterval, when the Ledger is a quota.Renewer; else it returns
// nil and h lives its whole TTL. The first renewal shortens the TTL to the
// lease at once, so a process that dies at any point of the turn leaves a
// hold that expires within the lease of its last renewal, and the next
// Sweep (SweepInterrupted runs one) gives the user's allowance back. A
// lease never runs past h.ExpiresAt, where Reserve put it: it can only
// shorten a hold's life.
func (e *Engine) keep(u parley.User, h quota.Hold) *lease {
	r, ok := e.cfg.Ledger.(quota.Renewer)
	if !ok {
		return nil
	}
	cfg := &e.cfg
	life := max(h.ExpiresAt.Sub(cfg.Now()), cfg.TurnTimeout+cfg.DrainTimeout+persistTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), life)
	l := &lease{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer cancel()
		tick := time.NewTicker(cfg.HeartbeatInterval)
		defer tick.Stop()
		for {
			until := cfg.Now().Add(leaseBeats * cfg.HeartbeatInterval)
			if until.After(h.ExpiresAt) {
				until = h.ExpiresAt
			}
			_, err := r.Renew(ctx, h, until)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, quota.ErrHoldNotFound):
				// Swept (or closed): Settle charges the turn without it.
				cfg.Logger.Warn("assistant: the turn's quota hold is gone", "user", u.ID, "hold", h.ID)
				return
			case err != nil:
				// Tried again at the next beat, well within the lease.
				cfg.Logger.Warn("assistant: renew quota hold", "user", u.ID, "hold", h.ID, "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return l
}

// end stops the renewals and waits for the last one, so none lands after
// the hold is closed. A nil lease has nothing to end.
func (l *lease) end() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// release gives a hold back when its turn never reached the model.
func (e *Engine) release(ctx context.Context, u parley.User, h *hold) {
	if h == nil {
		return
	}
	h.lease.end()
	if err := e.cfg.Ledger.Release(ctx, h.Hold); err != nil {
		e.cfg.Logger.Error("assistant: release quota", "user", u.ID, "hold", h.ID, "err", err)
	}
}

// spendKey is where u's use of connection c is recorded.
func spendKey(c *conn, u parley.User) quota.SpendKey {
	return quota.SpendKey{Connection: c.name, Principal: u.ID}
}

// charge counts used tokens against u's quota and spend on key: a turn's,
// through its hold h, which the actual usage replaces, or a title's, with
// no hold. It runs after the reply is written, whatever ended the turn, on
// a fresh persistTimeout, retrying transient failures, so a hold is never
// left open to be swept without its usage.
func (e *Engine) charge(ctx context.Context, u parley.User, h *hold, key quota.SpendKey, used int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	cfg := &e.cfg
	var qh *quota.Hold
	if h != nil {
		h.lease.end()
		qh = &h.Hold
	}
	if cfg.Ledger != nil && (h != nil || used > 0) {
		if err := e.settle(ctx, u.ID, qh, used); err != nil {
			hold := ""
			if h != nil {
				hold = h.ID
			}
			cfg.Logger.Error("assistant: settle quota", "user", u.ID, "hold", hold, "tokens", used, "err", err)
		}
	}
	if cfg.SpendLedger != nil && used > 0 {
		// Not retried: Record adds to a total, and a try that failed after
		// its commit would count the spend twice.
		if err := cfg.SpendLedger.Record(ctx, key, used, cfg.Now()); err != nil {
			cfg.Logger.Error("assistant: record spend", "user", u.ID, "tokens", used, "err", err)
		}
	}
}

// settle replaces hold h of userID by the tokens used. Without a hold, or
// when it expired and was swept while the turn ran, the tokens are charged
// through a hold of nothing: they were still used. (After a failed try the
// hold may be gone because that try settled it: never charge twice.)
func (e *Engine) settle(ctx context.Context, userID string, h *quota.Hold, used int64) error {
	l := e.cfg.Ledger
	if h != nil {
		err := settleHold(ctx, l, *h, used)
		if !errors.Is(err, errHoldGone) {
			return err
		}
	}
	// Only the Reserve is tried again: a hold of nothing left open by a
	// try that failed after its commit charges nothing, and is swept.
	var none quota.Hold
	err := retry(ctx, func() error {
		var err error
		none, err = l.Reserve(ctx, userID, 0, e.cfg.Now())
		return err
	})
	if err != nil {
		return err
	}
	return settleHold(ctx, l, none, used)
}

// settleHold settles h with the tokens used, trying again while a failure
// may be transient. A hold found gone after a failed try was settled by
// that try: nil. One found gone at once (expired and swept) is
// errHoldGone: its tokens are not charged yet.
func settleHold(ctx context.Context, l quota.Ledger, h quota.Hold, used int64) error {
	failed := false // an earlier try failed, and may have settled all the same
	err := retry(ctx, func() error {
		err := l.Settle(ctx, h, used)
		if errors.Is(err, quota.ErrHoldNotFound) {
			return errHoldGone
		}
		failed = failed || err != nil
		return err
	})
	if errors.Is(err, errHoldGone) && failed {
		return nil
	}
	return err
}

// errHoldGone: Settle found the hold no longer open.
var errHoldGone = errors.New("hold not open")

// quotaMessage words a quota refusal for u.
func (e *Engine) quotaMessage(u parley.User, ee *quota.ExceededError) string {
	if e.cfg.QuotaMessage != nil {
		return e.cfg.QuotaMessage(u, ee)
	}
	resets := ee.ResetsAt.In(userLocation(u)).Format("Mon 2 Jan 2006 at 15:04 MST")
	switch {
	case ee.Limit == 0:
		return fmt.Sprintf("Your %s assistant allowance is 0 tokens, so the assistant is not available to you.", ee.Period)
	case ee.Used >= ee.Limit:
		return fmt.Sprintf("You have used your %s assistant allowance (%d of %d tokens). It resets on %s.",
			ee.Period, ee.Used, ee.Limit, resets)
	default:
		// The rest is held by this user's answers still in progress.
		return fmt.Sprintf("Your answers in progress are using the rest of your %s assistant allowance (%d of %d tokens used so far). "+
			"Try again when they finish; the allowance resets on %s.", ee.Period, ee.Used, ee.Limit, resets)
	}
}

// Usage returns the token usage of userID, for u: any user may read their
// own; reading another user's needs ManageQuota. Without a Ledger it is
// CodeNotFound.
func (e *Engine) Usage(ctx context.Context, u parley.User, userID string) (quota.Usage, error) {
	if err := e.quotaAccess(ctx, u, userID); err != nil {
		return quota.Usage{}, err
	}
	us, err := e.cfg.Ledger.Usage(ctx, userID, e.cfg.Now())
	if err != nil {
		return quota.Usage{}, wrap(CodeInternal, "read usage", err)
	}
	return us, nil
}

// LimitsUpdate changes some of a user's limit overrides. A nil field leaves
// that period as it is; a field set to nil restores the system default; a
// value sets the override (quota.Unlimited for none).
type LimitsUpdate struct {
	Daily, Weekly, Monthly **int64
}

// SetLimits changes userID's limit overrides; it needs ManageQuota, also for
// one's own limits. The change is audited.
func (e *Engine) SetLimits(ctx context.Context, u parley.User, userID string, up LimitsUpdate) (quota.Usage, error) {
	if err := e.authorize(ctx, u, Action{Kind: ManageQuota}); err != nil {
		return quota.Usage{}, err
	}
	if e.cfg.Ledger == nil {
		return quota.Usage{}, &Error{Code: CodeNotFound, Op: "set limits", Err: errors.New("no quota ledger configured"), Message: "Token quotas are not enabled."}
	}
	if userID == "" {
		return quota.Usage{}, wrap(CodeInvalidRequest, "set limits", errors.New("empty user id"))
	}
	cur, err := e.cfg.Ledger.Limits(ctx, userID)
	if err != nil {
		return quota.Usage{}, wrap(CodeInternal, "read limits", err)
	}
	for _, f := range []struct {
		up  **int64
		cur **int64
	}{{up.Daily, &cur.Daily}, {up.Weekly, &cur.Weekly}, {up.Monthly, &cur.Monthly}} {
		if f.up != nil {
			*f.cur = *f.up
		}
	}
	if err := e.cfg.Ledger.SetLimits(ctx, userID, cur); err != nil {
		if errors.Is(err, quota.ErrInvalid) {
			return quota.Usage{}, wrap(CodeInvalidRequest, "set limits", err)
		}
		return quota.Usage{}, wrap(CodeInternal, "set limits", err)
	}
	data, _ := json.Marshal(map[string]any{"user": userID, "limits": cur})
	if err := e.cfg.Store.AppendAudit(ctx, &store.AuditEvent{Kind: AuditQuotaSet, ActorID: u.ID, Data: data}); err != nil {
		e.cfg.Logger.Error("assistant: audit quota change", "user", userID, "err", err)
	}
	return e.Usage(ctx, u, userID)
}

func (e *Engine) quotaAccess(ctx context.Context, u parley.User, userID string) error {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return err
	}
	if userID != u.ID {
		if err := e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: ManageQuota}); err != nil {
			// Another user's usage is not found rather than forbidden.
			return &Error{Code: CodeNotFound, Op: "read usage", Err: err, Message: "No usage is available for that user."}
		}
	}
	if e.cfg.Ledger == nil {
		return &Error{Code: CodeNotFound, Op: "read usage", Err: errors.New("no quota ledger configured"), Message: "Token quotas are not enabled."}
	}
	return nil
}
