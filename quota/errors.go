package quota

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Implementations return them, possibly wrapped or inside
// the typed errors below, so callers test with errors.Is.
var (
	// ErrExceeded: a period's token limit has no room left for a
	// reservation. Ledger.Reserve returns it as an *ExceededError, which
	// names the period and when it resets.
	ErrExceeded = errors.New("quota: token limit exceeded")
	// ErrHoldNotFound: Settle or Release of a hold that is not open: never
	// reserved, already settled or released, or voided by Sweep.
	ErrHoldNotFound = errors.New("quota: hold not found")
	// ErrInvalid: an argument a ledger cannot accept (empty user id,
	// negative tokens, a limit below -1).
	ErrInvalid = errors.New("quota: invalid argument")
	// ErrSpendCapExceeded: the spend in a cap's trailing window has reached
	// its budget. SpendLedger.Allow returns it as a *SpendCapError.
	ErrSpendCapExceeded = errors.New("quota: spend cap exceeded")
	// ErrRateLimited: a rate's calls in its trailing window are used up.
	// RateLimiter.Take returns it as a *RateLimitError.
	ErrRateLimited = errors.New("quota: rate limited")
)

// ExceededError is the error Reserve returns when a period with a limit has
// no room left for a positive estimate: used + held >= limit. It describes
// one such period, the one that resets last, so "try again after ResetsAt"
// is true unless room comes back sooner. errors.Is(err, ErrExceeded) holds.
//
// Used, Held and Limit are the period's at the refusal, read in the same
// atomic step, so they tell the user the truth:
//
//   - Used >= Limit: the allowance is used up ("you have used Used of
//     Limit tokens"); nothing comes back before ResetsAt.
//   - Used < Limit: the rest of the allowance, Limit - Used (<= Held), is
//     held by the user's other turns in progress. Room comes back before
//     ResetsAt when they settle for less than they hold, are released, or
//     are swept after they expire; a user whose other turns end can retry
//     then, unless another period has no room either.
//
// Its Error text is for logs. A message for the user should be built from
// the fields, localized, and name Period and ResetsAt in the user's zone.
type ExceededError struct {
	UserID   string
	Period   Period
	Limit    int64     // the effective limit of Period
	Used     int64     // settled tokens in the period
	Held     int64     // tokens held by other open holds in the period
	Estimate int64     // the refused reservation's estimate
	ResetsAt time.Time // when the period ends and usage starts again at zero
}

// Error describes the refusal for logs.
func (e *ExceededError) Error() string {
	return fmt.Sprintf("quota: %s limit of %d tokens reached for user %q (used %d, held %d, requested %d); resets at %s",
		e.Period, e.Limit, e.UserID, e.Used, e.Held, e.Estimate, e.ResetsAt.Format(time.RFC3339))
}

// Is reports whether target is ErrExceeded.
func (e *ExceededError) Is(target error) bool { return target == ErrExceeded }

// SpendCapError is the error SpendLedger.Allow returns when a cap is
// reached. errors.Is(err, ErrSpendCapExceeded) holds.
type SpendCapError struct {
	Key   SpendKey
	Cap   SpendCap
	Spent int64 // tokens recorded in the trailing window, >= Cap.Budget
	// RetryAt is when enough spend leaves the window for Allow to succeed,
	// if nothing more is recorded.
	RetryAt time.Time
}

// Error describes the refusal for logs.
func (e *SpendCapError) Error() string {
	return fmt.Sprintf("quota: spend cap of %d tokens per %v reached on connection %q for %q (spent %d); retry at %s",
		e.Cap.Budget, e.Cap.Window, e.Key.Connection, e.Key.Principal, e.Spent, e.RetryAt.Format(time.RFC3339))
}

// Is reports whether target is ErrSpendCapExceeded.
func (e *SpendCapError) Is(target error) bool { return target == ErrSpendCapExceeded }

// RateLimitError is the error RateLimiter.Take returns when a rate is used
// up. errors.Is(err, ErrRateLimited) holds.
type RateLimitError struct {
	Key  string
	Rate Rate
	// RetryAt is when the oldest counted call leaves the window, so a Take
	// at or after it succeeds if no other call is taken first.
	RetryAt time.Time
}

// Error describes the refusal for logs.
func (e *RateLimitError) Error() string {
	return fmt.Sprintf("quota: rate of %d calls per %v used up for %q; retry at %s",
		e.Rate.Calls, e.Rate.Per, e.Key, e.RetryAt.Format(time.RFC3339Nano))
}

// Is reports whether target is ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }
