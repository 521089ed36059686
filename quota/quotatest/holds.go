package quotatest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

var holdCases = []ledgerCase{
	{"ReserveReturnsAHold", testReserveReturnsHold},
	{"HeldTokensCountAgainstTheLimit", testHeldCounts},
	{"SettleReplacesTheEstimateWithActual", testSettleReplaces},
	{"SettleChargesOvershoot", testSettleOvershoot},
	{"SettleUsesTheLedgersEstimate", testSettleUsesLedgerEstimate},
	{"ReleaseChargesNothing", testReleaseChargesNothing},
	{"SecondSettleOrReleaseIsHoldNotFound", testCloseTwice},
	{"UnknownHoldIsHoldNotFound", testUnknownHold},
	{"HoldOfAnotherUserIsHoldNotFound", testHoldOfAnotherUser},
	{"UsersAreIndependent", testUsersIndependent},
}

func testReserveReturnsHold(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: 7 * time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	seen := map[string]bool{}
	for i := range 100 {
		h := l.reserve("u", int64(i), now)
		if h.ID == "" || h.UserID != "u" || h.Estimate != int64(i) || !h.ExpiresAt.Equal(now.Add(7*time.Minute)) {
			t.Fatalf("Reserve returned %+v, want an ID, user u, estimate %d, expiry %s", h, i, fmtTime(now.Add(7*time.Minute)))
		}
		if seen[h.ID] {
			t.Fatalf("hold id %q returned twice", h.ID)
		}
		seen[h.ID] = true
	}

	l = open(quota.Policy{})
	if h := l.reserve("u", 1, now); !h.ExpiresAt.Equal(now.Add(quota.DefaultHoldTTL)) {
		t.Errorf("with a zero HoldTTL the hold expires at %s, want now + DefaultHoldTTL", fmtTime(h.ExpiresAt))
	}
}

func testHeldCounts(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	l.reserve("u", 60, now)
	wantHold(t, l.reserve("u", 50, now), 50, 40) // 60 of 100 held: the 40 left
	wantNums(t, l.usage("u", now), nums{0, 100, 100}, nums{0, 100, -1}, nums{0, 100, -1})
	if ee := l.refused("u", 1, now); ee.Held != 100 || ee.Used != 0 {
		t.Errorf("ExceededError = %+v, want held 100, used 0", *ee)
	}
}

func testSettleReplaces(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 60, now)
	l.settle(h, 25)
	wantNums(t, l.usage("u", now), nums{25, 0, 100}, nums{25, 0, -1}, nums{25, 0, -1})
	l.reserve("u", 75, now)
}

func testSettleOvershoot(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 60, now)
	l.settle(h, 130) // consumed tokens are always counted
	u := l.usage("u", now)
	wantNums(t, u, nums{130, 0, 100}, nums{130, 0, -1}, nums{130, 0, -1})
	if r := u.Daily.Remaining(); r != 0 {
		t.Errorf("Remaining() = %d, want 0", r)
	}
	l.refused("u", 1, now)
}

func testSettleUsesLedgerEstimate(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 60, now)
	h.Estimate = 1 // the caller's copy is informational
	l.settle(h, 10)
	wantNums(t, l.usage("u", now), nums{10, 0, -1}, nums{10, 0, -1}, nums{10, 0, -1})
}

func testReleaseChargesNothing(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	l.release(l.reserve("u", 100, now))
	wantNums(t, l.usage("u", now), nums{0, 0, 100}, nums{0, 0, -1}, nums{0, 0, -1})
	l.reserve("u", 100, now)
}

func testCloseTwice(t *testing.T, open func(quota.Policy) *ledger) {
	now := ts("2026-05-05T10:00:00Z")
	ctx := t.Context()
	type step struct {
		name string
		do   func(quota.Ledger, quota.Hold) error
	}
	settle := step{"Settle", func(l quota.Ledger, h quota.Hold) error { return l.Settle(ctx, h, 5) }}
	release := step{"Release", func(l quota.Ledger, h quota.Hold) error { return l.Release(ctx, h) }}
	for _, c := range []struct {
		first, second step
		used          int64
	}{
		{settle, settle, 5}, {settle, release, 5}, {release, settle, 0}, {release, release, 0},
	} {
		t.Run(c.first.name+"Then"+c.second.name, func(t *testing.T) {
			l := open(quota.Policy{})
			h := l.reserve("u", 10, now)
			if err := c.first.do(l.l, h); err != nil {
				t.Fatalf("first %s: %v", c.first.name, err)
			}
			for range 2 {
				wantErr(t, c.second.do(l.l, h), quota.ErrHoldNotFound, c.second.name+" of a closed hold")
			}
			wantNums(t, l.usage("u", now), nums{c.used, 0, -1}, nums{c.used, 0, -1}, nums{c.used, 0, -1})
		})
	}
}

