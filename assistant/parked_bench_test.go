package assistant_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/sqlquota"
	"github.com/parleyhq/parley/store/sqlstore"
)

// BenchmarkPostgresParkedTurns measures what 100 turns parked on a slow
// model cost PostgreSQL: transactions per parked turn per second, from
// pg_stat_database (xact_commit + xact_rollback) over a 20 s window, with
// the default cancel poll and heartbeat and a SQL ledger whose holds the
// heartbeat renews. It runs in a database of its own, so nothing else's
// transactions count. b.N is ignored: one window is the measurement.
func BenchmarkPostgresParkedTurns(b *testing.B) {
	const turns, window = 100, 20 * time.Second
	base := os.Getenv(sqltest.PostgresEnv)
	if base == "" || !strings.HasPrefix(base, "postgres") {
		b.Skipf("%s is not set to a postgres:// URL", sqltest.PostgresEnv)
	}
	admin := sqltest.OpenPostgres(b, base)
	name := fmt.Sprintf("parley_parked_%x", rand.Uint64())
	if _, err := admin.ExecContext(b.Context(), "CREATE DATABASE "+name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	db := sqltest.OpenPostgres(b, u.String())
	st, err := sqlstore.New(db, sqlstore.Options{})
	if err == nil {
		err = st.Migrate(b.Context())
	}
	if err != nil {
		b.Fatal(err)
	}
	l, err := sqlquota.New(db, quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(1 << 40)}}, sqlquota.Options{})
	if err == nil {
		err = l.Migrate(b.Context())
	}
	if err != nil {
		b.Fatal(err)
	}
	p := fake.New()
	p.SetDefault(parkedTurn())
	eng, err := assistant.New(assistant.Config{
		Provider: p, Store: st, Ledger: l, Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
		MaxTurnsPerUser: -1, DrainTimeout: 50 * time.Millisecond, DisableGuard: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	var threads []string
	var rests []<-chan int
	for i := range turns {
		u := parley.User{ID: fmt.Sprintf("user%d", i), Roles: []string{"user"}}
		meta, rest := startParked(b, eng, u)
		threads = append(threads, meta)
		rests = append(rests, rest)
	}
	time.Sleep(2 * time.Second) // the first checkpoints and renewals
	before, t0 := xacts(b, admin, name), time.Now()
	time.Sleep(window)
	after, took := xacts(b, admin, name), time.Since(t0)
	perTurn := float64(after-before) / took.Seconds() / turns
	b.ReportMetric(perTurn, "xact/turn/s")
	b.Logf("%d parked turns: %d transactions in %v: %.3f per parked turn per second", turns, after-before, took.Round(time.Millisecond), perTurn)
	for i, id := range threads {
		if err := eng.Cancel(context.Background(), parley.User{ID: fmt.Sprintf("user%d", i)}, id); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range rests {
		<-r
	}
	if err := eng.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// startParked starts u's turn and returns its thread and a channel that
// receives once the stream ends.
func startParked(b *testing.B, eng *assistant.Engine, u parley.User) (string, <-chan int) {
	b.Helper()
	next, stop := iterPull(eng.Stream(context.Background(), u, assistant.Request{Message: "hi"}))
	first, ok := next()
	if !ok || first.Meta == nil {
		b.Fatalf("first block %+v, want meta", first)
	}
	if _, ok := next(); !ok { // the model is streaming, then parks
		b.Fatal("no second block")
	}
	done := make(chan int, 1)
	go func() {
		defer stop()
		n := 0
		for _, ok := next(); ok; _, ok = next() {
			n++
		}
		done <- n
	}()
	return first.Meta.ThreadID, done
}

// xacts reads the database's committed and rolled back transactions.
func xacts(b *testing.B, admin *sql.DB, name string) int64 {
	b.Helper()
	var n int64
	// A backend reports its counts when it goes idle, at most once a
	// second: wait for the reports of the window's last second.
	time.Sleep(1500 * time.Millisecond)
	if _, err := admin.ExecContext(b.Context(), "SELECT pg_stat_clear_snapshot()"); err != nil {
		b.Fatal(err)
	}
	if err := admin.QueryRowContext(b.Context(),
		"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1", name).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
