package assistant_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/store"
)

// manualClock is a Config.Now that moves only when the test moves it, so
// a lease's end is an exact instant.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// leaseWatch is a memquota Ledger that tells the test of each renewal and,
// once its process is dead, receives none: a dead process renews nothing.
type leaseWatch struct {
	*memquota.Ledger
	mu      sync.Mutex
	last    time.Time     // the latest expiry a renewal set
	renewed chan struct{} // signalled after each renewal
	dead    atomic.Bool
}

func newLeaseWatch(t *testing.T) *leaseWatch {
	return &leaseWatch{Ledger: newLedger(t, 1_000_000), renewed: make(chan struct{}, 1)}
}

func (l *leaseWatch) Renew(ctx context.Context, h quota.Hold, at time.Time) (quota.Hold, error) {
	if l.dead.Load() {
		return h, nil // lost with the process
	}
	got, err := l.Ledger.Renew(ctx, h, at)
	if err == nil {
		l.mu.Lock()
		l.last = at
		l.mu.Unlock()
		select {
		case l.renewed <- struct{}{}:
		default:
		}
	}
	return got, err
}

// waitRenewed waits for a renewal to expiry at or after until.
func (l *leaseWatch) waitRenewed(t *testing.T, until time.Time) {
	t.Helper()
	deadline := time.After(10 * time.Second) // a hang guard, not a measurement
	for {
		l.mu.Lock()
		last := l.last
		l.mu.Unlock()
		if !last.Before(until) {
			return
		}
		select {
		case <-l.renewed:
		case <-deadline:
			t.Fatalf("no renewal to %s; the last was to %s", until, last)
		}
	}
}

// waitCheckpoint waits for the heartbeat's first write of reply id, which
// holds the turn's first words.
func waitCheckpoint(t *testing.T, h *harness, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a measurement
	for {
		m, err := h.store.GetMessage(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Blocks) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the first words were never checkpointed")
		}
		time.Sleep(time.Millisecond)
	}
}

// blockedTurn is a model that says a few words, waits for release and then
// finishes with 110 tokens of usage.
func blockedTurn(release <-chan struct{}) *fake.Provider {
	return fake.New(fake.Turn{fake.Text("a. "), fake.Func(func(context.Context, *providers.Request) fake.Turn {
		<-release
		return fake.Turn{fake.Text("b"), fake.Usage(100, 10)}
	})})
}

