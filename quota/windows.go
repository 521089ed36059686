package quota

import (
	"sync/atomic"
	"time"
)

// Windows are the daily, weekly and monthly periods (in that order) that
// contain one instant: each window's Start and End (its reset).
type Windows [3]struct{ Start, End time.Time }

// PeriodOrder is the period of each index of Windows.
var PeriodOrder = [3]Period{Daily, Weekly, Monthly}

// WindowsAt returns the windows containing t in loc.
func WindowsAt(t time.Time, loc *time.Location) *Windows {
	w := new(Windows)
	for i, p := range PeriodOrder {
		w[i].Start, w[i].End = p.Start(t, loc), p.End(t, loc)
	}
	return w
}

// Contains reports whether t falls in all three windows.
func (w *Windows) Contains(t time.Time) bool {
	for i := range w {
		if t.Before(w[i].Start) || !t.Before(w[i].End) {
			return false
		}
	}
	return true
}

// WindowCache remembers the last Windows computed, since calendar
// arithmetic in a time zone costs more than a ledger's bookkeeping. The
// zero value is ready; it is safe for concurrent use.
type WindowCache struct{ last atomic.Pointer[Windows] }

// At returns the windows containing t in loc, which must be the same on
// every call.
func (c *WindowCache) At(t time.Time, loc *time.Location) *Windows {
	if w := c.last.Load(); w != nil && w.Contains(t) {
		return w
	}
	w := WindowsAt(t, loc)
	c.last.Store(w)
	return w
}
