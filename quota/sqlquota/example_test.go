package sqlquota_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver: pure Go, no cgo

	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/sqlquota"
)

// A token budget on a SQLite file: open the host's *sql.DB, migrate once at
// start, then gate turns with Reserve and Settle. A turn is admitted while
// allowance is left, holding at most what is left; here the host bounds the
// turn by its hold, so usage stops at the limit. Every process opening the
// same database (on PostgreSQL: the same schema) shares the budget.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "parley-quota-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "parley.db")+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ledger, err := sqlquota.New(db, quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(10_000)}}, sqlquota.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := ledger.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	now := time.Date(2026, 5, 5, 9, 30, 0, 0, time.UTC)
	for turn := 1; turn <= 4; turn++ {
		h, err := ledger.Reserve(ctx, "alice", 4_000, now) // prompt/4 + max output tokens
		var ee *quota.ExceededError
		if errors.As(err, &ee) {
			fmt.Printf("turn %d: %s limit reached (%d of %d used), resets %s\n",
				turn, ee.Period, ee.Used, ee.Limit, ee.ResetsAt.Format(time.DateTime))
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		used := min(3_500, h.Estimate) // what the provider reported, the output capped by the hold
		if err := ledger.Settle(ctx, h, used); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("turn %d: held %d, settled %d\n", turn, h.Estimate, used)
	}
	u, err := ledger.Usage(ctx, "alice", now)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("daily: %d of %d used, %d held\n", u.Daily.Used, u.Daily.Limit, u.Daily.Held)
	// Output:
	// turn 1: held 4000, settled 3500
	// turn 2: held 4000, settled 3500
	// turn 3: held 3000, settled 3000
	// turn 4: daily limit reached (10000 of 10000 used), resets 2026-05-06 00:00:00
	// daily: 10000 of 10000 used, 0 held
}
