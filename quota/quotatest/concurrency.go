package quotatest

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/quota"
)

var concurrencyCases = []ledgerCase{
	{"ConcurrentReserveSettleKeepsExactTotals", testConcurrentExactTotals},
	{"ConcurrentReservesNeverPassTheLimit", testConcurrentLimit},
	{"ConcurrentOvershootIsBoundedByOpenHolds", testConcurrentOvershoot},
	{"HundredConcurrentStreamsAdmitOnlyWhatFits", testHundredStreams},
	{"ConcurrentCappedHoldsNeverSumPastTheLimit", testConcurrentCappedHolds},
}

const goroutines = 64

// testConcurrentExactTotals: nothing is lost or counted twice when 64
// goroutines reserve, settle and release at once.
func testConcurrentExactTotals(t *testing.T, open func(quota.Policy) *ledger) {
	l := open(quota.Policy{})
	now := ts("2026-05-05T10:00:00Z")
	const iters = 200
	var want atomic.Int64
	errc := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			user := []string{"a", "b"}[g%2]
			var sum int64
			for i := range iters {
				h, err := l.l.Reserve(t.Context(), user, int64(1+i%7), now)
				if err != nil {
					errc <- err
					return
				}
				if i%5 == 4 {
					err = l.l.Release(t.Context(), h)
				} else {
					actual := int64(g + i%11)
					err = l.l.Settle(t.Context(), h, actual)
					sum += actual
				}
				if err != nil {
					errc <- err
					return
				}
			}
			want.Add(sum)
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("concurrent Reserve/Settle/Release: %v", err)
	}
	a, b := l.usage("a", now), l.usage("b", now)
	for i, pa := range a.Periods() {
		pb := b.Periods()[i]
		if got := pa.Used + pb.Used; got != want.Load() || pa.Held != 0 || pb.Held != 0 {
			t.Errorf("%s: used %d (a %d + b %d), held %d + %d; want used %d, held 0",
				pa.Period, got, pa.Used, pb.Used, pa.Held, pb.Held, want.Load())
		}
	}
}

// testConcurrentLimit: when no turn uses more than it holds, usage never
// passes the limit, however the goroutines interleave; and while they run,
// used + held never exceeds it either. Near the limit holds are capped, so
// this also checks that a cap is computed in the same step as the hold.
func testConcurrentLimit(t *testing.T, open func(quota.Policy) *ledger) {
	const limit = 1000
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(limit)}})
	now := ts("2026-05-05T10:00:00Z")
	var admitted, refused, charged atomic.Int64
	stop := make(chan struct{})
	watcher := make(chan string, 1)
	go func() {
		defer close(watcher)
		for {
			select {
			case <-stop:
				return
			default:
			}
			u, err := l.l.Usage(t.Context(), "u", now)
			if err != nil {
				watcher <- err.Error()
				return
			}
			if u.Daily.Used+u.Daily.Held > limit {
				watcher <- "used + held passed the limit while turns ran: " + strconv.FormatInt(u.Daily.Used, 10) + " + " + strconv.FormatInt(u.Daily.Held, 10)
				return
			}
			runtime.Gosched()
		}
	}()
	errc := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range 50 {
				est := int64(5 + (g+i)%20)
				h, err := l.l.Reserve(t.Context(), "u", est, now)
				if errors.Is(err, quota.ErrExceeded) {
					refused.Add(1)
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				admitted.Add(1)
				runtime.Gosched()
				actual := max(h.Estimate-int64(i%3), 0) // never more than held
				if err := l.l.Settle(t.Context(), h, actual); err != nil {
					errc <- err
					return
				}
				charged.Add(actual)
			}
		})
	}
	wg.Wait()
	close(stop)
	close(errc)
	for err := range errc {
		t.Fatalf("concurrent Reserve/Settle: %v", err)
	}
	if msg, ok := <-watcher; ok {
		t.Error(msg)
	}
	if refused.Load() == 0 {
		t.Fatal("no Reserve was refused: the test did not reach the limit")
	}
	u := l.usage("u", now)
	if u.Daily.Used != charged.Load() || u.Daily.Held != 0 {
		t.Errorf("daily used %d, held %d; want used %d (the settled actuals), held 0", u.Daily.Used, u.Daily.Held, charged.Load())
	}
	if u.Daily.Used > limit {
		t.Errorf("daily used %d passed the limit %d though no turn used more than it held", u.Daily.Used, limit)
	}
}

