package quotatest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

// renewalCases check quota.Renewer, the optional lease on a hold. Each
// skips a ledger that does not implement it.
var renewalCases = []ledgerCase{
	{"RenewMovesTheExpiryEarlier", testRenewEarlier},
	{"RenewMovesTheExpiryLater", testRenewLater},
	{"RenewKeepsTheHeldTokens", testRenewKeepsTokens},
	{"RenewOfAHoldNotOpenIsHoldNotFound", testRenewNotOpen},
	{"RenewPastExpiryBeforeASweepKeepsTheHold", testRenewPastExpiry},
	{"RenewArgumentsAndCanceledContext", testRenewArguments},
	{"RenewRacingSettleNeverRevivesAHold", testRenewRacingSettle},
}

// renewer returns l's quota.Renewer, skipping the test without one.
func (l *ledger) renewer() quota.Renewer {
	l.t.Helper()
	r, ok := l.l.(quota.Renewer)
	if !ok {
		l.t.Skipf("%T does not implement quota.Renewer", l.l)
	}
	return r
}

func (l *ledger) renew(h quota.Hold, at time.Time) quota.Hold {
	l.t.Helper()
	got, err := l.renewer().Renew(l.t.Context(), h, at)
	if err != nil {
		l.t.Fatalf("Renew(%q, %s): %v", h.ID, fmtTime(at), err)
	}
	if got.ID != h.ID || got.UserID != h.UserID || !got.ExpiresAt.Equal(at) {
		l.t.Fatalf("Renew(%q, %s) = %+v, want the same hold expiring at %s", h.ID, fmtTime(at), got, fmtTime(at))
	}
	return got
}

// A lease shorter than the TTL: the hold goes at the renewed expiry, a
// running turn's lease after its process died.
func testRenewEarlier(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}, HoldTTL: 10 * time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 100, now)
	l.renew(h, now.Add(15*time.Second))
	if n := l.sweep(now.Add(15*time.Second - time.Nanosecond)); n != 0 {
		t.Errorf("Sweep before the renewed expiry voided %d holds, want 0", n)
	}
	l.refused("u", 1, now.Add(10*time.Second))
	if n := l.sweep(now.Add(15 * time.Second)); n != 1 {
		t.Errorf("Sweep at the renewed expiry voided %d holds, want 1", n)
	}
	at := now.Add(16 * time.Second)
	wantNums(t, l.usage("u", at), nums{0, 0, 100}, nums{0, 0, -1}, nums{0, 0, -1})
	l.reserve("u", 100, at)
	wantErr(t, l.l.Settle(t.Context(), h, 10), quota.ErrHoldNotFound, "Settle of a hold swept at its renewed expiry")
}

// Renewals carry a hold past the TTL it was reserved with, each one a
// lease from its own time.
func testRenewLater(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 10, now)
	for i := range 5 {
		at := now.Add(time.Duration(i) * 40 * time.Second)
		h = l.renew(h, at.Add(time.Minute))
		if n := l.sweep(at.Add(time.Minute - time.Nanosecond)); n != 0 {
			t.Fatalf("renewal %d: Sweep before the lease ends voided %d holds, want 0", i, n)
		}
	}
	if n := l.sweep(h.ExpiresAt); n != 1 {
		t.Errorf("Sweep at the last lease's end voided %d holds, want 1", n)
	}
}

// A renewal changes only the expiry: the tokens held, and what Settle
// takes out, stay the ledger's record of the capped hold.
func testRenewKeepsTokens(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	l.reserve("u", 70, now)
	h := l.reserve("u", 50, now) // capped at 30
	forged := h
	forged.Estimate = 1000
	got := l.renew(forged, now.Add(time.Minute))
	if got.Estimate != 30 {
		t.Errorf("Renew returned estimate %d, want the ledger's 30", got.Estimate)
	}
	wantNums(t, l.usage("u", now), nums{0, 100, 100}, nums{0, 100, -1}, nums{0, 100, -1})
	l.settle(got, 12)
	wantNums(t, l.usage("u", now), nums{12, 70, 100}, nums{12, 70, -1}, nums{12, 70, -1})
}