func testUnknownHold(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 10, now)
	ctx := t.Context()
	for _, bad := range []quota.Hold{{}, {ID: "no-such-hold", UserID: "u"}, {ID: h.ID + "x", UserID: "u"}, {UserID: "u"}} {
		wantErr(t, l.l.Settle(ctx, bad, 1), quota.ErrHoldNotFound, "Settle of an unknown hold")
		wantErr(t, l.l.Release(ctx, bad), quota.ErrHoldNotFound, "Release of an unknown hold")
	}
	wantNums(t, l.usage("u", now), nums{0, 10, -1}, nums{0, 10, -1}, nums{0, 10, -1})
}

func testHoldOfAnotherUser(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("a", 10, now)
	l.reserve("b", 10, now)
	forged := h
	forged.UserID = "b"
	err := l.l.Settle(t.Context(), forged, 1)
	wantErr(t, err, quota.ErrHoldNotFound, "Settle of a's hold presented as b's")
	if err == nil {
		return
	}
	wantNums(t, l.usage("a", now), nums{0, 10, -1}, nums{0, 10, -1}, nums{0, 10, -1})
	wantNums(t, l.usage("b", now), nums{0, 10, -1}, nums{0, 10, -1}, nums{0, 10, -1})
	l.settle(h, 3)
}

func testUsersIndependent(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	l.charge("a", 100, now)
	l.reserve("b", 60, now)
	wantNums(t, l.usage("a", now), nums{100, 0, 100}, nums{100, 0, -1}, nums{100, 0, -1})
	wantNums(t, l.usage("b", now), nums{0, 60, 100}, nums{0, 60, -1}, nums{0, 60, -1})
}

var expiryCases = []ledgerCase{
	{"SweepVoidsHoldsAtExpiry", testSweepAtExpiry},
	{"SweptHoldIsHoldNotFound", testSweptHoldNotFound},
	{"HoldPastExpiryIsOpenUntilSwept", testOpenUntilSwept},
	{"SweepCountsExpiredHoldsOfAllUsers", testSweepAllUsers},
}

func testSweepAtExpiry(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}, HoldTTL: 10 * time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	l.reserve("u", 100, now)
	if n := l.sweep(now.Add(10*time.Minute - time.Nanosecond)); n != 0 {
		t.Errorf("Sweep before expiry voided %d holds, want 0", n)
	}
	l.refused("u", 1, now.Add(time.Minute))
	if n := l.sweep(now.Add(10 * time.Minute)); n != 1 {
		t.Errorf("Sweep at expiry voided %d holds, want 1", n)
	}
	later := now.Add(11 * time.Minute)
	wantNums(t, l.usage("u", later), nums{0, 0, 100}, nums{0, 0, -1}, nums{0, 0, -1})
	l.reserve("u", 100, later)
	if n := l.sweep(later); n != 0 {
		t.Errorf("a second Sweep voided %d holds, want 0", n)
	}
}

func testSweptHoldNotFound(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	h1 := l.reserve("u", 10, now)
	h2 := l.reserve("u", 10, now)
	l.sweep(now.Add(time.Hour))
	wantErr(t, l.l.Settle(t.Context(), h1, 10), quota.ErrHoldNotFound, "Settle of a swept hold")
	wantErr(t, l.l.Release(t.Context(), h2), quota.ErrHoldNotFound, "Release of a swept hold")
	wantNums(t, l.usage("u", now.Add(time.Hour)), nums{0, 0, -1}, nums{0, 0, -1}, nums{0, 0, -1})
}