// testConcurrentOvershoot: turns that use more than they hold push usage
// past the limit, but only by the overshoot (actual - hold) of holds open
// together. The bound is taken loosely (every goroutine between its Reserve
// call and its Settle's return counts as open) so any correct ledger passes
// it.
func testConcurrentOvershoot(t *testing.T, open func(quota.Policy) *ledger) {
	const (
		limit     = 2000
		est       = 10
		overshoot = 3
	)
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(limit)}})
	now := ts("2026-05-05T10:00:00Z")
	var charged, inflight, maxInflight, refused atomic.Int64
	errc := make(chan error, goroutines)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range 50 {
				n := inflight.Add(1)
				for m := maxInflight.Load(); n > m && !maxInflight.CompareAndSwap(m, n); m = maxInflight.Load() {
				}
				h, err := l.l.Reserve(t.Context(), "u", est, now)
				if err == nil {
					runtime.Gosched()
					err = l.l.Settle(t.Context(), h, h.Estimate+overshoot)
					if err == nil {
						charged.Add(h.Estimate + overshoot)
					}
				} else if errors.Is(err, quota.ErrExceeded) {
					refused.Add(1)
					err = nil
				}
				inflight.Add(-1)
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("concurrent Reserve/Settle: %v", err)
	}
	if refused.Load() == 0 {
		t.Fatal("no Reserve was refused: the test did not reach the limit")
	}
	u := l.usage("u", now)
	if u.Daily.Used != charged.Load() || u.Daily.Held != 0 {
		t.Errorf("daily used %d, held %d; want used %d (the settled actuals), held 0", u.Daily.Used, u.Daily.Held, charged.Load())
	}
	if bound := limit + maxInflight.Load()*overshoot; u.Daily.Used > bound {
		t.Errorf("daily used %d passed limit %d + %d open holds × overshoot %d = %d",
			u.Daily.Used, limit, maxInflight.Load(), overshoot, bound)
	}
}

// testHundredStreams: 100 streams of one user reserve at once, then all
// settle. Exactly limit/estimate of them fit; every one overshoots, and
// usage ends at limit + admitted × overshoot, the documented bound. Then
// nothing more is admitted.
func testHundredStreams(t *testing.T, open func(quota.Policy) *ledger) {
	const (
		streams   = 100
		limit     = 200
		est       = 10
		overshoot = 5
	)
	l := open(quota.Policy{Defaults: quota.Limits{Daily: lim(limit)}})
	now := ts("2026-05-05T10:00:00Z")
	holds := make([]*quota.Hold, streams)
	errs := make([]error, streams)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range streams {
		wg.Go(func() {
			<-start
			h, err := l.l.Reserve(t.Context(), "u", est, now)
			if err == nil {
				holds[i] = &h
			} else if !errors.Is(err, quota.ErrExceeded) {
				errs[i] = err
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Reserve: %v", err)
	}
	admitted := 0
	for _, h := range holds {
		if h != nil {
			admitted++
			if h.Estimate != est {
				t.Errorf("a hold of %d, want %d: the limit is a multiple of the estimate, so no hold is capped", h.Estimate, est)
			}
		}
	}
	if admitted != limit/est {
		t.Fatalf("%d of %d concurrent reservations of %d were admitted under limit %d, want exactly %d",
			admitted, streams, est, limit, limit/est)
	}
	for i, h := range holds {
		if h != nil {
			wg.Go(func() { errs[i] = l.l.Settle(t.Context(), *h, est+overshoot) })
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Settle: %v", err)
	}
	u := l.usage("u", now)
	if want := int64(limit + admitted*overshoot); u.Daily.Used != want || u.Daily.Held != 0 {
		t.Errorf("daily used %d, held %d; want used %d = limit + %d holds × overshoot %d, held 0",
			u.Daily.Used, u.Daily.Held, want, admitted, overshoot)
	}
	l.refused("u", 1, now)
}

// testConcurrentCappedHolds: goroutines reserving at once, none settling,
// get holds that sum to exactly the tightest limit, never more: every hold
// is between 1 and its estimate, at most one is capped (a capped hold
// leaves no room), and every other Reserve is refused. First with estimates
// each above the limit (one is admitted, holding all of it), then with
// estimates that fill it many times over.
func testConcurrentCappedHolds(t *testing.T, open func(quota.Policy) *ledger) {
	for _, c := range []struct {
		name   string
		limits quota.Limits
		limit  int64 // the tightest
		est    func(g int) int64
	}{
		{"EachAboveTheLimit", quota.Limits{Daily: lim(300)}, 300, func(int) int64 { return 1500 }},
		{"ManySmall", quota.Limits{Daily: lim(700), Weekly: lim(450)}, 450, func(g int) int64 { return int64(7 + g%13) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := open(quota.Policy{Defaults: c.limits})
			now := ts("2026-05-05T10:00:00Z")
			holds := make([]quota.Hold, goroutines)
			errs := make([]error, goroutines)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					<-start
					holds[g], errs[g] = l.l.Reserve(t.Context(), "u", c.est(g), now)
				})
			}
			close(start)
			wg.Wait()
			var sum int64
			capped := 0
			for g, err := range errs {
				if err != nil {
					if !errors.Is(err, quota.ErrExceeded) {
						t.Fatalf("concurrent Reserve: %v", err)
					}
					continue
				}
				h, est := holds[g], c.est(g)
				if h.Estimate < 1 || h.Estimate > est {
					t.Errorf("Reserve(%d) held %d, want 1 to %d", est, h.Estimate, est)
				}
				if h.Estimate < est {
					capped++
				}
				sum += h.Estimate
			}
			if sum != c.limit || capped > 1 {
				t.Errorf("concurrent holds sum to %d with %d capped; want exactly the limit %d, at most one capped", sum, capped, c.limit)
			}
			u := l.usage("u", now)
			for _, pu := range u.Periods() {
				if pu.Held != sum || pu.Used != 0 {
					t.Errorf("%s: used %d, held %d; want used 0, held %d (the holds returned)", pu.Period, pu.Used, pu.Held, sum)
				}
			}
		})
	}
}
