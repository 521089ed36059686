package quotatest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

// RunSpendLedger runs the conformance suite for quota.SpendLedger. Every
// subtest calls newSpend once and must get an empty ledger of its own.
func RunSpendLedger(t *testing.T, newSpend func(t *testing.T) quota.SpendLedger) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, s quota.SpendLedger)
	}{
		{"NoCapAllowsEverything", testSpendNoCap},
		{"AllowsUntilTheBudgetIsReached", testSpendBudget},
		{"WindowIsTrailingAndExcludesItsStart", testSpendWindow},
		{"RetryAtIsWhenEnoughSpendLeaves", testSpendRetryAt},
		{"KeysAreIndependent", testSpendKeys},
		{"NegativeTokensAreErrInvalid", testSpendNegative},
		{"ConcurrentRecordsSumExactly", testSpendConcurrent},
		{"CanceledContextFailsAndRecordsNothing", testSpendCanceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSpend(t)
			if s == nil {
				t.Fatal("newSpend returned nil")
			}
			c.run(t, s)
		})
	}
}

var (
	spendKey = quota.SpendKey{Connection: "openai", Principal: "alice"}
	hourCap  = quota.SpendCap{Budget: 100, Window: time.Hour}
)

func record(t *testing.T, s quota.SpendLedger, k quota.SpendKey, tokens int64, at time.Time) {
	t.Helper()
	if err := s.Record(t.Context(), k, tokens, at); err != nil {
		t.Fatalf("Record(%+v, %d, %s): %v", k, tokens, fmtTime(at), err)
	}
}

func allowed(t *testing.T, s quota.SpendLedger, k quota.SpendKey, c quota.SpendCap, at time.Time) {
	t.Helper()
	if err := s.Allow(t.Context(), k, c, at); err != nil {
		t.Errorf("Allow(%+v, %+v, %s) = %v, want nil", k, c, fmtTime(at), err)
	}
}

func capped(t *testing.T, s quota.SpendLedger, k quota.SpendKey, c quota.SpendCap, at time.Time) *quota.SpendCapError {
	t.Helper()
	err := s.Allow(t.Context(), k, c, at)
	var se *quota.SpendCapError
	if !errors.Is(err, quota.ErrSpendCapExceeded) || !errors.As(err, &se) {
		t.Fatalf("Allow(%+v, %+v, %s) = %v, want a *quota.SpendCapError (ErrSpendCapExceeded)", k, c, fmtTime(at), err)
	}
	return se
}

func testSpendNoCap(t *testing.T, s quota.SpendLedger) {
	now := ts("2026-05-05T10:00:00Z")
	record(t, s, spendKey, 1<<40, now)
	for _, c := range []quota.SpendCap{{}, {Budget: 1}, {Window: time.Hour}, {Budget: -1, Window: time.Hour}} {
		allowed(t, s, spendKey, c, now)
	}
}

func testSpendBudget(t *testing.T, s quota.SpendLedger) {
	t0 := ts("2026-05-05T10:00:00Z")
	allowed(t, s, spendKey, hourCap, t0) // nothing recorded yet
	record(t, s, spendKey, 60, t0)
	record(t, s, spendKey, 39, t0.Add(time.Minute))
	allowed(t, s, spendKey, hourCap, t0.Add(2*time.Minute)) // 99 < 100
	record(t, s, spendKey, 1, t0.Add(3*time.Minute))
	se := capped(t, s, spendKey, hourCap, t0.Add(4*time.Minute)) // 100 reaches the budget
	if se.Key != spendKey || se.Cap != hourCap || se.Spent != 100 {
		t.Errorf("SpendCapError = %+v, want key %+v, cap %+v, spent 100", *se, spendKey, hourCap)
	}
	if want := t0.Add(time.Hour); !se.RetryAt.Equal(want) {
		t.Errorf("RetryAt = %s, want %s (when the 60 leaves the window)", fmtTime(se.RetryAt), fmtTime(want))
	}
	if se.Error() == "" {
		t.Error("SpendCapError.Error() is empty")
	}
}

func testSpendWindow(t *testing.T, s quota.SpendLedger) {
	t0 := ts("2026-05-05T10:00:00Z")
	c := quota.SpendCap{Budget: 100, Window: 10 * time.Minute}
	record(t, s, spendKey, 100, t0)
	capped(t, s, spendKey, c, t0)
	capped(t, s, spendKey, c, t0.Add(10*time.Minute-time.Nanosecond))
	allowed(t, s, spendKey, c, t0.Add(10*time.Minute)) // (now - window, now] excludes t0
}

func testSpendRetryAt(t *testing.T, s quota.SpendLedger) {
	t0 := ts("2026-05-05T10:00:00Z")
	record(t, s, spendKey, 10, t0)
	record(t, s, spendKey, 10, t0.Add(time.Minute))
	record(t, s, spendKey, 90, t0.Add(2*time.Minute))
	se := capped(t, s, spendKey, hourCap, t0.Add(3*time.Minute))
	// 110 spent: dropping the first 10 leaves 100, still capped; dropping
	// the second leaves 90.
	want := t0.Add(time.Minute + time.Hour)
	if se.Spent != 110 || !se.RetryAt.Equal(want) {
		t.Errorf("SpendCapError spent %d, retry at %s; want 110, %s", se.Spent, fmtTime(se.RetryAt), fmtTime(want))
	}
	capped(t, s, spendKey, hourCap, want.Add(-time.Nanosecond))
	allowed(t, s, spendKey, hourCap, want)
}

func testSpendKeys(t *testing.T, s quota.SpendLedger) {
	now := ts("2026-05-05T10:00:00Z")
	record(t, s, spendKey, 100, now)
	capped(t, s, spendKey, hourCap, now)
	allowed(t, s, quota.SpendKey{Connection: "openai", Principal: "bob"}, hourCap, now)
	allowed(t, s, quota.SpendKey{Connection: "azure", Principal: "alice"}, hourCap, now)
}

func testSpendNegative(t *testing.T, s quota.SpendLedger) {
	now := ts("2026-05-05T10:00:00Z")
	record(t, s, spendKey, 100, now)
	wantErr(t, s.Record(t.Context(), spendKey, -50, now), quota.ErrInvalid, "Record of negative tokens")
	capped(t, s, spendKey, hourCap, now)
}

func testSpendConcurrent(t *testing.T, s quota.SpendLedger) {
	now := ts("2026-05-05T10:00:00Z")
	const per = 100
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				if err := s.Record(t.Context(), spendKey, 1, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Record: %v", err)
	}
	at := now.Add(time.Second)
	se := capped(t, s, spendKey, quota.SpendCap{Budget: goroutines * per, Window: time.Hour}, at)
	if se.Spent != goroutines*per {
		t.Errorf("spent %d after %d concurrent records of 1, want %d", se.Spent, goroutines*per, goroutines*per)
	}
	allowed(t, s, spendKey, quota.SpendCap{Budget: goroutines*per + 1, Window: time.Hour}, at)
}

func testSpendCanceled(t *testing.T, s quota.SpendLedger) {
	now := ts("2026-05-05T10:00:00Z")
	record(t, s, spendKey, 99, now)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Record(ctx, spendKey, 1, now); err == nil {
		t.Error("Record with a canceled context succeeded")
	}
	if err := s.Allow(ctx, spendKey, hourCap, now); err == nil {
		t.Error("Allow with a canceled context succeeded")
	}
	allowed(t, s, spendKey, hourCap, now)
}
