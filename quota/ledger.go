package quota

import (
	"context"
	"time"
)

// Ledger accounts token usage per user against daily, weekly and monthly
// limits. A turn reserves an estimate before calling the model (Reserve),
// then replaces it with what the model actually used (Settle) or gives it
// back (Release). Reserve admits a turn while the user has allowance left
// and holds at most what is left, in one atomic step, so concurrent turns
// cannot hold more than a limit between them.
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
	// Reserve holds tokens for a turn of userID estimated at estimate
	// tokens (>= 0; ErrInvalid otherwise), in the periods containing now.
	//
	// A positive estimate is admitted while the user has allowance left: in
	// every period with a limit, used + held < limit. The hold is capped at
	// what is left: Hold.Estimate = min(estimate, limit - used - held over
	// the limited periods), so it is at least 1 and never takes a period
	// past its limit. A zero estimate is always admitted and holds nothing;
	// with Settle it charges tokens already consumed (after a hold was
	// swept), even for a user at or over a limit. Usage.Admit states the
	// same rule over a Usage. The check and the hold are one atomic step:
	// concurrent Reserves never leave used + held above a limit.
	//
	// A refused Reserve holds nothing and returns an *ExceededError
	// (errors.Is(err, ErrExceeded)) for a period with no room left, the one
	// that resets last; its Used, Held and Limit are that period's at the
	// refusal. The returned Hold expires at now + the policy's hold TTL.
	Reserve(ctx context.Context, userID string, estimate int64, now time.Time) (Hold, error)

	// Settle closes an open hold and charges actual tokens (>= 0;
	// ErrInvalid otherwise) in its place, in the periods the hold was
	// reserved in (not the periods containing the time of the call). actual
	// may exceed the hold: tokens a model consumed are always counted, so
	// usage can pass a limit by the overshoot (actual - hold) of holds that
	// were open together, never by more (see the package documentation).
	//
	// The hold is found by h.ID and h.UserID as Reserve returned them; the
	// ledger's own record of the held tokens (the capped amount) is used,
	// never h.Estimate. A hold is open from Reserve until the first Settle,
	// Release or a Sweep at or after its ExpiresAt. Settle of a hold that
	// is not open (unknown, already settled or released, or swept) returns
	// ErrHoldNotFound and changes nothing: at most one Settle or Release
	// takes effect per hold, so retrying either after an ambiguous failure
	// is safe.
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

// Renewer is a Ledger whose open holds can be given a new expiry. A caller
// that renews a hold periodically keeps it on a short lease: while its
// process lives the hold stays, and when the process dies the hold expires
// one lease later, not at Reserve's now + HoldTTL, so the next Sweep gives
// the user's allowance back. The Engine keeps each turn's hold this way
// when its Ledger is a Renewer. It is an optional interface, checked with
// a type assertion; a Ledger without it keeps every hold for the whole TTL.
type Renewer interface {
	// Renew sets the expiry of the open hold h, found by h.ID and h.UserID
	// as Settle finds it, to expiresAt, earlier or later than it was, and
	// returns h with that ExpiresAt; the held tokens are unchanged. Sweep
	// then voids the hold at or after expiresAt, and not before.
	//
	// A hold that is not open (see Settle) returns ErrHoldNotFound and
	// changes nothing: a renewal never brings back a hold that was
	// settled, released or swept. A hold past its expiry that no Sweep has
	// voided yet is still open, and renewing it keeps it. A zero expiresAt
	// returns ErrInvalid.
	Renew(ctx context.Context, h Hold, expiresAt time.Time) (Hold, error)
}

// Hold is an open reservation, returned by Reserve and passed back to Settle
// or Release. Only ID and UserID identify it; the other fields inform the
// caller. Hold values may be copied and stored (for example with a turn).
type Hold struct {
	ID        string    // unique across the ledger, chosen by the ledger
	UserID    string    // the user it was reserved for
	Estimate  int64     // tokens held: the estimate, capped at the room left
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

// Check reports whether Reserve admits a reservation of estimate tokens at
// u: nil if it does (estimate is zero, or every limited period has used +
// held < limit), else an *ExceededError for the period with no room left
// that resets last (ties go to the longer period), since that is the
// earliest moment the request can succeed if nothing else changes. Its
// Used, Held and Limit are that period's in u.
func (u Usage) Check(estimate int64) error {
	_, err := u.Admit(estimate)
	return err
}

// Admit applies Reserve's rule to u: it returns the tokens a reservation of
// estimate would hold, the estimate capped at the smallest room left over
// the limited periods, or Check's error if it is refused. Implementations
// call it with the usage they are about to change, in the same atomic step
// as the change.
func (u Usage) Admit(estimate int64) (int64, error) {
	hold := estimate
	var full *PeriodUsage
	for _, pu := range [...]*PeriodUsage{&u.Daily, &u.Weekly, &u.Monthly} {
		if pu.Unlimited() {
			continue
		}
		room := pu.Remaining()
		hold = min(hold, room)
		if room == 0 && (full == nil || !pu.ResetsAt.Before(full.ResetsAt)) {
			full = pu
		}
	}
	if full == nil || estimate == 0 {
		return hold, nil
	}
	return 0, &ExceededError{
		UserID:   u.UserID,
		Period:   full.Period,
		Limit:    full.Limit,
		Used:     full.Used,
		Held:     full.Held,
		Estimate: estimate,
		ResetsAt: full.ResetsAt,
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
// held, floored at zero. It returns -1 for an unlimited period. A limited
// period with nothing remaining refuses every positive estimate.
func (pu PeriodUsage) Remaining() int64 {
	if pu.Unlimited() {
		return -1
	}
	return max(pu.Limit-pu.Used-pu.Held, 0)
}

// Fits reports whether the whole estimate fits: the period is unlimited or
// used + held + estimate <= limit. It is not the admission rule (Reserve
// admits while anything remains; see Usage.Admit): a Reserve whose estimate
// does not fit some period gets a hold capped at that period's room.
func (pu PeriodUsage) Fits(estimate int64) bool {
	// Written as a subtraction so huge values cannot overflow into a pass.
	return pu.Unlimited() || pu.Limit-pu.Used-pu.Held >= estimate
}
