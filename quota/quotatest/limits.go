package quotatest

import (
	"strconv"
	"testing"

	"github.com/parleyhq/parley/quota"
)

var limitCases = []ledgerCase{
	{"NoLimitsIsUnlimitedButCounted", testNoLimitsIsUnlimited},
	{"DefaultsApplyToEveryUser", testDefaultsApply},
	{"AdmittedWhileAllowanceIsLeft", testAdmittedWhileAllowanceLeft},
	{"ExceededErrorNamesPeriodAndReset", testExceededError},
	{"ExceededNamesThePeriodThatResetsLast", testExceededPeriodChoice},
	{"RefusedReserveHoldsNothing", testRefusedHoldsNothing},
	{"OverrideReplacesDefault", testOverrideReplacesDefault},
	{"OverrideMinusOneIsUnlimited", testOverrideUnlimited},
	{"OverrideZeroRefusesAnyTokens", testOverrideZero},
	{"UnsetOverrideFieldsFallBackToDefaults", testOverrideFallsBack},
	{"OverridesArePerUser", testOverridesPerUser},
	{"LimitsAreCopiedOnSet", testLimitsCopied},
	{"LimitLoweredBelowUsage", testLimitLoweredBelowUsage},
	{"UnknownUserHasZeroUsageAndDefaults", testUnknownUser},
	{"LimitsReportsTheOverrideNotTheEffectiveLimits", testLimitsReportsOverride},
}

func testLimitsReportsOverride(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100), Weekly: lim(500)}})
	get := func(user string) quota.Limits {
		t.Helper()
		got, err := l.l.Limits(t.Context(), user)
		if err != nil {
			t.Fatalf("Limits(%q): %v", user, err)
		}
		return got
	}
	show := func(v *int64) string {
		if v == nil {
			return "unset"
		}
		return strconv.FormatInt(*v, 10)
	}
	want := func(user string, daily, weekly, monthly string) {
		t.Helper()
		got := get(user)
		if d, w, m := show(got.Daily), show(got.Weekly), show(got.Monthly); d != daily || w != weekly || m != monthly {
			t.Errorf("Limits(%q) = {%s %s %s}, want {%s %s %s}", user, d, w, m, daily, weekly, monthly)
		}
	}
	want("nobody", "unset", "unset", "unset")
	l.setLimits("u", quota.Limits{Weekly: lim(-1), Monthly: lim(0)})
	want("u", "unset", "-1", "0")
	got := get("u")
	*got.Weekly = 12345 // the result is the caller's
	want("u", "unset", "-1", "0")
	l.setLimits("u", quota.Limits{})
	want("u", "unset", "unset", "unset")
	_, err := l.l.Limits(t.Context(), "")
	wantErr(t, err, quota.ErrInvalid, "Limits of an empty user id")
}

func testNoLimitsIsUnlimited(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 1<<40, now)
	wantNums(t, l.usage("u", now), nums{0, 1 << 40, -1}, nums{0, 1 << 40, -1}, nums{0, 1 << 40, -1})
	l.settle(h, 1<<41)
	u := l.usage("u", now)
	wantNums(t, u, nums{1 << 41, 0, -1}, nums{1 << 41, 0, -1}, nums{1 << 41, 0, -1})
	for _, pu := range u.Periods() {
		if !pu.Unlimited() || pu.Remaining() != -1 {
			t.Errorf("%s: Unlimited() = %v, Remaining() = %d; want true, -1", pu.Period, pu.Unlimited(), pu.Remaining())
		}
	}
}

func testDefaultsApply(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100), Weekly: lim(500)}})
	now := ts("2026-05-05T10:00:00Z")
	for _, user := range []string{"a", "b"} {
		wantNums(t, l.usage(user, now), nums{0, 0, 100}, nums{0, 0, 500}, nums{0, 0, -1})
	}
}

