package quotatest

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

// Reserve admits a positive estimate while every limited period has
// used + held < limit, and holds the estimate capped at the smallest room
// left; a zero estimate is always admitted.
var capCases = []ledgerCase{
	{"EstimateAboveTheRoomLeftHoldsTheRest", testEstimateAboveRoomHoldsRest},
	{"FullAllowanceRefusesUntilAHoldSettlesForLess", testFullAllowanceRefuses},
	{"ZeroLimitRefusesEveryPositiveEstimate", testZeroLimitRefuses},
	{"ZeroEstimateIsAlwaysAdmitted", testZeroEstimateAdmitted},
	{"HoldIsCappedAtTheTightestPeriod", testCappedAtTightestPeriod},
	{"SettleReleaseAndSweepTakeOutTheCappedHold", testCloseTakesOutCappedHold},
}

// wantHold checks the tokens a hold says it holds.
func wantHold(t *testing.T, h quota.Hold, est, want int64) {
	t.Helper()
	if h.Estimate != want {
		t.Errorf("Reserve(%d) returned a hold of %d, want %d", est, h.Estimate, want)
	}
}

// wantExceeded checks the refusal's period and numbers; Estimate is the
// refused request's.
func wantExceeded(t *testing.T, ee *quota.ExceededError, per quota.Period, used, held, limit, est int64, resets string) {
	t.Helper()
	got := *ee
	got.ResetsAt = time.Time{}
	want := quota.ExceededError{UserID: ee.UserID, Period: per, Limit: limit, Used: used, Held: held, Estimate: est}
	if got != want {
		t.Errorf("ExceededError = %+v, want %+v", got, want)
	}
	if !ee.ResetsAt.Equal(ts(resets)) {
		t.Errorf("ExceededError.ResetsAt = %s, want %s", fmtTime(ee.ResetsAt), resets)
	}
}

// testEstimateAboveRoomHoldsRest: the case that refused a user with 300
// tokens a day at used 0, because a turn's estimate was 1,500.
func testEstimateAboveRoomHoldsRest(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(300)}})
	now := ts("2026-05-05T10:00:00Z")
	wantHold(t, l.reserve("u", 1500, now), 1500, 300)
	wantNums(t, l.usage("u", now), nums{0, 300, 300}, nums{0, 300, -1}, nums{0, 300, -1})
}

// testFullAllowanceRefuses: while the first turn holds the rest, a second
// is refused with numbers that say so (used 0, held 300); once the first
// settles for less, the second is admitted with what is left; once usage
// reaches the limit, the refusal says it is used up.
func testFullAllowanceRefuses(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(300)}})
	now := ts("2026-05-05T10:00:00Z")
	first := l.reserve("u", 1500, now)
	wantHold(t, first, 1500, 300)
	ee := l.refused("u", 1500, now)
	wantExceeded(t, ee, quota.Daily, 0, 300, 300, 1500, "2026-05-06T00:00:00Z")
	if ee.UserID != "u" {
		t.Errorf("ExceededError.UserID = %q, want u", ee.UserID)
	}
	wantNums(t, l.usage("u", now), nums{0, 300, 300}, nums{0, 300, -1}, nums{0, 300, -1})

	l.settle(first, 120)
	second := l.reserve("u", 1500, now)
	wantHold(t, second, 1500, 180)
	wantNums(t, l.usage("u", now), nums{120, 180, 300}, nums{120, 180, -1}, nums{120, 180, -1})
	wantExceeded(t, l.refused("u", 1, now), quota.Daily, 120, 180, 300, 1, "2026-05-06T00:00:00Z")

	l.settle(second, 180)
	wantExceeded(t, l.refused("u", 1500, now), quota.Daily, 300, 0, 300, 1500, "2026-05-06T00:00:00Z")
}

func testZeroLimitRefuses(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(0)}})
	now := ts("2026-05-05T10:00:00Z")
	for _, est := range []int64{1, 1500, 1 << 40} {
		wantExceeded(t, l.refused("u", est, now), quota.Daily, 0, 0, 0, est, "2026-05-06T00:00:00Z")
	}
	wantNums(t, l.usage("u", now), nums{0, 0, 0}, nums{0, 0, -1}, nums{0, 0, -1})
}

