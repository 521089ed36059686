package quota_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

// Turns as the Engine accounts them: reserve an estimate before the model
// call, settle what the provider reported after it. A turn is admitted while
// allowance is left, holding at most what is left; a turn refused while
// others hold the rest learns that from the error's fields, which is what a
// user-facing message names.
func Example() {
	ctx := context.Background()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ledger, err := memquota.New(quota.Policy{
		Defaults: quota.Limits{Daily: quota.Limit(5_000), Monthly: quota.Limit(100_000)},
		Location: berlin,
	})
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 5, 5, 14, 0, 0, 0, berlin)

	// estimate = prompt characters / 4 + max output tokens
	prompt := "How many VMs do I have?"
	h, err := ledger.Reserve(ctx, "alice", int64(len(prompt)/4+4_000), now)
	if err != nil {
		log.Fatal(err)
	}
	// ... the model runs and reports 1_200 input + 350 output tokens ...
	if err := ledger.Settle(ctx, h, 1_550); err != nil {
		log.Fatal(err)
	}

	// 3_450 tokens are left: the next turn is admitted, holding them.
	h, err = ledger.Reserve(ctx, "alice", 4_000, now.Add(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("second turn holds %d of its estimate of 4000\n", h.Estimate)

	// While it runs, nothing is left for a third.
	_, err = ledger.Reserve(ctx, "alice", 4_000, now.Add(2*time.Minute))
	var ee *quota.ExceededError
	if errors.As(err, &ee) && ee.Used < ee.Limit {
		fmt.Printf("%s allowance held by answers in progress (%d of %d used, %d held); resets %s\n",
			ee.Period, ee.Used, ee.Limit, ee.Held, ee.ResetsAt.In(berlin).Format("Mon 2 Jan 15:04 MST"))
	}
	if err := ledger.Settle(ctx, h, 2_000); err != nil {
		log.Fatal(err)
	}

	u, _ := ledger.Usage(ctx, "alice", now)
	for _, pu := range u.Periods() {
		fmt.Printf("%-7s used %5d  limit %6d  resets %s\n", pu.Period, pu.Used, pu.Limit, pu.ResetsAt.Format("2006-01-02 15:04 MST"))
	}
	// Output:
	// second turn holds 3450 of its estimate of 4000
	// daily allowance held by answers in progress (1550 of 5000 used, 3450 held); resets Wed 6 May 00:00 CEST
	// daily   used  3550  limit   5000  resets 2026-05-06 00:00 CEST
	// weekly  used  3550  limit     -1  resets 2026-05-11 00:00 CEST
	// monthly used  3550  limit 100000  resets 2026-06-01 00:00 CEST
}

// Periods are computed on the local calendar: the day on which Berlin
// springs forward has 23 hours.
func ExamplePeriod_End() {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := time.Date(2026, 3, 29, 12, 0, 0, 0, berlin)
	start, end := quota.Daily.Start(at, berlin), quota.Daily.End(at, berlin)
	fmt.Println(start.Format(time.RFC3339), "to", end.Format(time.RFC3339), "=", end.Sub(start))
	// Output:
	// 2026-03-29T00:00:00+01:00 to 2026-03-30T00:00:00+02:00 = 23h0m0s
}
