package memquota_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/quota/quotatest"
)

func newLedger(t *testing.T, p quota.Policy) quota.Ledger {
	l, err := memquota.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestConformance(t *testing.T) {
	quotatest.Run(t, newLedger)
}

func TestSpendLedgerConformance(t *testing.T) {
	quotatest.RunSpendLedger(t, func(*testing.T) quota.SpendLedger { return new(memquota.SpendLedger) })
}

func TestRateLimiterConformance(t *testing.T) {
	quotatest.RunRateLimiter(t, func(*testing.T) quota.RateLimiter { return new(memquota.RateLimiter) })
}

func TestNewRejectsInvalidPolicy(t *testing.T) {
	for _, p := range []quota.Policy{
		{Defaults: quota.Limits{Weekly: quota.Limit(-5)}},
		{HoldTTL: -1},
	} {
		if _, err := memquota.New(p); !errors.Is(err, quota.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", p, err)
		}
	}
}

// New copies the defaults: changing the caller's Limits later changes nothing.
func TestNewCopiesDefaults(t *testing.T) {
	daily := int64(10)
	l, err := memquota.New(quota.Policy{Defaults: quota.Limits{Daily: &daily}})
	if err != nil {
		t.Fatal(err)
	}
	daily = 1000
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	if h, err := l.Reserve(t.Context(), "u", 11, now); err != nil || h.Estimate != 10 {
		t.Errorf("Reserve(11) under a default of 10 = %+v, %v; want a hold of 10", h, err)
	}
	if p := l.Policy(); *p.Defaults.Daily != 10 || p.Location != time.UTC || p.HoldTTL != quota.DefaultHoldTTL {
		t.Errorf("Policy() = %+v, want defaults filled in", p)
	}
}

// Sweep forgets idle users; a forgotten user's override is kept because an
// override is state, not usage.
func TestSweepKeepsOverridesAndOpenHolds(t *testing.T) {
	l, err := memquota.New(quota.Policy{HoldTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	day1 := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	if err := l.SetLimits(ctx, "o", quota.Limits{Daily: quota.Limit(5)}); err != nil {
		t.Fatal(err)
	}
	h, err := l.Reserve(ctx, "h", 3, day1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(ctx, "idle", 0, day1); err != nil {
		t.Fatal(err)
	}
	later := day1.Add(40 * 24 * time.Hour)
	if _, err := l.Sweep(ctx, day1.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, h, 3); err != nil {
		t.Fatalf("Settle of an unexpired hold after a Sweep: %v", err)
	}
	if _, err := l.Sweep(ctx, later); err != nil {
		t.Fatal(err)
	}
	u, err := l.Usage(ctx, "o", later)
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Limit != 5 {
		t.Errorf("override lost after Sweep: daily limit %d, want 5", u.Daily.Limit)
	}
}
