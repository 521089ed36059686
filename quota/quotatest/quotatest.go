package quotatest

import (
	"errors"
	"testing"
	"time"

	// The suite names IANA zones; embedding the database keeps it
	// independent of the machine's /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/parleyhq/parley/quota"
)

// NewLedger returns a fresh, empty Ledger configured with p. It may use t
// for cleanup (t.Cleanup) and fail it (t.Fatal) if the ledger cannot be made.
type NewLedger func(t *testing.T, p quota.Policy) quota.Ledger

// Run runs the conformance suite for quota.Ledger. Every subtest calls
// newLedger once, with the policy it needs, and must get a ledger of its
// own with no users, holds or usage. Subtests run one after another.
//
// The suite is the only clock: it passes every now explicitly, and for one
// ledger its clock never moves backwards.
func Run(t *testing.T, newLedger NewLedger) {
	t.Helper()
	groups := []struct {
		name  string
		cases []ledgerCase
	}{
		{"Periods", periodCases},
		{"Limits", limitCases},
		{"Holds", holdCases},
		{"Caps", capCases},
		{"Expiry", expiryCases},
		{"Renewal", renewalCases},
		{"Arguments", argumentCases},
		{"Concurrency", concurrencyCases},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					c.run(t, func(p quota.Policy) *ledger {
						l := newLedger(t, p)
						if l == nil {
							t.Fatal("newLedger returned nil")
						}
						return &ledger{t: t, l: l}
					})
				})
			}
		})
	}
}

type ledgerCase struct {
	name string
	run  func(t *testing.T, open func(quota.Policy) *ledger)
}

// ledger wraps a quota.Ledger with helpers that fail the test on
// unexpected errors.
type ledger struct {
	t *testing.T
	l quota.Ledger
}

func (l *ledger) reserve(user string, est int64, now time.Time) quota.Hold {
	l.t.Helper()
	h, err := l.l.Reserve(l.t.Context(), user, est, now)
	if err != nil {
		l.t.Fatalf("Reserve(%q, %d, %s): %v", user, est, fmtTime(now), err)
	}
	return h
}

// refused asserts that Reserve fails with an *ExceededError and returns it.
func (l *ledger) refused(user string, est int64, now time.Time) *quota.ExceededError {
	l.t.Helper()
	h, err := l.l.Reserve(l.t.Context(), user, est, now)
	if err == nil {
		l.t.Fatalf("Reserve(%q, %d, %s) admitted hold %+v, want ErrExceeded", user, est, fmtTime(now), h)
	}
	if !errors.Is(err, quota.ErrExceeded) {
		l.t.Fatalf("Reserve(%q, %d, %s) = %v, want errors.Is ErrExceeded", user, est, fmtTime(now), err)
	}
	var ee *quota.ExceededError
	if !errors.As(err, &ee) {
		l.t.Fatalf("Reserve(%q, %d, %s) = %v (%T), want an *quota.ExceededError in the chain", user, est, fmtTime(now), err, err)
	}
	return ee
}

func (l *ledger) settle(h quota.Hold, actual int64) {
	l.t.Helper()
	if err := l.l.Settle(l.t.Context(), h, actual); err != nil {
		l.t.Fatalf("Settle(%q, %d): %v", h.ID, actual, err)
	}
}

func (l *ledger) release(h quota.Hold) {
	l.t.Helper()
	if err := l.l.Release(l.t.Context(), h); err != nil {
		l.t.Fatalf("Release(%q): %v", h.ID, err)
	}
}

// charge reserves and settles actual tokens at now: one finished turn.
func (l *ledger) charge(user string, actual int64, now time.Time) {
	l.t.Helper()
	l.settle(l.reserve(user, 0, now), actual)
}

func (l *ledger) usage(user string, now time.Time) quota.Usage {
	l.t.Helper()
	u, err := l.l.Usage(l.t.Context(), user, now)
	if err != nil {
		l.t.Fatalf("Usage(%q, %s): %v", user, fmtTime(now), err)
	}
	if u.UserID != user {
		l.t.Errorf("Usage(%q).UserID = %q", user, u.UserID)
	}
	for _, c := range []struct {
		pu   quota.PeriodUsage
		want quota.Period
	}{{u.Daily, quota.Daily}, {u.Weekly, quota.Weekly}, {u.Monthly, quota.Monthly}} {
		if c.pu.Period != c.want {
			l.t.Errorf("Usage(%q).%s.Period = %q", user, c.want, c.pu.Period)
		}
	}
	return u
}

func (l *ledger) setLimits(user string, lim quota.Limits) {
	l.t.Helper()
	if err := l.l.SetLimits(l.t.Context(), user, lim); err != nil {
		l.t.Fatalf("SetLimits(%q): %v", user, err)
	}
}

func (l *ledger) sweep(now time.Time) int {
	l.t.Helper()
	n, err := l.l.Sweep(l.t.Context(), now)
	if err != nil {
		l.t.Fatalf("Sweep(%s): %v", fmtTime(now), err)
	}
	return n
}

// nums is a period's used, held and limit, for compact comparisons.
type nums struct{ Used, Held, Limit int64 }

func numsOf(pu quota.PeriodUsage) nums { return nums{pu.Used, pu.Held, pu.Limit} }

// wantNums checks used, held and limit of all three periods.
func wantNums(t *testing.T, u quota.Usage, daily, weekly, monthly nums) {
	t.Helper()
	for _, c := range []struct {
		pu   quota.PeriodUsage
		want nums
	}{{u.Daily, daily}, {u.Weekly, weekly}, {u.Monthly, monthly}} {
		if got := numsOf(c.pu); got != c.want {
			t.Errorf("%s usage of %q = %+v, want %+v", c.pu.Period, u.UserID, got, c.want)
		}
	}
}

// wantWindow checks a period's start and reset instants.
func wantWindow(t *testing.T, pu quota.PeriodUsage, start, resets string) {
	t.Helper()
	if !pu.Start.Equal(ts(start)) {
		t.Errorf("%s period starts at %s, want %s", pu.Period, fmtTime(pu.Start), start)
	}
	if !pu.ResetsAt.Equal(ts(resets)) {
		t.Errorf("%s period resets at %s, want %s", pu.Period, fmtTime(pu.ResetsAt), resets)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v, want errors.Is %v", what, err, target)
	}
}

// ts parses an RFC 3339 instant; expected instants are written out by hand,
// never computed with the code under test.
func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func fmtTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

var lim = quota.Limit
