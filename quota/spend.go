package quota

import (
	"context"
	"time"
)

// SpendKey identifies whose spend on which model connection a SpendLedger
// sums: one principal (usually a user id) on one connection.
type SpendKey struct {
	Connection string // the host's name for the model connection
	Principal  string
}

// SpendCap limits a key to Budget tokens in any trailing Window. The zero
// value (or any Budget or Window <= 0) is no cap. Caps are configured per
// connection by the host; the ledger only stores spend.
type SpendCap struct {
	Budget int64         `json:"budget"`
	Window time.Duration `json:"window"`
}

// Enabled reports whether c caps anything.
func (c SpendCap) Enabled() bool { return c.Budget > 0 && c.Window > 0 }

// SpendLedger records the tokens each turn spent and sums them over a
// trailing window: the per-connection spend cap. Unlike Ledger it reserves
// nothing: Allow is checked before a turn and Record called after it, so N
// concurrent turns that all pass Allow can together pass the budget by what
// they spend. The token Ledger is the hard budget; a spend cap is a
// per-connection brake, as in the systems Parley generalizes.
//
// Implementations must be safe for concurrent use by many goroutines and,
// for shared databases, by many processes (a per-process counter would let
// N processes each allow the budget). Every method fails, changing nothing,
// when ctx is done.
type SpendLedger interface {
	// Allow returns nil if c is not enabled or the tokens recorded for key
	// at instants in (now - c.Window, now] sum to less than c.Budget, and a
	// *SpendCapError (errors.Is(err, ErrSpendCapExceeded)) otherwise.
	Allow(ctx context.Context, key SpendKey, c SpendCap, now time.Time) error

	// Record adds tokens (>= 0; ErrInvalid otherwise) spent by key at now.
	// Every model call's usage is recorded, classifier and title calls
	// included. Records are kept at least as long as the longest window
	// Allow has been asked about for that key.
	Record(ctx context.Context, key SpendKey, tokens int64, now time.Time) error
}
