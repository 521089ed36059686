package quotatest_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/mutanttest"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/quota/quotatest"
)

// A suite that passes everything proves nothing. Each mutant below is a
// memquota implementation with one contract broken; the suite must fail it
// in the case named. The mutants run in a child process because a failing
// suite fails its *testing.T, which cannot be faked. The child runs only the
// group holding the case, to keep the test fast.

type mutant struct {
	name     string
	ledger   func(t *testing.T, p quota.Policy) quota.Ledger
	spend    func() quota.SpendLedger
	limiter  func() quota.RateLimiter
	wantFail string // subtest path that must fail
}

func mem(t *testing.T, p quota.Policy) *memquota.Ledger {
	l, err := memquota.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func wrap[T any](f func(*memquota.Ledger) T) func(*testing.T, quota.Policy) T {
	return func(t *testing.T, p quota.Policy) T { return f(mem(t, p)) }
}

var mutants = []mutant{
	{name: "IgnoresHeld", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return &ignoresHeld{Ledger: l} }),
		wantFail: "Holds/HeldTokensCountAgainstTheLimit"},
	{name: "CheckThenAct", ledger: newCheckThenAct,
		wantFail: "Concurrency/HundredConcurrentStreamsAdmitOnlyWhatFits"},
	{name: "CapFromAStaleRead", ledger: newCheckThenAct,
		wantFail: "Concurrency/ConcurrentCappedHoldsNeverSumPastTheLimit"},
	{name: "RefusesWhatDoesNotFitWhole", ledger: newByRule(wholeEstimate),
		wantFail: "Caps/EstimateAboveTheRoomLeftHoldsTheRest"},
	{name: "HoldsTheWholeEstimate", ledger: newByRule(uncapped),
		wantFail: "Caps/EstimateAboveTheRoomLeftHoldsTheRest"},
	{name: "HoldsTheWholeEstimateBelowOneLimit", ledger: newByRule(uncapped),
		wantFail: "Limits/AdmittedWhileAllowanceIsLeft"},
	{name: "RefusesAZeroEstimateOverTheLimit", ledger: newByRule(zeroLikeAnyOther),
		wantFail: "Caps/ZeroEstimateIsAlwaysAdmitted"},
	{name: "AdmitsAtTheLimitWithAnEmptyHold", ledger: newByRule(admitsAtTheLimit),
		wantFail: "Caps/FullAllowanceRefusesUntilAHoldSettlesForLess"},
	{name: "CapsAtTheLoosestPeriod", ledger: newByRule(loosestCap),
		wantFail: "Caps/HoldIsCappedAtTheTightestPeriod"},
	{name: "ReportsTheUncappedEstimate", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return reportsEstimate{l} }),
		wantFail: "Caps/EstimateAboveTheRoomLeftHoldsTheRest"},
	{name: "SettleTwiceSucceeds", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return settleTwice{l} }),
		wantFail: "Holds/SecondSettleOrReleaseIsHoldNotFound"},
	{name: "ReleaseChargesEstimate", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return releaseCharges{l} }),
		wantFail: "Holds/ReleaseChargesNothing"},
	{name: "HoldFoundByIDAlone", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return &byIDAlone{Ledger: l} }),
		wantFail: "Holds/HoldOfAnotherUserIsHoldNotFound"},
	{name: "PeriodsInUTC", ledger: func(t *testing.T, p quota.Policy) quota.Ledger {
		p.Location = nil
		return mem(t, p)
	}, wantFail: "Periods/DailyStartsAtLocalMidnight"},
	{name: "DayIs24Hours", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return day24{l} }),
		wantFail: "Periods/NewYorkSpringForwardDayHas23Hours"},
	{name: "NaiveMidnight", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return naiveMidnight{l} }),
		wantFail: "Periods/SkippedMidnightStartsTheDayAtTheTransition"},
	{name: "WeeksStartSunday", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return sundayWeeks{l} }),
		wantFail: "Periods/WeeksStartOnMonday"},
	{name: "PlainExceededError", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return plainExceeded{l} }),
		wantFail: "Limits/AdmittedWhileAllowanceIsLeft"},
	{name: "ExceededNamesShortestPeriod", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return shortestPeriod{l} }),
		wantFail: "Limits/ExceededNamesThePeriodThatResetsLast"},
	{name: "OverrideMerges", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return &overrideMerges{Ledger: l} }),
		wantFail: "Limits/UnsetOverrideFieldsFallBackToDefaults"},
	{name: "MinusOneMeansDefault", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return minusOneUnset{l} }),
		wantFail: "Limits/OverrideMinusOneIsUnlimited"},
	{name: "LimitsReportsEffective", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return effectiveLimits{l} }),
		wantFail: "Limits/LimitsReportsTheOverrideNotTheEffectiveLimits"},
	{name: "SweepStrictlyAfterExpiry", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return sweepLate{l} }),
		wantFail: "Expiry/SweepVoidsHoldsAtExpiry"},
	{name: "IgnoresHoldTTL", ledger: func(t *testing.T, p quota.Policy) quota.Ledger {
		p.HoldTTL = 0
		return mem(t, p)
	}, wantFail: "Holds/ReserveReturnsAHold"},
	{name: "RenewIgnored", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return renewIgnored{l} }),
		wantFail: "Renewal/RenewMovesTheExpiryEarlier"},
	{name: "RenewSucceedsOnClosedHolds", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return renewClosed{l} }),
		wantFail: "Renewal/RenewOfAHoldNotOpenIsHoldNotFound"},
	{name: "NegativeEstimateClamped", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return clampNegative{l} }),
		wantFail: "Arguments/InvalidArgumentsAreErrInvalidAndChangeNothing"},
	{name: "IgnoresCanceledContext", ledger: wrap(func(l *memquota.Ledger) quota.Ledger { return ignoreCtx{l} }),
		wantFail: "Arguments/CanceledContextFailsEveryMethodAndChangesNothing"},

	{name: "SpendWindowInclusive", spend: func() quota.SpendLedger { return spendInclusive{new(memquota.SpendLedger)} },
		wantFail: "Spend/WindowIsTrailingAndExcludesItsStart"},
	{name: "SpendCapOnlyAboveBudget", spend: func() quota.SpendLedger { return spendAbove{new(memquota.SpendLedger)} },
		wantFail: "Spend/AllowsUntilTheBudgetIsReached"},
	{name: "RateCountsRefusedCalls", limiter: func() quota.RateLimiter { return countsRefused{new(memquota.RateLimiter)} },
		wantFail: "Rate/RefusedCallsAreNotCounted"},
}

