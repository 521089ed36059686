package quota

import "time"

// Period is a quota accounting period. Its value is the lowercase name used
// in JSON and in messages.
type Period string

// The three periods. Each is computed in a time.Location on the local
// calendar, so a day is 23 or 25 hours long on daylight-saving days.
const (
	// Daily periods start at local midnight.
	Daily Period = "daily"
	// Weekly periods start at local midnight on Monday (ISO 8601 weeks).
	Weekly Period = "weekly"
	// Monthly periods start at local midnight on the 1st.
	Monthly Period = "monthly"
)

// Periods returns the three periods, shortest first.
func Periods() []Period { return []Period{Daily, Weekly, Monthly} }

// Valid reports whether p is Daily, Weekly or Monthly.
func (p Period) Valid() bool { return p == Daily || p == Weekly || p == Monthly }

// String returns the period's name.
func (p Period) String() string { return string(p) }

// Start returns the first instant of the period that contains t, in loc
// (nil means UTC). The result is in loc. It is the key of a usage row: a
// Ledger keys usage by (user, period, Start), so a new period starts at zero
// without a reset job.
//
// Start uses the local calendar: a weekly period containing Sunday 3 January
// 2027 starts on Monday 28 December 2026. Where a daylight-saving transition
// skips local midnight (America/Havana, America/Santiago), the day starts at
// the transition; where midnight happens twice, at the first one.
//
// For an invalid Period, Start returns the zero Time.
func (p Period) Start(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	switch p {
	case Daily:
	case Weekly:
		back := (int(t.In(loc).Weekday()) + 6) % 7 // days since Monday
		y, m, d = civil(y, m, d-back)
	case Monthly:
		d = 1
	default:
		return time.Time{}
	}
	return midnight(y, m, d, loc)
}

// End returns the first instant after the period that contains t: the start
// of the next period, which is when usage resets. The result is in loc (nil
// means UTC). For an invalid Period, End returns the zero Time.
func (p Period) End(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	start := p.Start(t, loc)
	if start.IsZero() {
		return start
	}
	// The start's calendar date, not t's: a transition can put the start at
	// 01:00, still the same date.
	y, m, d := start.Date()
	switch p {
	case Daily:
		y, m, d = civil(y, m, d+1)
	case Weekly:
		y, m, d = civil(y, m, d+7)
	case Monthly:
		y, m, d = civil(y, m+1, 1)
	}
	return midnight(y, m, d, loc)
}

// civil normalizes a calendar date (day 0 is the last of the previous
// month, month 13 is January) without touching any time zone.
func civil(y int, m time.Month, d int) (int, time.Month, int) {
	return time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Date()
}

// midnight returns the first instant of the local date y-m-d in loc.
// time.Date leaves the choice open when midnight is skipped or repeated by a
// transition; this pins it to the first instant that reads as that date.
func midnight(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if ty, tm, td := t.Date(); ty != y || tm != m || td != d {
		// Midnight was skipped and Date answered in the previous day, in
		// the zone before the transition: the day starts where that zone ends.
		_, end := t.ZoneBounds()
		if !end.IsZero() {
			return end.In(loc)
		}
		return t
	}
	// Midnight may exist twice (a transition at 01:00 back to 00:00). If the
	// zone t is in began within this same date, try the earlier zone.
	zstart, _ := t.ZoneBounds()
	if zstart.IsZero() || !zstart.After(t.Add(-25*time.Hour)) {
		return t
	}
	before := zstart.Add(-time.Nanosecond).In(loc)
	_, offBefore := before.Zone()
	_, offAfter := t.Zone()
	if offBefore <= offAfter {
		return t // the transition skipped time; no second midnight
	}
	earlier := t.Add(time.Duration(offAfter-offBefore) * time.Second).In(loc)
	if earlier.Before(zstart) {
		if ey, em, ed := earlier.Date(); ey == y && em == m && ed == d && earlier.Hour() == 0 && earlier.Minute() == 0 && earlier.Second() == 0 {
			return earlier
		}
	}
	return t
}
