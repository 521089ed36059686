package assistant_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/sqlstore"
)

// parkedTurn streams its first words, then waits a minute (or until the turn
// is stopped) before it ends: a turn parked on a slow model.
func parkedTurn() fake.Turn {
	return fake.Turn{fake.Text("first. "), fake.Delay(time.Minute), fake.Text("late. "), fake.Usage(10, 20)}
}

// pushedInstances returns two Engines on one PostgreSQL schema, as two app
// instances run them, that can learn of the other's cancels only by the
// store's notifications: their poll (and so the safety net) is an hour. A's
// connections carry the application name it returns, to find its LISTEN.
func pushedInstances(t *testing.T, p providers.Provider) (a, b *assistant.Engine, sa *sqlstore.Store, appA string, admin *sql.DB) {
	t.Helper()
	dsn := sqltest.PostgresDSN(t)                        // skips without PARLEY_TEST_POSTGRES_DSN
	appA = fmt.Sprintf("parley-watch-%x", rand.Uint64()) // PostgreSQL keeps 63 bytes of a name
	mk := func(app string) (*assistant.Engine, *sqlstore.Store) {
		st, err := sqlstore.New(sqltest.OpenPostgres(t, withAppName(t, dsn, app)), sqlstore.Options{})
		if err == nil {
			err = st.Migrate(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
		eng, err := assistant.New(assistant.Config{
			Provider: p, Store: st, Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
			CancelPollInterval: time.Hour, DrainTimeout: 50 * time.Millisecond, MaxTurnsPerUser: -1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return eng, st
	}
	a, sa = mk(appA)
	b, _ = mk(appA + "-b")
	return a, b, sa, appA, sqltest.OpenPostgres(t, dsn)
}

func withAppName(t *testing.T, dsn, app string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " application_name=" + app
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// listeners waits until app has a connection LISTENing (other than those in
// not) and returns the pids of its LISTEN connections. The wait is bounded
// generously: it only keeps a broken watcher from hanging the test.
func listeners(t *testing.T, admin *sql.DB, app string, not map[int]bool) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := admin.QueryContext(t.Context(),
			`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = 'LISTEN parley_threads'`, app)
		if err != nil {
			t.Fatal(err)
		}
		var pids []int
		fresh := false
		for rows.Next() {
			var pid int
			if err := rows.Scan(&pid); err != nil {
				t.Fatal(err)
			}
			pids = append(pids, pid)
			fresh = fresh || !not[pid]
		}
		rows.Close()
		if fresh {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new LISTEN connection of %s (have %v)", app, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stoppedWith waits for the rest of a turn's stream and checks it ended
// with code.
func stoppedWith(t *testing.T, rest <-chan []blocks.Block, code assistant.ErrorCode) {
	t.Helper()
	select {
	case bs := <-rest:
		if last := bs[len(bs)-1]; last.ErrorCode != string(code) {
			t.Errorf("the turn ended with %+v, want %s", last, code)
		}
	case <-time.After(30 * time.Second): // the model would have gone on for a minute
		t.Fatal("the turn was not stopped")
	}
}

func TestPostgresACancelOnOneInstanceIsPushedToTheOther(t *testing.T) {
	a, b, sa, _, _ := pushedInstances(t, fake.New(parkedTurn()))
	meta, rest := startTurn(t, a, assistant.Request{Message: "x"})
	if err := b.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	stoppedWith(t, rest, assistant.CodeCancelled)
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m, err := sa.GetMessage(context.Background(), meta.MessageID); err != nil || m.Status != store.StatusCancelled {
		t.Errorf("stored %s (%v), want cancelled", m.Status, err)
	}
}

func TestPostgresANewerMessageOnOneInstanceIsPushedToTheOther(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if req.Messages[len(req.Messages)-1].Content == "first question" {
			return parkedTurn()
		}
		return fake.Turn{fake.Text("the new answer")}
	})})
	a, b, _, _, _ := pushedInstances(t, p)
	meta, rest := startTurn(t, a, assistant.Request{Message: "first question"})
	reply, err := assistant.Collect(b.Stream(context.Background(), alice, assistant.Request{ThreadID: meta.ThreadID, Message: "instead"}))
	if err != nil || reply.Text != "the new answer" {
		t.Fatalf("newer turn on B: %q %v", reply.Text, err)
	}
	stoppedWith(t, rest, assistant.CodeCancelled)
}

func TestPostgresADeletionOnOneInstanceIsPushedToTheOther(t *testing.T) {
	a, b, _, _, _ := pushedInstances(t, fake.New(parkedTurn()))
	meta, rest := startTurn(t, a, assistant.Request{Message: "x"})
	if err := b.DeleteThread(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	stoppedWith(t, rest, assistant.CodeCancelled)
}

// The watcher's LISTEN connection is killed; it reconnects, and a cancel
// requested after that still reaches the turn (the poll is an hour away).
func TestPostgresTheWatcherReconnectsAndStillDeliversACancel(t *testing.T) {
	a, b, _, app, admin := pushedInstances(t, fake.New(parkedTurn()))
	meta, rest := startTurn(t, a, assistant.Request{Message: "x"})
	killed := map[int]bool{}
	for _, pid := range listeners(t, admin, app, nil) {
		if _, err := admin.ExecContext(t.Context(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
		killed[pid] = true
	}
	listeners(t, admin, app, killed) // reconnected
	if err := b.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	stoppedWith(t, rest, assistant.CodeCancelled)
}

// A cancel requested while the watcher is disconnected is found by the
// check all live turns get when it reconnects.
func TestPostgresACancelWhileTheWatcherIsDisconnectedIsFoundOnReconnect(t *testing.T) {
	a, b, _, app, admin := pushedInstances(t, fake.New(parkedTurn()))
	meta, rest := startTurn(t, a, assistant.Request{Message: "x"})
	pids := listeners(t, admin, app, nil)
	// Cancel on B, bypassing the notification: A's watcher only learns of
	// it by reading the thread, which it does when it reconnects.
	if _, err := admin.ExecContext(t.Context(), `ALTER TABLE parley_threads DISABLE TRIGGER parley_threads_notify_update`); err != nil {
		t.Fatal(err)
	}
	if err := b.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(t.Context(), `ALTER TABLE parley_threads ENABLE TRIGGER parley_threads_notify_update`); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := admin.ExecContext(t.Context(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	stoppedWith(t, rest, assistant.CodeCancelled)
}

// When its turns end, an Engine's watcher and its LISTEN connection go:
// Wait returns and no goroutine is left.
func TestPostgresTheWatcherEndsWithTheLastTurn(t *testing.T) {
	a, b, _, app, admin := pushedInstances(t, fake.New(parkedTurn(), parkedTurn()))
	base := sqltest.Goroutines()
	m1, rest1 := startTurn(t, a, assistant.Request{Message: "x"})
	m2, rest2 := startTurn(t, a, assistant.Request{Message: "y"})
	listeners(t, admin, app, nil)
	for _, id := range []string{m1.ThreadID, m2.ThreadID} {
		if err := b.Cancel(context.Background(), alice, id); err != nil {
			t.Fatal(err)
		}
	}
	stoppedWith(t, rest1, assistant.CodeCancelled)
	stoppedWith(t, rest2, assistant.CodeCancelled)
	for _, eng := range []*assistant.Engine{a, b} {
		if err := eng.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	settleGoroutines(t, base)
}

// batchCounter is a Store that counts the batched reads of the Engine's
// watcher.
type batchCounter struct {
	*memstore.Store
	batches atomic.Int64
}

func (c *batchCounter) GetThreads(ctx context.Context, ids []string) (map[string]store.Thread, error) {
	c.batches.Add(1)
	return c.Store.GetThreads(ctx, ids)
}

// Without pushed changes (memory, SQLite) the watcher polls all live turns'
// threads in one read: a cancel on another Engine sharing the Store stops
// the turn, and the reads are batches, not one per turn.
func TestACancelOnAnotherEngineIsFoundByTheBatchedPoll(t *testing.T) {
	st := &batchCounter{Store: memstore.New()}
	mk := func(p providers.Provider) *assistant.Engine {
		eng, err := assistant.New(assistant.Config{
			Provider: p, Store: st, Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}},
			CancelPollInterval: 20 * time.Millisecond, DrainTimeout: 50 * time.Millisecond, MaxTurnsPerUser: -1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	p := fake.New()
	p.SetDefault(parkedTurn())
	a, b := mk(p), mk(fake.New())
	const turns = 10
	var metas []blocks.MetaInfo
	var rests []<-chan []blocks.Block
	for range turns {
		m, r := startTurn(t, a, assistant.Request{Message: "x"})
		metas, rests = append(metas, m), append(rests, r)
	}
	for _, m := range metas {
		if err := b.Cancel(context.Background(), alice, m.ThreadID); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rests {
		stoppedWith(t, r, assistant.CodeCancelled)
	}
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st.batches.Load() == 0 {
		t.Error("the watcher never read the threads in a batch")
	}
}