const mutantEnv = "QUOTATEST_MUTANT"

func TestSuiteFailsBrokenLedgers(t *testing.T) {
	ms := make([]mutanttest.Mutant, len(mutants))
	for i, m := range mutants {
		ms[i] = mutanttest.Mutant{Name: m.name, WantFail: m.wantFail}
	}
	mutanttest.Check(t, mutantEnv, "TestMutantSuite", ms)
}

// The base of the rule mutants, given the right rule, passes: they fail
// for their rule alone.
func TestRuleMutantBaseIsConformant(t *testing.T) {
	quotatest.Run(t, newByRule(quota.Usage.Admit))
}

// TestMutantSuite is the child process of TestSuiteFailsBrokenLedgers.
func TestMutantSuite(t *testing.T) {
	name := mutanttest.Current(t, mutantEnv)
	i := slices.IndexFunc(mutants, func(m mutant) bool { return m.name == name })
	if i < 0 {
		t.Fatalf("no mutant %q", name)
	}
	m := mutants[i]
	switch {
	case m.ledger != nil:
		quotatest.Run(t, m.ledger)
	case m.spend != nil:
		t.Run("Spend", func(t *testing.T) {
			quotatest.RunSpendLedger(t, func(*testing.T) quota.SpendLedger { return m.spend() })
		})
	case m.limiter != nil:
		t.Run("Rate", func(t *testing.T) {
			quotatest.RunRateLimiter(t, func(*testing.T) quota.RateLimiter { return m.limiter() })
		})
	}
}

// ignoresHeld reserves nothing: only settled usage counts against a limit.
type ignoresHeld struct {
	*memquota.Ledger
}

func (l *ignoresHeld) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	if est < 0 {
		return l.Ledger.Reserve(ctx, user, est, now)
	}
	u, err := l.Ledger.Usage(ctx, user, now)
	if err != nil {
		return quota.Hold{}, err
	}
	u.Daily.Held, u.Weekly.Held, u.Monthly.Held = 0, 0, 0
	n, err := u.Admit(est)
	if err != nil {
		return quota.Hold{}, err
	}
	h, err := l.Ledger.Reserve(ctx, user, 0, now)
	h.Estimate = n
	return h, err
}

