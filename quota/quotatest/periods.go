package quotatest

import (
	"testing"

	"github.com/parleyhq/parley/quota"
)

// Every expected instant below is written out in UTC, worked out by hand
// from the zone's rules, with the local reading in a comment.
var periodCases = []ledgerCase{
	{"NilLocationIsUTC", testNilLocationIsUTC},
	{"DailyStartsAtLocalMidnight", testDailyStartsAtLocalMidnight},
	{"NewYorkSpringForwardDayHas23Hours", testNewYorkSpringForward},
	{"NewYorkFallBackDayHas25Hours", testNewYorkFallBack},
	{"BerlinSpringForwardDay", testBerlinSpringForward},
	{"BerlinFallBackDay", testBerlinFallBack},
	{"SkippedMidnightStartsTheDayAtTheTransition", testSkippedMidnight},
	{"RepeatedMidnightStartsTheDayAtTheFirst", testRepeatedMidnight},
	{"WeeksStartOnMonday", testWeeksStartOnMonday},
	{"WeekSpansYearBoundary", testWeekSpansYearBoundary},
	{"MonthEnds", testMonthEnds},
	{"LeapDay", testLeapDay},
	{"MonthInAZone", testMonthInAZone},
	{"HoldIsChargedToThePeriodsItWasReservedIn", testHoldChargedToReservedPeriods},
	{"OpenHoldDoesNotCarryIntoANewPeriod", testOpenHoldDoesNotCarry},
}

func testNilLocationIsUTC(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	l.charge("u", 5, ts("2026-03-10T23:59:59Z"))
	u := l.usage("u", ts("2026-03-10T23:59:59Z"))
	wantWindow(t, u.Daily, "2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z")
	wantWindow(t, u.Weekly, "2026-03-09T00:00:00Z", "2026-03-16T00:00:00Z") // Tuesday's week
	wantWindow(t, u.Monthly, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
	wantNums(t, u, nums{5, 0, -1}, nums{5, 0, -1}, nums{5, 0, -1})

	u = l.usage("u", ts("2026-03-11T00:00:00Z"))
	wantWindow(t, u.Daily, "2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{5, 0, -1}, nums{5, 0, -1})
}

func testDailyStartsAtLocalMidnight(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Location: zone(t, "Asia/Tokyo")}) // UTC+9, no DST
	at := ts("2026-03-10T14:59:59Z")                         // Tue 10 Mar 23:59:59 JST
	l.charge("u", 10, at)
	u := l.usage("u", at)
	wantWindow(t, u.Daily, "2026-03-09T15:00:00Z", "2026-03-10T15:00:00Z")
	wantWindow(t, u.Weekly, "2026-03-08T15:00:00Z", "2026-03-15T15:00:00Z")
	wantWindow(t, u.Monthly, "2026-02-28T15:00:00Z", "2026-03-31T15:00:00Z")
	wantNums(t, u, nums{10, 0, -1}, nums{10, 0, -1}, nums{10, 0, -1})

	u = l.usage("u", ts("2026-03-10T15:00:00Z")) // Wed 00:00 JST: a new day, same week
	wantWindow(t, u.Daily, "2026-03-10T15:00:00Z", "2026-03-11T15:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{10, 0, -1}, nums{10, 0, -1})
}

func testNewYorkSpringForward(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Location: zone(t, "America/New_York")})
	// Sat 7 Mar 23:59:59 EST: counts in Saturday.
	l.charge("u", 7, ts("2026-03-08T04:59:59Z"))
	// Sun 8 Mar 00:00 EST; clocks jump 02:00 EST -> 03:00 EDT; the day ends
	// at Mon 00:00 EDT, 23 hours later.
	u := l.usage("u", ts("2026-03-08T05:00:00Z"))
	wantWindow(t, u.Daily, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z")
	wantWindow(t, u.Weekly, "2026-03-02T05:00:00Z", "2026-03-09T04:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{7, 0, -1}, nums{7, 0, -1})

	l.charge("u", 3, ts("2026-03-09T03:59:59Z")) // Sun 23:59:59 EDT: still Sunday
	u = l.usage("u", ts("2026-03-09T03:59:59Z"))
	wantNums(t, u, nums{3, 0, -1}, nums{10, 0, -1}, nums{10, 0, -1})

	u = l.usage("u", ts("2026-03-09T04:00:00Z")) // Mon 00:00 EDT: new day and week
	wantWindow(t, u.Daily, "2026-03-09T04:00:00Z", "2026-03-10T04:00:00Z")
	wantWindow(t, u.Weekly, "2026-03-09T04:00:00Z", "2026-03-16T04:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{10, 0, -1})
}

func testNewYorkFallBack(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Location: zone(t, "America/New_York")})
	// Sun 1 Nov 00:00 EDT; clocks fall back 02:00 EDT -> 01:00 EST; the
	// day ends at Mon 00:00 EST, 25 hours later.
	at := ts("2026-11-02T04:30:00Z") // Sun 23:30 EST: still Sunday
	l.charge("u", 4, at)
	u := l.usage("u", at)
	wantWindow(t, u.Daily, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z")
	wantWindow(t, u.Monthly, "2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z")
	wantNums(t, u, nums{4, 0, -1}, nums{4, 0, -1}, nums{4, 0, -1})

	u = l.usage("u", ts("2026-11-02T05:00:00Z")) // Mon 00:00 EST
	wantWindow(t, u.Daily, "2026-11-02T05:00:00Z", "2026-11-03T05:00:00Z")
	wantWindow(t, u.Weekly, "2026-11-02T05:00:00Z", "2026-11-09T05:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{4, 0, -1})
}

func testBerlinSpringForward(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Location: zone(t, "Europe/Berlin")})
	// Sun 29 Mar: 00:00 CET, clocks jump 02:00 CET -> 03:00 CEST.
	at := ts("2026-03-29T21:59:59Z") // Sun 23:59:59 CEST
	l.charge("u", 6, at)
	u := l.usage("u", at)
	wantWindow(t, u.Daily, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")
	wantWindow(t, u.Weekly, "2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z")
	wantWindow(t, u.Monthly, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z")
	wantNums(t, u, nums{6, 0, -1}, nums{6, 0, -1}, nums{6, 0, -1})

	u = l.usage("u", ts("2026-03-29T22:00:00Z")) // Mon 30 Mar 00:00 CEST
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{6, 0, -1})
}

func testBerlinFallBack(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Location: zone(t, "Europe/Berlin")})
	// Sun 25 Oct: 00:00 CEST, clocks fall back 03:00 CEST -> 02:00 CET.
	at := ts("2026-10-25T22:30:00Z") // Sun 23:30 CET: 24.5 hours after the day began
	l.charge("u", 6, at)
	u := l.usage("u", at)
	wantWindow(t, u.Daily, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")
	wantWindow(t, u.Weekly, "2026-10-18T22:00:00Z", "2026-10-25T23:00:00Z")
	wantWindow(t, u.Monthly, "2026-09-30T22:00:00Z", "2026-10-31T23:00:00Z")
	wantNums(t, u, nums{6, 0, -1}, nums{6, 0, -1}, nums{6, 0, -1})

	u = l.usage("u", ts("2026-10-25T23:00:00Z")) // Mon 26 Oct 00:00 CET
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{6, 0, -1})
}