// testZeroEstimateAdmitted: a zero estimate holds nothing, so it is admitted
// at, over and under a zero limit, and its Settle charges what was used: the
// way to count tokens a turn spent after its hold was swept.
func testZeroEstimateAdmitted(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	open100 := l.reserve("u", 100, now) // at the limit, all of it held
	h := l.reserve("u", 0, now)
	wantHold(t, h, 0, 0)
	l.settle(h, 30) // over the limit now: used 30 + held 100
	wantNums(t, l.usage("u", now), nums{30, 100, 100}, nums{30, 100, -1}, nums{30, 100, -1})
	h = l.reserve("u", 0, now)
	wantHold(t, h, 0, 0)
	l.settle(h, 20)
	l.settle(open100, 100)
	wantNums(t, l.usage("u", now), nums{150, 0, 100}, nums{150, 0, -1}, nums{150, 0, -1})
	l.refused("u", 1, now)

	l.setLimits("z", quota.Limits{Weekly: lim(0)})
	h = l.reserve("z", 0, now)
	wantHold(t, h, 0, 0)
	l.settle(h, 7)
	wantNums(t, l.usage("z", now), nums{7, 0, 100}, nums{7, 0, 0}, nums{7, 0, -1})
}

// testCappedAtTightestPeriod: the hold is capped by the period with the
// least room, which need not be the shortest, and a refusal then names it.
func testCappedAtTightestPeriod(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(300), Weekly: lim(1000), Monthly: lim(5000)}})
	monday, tuesday := ts("2026-05-04T10:00:00Z"), ts("2026-05-05T10:00:00Z")
	l.charge("u", 900, monday)
	// Tuesday: 300 left today, 100 this week, 4100 this month.
	h := l.reserve("u", 1500, tuesday)
	wantHold(t, h, 1500, 100)
	wantNums(t, l.usage("u", tuesday), nums{0, 100, 300}, nums{900, 100, 1000}, nums{900, 100, 5000})
	wantExceeded(t, l.refused("u", 1, tuesday), quota.Weekly, 900, 100, 1000, 1, "2026-05-11T00:00:00Z")
	l.release(h)

	// Another user, nothing used: the day is the tightest.
	wantHold(t, l.reserve("v", 1500, tuesday), 1500, 300)
	// And a third whose month is nearly spent.
	l.setLimits("w", quota.Limits{Monthly: lim(950)})
	l.charge("w", 900, monday)
	wantHold(t, l.reserve("w", 1500, tuesday), 1500, 50)
	wantNums(t, l.usage("w", tuesday), nums{0, 50, 300}, nums{900, 50, 1000}, nums{900, 50, 950})
	// The month is full now; the week still has room, so the month is named.
	wantExceeded(t, l.refused("w", 1, tuesday), quota.Monthly, 900, 50, 950, 1, "2026-06-01T00:00:00Z")
}

// testCloseTakesOutCappedHold: Settle, Release and Sweep take out of held
// what was held (the capped amount), from the ledger's own record, not the
// estimate asked for nor the caller's copy.
func testCloseTakesOutCappedHold(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(300)}, HoldTTL: time.Minute})
	now := ts("2026-05-05T10:00:00Z")
	l.release(l.reserve("u", 1500, now))
	wantNums(t, l.usage("u", now), nums{0, 0, 300}, nums{0, 0, -1}, nums{0, 0, -1})

	h := l.reserve("u", 1500, now)
	wantHold(t, h, 1500, 300)
	h.Estimate = 1500 // the caller's copy is informational
	l.settle(h, 200)
	wantNums(t, l.usage("u", now), nums{200, 0, 300}, nums{200, 0, -1}, nums{200, 0, -1})

	wantHold(t, l.reserve("u", 1500, now), 1500, 100)
	if n := l.sweep(now.Add(time.Minute)); n != 1 {
		t.Errorf("Sweep voided %d holds, want 1", n)
	}
	later := now.Add(2 * time.Minute)
	wantNums(t, l.usage("u", later), nums{200, 0, 300}, nums{200, 0, -1}, nums{200, 0, -1})
	wantHold(t, l.reserve("u", 1500, later), 1500, 100)
}
