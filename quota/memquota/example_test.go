package memquota_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

// The gates of one turn: the spend cap of the model connection, the token
// budget, then a tool-call rate limit inside the turn.
func Example() {
	ctx := context.Background()
	now := time.Date(2026, 5, 5, 9, 30, 0, 0, time.UTC)
	ledger, err := memquota.New(quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(20_000)}})
	if err != nil {
		log.Fatal(err)
	}
	spend := new(memquota.SpendLedger)
	tools := new(memquota.RateLimiter)
	key := quota.SpendKey{Connection: "openai", Principal: "alice"}
	spendCap := quota.SpendCap{Budget: 10_000, Window: time.Hour}
	toolRate := quota.Rate{Calls: 2, Per: time.Minute}

	for turn := 1; turn <= 3; turn++ {
		if err := spend.Allow(ctx, key, spendCap, now); err != nil {
			var se *quota.SpendCapError
			errors.As(err, &se)
			fmt.Printf("turn %d: spend cap reached, retry at %s\n", turn, se.RetryAt.Format("15:04"))
			continue
		}
		h, err := ledger.Reserve(ctx, "alice", 4_500, now)
		if err != nil {
			log.Fatal(err)
		}
		for call := 1; call <= 3; call++ {
			if err := tools.Take(ctx, "alice", toolRate, now); errors.Is(err, quota.ErrRateLimited) {
				fmt.Printf("turn %d: tool call %d rate limited\n", turn, call)
			}
		}
		used := int64(6_000) // what the provider reported
		if err := ledger.Settle(ctx, h, used); err != nil {
			log.Fatal(err)
		}
		if err := spend.Record(ctx, key, used, now); err != nil {
			log.Fatal(err)
		}
		now = now.Add(5 * time.Minute)
	}
	u, _ := ledger.Usage(ctx, "alice", now)
	fmt.Printf("daily: %d of %d used\n", u.Daily.Used, u.Daily.Limit)
	// Output:
	// turn 1: tool call 3 rate limited
	// turn 2: tool call 3 rate limited
	// turn 3: spend cap reached, retry at 10:30
	// daily: 12000 of 20000 used
}