func testSkippedMidnight(t *testing.T, open func(quota.Policy) *ledger) {
	t.Run("Havana", func(t *testing.T) {
		// Cuba springs forward at Sun 8 Mar 00:00 CST -> 01:00 CDT.
		l := open(quota.Policy{Location: zone(t, "America/Havana")})
		l.charge("u", 2, ts("2026-03-08T04:59:59Z")) // Sat 23:59:59 CST
		u := l.usage("u", ts("2026-03-08T04:59:59Z"))
		wantWindow(t, u.Daily, "2026-03-07T05:00:00Z", "2026-03-08T05:00:00Z")
		u = l.usage("u", ts("2026-03-08T05:00:00Z")) // Sun 01:00 CDT, the first instant of Sunday
		wantWindow(t, u.Daily, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z")
		wantNums(t, u, nums{0, 0, -1}, nums{2, 0, -1}, nums{2, 0, -1})
	})
	t.Run("Santiago", func(t *testing.T) {
		// Chile springs forward at Sun 6 Sep 00:00 -04 -> 01:00 -03.
		l := open(quota.Policy{Location: zone(t, "America/Santiago")})
		l.charge("u", 2, ts("2026-09-06T03:59:59Z")) // Sat 23:59:59 -04
		u := l.usage("u", ts("2026-09-06T03:59:59Z"))
		wantWindow(t, u.Daily, "2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z")
		u = l.usage("u", ts("2026-09-06T04:00:00Z")) // Sun 01:00 -03
		wantWindow(t, u.Daily, "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z")
		wantWindow(t, u.Weekly, "2026-08-31T04:00:00Z", "2026-09-07T03:00:00Z")
		wantWindow(t, u.Monthly, "2026-09-01T04:00:00Z", "2026-10-01T03:00:00Z")
		wantNums(t, u, nums{0, 0, -1}, nums{2, 0, -1}, nums{2, 0, -1})
	})
}

func testRepeatedMidnight(t *testing.T, open func(quota.Policy) *ledger) {
	// Cuba falls back at Sun 1 Nov 01:00 CDT -> 00:00 CST: Sunday's
	// midnight happens twice, at 04:00Z and at 05:00Z.
	l := open(quota.Policy{Location: zone(t, "America/Havana")})
	l.charge("u", 9, ts("2026-11-01T03:59:59Z")) // Sat 31 Oct 23:59:59 CDT
	u := l.usage("u", ts("2026-11-01T03:59:59Z"))
	wantWindow(t, u.Daily, "2026-10-31T04:00:00Z", "2026-11-01T04:00:00Z")
	wantWindow(t, u.Monthly, "2026-10-01T04:00:00Z", "2026-11-01T04:00:00Z")

	for _, at := range []string{"2026-11-01T04:30:00Z", "2026-11-01T05:30:00Z"} { // 00:30 CDT, 00:30 CST
		u = l.usage("u", ts(at))
		wantWindow(t, u.Daily, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z")
		wantWindow(t, u.Monthly, "2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z")
		wantNums(t, u, nums{0, 0, -1}, nums{9, 0, -1}, nums{0, 0, -1})
	}
}

func testWeeksStartOnMonday(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	l.charge("u", 3, ts("2026-01-04T23:59:59Z")) // Sunday: the last day of its week
	u := l.usage("u", ts("2026-01-04T23:59:59Z"))
	wantWindow(t, u.Weekly, "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z")
	u = l.usage("u", ts("2026-01-05T00:00:00Z")) // Monday
	wantWindow(t, u.Weekly, "2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{3, 0, -1})
}

func testWeekSpansYearBoundary(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	l.charge("u", 100, ts("2025-12-30T10:00:00Z")) // Tuesday
	l.charge("u", 50, ts("2026-01-02T10:00:00Z"))  // Friday of the same ISO week
	u := l.usage("u", ts("2026-01-02T10:00:00Z"))
	wantWindow(t, u.Daily, "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z")
	wantWindow(t, u.Weekly, "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z")
	wantWindow(t, u.Monthly, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")
	wantNums(t, u, nums{50, 0, -1}, nums{150, 0, -1}, nums{50, 0, -1})
}

func testMonthEnds(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	l.charge("u", 10, ts("2026-01-31T23:59:59Z"))
	u := l.usage("u", ts("2026-01-31T23:59:59Z"))
	wantWindow(t, u.Monthly, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")
	wantNums(t, u, nums{10, 0, -1}, nums{10, 0, -1}, nums{10, 0, -1})

	l.charge("u", 20, ts("2026-02-01T00:00:00Z"))
	u = l.usage("u", ts("2026-02-28T23:59:59Z"))
	wantWindow(t, u.Daily, "2026-02-28T00:00:00Z", "2026-03-01T00:00:00Z")
	wantWindow(t, u.Monthly, "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{20, 0, -1})

	u = l.usage("u", ts("2026-03-01T00:00:00Z"))
	wantWindow(t, u.Monthly, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
	wantNums(t, u, nums{0, 0, -1}, nums{0, 0, -1}, nums{0, 0, -1})
}

func testLeapDay(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	l.charge("u", 1, ts("2028-02-29T12:00:00Z"))
	u := l.usage("u", ts("2028-02-29T12:00:00Z")) // a Tuesday
	wantWindow(t, u.Daily, "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z")
	wantWindow(t, u.Weekly, "2028-02-28T00:00:00Z", "2028-03-06T00:00:00Z")
	wantWindow(t, u.Monthly, "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z")
	wantNums(t, u, nums{1, 0, -1}, nums{1, 0, -1}, nums{1, 0, -1})
	u = l.usage("u", ts("2028-03-01T00:00:00Z"))
	wantNums(t, u, nums{0, 0, -1}, nums{1, 0, -1}, nums{0, 0, -1})
}

func testMonthInAZone(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Location: zone(t, "America/New_York")})
	at := ts("2026-04-01T03:59:59Z") // Tue 31 Mar 23:59:59 EDT
	l.charge("u", 8, at)
	u := l.usage("u", at)
	wantWindow(t, u.Monthly, "2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z") // EST start, EDT end
	u = l.usage("u", ts("2026-04-01T04:00:00Z"))
	wantNums(t, u, nums{0, 0, -1}, nums{8, 0, -1}, nums{0, 0, -1})
}

func testHoldChargedToReservedPeriods(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	h := l.reserve("u", 10, ts("2026-03-15T23:59:00Z")) // Sunday, the last minute of a week
	after := ts("2026-03-16T00:01:00Z")                 // Monday
	wantNums(t, l.usage("u", after), nums{0, 0, -1}, nums{0, 0, -1}, nums{0, 10, -1})
	l.settle(h, 8)
	wantNums(t, l.usage("u", after), nums{0, 0, -1}, nums{0, 0, -1}, nums{8, 0, -1})
}

func testOpenHoldDoesNotCarry(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(100)}})
	l.reserve("u", 80, ts("2026-03-10T23:59:00Z"))
	after := ts("2026-03-11T00:01:00Z")
	wantHold(t, l.reserve("u", 80, after), 80, 80) // yesterday's hold does not count today
	wantNums(t, l.usage("u", after), nums{0, 80, 100}, nums{0, 160, -1}, nums{0, 160, -1})
}
