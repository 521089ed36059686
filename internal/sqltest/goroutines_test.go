package sqltest

import (
	"testing"
	"time"
)

// Goroutines counts goroutines started and ended, and SettleGoroutines
// waits for them to end. (Without a pgx reader running, Goroutines is
// runtime.NumGoroutine, read from a stack dump.)
func TestGoroutinesCountsWhatRuns(t *testing.T) {
	// The count before, once no goroutine of an earlier test is ending.
	base := Goroutines()
	for range 200 {
		time.Sleep(5 * time.Millisecond)
		n := Goroutines()
		if n == base {
			break
		}
		base = n
	}
	stop := make(chan struct{})
	for range 3 {
		go func() { <-stop }()
	}
	if n := Goroutines(); n != base+3 {
		t.Errorf("with three more parked: %d, want %d", n, base+3)
	}
	close(stop)
	calls := 0
	SettleGoroutines(t, base, 10*time.Second, func() { calls++ })
	if calls == 0 {
		t.Error("each was not called: it runs before every count")
	}
}