// The hold of a turn whose process died goes three heartbeats after its
// last renewal, at the sweep that marks the reply interrupted, not a
// HoldTTL (ten minutes) after it was reserved (issue 25.4). The turn's
// process is simulated dead by dropping its renewals; the ledger is read
// on the Engine's clock.
func TestADeadTurnsHoldIsFreedThreeHeartbeatsAfterItsLastRenewal(t *testing.T) {
	const beat = time.Minute // no real tick comes during the test: the heartbeat after the first is never seen
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	clk := &manualClock{now: t0}
	l := newLeaseWatch(t)
	release := make(chan struct{})
	h := newHarness(t, blockedTurn(release), func(c *assistant.Config) {
		c.Ledger, c.Now, c.HeartbeatInterval = l, clk.Now, beat
	})
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
	finished := false
	finish := func() {
		if !finished {
			finished = true
			close(release)
			<-rest
			h.waitStatus(t, meta.MessageID)
		}
	}
	defer finish()
	l.waitRenewed(t, t0.Add(3*beat))     // the lease replaced the ten-minute TTL
	waitCheckpoint(t, h, meta.MessageID) // the heartbeat at the first block, at t0
	held := func(at time.Time) int64 {
		u, err := l.Usage(context.Background(), "alice", at)
		if err != nil {
			t.Fatal(err)
		}
		return u.Daily.Held
	}
	if held(t0) == 0 {
		t.Fatal("the running turn holds nothing")
	}
	l.dead.Store(true) // the process dies: no heartbeat, no renewal

	// Just before the bound the user's allowance is still held.
	clk.set(t0.Add(3*beat - time.Nanosecond))
	if n, err := l.Sweep(context.Background(), clk.Now()); err != nil || n != 0 {
		t.Fatalf("Sweep a nanosecond before the lease ends = %d, %v; want nothing voided", n, err)
	}
	// Three heartbeats on, the turn is known dead: the sweep that marks its
	// reply interrupted gives the allowance back.
	clk.set(t0.Add(3*beat + time.Millisecond))
	n, err := h.eng.SweepInterrupted(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("SweepInterrupted = %d, %v; want the dead turn's reply", n, err)
	}
	if got := held(clk.Now()); got != 0 {
		t.Errorf("held %d tokens after the dead turn's reply was marked interrupted, want 0 (before: until the ten-minute TTL)", got)
	}
	// Were the turn alive after all, its tokens would still be charged.
	finish()
	u, err := l.Usage(context.Background(), "alice", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != 110 || u.Daily.Held != 0 {
		t.Errorf("usage %+v after the turn ended without its hold, want 110 used and nothing held", u.Daily)
	}
}

// A live turn keeps its hold however long it runs: every heartbeat renews
// the lease, so a sweep at any instant of the turn finds it in place. The
// Engine's clock moves 100 leases at each step; each step waits for the
// heartbeat's renewal, never for wall-clock time to pass.
func TestALiveLongTurnNeverLosesItsHold(t *testing.T) {
	const beat = 5 * time.Millisecond
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	clk := &manualClock{now: t0}
	l := newLeaseWatch(t)
	release := make(chan struct{})
	h := newHarness(t, blockedTurn(release), func(c *assistant.Config) {
		c.Ledger, c.Now, c.HeartbeatInterval = l, clk.Now, beat
	})
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
	l.waitRenewed(t, t0.Add(3*beat))
	u0, err := l.Usage(context.Background(), "alice", t0)
	if err != nil {
		t.Fatal(err)
	}
	if u0.Daily.Held == 0 {
		t.Fatal("the running turn holds nothing")
	}
	for i := 1; i <= 50; i++ {
		at := t0.Add(time.Duration(i) * 100 * 3 * beat)
		clk.set(at)
		l.waitRenewed(t, at.Add(3*beat))
		if n, err := l.Sweep(context.Background(), at); err != nil || n != 0 {
			t.Fatalf("step %d: Sweep = %d, %v; want the live turn's hold kept", i, n, err)
		}
		u, err := l.Usage(context.Background(), "alice", at)
		if err != nil {
			t.Fatal(err)
		}
		if u.Daily.Held != u0.Daily.Held {
			t.Fatalf("step %d: held %d, want %d", i, u.Daily.Held, u0.Daily.Held)
		}
	}
	close(release)
	<-rest
	if m := h.waitStatus(t, meta.MessageID); m.Status != store.StatusComplete {
		t.Errorf("reply status %s, want complete", m.Status)
	}
	u, err := l.Usage(context.Background(), "alice", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != 110 || u.Daily.Held != 0 {
		t.Errorf("usage %+v after the turn, want its 110 tokens settled through its own hold", u.Daily)
	}
}

// A Ledger that is not a quota.Renewer keeps each hold for its whole TTL,
// as before: Sweep voids a dead turn's hold after DefaultHoldTTL.
func TestWithoutRenewADeadTurnsHoldLastsItsTTL(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	clk := &manualClock{now: t0}
	l := struct{ quota.Ledger }{newLedger(t, 1_000_000)}
	release := make(chan struct{})
	h := newHarness(t, blockedTurn(release), func(c *assistant.Config) { c.Ledger, c.Now = l, clk.Now })
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
	defer func() {
		close(release)
		<-rest
		h.waitStatus(t, meta.MessageID)
	}()
	if n, err := l.Sweep(context.Background(), t0.Add(quota.DefaultHoldTTL-time.Nanosecond)); err != nil || n != 0 {
		t.Errorf("Sweep before the TTL = %d, %v; want nothing voided", n, err)
	}
	if n, err := l.Sweep(context.Background(), t0.Add(quota.DefaultHoldTTL)); err != nil || n != 1 {
		t.Errorf("Sweep at the TTL = %d, %v; want the hold voided", n, err)
	}
}
