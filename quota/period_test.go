package quota_test

import (
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/parleyhq/parley/quota"
)

// The Ledger suite (quota/quotatest) pins periods through a ledger; these
// pin the helper itself, which SQL ledgers reuse.
func TestPeriodStartAndEnd(t *testing.T) {
	cases := []struct {
		zone       string
		p          quota.Period
		at         string
		start, end string
	}{
		{"UTC", quota.Daily, "2026-03-10T12:00:00Z", "2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z"},
		{"UTC", quota.Weekly, "2026-01-01T12:00:00Z", "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z"},
		{"UTC", quota.Weekly, "2026-01-05T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z"},
		{"UTC", quota.Monthly, "2026-12-31T23:59:59Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"UTC", quota.Monthly, "2028-02-29T00:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
		{"America/New_York", quota.Daily, "2026-03-08T12:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
		{"America/New_York", quota.Daily, "2026-11-01T12:00:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
		{"Europe/Berlin", quota.Weekly, "2026-03-29T12:00:00Z", "2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z"},
		{"Europe/Berlin", quota.Daily, "2026-10-25T12:00:00Z", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
		// Midnight skipped: the day starts at the transition.
		{"America/Havana", quota.Daily, "2026-03-08T12:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
		{"America/Havana", quota.Daily, "2026-03-07T12:00:00Z", "2026-03-07T05:00:00Z", "2026-03-08T05:00:00Z"},
		{"America/Santiago", quota.Weekly, "2026-09-06T12:00:00Z", "2026-08-31T04:00:00Z", "2026-09-07T03:00:00Z"},
		{"Asia/Beirut", quota.Daily, "2026-03-29T12:00:00Z", "2026-03-28T22:00:00Z", "2026-03-29T21:00:00Z"},
		// Midnight twice: the day starts at the first.
		{"America/Havana", quota.Monthly, "2026-11-01T05:30:00Z", "2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z"},
		// The hour repeated before midnight belongs to the earlier day.
		{"America/Santiago", quota.Daily, "2026-04-05T03:30:00Z", "2026-04-04T03:00:00Z", "2026-04-05T04:00:00Z"},
	}
	for _, c := range cases {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		at := mustTime(t, c.at)
		start, end := c.p.Start(at, loc), c.p.End(at, loc)
		if !start.Equal(mustTime(t, c.start)) || !end.Equal(mustTime(t, c.end)) {
			t.Errorf("%s %s at %s: [%s, %s), want [%s, %s)", c.zone, c.p, c.at,
				start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), c.start, c.end)
		}
		if start.Location() != loc || end.Location() != loc {
			t.Errorf("%s %s: results in %v and %v, want %v", c.zone, c.p, start.Location(), end.Location(), loc)
		}
	}
}

// Every instant of two years in zones with transitions lies in exactly one
// period, and consecutive periods tile time with no gap or overlap.
func TestPeriodsTileTime(t *testing.T) {
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "America/Havana", "America/Santiago", "Asia/Beirut", "Australia/Lord_Howe"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range quota.Periods() {
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			prevEnd := p.Start(at, loc)
			for at.Before(time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)) {
				start, end := p.Start(at, loc), p.End(at, loc)
				if !start.Equal(prevEnd) || !end.After(at) || at.Before(start) {
					t.Fatalf("%s %s at %s: [%s, %s) does not follow %s", zone, p, at, start, end, prevEnd)
				}
				if h, m, s := start.Clock(); p != quota.Daily && (h > 1 || m != 0 || s != 0) {
					t.Fatalf("%s %s starts at %s", zone, p, start)
				}
				if d := end.Sub(start); p == quota.Daily && (d < 22*time.Hour || d > 26*time.Hour) {
					t.Fatalf("%s day [%s, %s) lasts %v", zone, start, end, d)
				}
				prevEnd = end
				at = end
			}
		}
	}
}

func TestInvalidPeriodIsZero(t *testing.T) {
	now := time.Now()
	if p := quota.Period("hourly"); p.Valid() || !p.Start(now, nil).IsZero() || !p.End(now, nil).IsZero() {
		t.Errorf("an invalid period is valid or has a window")
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