// ownLimits keeps the limits itself over an unlimited memquota ledger,
// which keeps the books: the base of mutants that admit by a rule of their
// own.
type ownLimits struct {
	*memquota.Ledger
	policy    quota.Policy
	mu        sync.Mutex
	overrides map[string]quota.Limits
}

func newOwnLimits(t *testing.T, p quota.Policy) *ownLimits {
	inner := p
	inner.Defaults = quota.Limits{}
	return &ownLimits{Ledger: mem(t, inner), policy: p, overrides: map[string]quota.Limits{}}
}

func (l *ownLimits) Usage(ctx context.Context, user string, now time.Time) (quota.Usage, error) {
	u, err := l.Ledger.Usage(ctx, user, now)
	l.mu.Lock()
	o := l.overrides[user]
	l.mu.Unlock()
	u.Daily.Limit = l.policy.Limit(quota.Daily, o)
	u.Weekly.Limit = l.policy.Limit(quota.Weekly, o)
	u.Monthly.Limit = l.policy.Limit(quota.Monthly, o)
	return u, err
}

func (l *ownLimits) SetLimits(ctx context.Context, user string, lim quota.Limits) error {
	if err := l.Ledger.SetLimits(ctx, user, quota.Limits{}); err != nil {
		return err
	}
	if err := lim.Validate(); err != nil {
		return err
	}
	l.mu.Lock()
	l.overrides[user] = lim.Clone()
	l.mu.Unlock()
	return nil
}

func (l *ownLimits) Limits(ctx context.Context, user string) (quota.Limits, error) {
	if _, err := l.Ledger.Limits(ctx, user); err != nil {
		return quota.Limits{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overrides[user].Clone(), nil
}

// checkThenAct is the classic budget race: read usage, decide (and cap),
// then write, with nothing making the two one step.
type checkThenAct struct{ *ownLimits }

func newCheckThenAct(t *testing.T, p quota.Policy) quota.Ledger {
	return checkThenAct{newOwnLimits(t, p)}
}

func (l checkThenAct) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	u, err := l.Usage(ctx, user, now)
	if err != nil {
		return quota.Hold{}, err
	}
	n, err := u.Admit(est)
	if err != nil {
		return quota.Hold{}, err
	}
	time.Sleep(time.Millisecond) // widen the window every real system has
	return l.Ledger.Reserve(ctx, user, n, now)
}

// byRule admits by a rule of its own, in one step with the hold (so only the
// rule is broken), and holds what the rule returns. With quota.Usage.Admit
// as its rule it passes the whole suite.
type byRule struct {
	*ownLimits
	step sync.Mutex
	rule func(u quota.Usage, est int64) (int64, error)
}

func newByRule(rule func(u quota.Usage, est int64) (int64, error)) func(*testing.T, quota.Policy) quota.Ledger {
	return func(t *testing.T, p quota.Policy) quota.Ledger {
		return &byRule{ownLimits: newOwnLimits(t, p), rule: rule}
	}
}

func (l *byRule) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	if est < 0 {
		return l.Ledger.Reserve(ctx, user, est, now) // ErrInvalid
	}
	l.step.Lock()
	defer l.step.Unlock()
	u, err := l.Usage(ctx, user, now)
	if err != nil {
		return quota.Hold{}, err
	}
	n, err := l.rule(u, est)
	if err != nil {
		return quota.Hold{}, err
	}
	return l.Ledger.Reserve(ctx, user, n, now)
}

// exceeded is the refusal a rule returns for period pu.
func exceeded(u quota.Usage, pu quota.PeriodUsage, est int64) error {
	return &quota.ExceededError{UserID: u.UserID, Period: pu.Period, Limit: pu.Limit, Used: pu.Used, Held: pu.Held, Estimate: est, ResetsAt: pu.ResetsAt}
}

// wholeEstimate is the rule before capping: admitted only if the whole
// estimate fits every period, and then held whole.
func wholeEstimate(u quota.Usage, est int64) (int64, error) {
	for _, pu := range u.Periods() {
		if !pu.Fits(est) {
			return 0, exceeded(u, pu, est)
		}
	}
	return est, nil
}

// uncapped admits by the rule but holds the whole estimate.
func uncapped(u quota.Usage, est int64) (int64, error) {
	if _, err := u.Admit(est); err != nil {
		return 0, err
	}
	return est, nil
}

