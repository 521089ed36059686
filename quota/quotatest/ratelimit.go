package quotatest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

// RunRateLimiter runs the conformance suite for quota.RateLimiter. Every
// subtest calls newLimiter once and must get an empty limiter of its own.
func RunRateLimiter(t *testing.T, newLimiter func(t *testing.T) quota.RateLimiter) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, rl quota.RateLimiter)
	}{
		{"ZeroRateIsUnlimited", testRateZero},
		{"AllowsCallsThenLimits", testRateLimits},
		{"WindowSlides", testRateSlides},
		{"RefusedCallsAreNotCounted", testRateRefusedNotCounted},
		{"KeysAreIndependent", testRateKeys},
		{"ConcurrentTakesNeverPassTheRate", testRateConcurrent},
		{"CanceledContextFailsAndCountsNothing", testRateCanceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rl := newLimiter(t)
			if rl == nil {
				t.Fatal("newLimiter returned nil")
			}
			c.run(t, rl)
		})
	}
}

var perMinute3 = quota.Rate{Calls: 3, Per: time.Minute}

func take(t *testing.T, rl quota.RateLimiter, key string, r quota.Rate, at time.Time) {
	t.Helper()
	if err := rl.Take(t.Context(), key, r, at); err != nil {
		t.Fatalf("Take(%q, %+v, %s) = %v, want nil", key, r, fmtTime(at), err)
	}
}

func limited(t *testing.T, rl quota.RateLimiter, key string, r quota.Rate, at time.Time) *quota.RateLimitError {
	t.Helper()
	err := rl.Take(t.Context(), key, r, at)
	var re *quota.RateLimitError
	if !errors.Is(err, quota.ErrRateLimited) || !errors.As(err, &re) {
		t.Fatalf("Take(%q, %+v, %s) = %v, want a *quota.RateLimitError (ErrRateLimited)", key, r, fmtTime(at), err)
	}
	return re
}

func testRateZero(t *testing.T, rl quota.RateLimiter) {
	now := ts("2026-05-05T10:00:00Z")
	for range 1000 {
		take(t, rl, "alice", quota.Rate{}, now)
	}
	take(t, rl, "alice", quota.Rate{Calls: 0, Per: time.Minute}, now)
	take(t, rl, "alice", quota.Rate{Calls: 1, Per: 0}, now)
}

func testRateLimits(t *testing.T, rl quota.RateLimiter) {
	t0 := ts("2026-05-05T10:00:00Z")
	take(t, rl, "alice", perMinute3, t0)
	take(t, rl, "alice", perMinute3, t0.Add(10*time.Second))
	take(t, rl, "alice", perMinute3, t0.Add(20*time.Second))
	re := limited(t, rl, "alice", perMinute3, t0.Add(30*time.Second))
	if re.Key != "alice" || re.Rate != perMinute3 || !re.RetryAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("RateLimitError = %+v, want key alice, rate %+v, retry at %s", *re, perMinute3, fmtTime(t0.Add(time.Minute)))
	}
	if re.Error() == "" {
		t.Error("RateLimitError.Error() is empty")
	}
}

func testRateSlides(t *testing.T, rl quota.RateLimiter) {
	t0 := ts("2026-05-05T10:00:00Z")
	for range 3 {
		take(t, rl, "alice", perMinute3, t0)
	}
	limited(t, rl, "alice", perMinute3, t0.Add(time.Minute-time.Nanosecond))
	take(t, rl, "alice", perMinute3, t0.Add(time.Minute)) // (now - per, now] excludes t0
	take(t, rl, "alice", perMinute3, t0.Add(time.Minute))
	take(t, rl, "alice", perMinute3, t0.Add(time.Minute))
	limited(t, rl, "alice", perMinute3, t0.Add(time.Minute))
}

func testRateRefusedNotCounted(t *testing.T, rl quota.RateLimiter) {
	t0 := ts("2026-05-05T10:00:00Z")
	take(t, rl, "alice", perMinute3, t0)
	take(t, rl, "alice", perMinute3, t0.Add(10*time.Second))
	take(t, rl, "alice", perMinute3, t0.Add(20*time.Second))
	for i := range 10 {
		limited(t, rl, "alice", perMinute3, t0.Add(30*time.Second+time.Duration(i)*time.Second))
	}
	// Only t0 left the window; the refused calls never counted.
	take(t, rl, "alice", perMinute3, t0.Add(time.Minute))
}

func testRateKeys(t *testing.T, rl quota.RateLimiter) {
	now := ts("2026-05-05T10:00:00Z")
	for range 3 {
		take(t, rl, "alice", perMinute3, now)
	}
	limited(t, rl, "alice", perMinute3, now)
	take(t, rl, "bob", perMinute3, now)
}

func testRateConcurrent(t *testing.T, rl quota.RateLimiter) {
	now := ts("2026-05-05T10:00:00Z")
	r := quota.Rate{Calls: 10, Per: time.Minute}
	var ok, refused atomic.Int64
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range 4 {
				err := rl.Take(t.Context(), "alice", r, now)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, quota.ErrRateLimited):
					refused.Add(1)
				default:
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Take: %v", err)
	}
	if ok.Load() != 10 || refused.Load() != goroutines*4-10 {
		t.Errorf("%d concurrent Takes under %+v: %d allowed, %d refused; want 10 allowed", goroutines*4, r, ok.Load(), refused.Load())
	}
}

func testRateCanceled(t *testing.T, rl quota.RateLimiter) {
	now := ts("2026-05-05T10:00:00Z")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for range 3 {
		if err := rl.Take(ctx, "alice", perMinute3, now); err == nil {
			t.Fatal("Take with a canceled context succeeded")
		}
	}
	for range 3 {
		take(t, rl, "alice", perMinute3, now)
	}
}
