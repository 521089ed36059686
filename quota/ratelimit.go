package quota

import (
	"context"
	"time"
)

// Rate allows Calls calls in any trailing Per. The zero value (or any Calls
// or Per <= 0) is unlimited. Tool calls are limited per principal with, for
// example, Rate{Calls: 30, Per: time.Minute}.
type Rate struct {
	Calls int           `json:"calls"`
	Per   time.Duration `json:"per"`
}

// Enabled reports whether r limits anything.
func (r Rate) Enabled() bool { return r.Calls > 0 && r.Per > 0 }

// RateLimiter counts calls per key in a sliding window.
//
// Implementations must be safe for concurrent use by many goroutines and,
// for shared databases, by many processes. Take fails, changing nothing,
// when ctx is done.
type RateLimiter interface {
	// Take counts one call for key at now if fewer than r.Calls calls were
	// counted for key at instants in (now - r.Per, now]. Otherwise it returns a *RateLimitError (errors.Is(err,
	// ErrRateLimited)) and counts nothing, so a caller that keeps trying is
	// not locked out for longer. Check and count are one atomic step:
	// concurrent Takes never count more than r.Calls in a window. If r is
	// not enabled, Take returns nil and counts nothing.
	Take(ctx context.Context, key string, r Rate, now time.Time) error
}
