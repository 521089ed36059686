package memquota_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

func benchLedger(b *testing.B) *memquota.Ledger {
	l, err := memquota.New(quota.Policy{
		Defaults: quota.Limits{Daily: quota.Limit(1 << 50), Weekly: quota.Limit(1 << 50), Monthly: quota.Limit(1 << 50)},
	})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// One op is a Reserve and its Settle: the ledger cost of one turn.
func BenchmarkReserveSettle(b *testing.B) {
	l := benchLedger(b)
	ctx := b.Context()
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		h, err := l.Reserve(ctx, "alice", 4_000, now)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Settle(ctx, h, 1_500); err != nil {
			b.Fatal(err)
		}
	}
}

// Many users, all cores: users land on different shards.
func BenchmarkReserveSettleParallel(b *testing.B) {
	l := benchLedger(b)
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := b.Context()
		user := "user-" + strconv.FormatInt(next.Add(1), 10)
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
		}
	})
}

// One user, all cores: every op contends for one shard.
func BenchmarkReserveSettleParallelOneUser(b *testing.B) {
	l := benchLedger(b)
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := b.Context()
		for pb.Next() {
			h, err := l.Reserve(ctx, "alice", 4_000, now)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Settle(ctx, h, 1_500); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkSpendAllowRecord(b *testing.B) {
	s := new(memquota.SpendLedger)
	ctx := b.Context()
	key := quota.SpendKey{Connection: "openai", Principal: "alice"}
	c := quota.SpendCap{Budget: 1 << 50, Window: time.Minute}
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second) // a turn a second: 60 records in the window
		if err := s.Allow(ctx, key, c, now); err != nil {
			b.Fatal(err)
		}
		if err := s.Record(ctx, key, 1_500, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRateLimiterTake(b *testing.B) {
	rl := new(memquota.RateLimiter)
	ctx := b.Context()
	r := quota.Rate{Calls: 1 << 30, Per: time.Minute}
	now := time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(100 * time.Millisecond) // 600 calls in the window
		if err := rl.Take(ctx, "alice", r, now); err != nil {
			b.Fatal(err)
		}
	}
}
