package sqlquota_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/sqlquota"
)

// Two Ledgers on separate pools over one PostgreSQL schema stand for two
// app instances. 64 goroutines, split across them, reserve and settle for
// one user under a limit; every turn uses exactly what it holds (its
// estimate, capped at the room left). The limit holds exactly: no hold
// beyond it, refusals only once it is reached, so usage ends at the limit;
// used equals the sum of what was settled (no lost update), nothing stays
// held, and each instance reads the same totals.
func TestTwoInstancesShareOneLimitExactly(t *testing.T) {
	dsn := withParam(t, sqltest.PostgresDSN(t), "synchronous_commit", "off")
	const limit = 20_000
	p := quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(limit), Monthly: quota.Limit(limit * 10)}}
	var ledgers [2]*sqlquota.Ledger
	for i := range ledgers {
		db := sqltest.OpenPostgres(t, dsn)
		db.SetMaxOpenConns(pgConns)
		ledgers[i] = migrated(t, db, p)
	}
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	var settled, admitted, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for g := range 64 {
		wg.Go(func() {
			l := ledgers[g%2]
			for i := range 25 {
				est := int64(10 + (g*7+i)%40)
				h, err := l.Reserve(t.Context(), "shared", est, now)
				if errors.Is(err, quota.ErrExceeded) {
					refused.Add(1)
					continue
				}
				if err != nil {
					errs[g] = err
					return
				}
				admitted.Add(1)
				// Settle through the other instance half of the time.
				if i%2 == 1 {
					l = ledgers[(g+1)%2]
				}
				if h.Estimate < 1 || h.Estimate > est {
					errs[g] = fmt.Errorf("Reserve(%d) held %d", est, h.Estimate)
					return
				}
				if err := l.Settle(t.Context(), h, h.Estimate); err != nil {
					errs[g] = err
					return
				}
				settled.Add(h.Estimate)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if refused.Load() == 0 {
		t.Fatalf("no Reserve was refused (%d admitted, %d tokens): the test did not reach the limit", admitted.Load(), settled.Load())
	}
	for i, l := range ledgers {
		u, err := l.Usage(t.Context(), "shared", now)
		if err != nil {
			t.Fatal(err)
		}
		if u.Daily.Used != settled.Load() || u.Daily.Held != 0 || u.Monthly.Used != settled.Load() || u.Monthly.Held != 0 {
			t.Errorf("instance %d reads daily %d/%d, monthly %d/%d (used/held); want used %d, held 0 (lost or doubled updates)",
				i, u.Daily.Used, u.Daily.Held, u.Monthly.Used, u.Monthly.Held, settled.Load())
		}
		// A refusal means used + held == limit, and every hold settled for
		// exactly what it held: usage ends at the limit, not a token off.
		if u.Daily.Used != limit {
			t.Errorf("instance %d: used %d, want the limit %d exactly (a hold not capped, or a refusal with room left)", i, u.Daily.Used, limit)
		}
	}
	t.Logf("%d admitted, %d refused, %d tokens settled of %d", admitted.Load(), refused.Load(), settled.Load(), limit)
}

// A hold reserved on one instance is closed exactly once, whichever
// instances race to settle, release or sweep it.
func TestTwoInstancesCloseAHoldOnce(t *testing.T) {
	dsn := sqltest.PostgresDSN(t)
	var ledgers [2]*sqlquota.Ledger
	for i := range ledgers {
		ledgers[i] = migrated(t, sqltest.OpenPostgres(t, dsn), quota.Policy{HoldTTL: time.Minute})
	}
	ctx := t.Context()
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	const holds = 50
	var closed atomic.Int64
	for range holds {
		h, err := ledgers[0].Reserve(ctx, "u", 10, now)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				l := ledgers[i%2]
				var err error
				switch i {
				case 0, 1:
					err = l.Settle(ctx, h, 7)
				case 2:
					err = l.Release(ctx, h)
				case 3:
					var n int
					n, err = l.Sweep(ctx, now.Add(time.Hour))
					if err != nil {
						t.Error(err)
					}
					if n == 1 {
						closed.Add(1)
					}
					return
				}
				if err == nil {
					closed.Add(1)
				} else if !errors.Is(err, quota.ErrHoldNotFound) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if closed.Load() != holds {
		t.Errorf("%d holds were closed %d times in all, want once each", holds, closed.Load())
	}
	u, err := ledgers[1].Usage(ctx, "u", now)
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Held != 0 || u.Daily.Used%7 != 0 || u.Daily.Used > 7*holds {
		t.Errorf("daily used %d, held %d after closing every hold once", u.Daily.Used, u.Daily.Held)
	}
}
