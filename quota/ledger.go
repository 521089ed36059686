package quota

import (
	"context"
	"time"
)

// Ledger accounts token usage per user against daily, weekly and monthly
// limits. A turn reserves an estimate before calling the model (Reserve),
// then replaces it with what the model actually used (Settle) or gives it
// back (Release). Reserve admits an estimate only if every period has room
// for it on top of what is used and held, so concurrent turns cannot race
// past a limit.
//
// Every method takes the caller's clock where one matters: now decides which
// periods a reservation falls in and when holds expire. A Ledger never reads
// the wall clock itself, which keeps it testable and lets many processes
// share one database.
//
// Implementations must be safe for concurrent use by many goroutines and,
// for shared databases, by many processes. Every method fails, changing
// nothing, when ctx is done. userID must be non-empty (ErrInvalid).
type Ledger interface {
	// Reserve holds estimate tokens (>= 0; ErrInvalid otherwise) for
	// userID in the periods containing now. It is admitted only if, in
	// every period with a limit, used + held + estimate <= limit; otherwise
	// it returns an *ExceededError (errors.Is(err, ErrExceeded)) naming the
	// exceeded period that resets last, and holds nothing. The returned
	// Hold expires at now + the policy's hold TTL.
	Reserve(ctx context.Context, userID string, estimate int64, now time.Time) (Hold, error)

	// Settle closes an open hold and charges actual tokens (>= 0;
	// ErrInvalid otherwise) in its place, in the periods the hold was
	// reserved in (not the periods containing the time of the call). actual
	// may exceed the estimate: tokens a model consumed are always counted,
	// so usage can pass a limit by the overshoot of holds that were open
	// together, never by more (see the package documentation).
	//
	// The hold is found by h.ID and h.UserID as Reserve returned them; the
	// ledger's own record of the estimate is used, never h.Estimate. A hold
	// is open from Reserve until the first Settle, Release or a Sweep at or
	// after its ExpiresAt. Settle of a hold that is not open (unknown,
	// already settled or released, or swept) returns ErrHoldNotFound and
	// changes nothing: at most one Settle or Release takes effect per hold,
	// so retrying either after an ambiguous failure is safe.
	Settle(ctx context.Context, h Hold, actual int64) error

	// Release closes an open hold and charges nothing: the request was
	// refused before the model ran. It returns ErrHoldNotFound, changing
	// nothing, if the hold is not open (see Settle).
	Release(ctx context.Context, h Hold) error

	// Usage reports userID's usage in the periods containing now: tokens
	// used (settled), held (by open holds reserved in that period), the
	// effective limit, and when the period resets. A user never seen has
	// zero usage and the default limits.
	Usage(ctx context.Context, userID string, now time.Time) (Usage, error)

	// SetLimits replaces userID's override: a set field (>= 0, or
	// Unlimited) takes precedence over the policy default, an unset field
	// falls back to it. Limits{} removes the override. A field below
	// Unlimited returns ErrInvalid and changes nothing. New limits apply to
	// the next Reserve; open holds and usage are kept.
	SetLimits(ctx context.Context, userID string, l Limits) error

	// Limits returns userID's override as SetLimits last set it: unset
	// fields are nil (the default applies), and a user without an override
	// gets Limits{}. The result shares nothing with the ledger. Callers
	// updating some periods read, change and SetLimits; two such updates
	// racing keep the later one whole.
	Limits(ctx context.Context, userID string) (Limits, error)

	// Sweep voids every open hold whose ExpiresAt is at or before now, as
	// Release would, and reports how many it voided. Holds outlive a crashed
	// worker only until the next Sweep; run one periodically (every minute
	// or so) from any one or several processes: sweeping is idempotent.
	Sweep(ctx context.Context, now time.Time) (int, error)
}

// Hold is an open reservation, returned by Reserve and passed back to Settle
// or Release. Only ID and UserID identify it; the other fields inform the
// caller. Hold values may be copied and stored (for example with a turn).
type Hold struct {
	ID        string    // unique across the ledger, chosen by the ledger
	UserID    string    // the user it was reserved for
	Estimate  int64     // tokens held
	ExpiresAt time.Time // when Sweep may void it
}

// Usage is a user's usage in the periods containing one instant.
type Usage struct {
	UserID  string
	Daily   PeriodUsage
	Weekly  PeriodUsage
	Monthly PeriodUsage
}

// Periods returns u's periods, shortest first.
func (u Usage) Periods() []PeriodUsage { return []PeriodUsage{u.Daily, u.Weekly, u.Monthly} }

// Check reports whether a reservation of estimate tokens fits u: nil if it
// does, else an *ExceededError for the exceeded period that resets last
// (ties go to the longer period), since that is the earliest moment the
// request can succeed if nothing else changes. Implementations call it with
// the usage they are about to change; callers may use it to size a request
// to the room left.
func (u Usage) Check(estimate int64) error {
	var worst *PeriodUsage
	for _, pu := range [...]*PeriodUsage{&u.Daily, &u.Weekly, &u.Monthly} {
		if pu.Fits(estimate) {
			continue
		}
		if worst == nil || !pu.ResetsAt.Before(worst.ResetsAt) {
			worst = pu
		}
	}
	if worst == nil {
		return nil
	}
	return &ExceededError{
		UserID:   u.UserID,
		Period:   worst.Period,
		Limit:    worst.Limit,
		Used:     worst.Used,
		Held:     worst.Held,
		Estimate: estimate,
		ResetsAt: worst.ResetsAt,
	}
}

// PeriodUsage is the usage row of one period.
type PeriodUsage struct {
	Period   Period    `json:"period"`
	Start    time.Time `json:"start"`     // first instant of the period, in the policy's location
	ResetsAt time.Time `json:"resets_at"` // first instant of the next period
	Used     int64     `json:"used"`      // settled tokens
	Held     int64     `json:"held"`      // tokens held by open holds
	Limit    int64     `json:"limit"`     // effective limit; Unlimited (-1) for none
}

// Unlimited reports whether the period has no limit.
func (pu PeriodUsage) Unlimited() bool { return pu.Limit < 0 }

// Remaining returns the tokens a Reserve could still hold: limit - used -
// held, floored at zero. It returns -1 for an unlimited period.
func (pu PeriodUsage) Remaining() int64 {
	if pu.Unlimited() {
		return -1
	}
	return max(pu.Limit-pu.Used-pu.Held, 0)
}

// Fits reports whether estimate tokens fit: the period is unlimited or
// used + held + estimate <= limit.
func (pu PeriodUsage) Fits(estimate int64) bool {
	// Written as a subtraction so huge values cannot overflow into a pass.
	return pu.Unlimited() || pu.Limit-pu.Used-pu.Held >= estimate
}