func testOpenUntilSwept(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 10, now)
	// Settle takes no clock: expiry takes effect when a Sweep runs.
	wantNums(t, l.usage("u", now.Add(time.Hour)), nums{0, 10, -1}, nums{0, 10, -1}, nums{0, 10, -1})
	l.settle(h, 4)
	if n := l.sweep(now.Add(time.Hour)); n != 0 {
		t.Errorf("Sweep voided %d holds after the only one settled, want 0", n)
	}
	wantNums(t, l.usage("u", now.Add(time.Hour)), nums{4, 0, -1}, nums{4, 0, -1}, nums{4, 0, -1})
}

func testSweepAllUsers(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{HoldTTL: 10 * time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	l.reserve("a", 1, now)
	l.reserve("a", 1, now.Add(time.Minute))
	l.reserve("b", 1, now.Add(2*time.Minute))
	l.reserve("c", 1, now.Add(5*time.Minute))
	keep := l.reserve("c", 1, now.Add(9*time.Minute))
	settled := l.reserve("b", 1, now)
	l.settle(settled, 1)
	if n := l.sweep(now.Add(15 * time.Minute)); n != 4 {
		t.Errorf("Sweep voided %d holds, want 4", n)
	}
	at := now.Add(15 * time.Minute)
	wantNums(t, l.usage("a", at), nums{0, 0, -1}, nums{0, 0, -1}, nums{0, 0, -1})
	wantNums(t, l.usage("b", at), nums{1, 0, -1}, nums{1, 0, -1}, nums{1, 0, -1})
	wantNums(t, l.usage("c", at), nums{0, 1, -1}, nums{0, 1, -1}, nums{0, 1, -1})
	l.settle(keep, 2)
}

var argumentCases = []ledgerCase{
	{"InvalidArgumentsAreErrInvalidAndChangeNothing", testInvalidArguments},
	{"CanceledContextFailsEveryMethodAndChangesNothing", testCanceledContext},
}

func testInvalidArguments(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	ctx := t.Context()
	h := l.reserve("u", 10, now)

	_, err := l.l.Reserve(ctx, "", 1, now)
	wantErr(t, err, quota.ErrInvalid, "Reserve for an empty user id")
	_, err = l.l.Reserve(ctx, "u", -1, now)
	wantErr(t, err, quota.ErrInvalid, "Reserve of a negative estimate")
	wantErr(t, l.l.Settle(ctx, h, -1), quota.ErrInvalid, "Settle of a negative actual")
	_, err = l.l.Usage(ctx, "", now)
	wantErr(t, err, quota.ErrInvalid, "Usage of an empty user id")
	wantErr(t, l.l.SetLimits(ctx, "", quota.Limits{}), quota.ErrInvalid, "SetLimits for an empty user id")
	for _, bad := range []quota.Limits{{Daily: lim(-2)}, {Weekly: lim(5), Monthly: lim(-100)}} {
		wantErr(t, l.l.SetLimits(ctx, "u", bad), quota.ErrInvalid, "SetLimits below -1")
	}

	// Nothing changed: the limits are the defaults and the hold is open.
	wantNums(t, l.usage("u", now), nums{0, 10, 100}, nums{0, 10, -1}, nums{0, 10, -1})
	l.settle(h, 7)
}

func testCanceledContext(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}, HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 10, now)
	l.charge("u", 5, now)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"Reserve", func() error { _, err := l.l.Reserve(ctx, "u", 1, now); return err }},
		{"Settle", func() error { return l.l.Settle(ctx, h, 3) }},
		{"Release", func() error { return l.l.Release(ctx, h) }},
		{"Usage", func() error { _, err := l.l.Usage(ctx, "u", now); return err }},
		{"SetLimits", func() error { return l.l.SetLimits(ctx, "u", quota.Limits{Daily: lim(1)}) }},
		{"Sweep", func() error { _, err := l.l.Sweep(ctx, now.Add(time.Hour)); return err }},
		{"Limits", func() error { _, err := l.l.Limits(ctx, "u"); return err }},
	}
	for _, c := range calls {
		err := c.call()
		switch {
		case err == nil:
			t.Errorf("%s with a canceled context succeeded, want an error", c.name)
		case !errors.Is(err, context.Canceled):
			t.Logf("%s with a canceled context: %v (does not wrap context.Canceled)", c.name, err)
		}
	}
	wantNums(t, l.usage("u", now), nums{5, 10, 100}, nums{5, 10, -1}, nums{5, 10, -1})
	l.settle(h, 10)
}
