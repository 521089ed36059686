package quota

import (
	"fmt"
	"time"
)

// Unlimited is the limit value that disables a period: usage is still
// counted, but nothing is refused.
const Unlimited int64 = -1

// DefaultHoldTTL is how long a hold lives when Policy.HoldTTL is zero. It
// must exceed the longest turn: a hold swept before its turn settles loses
// that turn's usage (Settle then reports ErrHoldNotFound); assistant.New
// refuses a TTL under its TurnTimeout and drain. Ten minutes covers the
// Engine's default five-minute turn with room to spare. Without renewals
// it is also how long the hold of a turn whose process died keeps its
// tokens from the user, until Sweep voids it; a Ledger that is a Renewer
// lets the Engine keep the hold on a lease of three heartbeats instead.
const DefaultHoldTTL = 10 * time.Minute

// Limits sets a token limit per period. A nil field is unset; a set field is
// a limit in tokens (0 refuses every request with a positive estimate) or
// Unlimited. Build values with Limit:
//
//	quota.Limits{Daily: quota.Limit(50_000), Monthly: quota.Limit(quota.Unlimited)}
//
// As a per-user override (Ledger.SetLimits), an unset field falls back to the
// system default; as the system default (Policy.Defaults), it means unlimited.
type Limits struct {
	Daily   *int64 `json:"daily"`
	Weekly  *int64 `json:"weekly"`
	Monthly *int64 `json:"monthly"`
}

// Limit returns a pointer to n, for the fields of Limits.
func Limit(n int64) *int64 { return &n }

// Get returns the field of l for p: nil if unset or if p is not valid.
func (l Limits) Get(p Period) *int64 {
	switch p {
	case Daily:
		return l.Daily
	case Weekly:
		return l.Weekly
	case Monthly:
		return l.Monthly
	}
	return nil
}

// Validate reports an error wrapping ErrInvalid if a set field is below
// Unlimited.
func (l Limits) Validate() error {
	for _, p := range Periods() {
		if v := l.Get(p); v != nil && *v < Unlimited {
			return fmt.Errorf("quota: %s limit %d: want >= 0 or -1 (unlimited): %w", p, *v, ErrInvalid)
		}
	}
	return nil
}

// Clone returns a copy of l that shares no pointers with it.
func (l Limits) Clone() Limits {
	cp := func(v *int64) *int64 {
		if v == nil {
			return nil
		}
		return Limit(*v)
	}
	return Limits{Daily: cp(l.Daily), Weekly: cp(l.Weekly), Monthly: cp(l.Monthly)}
}

// Policy is what every Ledger implementation is configured with. Its zero
// value is valid: no limits, UTC periods, DefaultHoldTTL. Every process
// sharing one ledger database must use the same Policy.
type Policy struct {
	// Defaults are the system-wide limits; an unset field is unlimited.
	Defaults Limits
	// Location is where days, weeks and months begin. Nil means UTC.
	Location *time.Location
	// HoldTTL is how long a hold lives before Sweep may void it. Zero means
	// DefaultHoldTTL.
	HoldTTL time.Duration
}

// Validate reports an error wrapping ErrInvalid if the defaults are invalid
// or HoldTTL is negative.
func (p Policy) Validate() error {
	if err := p.Defaults.Validate(); err != nil {
		return fmt.Errorf("quota: policy defaults: %w", err)
	}
	if p.HoldTTL < 0 {
		return fmt.Errorf("quota: policy HoldTTL %v is negative: %w", p.HoldTTL, ErrInvalid)
	}
	return nil
}

// Loc returns p.Location, or UTC if it is nil.
func (p Policy) Loc() *time.Location {
	if p.Location == nil {
		return time.UTC
	}
	return p.Location
}

// TTL returns p.HoldTTL, or DefaultHoldTTL if it is zero.
func (p Policy) TTL() time.Duration {
	if p.HoldTTL <= 0 {
		return DefaultHoldTTL
	}
	return p.HoldTTL
}

// Limit resolves the limit of period per for a user with the given override:
// the override if set, else the system default if set, else Unlimited.
func (p Policy) Limit(per Period, override Limits) int64 {
	if v := override.Get(per); v != nil {
		return *v
	}
	if v := p.Defaults.Get(per); v != nil {
		return *v
	}
	return Unlimited
}
