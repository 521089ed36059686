package quota_test

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
)

func TestWindowCacheRecomputesOnlyWhenAPeriodEnds(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tz database")
	}
	var c quota.WindowCache
	sun := time.Date(2026, 11, 22, 23, 30, 0, 0, berlin) // Sunday night
	w1 := c.At(sun, berlin)
	if w2 := c.At(sun.Add(10*time.Minute), berlin); w2 != w1 {
		t.Error("a time inside every window recomputed them")
	}
	mon := c.At(sun.Add(time.Hour), berlin) // Monday: new day and new week
	if mon == w1 || !mon[1].Start.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, berlin)) || !mon[2].Start.Equal(w1[2].Start) {
		t.Errorf("after midnight the windows are %+v, want a new day and week in the same month", mon)
	}
	if w1.Contains(sun.Add(time.Hour)) || !w1.Contains(sun) {
		t.Error("Contains is wrong at the day boundary")
	}
}