// zeroLikeAnyOther refuses a zero estimate over a limit, as the rule before
// capping did, and is right otherwise.
func zeroLikeAnyOther(u quota.Usage, est int64) (int64, error) {
	if est == 0 {
		return wholeEstimate(u, 0)
	}
	return u.Admit(est)
}

// admitsAtTheLimit refuses only once used + held passes the limit, so at
// the limit it admits with an empty hold.
func admitsAtTheLimit(u quota.Usage, est int64) (int64, error) {
	n := est
	for _, pu := range u.Periods() {
		if pu.Unlimited() {
			continue
		}
		if pu.Limit-pu.Used-pu.Held < 0 && est > 0 {
			return 0, exceeded(u, pu, est)
		}
		n = min(n, pu.Remaining())
	}
	return n, nil
}

// loosestCap caps at the most room any limited period has left.
func loosestCap(u quota.Usage, est int64) (int64, error) {
	if _, err := u.Admit(est); err != nil {
		return 0, err
	}
	most := int64(-1)
	for _, pu := range u.Periods() {
		most = max(most, pu.Remaining())
	}
	if most < 0 {
		return est, nil
	}
	return min(est, most), nil
}

// reportsEstimate holds the capped amount but tells the caller it holds the
// whole estimate.
type reportsEstimate struct{ *memquota.Ledger }

func (l reportsEstimate) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	h, err := l.Ledger.Reserve(ctx, user, est, now)
	if err == nil {
		h.Estimate = est
	}
	return h, err
}

type settleTwice struct{ *memquota.Ledger }

func (l settleTwice) Settle(ctx context.Context, h quota.Hold, actual int64) error {
	if err := l.Ledger.Settle(ctx, h, actual); !errors.Is(err, quota.ErrHoldNotFound) {
		return err
	}
	return nil
}

type releaseCharges struct{ *memquota.Ledger }

func (l releaseCharges) Release(ctx context.Context, h quota.Hold) error {
	return l.Ledger.Settle(ctx, h, h.Estimate)
}

// byIDAlone finds holds by ID, trusting nothing else the caller passes
// except the user id it ignores.
type byIDAlone struct {
	*memquota.Ledger
	mu    sync.Mutex
	holds map[string]quota.Hold
}

func (l *byIDAlone) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	h, err := l.Ledger.Reserve(ctx, user, est, now)
	if err == nil {
		l.mu.Lock()
		if l.holds == nil {
			l.holds = map[string]quota.Hold{}
		}
		l.holds[h.ID] = h
		l.mu.Unlock()
	}
	return h, err
}

func (l *byIDAlone) Settle(ctx context.Context, h quota.Hold, actual int64) error {
	l.mu.Lock()
	if real, ok := l.holds[h.ID]; ok {
		h = real
	}
	l.mu.Unlock()
	return l.Ledger.Settle(ctx, h, actual)
}

// The period mutants misreport windows the way naive code computes them.
type day24 struct{ *memquota.Ledger }

func (l day24) Usage(ctx context.Context, user string, now time.Time) (quota.Usage, error) {
	u, err := l.Ledger.Usage(ctx, user, now)
	u.Daily.ResetsAt = u.Daily.Start.Add(24 * time.Hour)
	return u, err
}

type naiveMidnight struct{ *memquota.Ledger }

func (l naiveMidnight) Usage(ctx context.Context, user string, now time.Time) (quota.Usage, error) {
	u, err := l.Ledger.Usage(ctx, user, now)
	loc := l.Policy().Location
	y, m, d := now.In(loc).Date()
	u.Daily.Start = time.Date(y, m, d, 0, 0, 0, 0, loc)
	return u, err
}

type sundayWeeks struct{ *memquota.Ledger }

func (l sundayWeeks) Usage(ctx context.Context, user string, now time.Time) (quota.Usage, error) {
	u, err := l.Ledger.Usage(ctx, user, now)
	loc := l.Policy().Location
	y, m, d := now.In(loc).Date()
	start := time.Date(y, m, d-int(now.In(loc).Weekday()), 0, 0, 0, 0, loc)
	u.Weekly.Start, u.Weekly.ResetsAt = start, start.AddDate(0, 0, 7)
	return u, err
}

type plainExceeded struct{ *memquota.Ledger }

func (l plainExceeded) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	h, err := l.Ledger.Reserve(ctx, user, est, now)
	if errors.Is(err, quota.ErrExceeded) {
		err = errors.New("quota exceeded")
	}
	return h, err
}

type shortestPeriod struct{ *memquota.Ledger }

