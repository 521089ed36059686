package sqlquota_test

import (
	"database/sql"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/quota"
)

const writers = 64

// One op is a Reserve and its Settle: the ledger cost of one turn. 64
// goroutines run turns at once, for one user (every turn contends for the
// same three rows: the worst case) or for 64 users. At the end the usage
// read back must equal the sum of what was settled, with nothing held: no
// lost update. turns/s is the throughput.
func BenchmarkReserveSettlePostgres(b *testing.B) {
	for _, sync := range []string{"on", "off"} {
		for _, users := range []int{1, writers} {
			b.Run(fmt.Sprintf("synchronous_commit=%s/users=%d", sync, users), func(b *testing.B) {
				db := sqltest.OpenPostgres(b, withParam(b, sqltest.PostgresDSN(b), "synchronous_commit", sync))
				db.SetMaxOpenConns(writers)
				db.SetMaxIdleConns(writers)
				benchReserveSettle(b, db, users)
			})
		}
	}
}

func BenchmarkReserveSettleSQLiteFile(b *testing.B) {
	for _, users := range []int{1, writers} {
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
			benchReserveSettle(b, openSQLiteFile(b), users)
		})
	}
}

func benchReserveSettle(b *testing.B, db *sql.DB, users int) {
	l := migrated(b, db, quota.Policy{
		Defaults: quota.Limits{Daily: quota.Limit(1 << 50), Weekly: quota.Limit(1 << 50), Monthly: quota.Limit(1 << 50)},
	})
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	var next, settled atomic.Int64
	b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := b.Context()
		user := "user-" + strconv.FormatInt(next.Add(1)%int64(users), 10)
		for pb.Next() {
			h, err := l.Reserve(ctx, user, 4_000, now)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Settle(ctx, h, 1_500); err != nil {
				b.Error(err)
				return
			}
			settled.Add(1_500)
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
	var used, held int64
	for i := range users {
		u, err := l.Usage(b.Context(), "user-"+strconv.Itoa(i), now)
		if err != nil {
			b.Fatal(err)
		}
		for _, pu := range u.Periods() {
			if pu.Period == quota.Daily {
				used += pu.Used
			}
			held += pu.Held
		}
	}
	if used != settled.Load() || held != 0 {
		b.Fatalf("lost updates: daily used %d, held %d; want used %d (settled), held 0", used, held, settled.Load())
	}
}

// One op is one Renew of an open hold: what a running turn's lease costs
// each HeartbeatInterval. 64 goroutines each renew a hold of their own user
// (renewals of different turns never touch the same row). renewals/s,
// divided by the turns running, is how often each may renew.
func BenchmarkRenewPostgres(b *testing.B) {
	db := sqltest.OpenPostgres(b, sqltest.PostgresDSN(b))
	db.SetMaxOpenConns(writers)
	db.SetMaxIdleConns(writers)
	benchRenew(b, db)
}

func BenchmarkRenewSQLiteFile(b *testing.B) { benchRenew(b, openSQLiteFile(b)) }

func benchRenew(b *testing.B, db *sql.DB) {
	l := migrated(b, db, quota.Policy{})
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
	holds := make([]quota.Hold, 4*writers) // at least one per goroutine RunParallel starts
	for i := range holds {
		var err error
		if holds[i], err = l.Reserve(b.Context(), "user-"+strconv.Itoa(i), 4_000, now); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := b.Context()
		h := holds[int(next.Add(1)-1)%len(holds)]
		for i := 0; pb.Next(); i++ {
			if _, err := l.Renew(ctx, h, now.Add(time.Duration(i)*time.Second)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renewals/s")
}
