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

// One turn as the Engine accounts it: reserve an estimate before the model
// call, settle what the provider reported after it. A second turn that does
// not fit is refused with the period and its reset time, which is what a
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

	_, err = ledger.Reserve(ctx, "alice", 4_000, now.Add(time.Minute))
	var ee *quota.ExceededError
	if errors.As(err, &ee) {
		fmt.Printf("%s limit reached (%d of %d tokens used); resets %s\n",
			ee.Period, ee.Used, ee.Limit, ee.ResetsAt.In(berlin).Format("Mon 2 Jan 15:04 MST"))
	}

	u, _ := ledger.Usage(ctx, "alice", now)
	for _, pu := range u.Periods() {
		fmt.Printf("%-7s used %5d  limit %6d  resets %s\n", pu.Period, pu.Used, pu.Limit, pu.ResetsAt.Format("2006-01-02 15:04 MST"))
	}
	// Output:
	// daily limit reached (1550 of 5000 tokens used); resets Wed 6 May 00:00 CEST
	// daily   used  1550  limit   5000  resets 2026-05-06 00:00 CEST
	// weekly  used  1550  limit     -1  resets 2026-05-11 00:00 CEST
	// monthly used  1550  limit 100000  resets 2026-06-01 00:00 CEST
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