// testAdmittedWhileAllowanceLeft pins the boundary: a positive estimate is
// admitted while used + held < limit, with a hold of at most what is left,
// and refused at used + held == limit.
func testAdmittedWhileAllowanceLeft(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 100, now) // the whole estimate fits exactly
	wantHold(t, h, 100, 100)
	l.release(h)
	h = l.reserve("u", 101, now) // one more is capped, not refused
	wantHold(t, h, 101, 100)
	l.release(h)
	l.charge("u", 40, now)
	wantHold(t, l.reserve("u", 59, now), 59, 59)
	wantHold(t, l.reserve("u", 2, now), 2, 1) // used + held == 99: one token left
	wantNums(t, l.usage("u", now), nums{40, 60, 100}, nums{40, 60, -1}, nums{40, 60, -1})
	l.refused("u", 1, now)     // used + held == limit
	h = l.reserve("u", 0, now) // a zero estimate is admitted at the limit
	wantHold(t, h, 0, 0)
	l.release(h)
}

func testExceededError(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}, Location: zone(t, "Europe/Berlin")})
	now := ts("2026-05-05T10:00:00Z") // Tue 12:00 CEST
	l.charge("u", 70, now)
	l.reserve("u", 30, now)
	ee := l.refused("u", 11, now)
	want := quota.ExceededError{UserID: "u", Period: quota.Daily, Limit: 100, Used: 70, Held: 30, Estimate: 11}
	got := *ee
	got.ResetsAt = want.ResetsAt
	if got != want {
		t.Errorf("ExceededError = %+v, want %+v", got, want)
	}
	if w := ts("2026-05-05T22:00:00Z"); !ee.ResetsAt.Equal(w) { // Wed 00:00 CEST
		t.Errorf("ExceededError.ResetsAt = %s, want %s", fmtTime(ee.ResetsAt), fmtTime(w))
	}
	if ee.Error() == "" {
		t.Error("ExceededError.Error() is empty")
	}
}

func testExceededPeriodChoice(t *testing.T, open func(quota.Policy) *ledger) {
	cases := []struct {
		name   string
		limits quota.Limits
		at     string
		want   quota.Period
		resets string
	}{
		{"OnlyDaily", quota.Limits{Daily: lim(100), Weekly: lim(1000), Monthly: lim(1000)},
			"2026-03-10T12:00:00Z", quota.Daily, "2026-03-11T00:00:00Z"},
		{"MonthOverDay", quota.Limits{Daily: lim(100), Monthly: lim(100)},
			"2026-03-10T12:00:00Z", quota.Monthly, "2026-04-01T00:00:00Z"},
		// Friday 30 January: the month resets on Sunday 1 February, the
		// week only on Monday 2 February.
		{"WeekOutlastsMonth", quota.Limits{Weekly: lim(100), Monthly: lim(100)},
			"2026-01-30T12:00:00Z", quota.Weekly, "2026-02-02T00:00:00Z"},
		// Sunday 31 May: week and month both reset on Monday 1 June; the
		// longer period is named.
		{"TieGoesToTheLongerPeriod", quota.Limits{Daily: lim(100), Weekly: lim(100), Monthly: lim(100)},
			"2026-05-31T12:00:00Z", quota.Monthly, "2026-06-01T00:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := open(quota.Policy{Defaults: c.limits})
			at := ts(c.at)
			l.charge("u", 100, at)
			ee := l.refused("u", 1, at)
			if ee.Period != c.want || !ee.ResetsAt.Equal(ts(c.resets)) {
				t.Errorf("ExceededError names %s resetting at %s, want %s at %s",
					ee.Period, fmtTime(ee.ResetsAt), c.want, c.resets)
			}
		})
	}
}

func testRefusedHoldsNothing(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Weekly: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 30, now)
	l.charge("u", 70, now)
	for range 5 {
		l.refused("u", 71, now)
	}
	wantNums(t, l.usage("u", now), nums{70, 30, -1}, nums{70, 30, 100}, nums{70, 30, -1})
	l.release(h)
	wantHold(t, l.reserve("u", 71, now), 71, 30) // after the refusals and a release: the 30 left
}

func testOverrideReplacesDefault(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100), Weekly: lim(200), Monthly: lim(300)}})
	now := ts("2026-05-05T10:00:00Z")
	l.setLimits("u", quota.Limits{Daily: lim(1000), Weekly: lim(2000), Monthly: lim(3000)})
	wantNums(t, l.usage("u", now), nums{0, 0, 1000}, nums{0, 0, 2000}, nums{0, 0, 3000})
	l.reserve("u", 1000, now)
	l.refused("u", 1, now)
}