func (l shortestPeriod) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	h, err := l.Ledger.Reserve(ctx, user, est, now)
	var ee *quota.ExceededError
	if errors.As(err, &ee) {
		u, _ := l.Ledger.Usage(ctx, user, now)
		for _, pu := range u.Periods() {
			if pu.Remaining() == 0 {
				ee.Period, ee.ResetsAt, ee.Limit = pu.Period, pu.ResetsAt, pu.Limit
				break
			}
		}
	}
	return h, err
}

type overrideMerges struct {
	*memquota.Ledger
	mu   sync.Mutex
	last map[string]quota.Limits
}

func (l *overrideMerges) SetLimits(ctx context.Context, user string, lim quota.Limits) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]quota.Limits{}
	}
	old := l.last[user]
	if lim.Daily == nil {
		lim.Daily = old.Daily
	}
	if lim.Weekly == nil {
		lim.Weekly = old.Weekly
	}
	if lim.Monthly == nil {
		lim.Monthly = old.Monthly
	}
	l.last[user] = lim.Clone()
	return l.Ledger.SetLimits(ctx, user, lim)
}

type minusOneUnset struct{ *memquota.Ledger }

func (l minusOneUnset) SetLimits(ctx context.Context, user string, lim quota.Limits) error {
	for _, p := range []**int64{&lim.Daily, &lim.Weekly, &lim.Monthly} {
		if *p != nil && **p == quota.Unlimited {
			*p = nil
		}
	}
	return l.Ledger.SetLimits(ctx, user, lim)
}

type sweepLate struct{ *memquota.Ledger }

func (l sweepLate) Sweep(ctx context.Context, now time.Time) (int, error) {
	return l.Ledger.Sweep(ctx, now.Add(-time.Nanosecond))
}

type clampNegative struct{ *memquota.Ledger }

func (l clampNegative) Reserve(ctx context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	return l.Ledger.Reserve(ctx, user, max(est, 0), now)
}

type ignoreCtx struct{ *memquota.Ledger }

func (l ignoreCtx) Reserve(_ context.Context, user string, est int64, now time.Time) (quota.Hold, error) {
	return l.Ledger.Reserve(context.Background(), user, est, now)
}

type spendInclusive struct{ *memquota.SpendLedger }

func (s spendInclusive) Allow(ctx context.Context, k quota.SpendKey, c quota.SpendCap, now time.Time) error {
	c.Window += time.Nanosecond
	return s.SpendLedger.Allow(ctx, k, c, now)
}

type spendAbove struct{ *memquota.SpendLedger }

func (s spendAbove) Allow(ctx context.Context, k quota.SpendKey, c quota.SpendCap, now time.Time) error {
	c.Budget++
	return s.SpendLedger.Allow(ctx, k, c, now)
}

type countsRefused struct{ *memquota.RateLimiter }

func (rl countsRefused) Take(ctx context.Context, key string, r quota.Rate, now time.Time) error {
	err := rl.RateLimiter.Take(ctx, key, r, now)
	if errors.Is(err, quota.ErrRateLimited) {
		big := r
		big.Calls = 1 << 30
		_ = rl.RateLimiter.Take(ctx, key, big, now) // count the refused call anyway
	}
	return err
}

// effectiveLimits reports the limits in force instead of the override.
type effectiveLimits struct{ *memquota.Ledger }

func (l effectiveLimits) Limits(ctx context.Context, user string) (quota.Limits, error) {
	u, err := l.Ledger.Usage(ctx, user, time.Now())
	return quota.Limits{Daily: quota.Limit(u.Daily.Limit), Weekly: quota.Limit(u.Weekly.Limit), Monthly: quota.Limit(u.Monthly.Limit)}, err
}

// renewIgnored answers a renewal without keeping it: the hold still goes at
// its TTL.
type renewIgnored struct{ *memquota.Ledger }

func (renewIgnored) Renew(_ context.Context, h quota.Hold, at time.Time) (quota.Hold, error) {
	h.ExpiresAt = at
	return h, nil
}

// renewClosed renews open holds and claims to renew closed ones.
type renewClosed struct{ *memquota.Ledger }

func (l renewClosed) Renew(ctx context.Context, h quota.Hold, at time.Time) (quota.Hold, error) {
	got, err := l.Ledger.Renew(ctx, h, at)
	if errors.Is(err, quota.ErrHoldNotFound) {
		h.ExpiresAt = at
		return h, nil
	}
	return got, err
}
