package memquota

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/parleyhq/parley/quota"
)

var _ quota.RateLimiter = (*RateLimiter)(nil)

// RateLimiter is an in-memory quota.RateLimiter: a sliding-window log per
// key. The zero value is ready to use. It counts only its own process's
// calls.
type RateLimiter struct {
	mu   sync.Mutex
	keys map[string][]time.Time // counted calls, oldest first
}

// Take implements quota.RateLimiter.
func (rl *RateLimiter) Take(ctx context.Context, key string, r quota.Rate, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !r.Enabled() {
		return nil
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.keys == nil {
		rl.keys = make(map[string][]time.Time)
	}
	calls := rl.keys[key]
	// Calls at or before now - Per have left every window that a clock
	// moving forward can ask about with this rate. Reslicing leaves them to
	// the next growth of the array.
	since := now.Add(-r.Per)
	calls = calls[sort.Search(len(calls), func(i int) bool { return calls[i].After(since) }):]
	n := sort.Search(len(calls), func(i int) bool { return calls[i].After(now) }) // calls in the window
	if n >= r.Calls {
		rl.keys[key] = calls
		// The call that must leave the window first is the n-Calls+1-th
		// oldest in it.
		return &quota.RateLimitError{Key: key, Rate: r, RetryAt: calls[n-r.Calls].Add(r.Per)}
	}
	i := len(calls)
	for i > 0 && calls[i-1].After(now) {
		i--
	}
	calls = append(calls, time.Time{})
	copy(calls[i+1:], calls[i:])
	calls[i] = now
	rl.keys[key] = calls
	return nil
}