func testOverrideUnlimited(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100), Weekly: lim(200), Monthly: lim(300)}})
	now := ts("2026-05-05T10:00:00Z")
	l.setLimits("u", quota.Limits{Daily: lim(quota.Unlimited), Weekly: lim(-1), Monthly: lim(-1)})
	l.charge("u", 10_000, now)
	l.reserve("u", 10_000, now)
	wantNums(t, l.usage("u", now), nums{10_000, 10_000, -1}, nums{10_000, 10_000, -1}, nums{10_000, 10_000, -1})
}

func testOverrideZero(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	l.setLimits("u", quota.Limits{Monthly: lim(0)})
	ee := l.refused("u", 1, now)
	if ee.Period != quota.Monthly || ee.Limit != 0 || ee.Used != 0 || ee.Held != 0 {
		t.Errorf("ExceededError = %+v, want monthly with limit 0, used 0, held 0", *ee)
	}
}

func testOverrideFallsBack(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100), Weekly: lim(500), Monthly: lim(1000)}})
	now := ts("2026-05-05T10:00:00Z")
	l.setLimits("u", quota.Limits{Weekly: lim(50)})
	wantNums(t, l.usage("u", now), nums{0, 0, 100}, nums{0, 0, 50}, nums{0, 0, 1000})
	// SetLimits replaces the whole override: the weekly 50 is gone.
	l.setLimits("u", quota.Limits{Daily: lim(7)})
	wantNums(t, l.usage("u", now), nums{0, 0, 7}, nums{0, 0, 500}, nums{0, 0, 1000})
	h := l.reserve("u", 8, now)
	wantHold(t, h, 8, 7) // under a daily override of 7
	l.release(h)
	l.setLimits("u", quota.Limits{})
	wantNums(t, l.usage("u", now), nums{0, 0, 100}, nums{0, 0, 500}, nums{0, 0, 1000})
	wantHold(t, l.reserve("u", 101, now), 101, 100) // the override is removed: the default 100
}

func testOverridesPerUser(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	l.setLimits("a", quota.Limits{Daily: lim(5)})
	l.charge("a", 5, now)
	wantNums(t, l.usage("b", now), nums{0, 0, 100}, nums{0, 0, -1}, nums{0, 0, -1})
	l.reserve("b", 100, now)
	l.refused("a", 1, now)
}

func testLimitsCopied(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	daily := int64(10)
	l.setLimits("u", quota.Limits{Daily: &daily})
	daily = 1 << 40
	wantHold(t, l.reserve("u", 11, now), 11, 10) // the caller's later change to daily is not seen
	u := l.usage("u", now)
	if u.Daily.Limit != 10 {
		t.Errorf("daily limit = %d after the caller changed its variable, want 10", u.Daily.Limit)
	}
}

func testLimitLoweredBelowUsage(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	now := ts("2026-05-05T10:00:00Z")
	h := l.reserve("u", 10, now)
	l.charge("u", 80, now)
	l.setLimits("u", quota.Limits{Daily: lim(50)})
	u := l.usage("u", now)
	wantNums(t, u, nums{80, 10, 50}, nums{80, 10, -1}, nums{80, 10, -1})
	if r := u.Daily.Remaining(); r != 0 {
		t.Errorf("Remaining() = %d, want 0", r)
	}
	ee := l.refused("u", 1, now)
	if ee.Used != 80 || ee.Held != 10 || ee.Limit != 50 {
		t.Errorf("ExceededError = %+v, want used 80, held 10, limit 50", *ee)
	}
	l.settle(h, 10) // an open hold still settles
	wantNums(t, l.usage("u", now), nums{90, 0, 50}, nums{90, 0, -1}, nums{90, 0, -1})
}

func testUnknownUser(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Monthly: lim(1000)}})
	now := ts("2026-05-05T10:00:00Z")
	u := l.usage("nobody", now)
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{0, 0, 1000})
	wantWindow(t, u.Daily, "2026-05-05T00:00:00Z", "2026-05-06T00:00:00Z")
}