// Settled, released, swept, unknown and another user's holds are not
// renewed, and the failed renewal changes nothing.
func testRenewNotOpen(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	r := l.renewer()
	settled, released, swept := l.reserve("u", 10, now), l.reserve("u", 10, now), l.reserve("u", 10, now)
	l.settle(settled, 4)
	l.release(released)
	other := l.reserve("v", 10, now.Add(30*time.Second))
	if n := l.sweep(now.Add(time.Minute)); n != 1 {
		t.Fatalf("Sweep voided %d holds, want the one expired", n)
	}
	far := now.Add(time.Hour)
	stolen := other
	stolen.UserID = "u"
	for _, c := range []struct {
		what string
		h    quota.Hold
	}{
		{"a settled hold", settled},
		{"a released hold", released},
		{"a swept hold", swept},
		{"an unknown hold", quota.Hold{ID: "no-such-hold", UserID: "u"}},
		{"another user's hold", stolen},
	} {
		_, err := r.Renew(t.Context(), c.h, far)
		wantErr(t, err, quota.ErrHoldNotFound, "Renew of "+c.what)
	}
	at := now.Add(2 * time.Minute)
	wantNums(t, l.usage("u", at), nums{4, 0, -1}, nums{4, 0, -1}, nums{4, 0, -1})
	// v's hold kept its own expiry.
	if n := l.sweep(now.Add(90 * time.Second)); n != 1 {
		t.Errorf("Sweep at the other user's expiry voided %d holds, want 1", n)
	}
	wantErr(t, l.l.Settle(t.Context(), settled, 4), quota.ErrHoldNotFound, "Settle after a refused Renew")
}

// A hold past its expiry is open until a Sweep runs, and a renewal in that
// gap keeps it: a turn whose heartbeat was late does not lose its hold.
func testRenewPastExpiry(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 10, now)
	late := now.Add(5 * time.Minute)
	l.renew(h, late.Add(time.Minute))
	if n := l.sweep(late); n != 0 {
		t.Errorf("Sweep after a late renewal voided %d holds, want 0", n)
	}
	wantNums(t, l.usage("u", late), nums{0, 10, -1}, nums{0, 10, -1}, nums{0, 10, -1})
	l.settle(h, 10)
}

func testRenewArguments(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	r := l.renewer()
	h := l.reserve("u", 10, now)
	_, err := r.Renew(t.Context(), h, time.Time{})
	wantErr(t, err, quota.ErrInvalid, "Renew to a zero time")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Renew(ctx, h, now.Add(time.Hour)); err == nil {
		t.Errorf("Renew with a canceled context succeeded, want an error")
	}
	// Neither changed the expiry.
	if n := l.sweep(now.Add(time.Minute)); n != 1 {
		t.Errorf("Sweep at the reserved expiry voided %d holds, want 1", n)
	}
}

// Renewals racing Settle and Release: each hold closes once, no renewal
// brings one back, and the totals are exact.
func testRenewRacingSettle(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	r := l.renewer()
	const n = 64
	holds := make([]quota.Hold, n)
	for i := range holds {
		holds[i] = l.reserve("u", 10, now)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i, h := range holds {
		wg.Go(func() {
			for range 3 {
				if _, err := r.Renew(context.Background(), h, now.Add(time.Hour)); err != nil && !errors.Is(err, quota.ErrHoldNotFound) {
					errs <- fmt.Errorf("Renew: %w", err)
				}
			}
		})
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				err = l.l.Settle(context.Background(), h, 3)
			} else {
				err = l.l.Release(context.Background(), h)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if k := l.sweep(now.Add(2 * time.Hour)); k != 0 {
		t.Errorf("Sweep after every hold closed voided %d, want 0: a renewal revived a hold", k)
	}
	wantNums(t, l.usage("u", now), nums{3 * n / 2, 0, -1}, nums{3 * n / 2, 0, -1}, nums{3 * n / 2, 0, -1})
}
