package assistant

import (
	"context"
	"testing"
	"time"
)

// TestASilenceBoundThatEndsFirstOutlivesTheStop: a stream already silent
// for most of ModelIdleTimeout when the turn is stopped ends when that
// bound ends, not a whole DrainTimeout after the stop, even where the drain
// is the shorter of the two.
func TestASilenceBoundThatEndsFirstOutlivesTheStop(t *testing.T) {
	t.Parallel()
	const idle, drain, silentFor = 2 * time.Second, 1800 * time.Millisecond, 1200 * time.Millisecond
	var stop stopper
	stop.start(context.Background())
	start := time.Now()
	ctx, w := watch(context.Background(), idle, drain, &stop)
	defer w.end()
	time.Sleep(silentFor)
	stop.cancel(errCancelRequested)
	<-ctx.Done()
	// The silence bound ends 2 s after the start, the drain 3 s after it.
	if took := time.Since(start); took > idle+drain/3 {
		t.Errorf("the attempt ended %v after its last delta, want about %v (the silence bound), not the drain's %v", took, idle, silentFor+drain)
	}
}
